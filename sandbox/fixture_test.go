//go:build unix

package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// secret is the content of every file outside the roots; no in-root
// operation may ever return it.
const secret = "SECRET-OUTSIDE"

// fixture is a fresh tree per case:
//
//	tmp/w         the workspace
//	tmp/w_evil    a prefix sibling of the workspace
//	tmp/outside   files the session must not touch
//	tmp/scratch   the scratch root
type fixture struct {
	tmp, ws, scratch, out string
	roots                 Roots
}

func canonTemp(t testing.TB) string {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return tmp
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	tmp := canonTemp(t)
	fx := &fixture{
		tmp:     tmp,
		ws:      filepath.Join(tmp, "w"),
		scratch: filepath.Join(tmp, "scratch"),
		out:     filepath.Join(tmp, "outside"),
	}
	fx.roots = Roots{Workspace: fx.ws, Scratch: fx.scratch}

	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(tmp, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := func(p, data string, mode fs.FileMode) {
		if err := os.WriteFile(filepath.Join(tmp, p), []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(tmp, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(tmp, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"w/dir", "w_evil", "outside/sub", "scratch/sdir"} {
		mkdir(d)
	}
	file("w/file.txt", "workspace", 0o644)
	file("w/dir/inner.txt", "inner", 0o644)
	file("w/script.sh", "#!/bin/sh\necho hi\n", 0o755)
	file("w/héllo wörld ✓.txt", "unicode", 0o644)
	file("w_evil/secret.txt", secret, 0o644)
	file("outside/secret.txt", secret, 0o644)
	file("outside/sub/secret.txt", secret, 0o644)
	file("scratch/s.txt", "scratch", 0o644)

	link(filepath.Join(tmp, "outside/secret.txt"), "w/link_out_file")
	link(filepath.Join(tmp, "outside"), "w/link_out_dir")
	link("../outside/secret.txt", "w/rel_escape")
	link("file.txt", "w/link_in")
	link("dir", "w/link_dir_in")
	link(filepath.Join(tmp, "w/dir/inner.txt"), "w/abs_in")
	link("chain2", "w/chain1")
	link("dir/../chain3", "w/chain2")
	link("link_out_file", "w/chain3")
	link("loop2", "w/loop1")
	link("loop1", "w/loop2")
	link("selfloop", "w/selfloop")
	link(filepath.Join(tmp, "outside/created_by_attack.txt"), "w/dangling_out")
	link("nothing_here.txt", "w/dangling_in")
	link(filepath.Join(tmp, "scratch/s.txt"), "w/to_scratch")
	link("nonexist/../link_out_dir/secret.txt", "w/missing_dotdot")
	link("../w_evil", "w/to_evil")
	link(filepath.Join(tmp, "w/file.txt"), "scratch/to_ws")
	link(filepath.Join(tmp, "w"), "scratch/dir_to_ws")
	link(filepath.Join(tmp, "outside/secret.txt"), "scratch/to_out")
	link("../outside/sub", "scratch/rel_out")
	link("s.txt", "scratch/to_self")

	if err := syscall.Mkfifo(filepath.Join(fx.ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A socket path must be short; listen via a relative name from inside w.
	l, err := listenUnixIn(fx.ws, "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return fx
}

func listenUnixIn(dir, name string) (net.Listener, error) {
	p := filepath.Join(dir, name)
	if len(p) < 100 {
		return net.Listen("unix", p)
	}
	// Long temp paths exceed sun_path; bind in a short dir and move it in.
	short, err := os.MkdirTemp("/tmp", "sb")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", filepath.Join(short, name))
	if err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(short, name), p); err != nil {
		l.Close()
		return nil, err
	}
	os.Remove(short)
	return l, nil
}

// snapshot records everything under tmp except the two roots: names, types,
// permissions, sizes, content hashes, link targets and mtimes.
func (fx *fixture) snapshot(t testing.TB) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(fx.tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == fx.ws || p == fx.scratch {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		snap[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func (fx *fixture) assertOutsideUnchanged(t testing.TB, before map[string]string) {
	t.Helper()
	if diff := cmp.Diff(before, fx.snapshot(t)); diff != "" {
		t.Errorf("outside of the roots changed (-before +after):\n%s", diff)
	}
}

// rel shortens an absolute path under tmp for comparisons.
func (fx *fixture) rel(p string) string {
	if r, err := filepath.Rel(fx.tmp, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// guard fails the test if fn does not return within a few seconds, which is
// how a blocking open of a FIFO or device would show.
func guard(t testing.TB, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}
