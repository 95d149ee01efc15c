package landlock

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCacheKeepsAndReplans: the Cache hands out the ruleset it kept
// while nothing its plan read has changed, and plans again after each
// kind of change that would change the plan; a plan made while its
// directories were changing is not kept.
func TestCacheKeepsAndReplans(t *testing.T) {
	requireLandlock(t)
	base, err := os.MkdirTemp("/var/tmp", "llcache-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	os.MkdirAll(ws, 0o755)
	p := DefaultPolicy(WorkspaceWrite, ws, "", []string{"HOME=" + home})
	var c Cache
	defer c.Close()
	get := func() *Ruleset {
		t.Helper()
		rs, err := c.Prepare(p)
		if err != nil {
			t.Fatal(err)
		}
		if rs.fd == c.rsFD() {
			t.Fatal("Prepare handed out the cached descriptor itself, not a duplicate")
		}
		rs.Close()
		return c.rs
	}
	// settled waits out racyWindow and returns the ruleset kept then.
	// Other programs change /tmp and /var/tmp, which the plan watches
	// (they are above the home): it tries a few times.
	settled := func() *Ruleset {
		t.Helper()
		for range 20 {
			time.Sleep(2 * racyWindow)
			if kept := get(); kept != nil {
				return kept
			}
		}
		t.Fatal("no plan was kept in 20 tries")
		return nil
	}
	// The first Prepare of a policy had nothing to look at before its
	// plan: it keeps only the stamps.
	if kept := get(); kept != nil {
		t.Error("the first plan of a policy was kept")
	}
	same := false
	for range 5 {
		first := settled()
		if same = get() == first; same {
			break
		}
	}
	if !same {
		t.Error("nothing changed, yet the ruleset was made again each time")
	}
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"a denied path made in the home", func() { os.Mkdir(filepath.Join(home, ".ssh"), 0o700) }},
		{"a file made in a listed directory (the home, carved now)", func() { os.WriteFile(filepath.Join(home, "notes"), nil, 0o644) }},
		{"a denied file made below an existing directory", func() { os.MkdirAll(filepath.Join(home, ".config", "gcloud"), 0o700) }},
		{"the workspace replaced", func() { os.Rename(ws, ws+".old"); os.Mkdir(ws, 0o755) }},
		{"a denied path's mode changed", func() { os.Chmod(filepath.Join(home, ".ssh"), 0o755) }},
	} {
		before := settled()
		change.do()
		if after := settled(); after == before {
			t.Errorf("%s: the kept ruleset was handed out again", change.what)
		}
	}
	// Another policy replaces the kept one.
	before := settled()
	p.Mode = ReadOnly
	if after := get(); after == before {
		t.Error("another policy got the kept ruleset")
	}
}

// TestCacheRacy: a directory whose modification time is within
// racyWindow of the plan may change again in the same clock tick without
// its time moving, so such a plan is not kept; a time in whole seconds
// (a file system with one- or two-second stamps) is trusted only past
// coarseWindow.
func TestCacheRacy(t *testing.T) {
	dir := t.TempDir()
	watch := map[string]watchKind{dir: watchEntries, filepath.Join(dir, "x"): watchIdent}
	if !racy(watch, takeStamps(watch), time.Now()) {
		t.Error("a directory made just now is not racy")
	}
	if racy(watch, takeStamps(watch), time.Now().Add(time.Hour)) {
		t.Error("a directory made an hour before the plan is racy")
	}
	if s := takeStamps(watch)[filepath.Join(dir, "x")]; s.err != unix.ENOENT || s.mtime != 0 {
		t.Errorf("a missing path's stamp: %+v", s)
	}
	now := time.Now()
	for _, tc := range []struct {
		name  string
		mtime time.Time
		racy  bool
	}{
		{"whole seconds, a second ago", now.Truncate(time.Second).Add(-time.Second), true},
		{"whole seconds, past coarseWindow", now.Truncate(time.Second).Add(-coarseWindow - time.Second), false},
		{"nanoseconds, past racyWindow", now.Add(-time.Second).Truncate(time.Second).Add(7), false},
	} {
		if err := os.Chtimes(dir, tc.mtime, tc.mtime); err != nil {
			t.Fatal(err)
		}
		if got := racy(watch, takeStamps(watch), now); got != tc.racy {
			t.Errorf("%s: racy = %v, want %v", tc.name, got, tc.racy)
		}
	}
}

// rsFD is the kept ruleset's descriptor, -1 without one.
func (c *Cache) rsFD() int {
	if c.rs == nil {
		return -1
	}
	return c.rs.fd
}
