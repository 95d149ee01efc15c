package sandbox

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A directory swapped for a FIFO in a loop (renameat2 RENAME_EXCHANGE)
// while a file tool opens it: os.OpenRoot, which opens without
// O_DIRECTORY or O_NONBLOCK, blocked on the FIFO for good once the swap
// fell between the check and the open (a review wedged a Write, and every
// later mutation of its session, within a few hundred calls). Every open
// must now end, as the directory or as an error.
func TestOpenDirRootNeverBlocksOnASwappedFIFO(t *testing.T) {
	ws := t.TempDir()
	dir, fifo := filepath.Join(ws, "x"), filepath.Join(ws, "xfifo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, fifo, unix.RENAME_EXCHANGE); err != nil {
		t.Skip("no RENAME_EXCHANGE here:", err)
	}
	var stop atomic.Bool
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, fifo, unix.RENAME_EXCHANGE)
		}
	}()
	base, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	done := make(chan int)
	go func() {
		opened := 0
		for i := range 20000 {
			var r *os.Root
			var err error
			if i%2 == 0 {
				r, err = openDirRoot(nil, dir)
			} else {
				r, err = openDirRoot(base, "x")
			}
			if err == nil {
				opened++
				r.Close()
			}
		}
		done <- opened
	}()
	select {
	case n := <-done:
		t.Logf("%d of 20000 opens found the directory", n)
	case <-time.After(60 * time.Second):
		// Let the blocked open go: a writer on the FIFO ends its wait.
		stop.Store(true)
		<-flipped
		for _, p := range []string{dir, fifo} {
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		t.Fatal("an open of a directory swapped for a FIFO blocked")
	}
	stop.Store(true)
	<-flipped
}
