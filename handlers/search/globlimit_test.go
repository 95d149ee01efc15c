package search

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestGlobKeepsOnlyTheNewest: with a head limit, the listed paths are
// exactly the newest matches, newest first, and Count still counts all.
func TestGlobKeepsOnlyTheNewest(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	for i := range 50 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d.txt", i))
		os.WriteFile(p, nil, 0o644)
		mt := base.Add(time.Duration((i*37)%50) * time.Second) // shuffled ages
		os.Chtimes(p, mt, mt)
	}
	res, err := Glob(t.Context(), GlobOptions{Root: dir, Pattern: "*.txt", HeadLimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := 49; k >= 45; k-- { // the five newest ages
		for i := range 50 {
			if (i*37)%50 == k {
				want = append(want, fmt.Sprintf("f%02d.txt", i))
			}
		}
	}
	if res.Count != 50 || !res.Truncated || !slices.Equal(res.Paths, want) {
		t.Fatalf("got count=%d truncated=%v %v, want 50 true %v", res.Count, res.Truncated, res.Paths, want)
	}
}
