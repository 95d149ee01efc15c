package scratch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestEnsureRemoveAndSweep(t *testing.T) {
	data := t.TempDir()
	live, gone, old := Dir(data, "live"), Dir(data, "gone"), Dir(data, "old")
	for _, d := range []string{live, gone, old} {
		if err := Ensure(d); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(live); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch dir: %v %v (want private 0700)", fi, err)
	}
	now := time.Now()
	os.Chtimes(old, now.Add(-8*24*time.Hour), now.Add(-8*24*time.Hour))
	exists := func(id string) bool { return id == "live" || id == "old" }
	removed, err := Sweep(filepath.Join(data, "scratch"), exists, MaxAge, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, []string{"gone", "old"}) {
		t.Fatalf("swept %v, want [gone old]", removed)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatal("a live, recent scratch dir was swept")
	}
	if err := Remove(live); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Fatal("Remove left the directory")
	}
	// Sweeping a data dir that has no scratch yet is not an error.
	if got, err := Sweep(filepath.Join(t.TempDir(), "scratch"), exists, MaxAge, now); err != nil || len(got) != 0 {
		t.Fatalf("empty sweep: %v %v", got, err)
	}
}
