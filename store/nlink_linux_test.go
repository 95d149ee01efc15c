package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// unlinked tells a file that still has its name from one removed, by
// statx, and by fstat where statx cannot answer: without it (ENOSYS),
// refused by a seccomp filter (EPERM, as Docker's default profile did
// before 18.04), or answering without the link count. Before the
// fallback covered every failure, EPERM made a removed journal look
// linked, and its removal was noticed a flush (up to 100 ms) late.
func TestUnlinked(t *testing.T) {
	fail := func(err error) func(int) (uint32, error) {
		return func(int) (uint32, error) { return 0, err }
	}
	for name, nlink := range map[string]func(int) (uint32, error){
		"statx": statxNlink, "ENOSYS": fail(syscall.ENOSYS), "EPERM": fail(syscall.EPERM), "no link count": fail(errNoNlink),
	} {
		path := filepath.Join(t.TempDir(), "f")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		fd := int(f.Fd())
		if unlinkedBy(nlink, fd) {
			t.Errorf("%s: a file with its name was called unlinked", name)
		}
		os.Remove(path)
		if !unlinkedBy(nlink, fd) {
			t.Errorf("%s: a removed file was not called unlinked", name)
		}
		f.Close()
	}
}
