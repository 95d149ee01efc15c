package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteHasNoNamedTempWhileWriting: the data of a Write goes to a file
// with no name, so hostcore killed while it is written leaves nothing in
// the user's directory (design 4b: temporary files must not dirty the
// project). Before, a 14 MiB Write killed part way left its
// .NAME.hostcore-HEX.tmp behind for good.
func TestWriteHasNoNamedTempWhileWriting(t *testing.T) {
	fx := newFixture(t)
	res := mustResolve(t, fx.roots, "w.txt")
	dir := filepath.Dir(res.Abs)
	seen := false
	testHookFilled = func() {
		seen = true
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".hostcore-") {
				t.Errorf("%s is in the directory while the data is written", e.Name())
			}
		}
	}
	defer func() { testHookFilled = nil }()
	if _, err := WriteAtomic(res, []byte("data")); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Skip("this filesystem makes no unnamed files (O_TMPFILE)")
	}
	if got := readString(t, res.Abs); got != "data" {
		t.Fatalf("content %q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".hostcore-") {
			t.Fatalf("%s left after the write", e.Name())
		}
	}
}
