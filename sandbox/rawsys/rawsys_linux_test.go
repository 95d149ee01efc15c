package rawsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The raw calls behave as x/sys/unix's: the same results, and errors that
// are the same Errno values (errors.Is works on them).
func TestRawCallsMatchTheOrdinaryOnes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("../a.txt", filepath.Join(dir, "sub", "link"))
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)

	var raw, want unix.Stat_t
	if err := Fstatat(dfd, "a.txt", &raw, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
	unix.Fstatat(dfd, "a.txt", &want, unix.AT_SYMLINK_NOFOLLOW)
	if raw.Ino != want.Ino || raw.Size != 6 || raw.Mode != want.Mode {
		t.Fatalf("Fstatat: %+v, want %+v", raw, want)
	}
	if err := Fstatat(dfd, "missing", &raw, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Fstatat of a missing file: %v", err)
	}
	if err := Fstatat(dfd, "a\x00b", &raw, 0); err == nil {
		t.Fatal("Fstatat took a name with a NUL")
	}

	beneath := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	for name, wantErr := range map[string]error{"../x": unix.EXDEV, "sub/link": unix.ELOOP, "missing": unix.ENOENT} {
		if fd, err := Openat2(dfd, name, beneath); fd != -1 || err != wantErr {
			t.Errorf("Openat2(%q) = %d, %v; want -1, %v", name, fd, err, wantErr)
		}
	}
	fd, err := Openat2(dfd, "a.txt", beneath)
	if err != nil {
		t.Fatal(err)
	}
	if err := Fstat(fd, &raw); err != nil || raw.Ino != want.Ino {
		t.Fatalf("Fstat: %v %+v", err, raw)
	}
	buf := make([]byte, 64)
	if n, err := Read(fd, buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("Read: %d %v %q", n, err, buf[:n])
	}
	if n, err := Read(fd, buf); n != 0 || err != nil {
		t.Fatalf("Read at the end: %d %v", n, err)
	}
	if n, err := Read(fd, nil); n != 0 || err != nil {
		t.Fatalf("Read of nothing: %d %v", n, err)
	}
	if err := Close(fd); err != nil {
		t.Fatal(err)
	}
	if err := Close(fd); err != unix.EBADF {
		t.Fatalf("second Close: %v, want EBADF", err)
	}
	if err := Fstat(fd, &raw); err != unix.EBADF {
		t.Fatalf("Fstat of a closed descriptor: %v", err)
	}
}

// On a non-blocking pipe the raw read and write return at once: EAGAIN
// when there is nothing to read or no room, never a wait.
func TestRawPipeNeverWaits(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 1<<16)
	if _, err := Read(p[0], buf); err != unix.EAGAIN {
		t.Fatalf("Read of an empty pipe: %v, want EAGAIN", err)
	}
	total := 0
	for {
		n, err := Write(p[1], buf)
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	got := 0
	for got < total {
		n, err := Read(p[0], buf)
		if err != nil {
			t.Fatalf("Read after %d of %d bytes: %v", got, total, err)
		}
		got += n
	}
	unix.Close(p[1])
	if n, err := Read(p[0], buf); n != 0 || err != nil {
		t.Fatalf("Read of a pipe whose writer closed: %d %v, want 0, nil", n, err)
	}
}

func TestLocalFS(t *testing.T) {
	for _, c := range []struct {
		path  string
		local bool
	}{{t.TempDir(), true}, {"/proc/self", false}, {"/sys", false}} {
		fd, err := unix.Open(c.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := LocalFS(fd)
		unix.Close(fd)
		if got != c.local {
			var sf unix.Statfs_t
			unix.Statfs(c.path, &sf)
			if c.local {
				t.Skipf("%s is on file system type %#x, not one LocalFS knows", c.path, sf.Type)
			}
			t.Errorf("LocalFS(%s) = %v, want %v (type %#x)", c.path, got, c.local, sf.Type)
		}
	}
	if LocalFS(-1) {
		t.Error("LocalFS of a bad descriptor")
	}
}
