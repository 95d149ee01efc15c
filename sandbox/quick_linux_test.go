package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// QuickOpen runs on the read goroutine, so it must never wait on a server:
// a file system mounted inside the workspace whose server never answers
// (here a FUSE mount whose daemon never replies, not even to its INIT) is
// not entered at all. It used to be, by the stat that looks at the type
// first: that stat walked into the mount and waited for good, and every
// later request with it.
func TestQuickOpenNeverEntersAMountInsideTheWorkspace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	fx := newFixture(t)
	mnt := filepath.Join(fx.ws, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	dev, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	if err := unix.Mount("hang", mnt, "fuse", 0, fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0", dev)); err != nil {
		unix.Close(dev)
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	var d QuickDir
	// Cleanups run last registered first: the connection is aborted (and
	// a QuickOpen waiting on it fails) before d.Close takes the lock such
	// a QuickOpen holds.
	t.Cleanup(d.Close)
	t.Cleanup(func() {
		unix.Close(dev) // aborts the connection: anything waiting on it fails
		unix.Unmount(mnt, unix.MNT_DETACH)
	})
	for _, p := range []string{"mnt", "mnt/x", "mnt/a/b", filepath.Join(fx.ws, "mnt/x")} {
		done := make(chan bool, 1)
		go func() {
			f, _, _, ok := fx.roots.QuickOpen(&d, p)
			if ok {
				f.Close()
			}
			done <- ok
		}()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("QuickOpen(%q) opened a file on the mount", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("QuickOpen(%q) waits on the mount's server", p)
		}
	}
	// The rest of the workspace still opens.
	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); !ok {
		t.Fatal("QuickOpen declined a plain file beside the mount")
	} else {
		f.Close()
	}
}

// QuickOpen's files hold two descriptors (the file and the O_PATH one it
// was looked at through); Close closes both, and a refused open leaves
// none behind.
func TestQuickOpenLeavesNoDescriptor(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); ok { // opens the workspace once
		f.Close()
	}
	before := count()
	for range 100 {
		f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt")
		if !ok {
			t.Fatal("QuickOpen declined a plain file")
		}
		f.Close()
		f.Close() // twice is harmless, and closes nobody else's descriptor
		fx.roots.QuickOpen(&d, "missing.txt")
		fx.roots.QuickOpen(&d, "dir_to_ws") // a link: refused
	}
	if after := count(); after != before {
		t.Fatalf("descriptors: %d before, %d after", before, after)
	}
}
