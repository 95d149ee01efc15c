//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// held is the root bases holds for dir, nil if none.
func held(dir string) *baseEntry {
	bases.mu.Lock()
	defer bases.mu.Unlock()
	return bases.entries[dir]
}

// heldFixture is a fixture whose workspace a Read has left held.
func heldFixture(t *testing.T) *fixture {
	t.Helper()
	fx := newFixture(t)
	t.Cleanup(func() { ReleaseBase(fx.ws) })
	if _, _, err := ReadFileLimit(mustResolve(t, fx.roots, "file.txt"), 1<<20); err != nil {
		t.Fatal(err)
	}
	return fx
}

// remake removes dir and makes an empty directory at its path.
func remake(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// The workspace is opened once and held for the operations after it.
func TestBaseHeldBetweenOperations(t *testing.T) {
	fx := heldFixture(t)
	first := held(fx.ws)
	if first == nil {
		t.Fatal("the workspace is not held after a Read")
	}
	if _, err := WriteAtomic(mustResolve(t, fx.roots, "new.txt"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if e := held(fx.ws); e != first || e.users != 0 {
		t.Fatalf("held %p (users %d), want %p with no users left", e, e.users, first)
	}
	ReleaseBase(fx.ws)
	if held(fx.ws) != nil {
		t.Fatal("ReleaseBase left the workspace held")
	}
	if _, err := first.root.Stat("."); err == nil {
		t.Fatal("ReleaseBase left the descriptor open")
	}
}

// A workspace removed and made again is a new directory: what is written
// lands in it, never in the removed one held open.
func TestBaseRemovedAndMadeAgain(t *testing.T) {
	fx := heldFixture(t)
	remake(t, fx.ws)
	if _, err := WriteAtomic(mustResolve(t, fx.roots, "after.txt"), []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(fx.ws, "after.txt")); got != "kept" {
		t.Fatalf("after.txt = %q", got)
	}
}

// The inode number of a removed workspace can come back with the next
// directory made at its path. The removed directory held open has the
// same device and inode then, but no links: it is never used.
func TestBaseRemovedWithItsInodeReused(t *testing.T) {
	fx := heldFixture(t)
	res := mustResolve(t, fx.roots, "file.txt")
	old := held(fx.ws)
	remake(t, fx.ws)
	// Resolve would now see the new directory; given the old identity, as
	// it would be were the inode reused, the held directory must not
	// serve.
	r, err := bases.take(fx.ws, res.BaseIdent)
	if err == nil {
		r.Close()
		t.Fatal("a removed directory was handed out for its path")
	}
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("err = %v, want ErrChanged", err)
	}
	if held(fx.ws) == old {
		t.Fatal("the removed directory is still held")
	}
}

// A directory renamed away and another put at its path: the operation
// opens the new one.
func TestBaseReplacedByRename(t *testing.T) {
	fx := heldFixture(t)
	if err := os.Rename(fx.ws, fx.ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(fx.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAtomic(mustResolve(t, fx.roots, "file.txt"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(fx.ws, "file.txt")); got != "new" {
		t.Fatalf("file.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(fx.ws+".old", "file.txt")); err != nil {
		t.Fatalf("the renamed directory lost its file: %v", err)
	}
}

// OpenDir of the workspace itself gives the caller a root of its own:
// closing it leaves the held one open.
func TestOpenDirOfHeldBase(t *testing.T) {
	fx := heldFixture(t)
	r, err := OpenDir(mustResolve(t, fx.roots, "."))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	e := held(fx.ws)
	if e == nil {
		t.Fatal("the workspace is not held")
	}
	if _, err := e.root.Stat("."); err != nil {
		t.Fatalf("closing OpenDir's root closed the held one: %v", err)
	}
}

// A call resolved before its workspace was renamed away, and run after
// (a Write that waited for its session's turn): it must not land in the
// renamed directory, which is still linked and still the one it resolved.
func TestBaseRenamedAwayAfterResolve(t *testing.T) {
	fx := heldFixture(t)
	res := mustResolve(t, fx.roots, "late.txt")
	if err := os.Rename(fx.ws, fx.ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(fx.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAtomic(res, []byte("x")); !errors.Is(err, ErrChanged) {
		t.Fatalf("WriteAtomic after the rename: %v, want ErrChanged", err)
	}
	for _, dir := range []string{fx.ws, fx.ws + ".old"} {
		if _, err := os.Lstat(filepath.Join(dir, "late.txt")); err == nil {
			t.Errorf("late.txt was written into %s", dir)
		}
	}
}
