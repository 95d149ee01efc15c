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

// A scratch directory whose top is old but where a file was written
// recently (rewritten in place, or in a subdirectory such as pasted/) is in
// use: the sweep keeps it. Before, it went by the top directory's time.
func TestSweepGoesByTheNewestEntry(t *testing.T) {
	data := t.TempDir()
	busy, idle := Dir(data, "busy"), Dir(data, "idle")
	now := time.Now()
	long := now.Add(-8 * 24 * time.Hour)
	for _, d := range []string{busy, idle} {
		os.MkdirAll(filepath.Join(d, "pasted"), 0o700)
		os.WriteFile(filepath.Join(d, "pasted", "img.png"), []byte("x"), 0o600)
		os.Chtimes(filepath.Join(d, "pasted", "img.png"), long, long)
		os.Chtimes(filepath.Join(d, "pasted"), long, long)
	}
	os.WriteFile(filepath.Join(busy, "pasted", "new.png"), []byte("y"), 0o600) // written now
	os.Chtimes(filepath.Join(busy, "pasted"), long, long)
	os.Chtimes(busy, long, long)
	os.Chtimes(idle, long, long)
	removed, err := Sweep(filepath.Join(data, "scratch"), func(string) bool { return true }, MaxAge, now)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"idle"}) {
		t.Fatalf("swept %v, want [idle]", removed)
	}
}

// A read-only tree inside scratch (a Go module cache) is removed too. (As
// root, which the CI is, permissions do not stop a removal; as a desktop
// user they did, and the next session with the same id inherited the
// files.)
func TestRemoveReadOnlyTree(t *testing.T) {
	dir := Dir(t.TempDir(), "s")
	ro := filepath.Join(dir, "build", "x")
	os.MkdirAll(ro, 0o700)
	os.WriteFile(filepath.Join(ro, "f"), []byte("x"), 0o400)
	os.Chmod(ro, 0o500)
	os.Chmod(filepath.Join(dir, "build"), 0o500)
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("left: %v", err)
	}
}
