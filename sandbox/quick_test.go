//go:build linux

// QuickOpen opens through openat2, which only Linux has; elsewhere it opens
// nothing (quick_other.go). checkQuick, which the fuzz target uses
// everywhere, is in quickcheck_test.go.

package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// QuickOpen opens only plain workspace files by a path without links,
// and leaves everything else to Resolve.
func TestQuickOpen(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	for p, want := range map[string]string{
		"file.txt":                            "file.txt",
		"dir/inner.txt":                       "dir/inner.txt",
		"./dir//inner.txt":                    "dir/inner.txt",
		"dir/../file.txt":                     "file.txt",
		"missing/../file.txt":                 "file.txt",
		"héllo wörld ✓.txt":                   "héllo wörld ✓.txt",
		filepath.Join(fx.ws, "file.txt"):      "file.txt",
		filepath.Join(fx.ws, "../w/file.txt"): "file.txt",
		"link_in":                             "",
		"link_dir_in/inner.txt":               "",
		"link_out_file":                       "",
		"abs_in":                              "",
		"rel_escape":                          "",
		"../outside/secret.txt":               "",
		"../w/file.txt":                       "",
		filepath.Join(fx.out, "secret.txt"):   "",
		filepath.Join(fx.scratch, "s.txt"):    "",
		fx.ws + "_evil/secret.txt":            "",
		"fifo":                                "",
		"sock":                                "",
		"dir":                                 "",
		".":                                   "",
		"missing.txt":                         "",
		"file.txt/":                           "",
		"file.txt/.":                          "",
		"a\x00b":                              "",
		"":                                    "",
	} {
		guard(t, "QuickOpen "+p, func() {
			f, res, _, ok := fx.roots.QuickOpen(&d, p)
			if ok {
				f.Close()
			}
			switch {
			case want == "" && ok:
				t.Errorf("QuickOpen(%q) opened %s; it must leave it to Resolve", p, res.Abs)
			case want != "" && !ok:
				t.Errorf("QuickOpen(%q) declined", p)
			case ok && res.Display != want:
				t.Errorf("QuickOpen(%q) = %s, want %s", p, res.Display, want)
			}
			if r, err := fx.roots.Resolve(p); err == nil || ok {
				checkQuick(t, fx, p, r, err)
			}
		})
	}
	if _, _, _, ok := (Roots{Scratch: fx.scratch}).QuickOpen(&d, "file.txt"); ok {
		t.Error("QuickOpen without a workspace opened something")
	}
}

// A workspace that is now a link is refused, though its old fd-free
// path would still open.
func TestQuickOpenRefusesAWorkspaceLink(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	roots := Roots{Workspace: filepath.Join(fx.scratch, "dir_to_ws"), Scratch: fx.scratch}
	if _, _, _, ok := roots.QuickOpen(&d, "file.txt"); ok {
		t.Fatal("QuickOpen followed a link at the workspace path")
	}
}

// The workspace found at its path is trusted for quickDirTTL: a swap in
// that time cannot make QuickOpen read anything but the tree it found
// (here, the workspace moved away and a link to the outside put in its
// place); after it, the path is looked at again and the link refused.
func TestQuickDirKeepsTheTreeItFound(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); !ok {
		t.Skip("the test's temporary directory is not on a local file system QuickOpen takes")
	} else {
		f.Close()
	}
	moved := filepath.Join(fx.tmp, "moved")
	if err := os.Rename(fx.ws, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fx.out, fx.ws); err != nil {
		t.Fatal(err)
	}
	f, _, _, ok := fx.roots.QuickOpen(&d, "secret.txt")
	if ok {
		f.Close()
		t.Fatal("QuickOpen read the outside through the swapped workspace path")
	}
	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); ok {
		data, _ := io.ReadAll(f)
		f.Close()
		if string(data) != "workspace" {
			t.Fatalf("read %q from the tree it found", data)
		}
	}
	d.mu.Lock()
	d.checked = d.checked.Add(-quickDirTTL)
	d.mu.Unlock()
	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); ok {
		f.Close()
		t.Fatal("once its time was up, QuickOpen still used the directory behind a link")
	}
}

// The size read at the open ends the read without a last system call,
// and a file that grew after the open is read as it was then.
func TestQuickFileStopsAtTheSizeItHad(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt")
	if !ok {
		t.Skip("the test's temporary directory is not on a local file system QuickOpen takes")
	}
	defer f.Close()
	os.WriteFile(filepath.Join(fx.ws, "file.txt"), []byte("workspace and more"), 0o644)
	data, err := io.ReadAll(f)
	if err != nil || string(data) != "workspace" {
		t.Fatalf("read %q, %v", data, err)
	}
}

// QuickOpen opens nothing but a regular file: a FIFO's writer is not
// released (opening a FIFO would), and a directory held for quick opens
// is let go within quickDirTTL (it would keep its file system from
// being unmounted).
func TestQuickOpenOpensOnlyRegularFilesAndLetsGo(t *testing.T) {
	fx := newFixture(t)
	var d QuickDir
	defer d.Close()
	released := make(chan struct{})
	go func() {
		// Blocks until some reader opens the FIFO.
		if f, err := os.OpenFile(filepath.Join(fx.ws, "fifo"), os.O_WRONLY, 0); err == nil {
			close(released)
			f.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if _, _, _, ok := fx.roots.QuickOpen(&d, "fifo"); ok {
		t.Fatal("QuickOpen opened a FIFO")
	}
	select {
	case <-released:
		t.Fatal("QuickOpen opened the FIFO: its writer was released")
	case <-time.After(100 * time.Millisecond):
	}
	// Unblock the writer.
	if f, err := os.OpenFile(filepath.Join(fx.ws, "fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		defer f.Close()
	}

	if f, _, _, ok := fx.roots.QuickOpen(&d, "file.txt"); !ok {
		t.Skip("the test's temporary directory is not on a local file system QuickOpen takes")
	} else {
		f.Close()
	}
	deadline := time.Now().Add(quickDirTTL + 2*time.Second)
	for {
		d.mu.Lock()
		open := d.fd > 0
		d.mu.Unlock()
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workspace directory is still held open past quickDirTTL")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
