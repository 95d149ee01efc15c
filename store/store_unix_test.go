//go:build unix

package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The database, its WAL and its shared-memory file are the user's alone
// even in a data dir that others may list (0755, created by hand or by
// another tool) under the usual umask; a database an earlier start left
// 0644 is made 0600.
func TestDatabaseFilesAreTheUsers(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, name := range []string{"hostcore.db", "hostcore.db-wal", "hostcore.db-shm"} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if os.IsNotExist(err) && name != "hostcore.db" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("%s: %s is %#o, want 0600", when, name, perm)
			}
		}
	}
	s := mustOpen(t, dir)
	if err := s.SetSetting(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "hostcore.db-wal")); err != nil {
		t.Fatalf("no WAL to check: %v", err)
	}
	check("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")

	// An empty WAL, as a crash between its creation and first write
	// leaves it, and a database left readable by others.
	if err := os.WriteFile(filepath.Join(dir, "hostcore.db-wal"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hostcore.db", "hostcore.db-wal"} {
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = mustOpen(t, dir)
	defer s.Close()
	check("reopened")
	if v, ok, err := s.GetSetting(context.Background(), "k"); err != nil || !ok || v != "v" {
		t.Fatalf("after reopening: setting %q, %v, %v; want the stored one", v, ok, err)
	}
}

// A FIFO where the journal goes stops Open at once with a message (a
// read of a FIFO it held open for writing itself waited for ever).
func TestJournalThatIsAFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, journalName), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := Open(dir)
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Open with a FIFO for its journal: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open hung on a FIFO for its journal")
	}
}

// A database that is a link to a file this user cannot write is as
// unwritable as the file: the check follows the link. (As root, an
// immutable file stands for one the user may not write.)
func TestNotWritableFollowsALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.db")
	if err := os.WriteFile(target, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", target).CombinedOutput(); err != nil {
			t.Skipf("cannot make a file root may not write here: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", target).Run() })
	}
	db := filepath.Join(dir, "hostcore.db")
	if err := os.Symlink(target, db); err != nil {
		t.Fatal(err)
	}
	if got := notWritable(db); got != db {
		t.Fatalf("notWritable = %q, want %q", got, db)
	}
}
