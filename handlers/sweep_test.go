package handlers

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStartupSweep: scratch and snapshot directories of sessions that no
// longer exist go, and so do scratch directories untouched for over 7
// days; a live, recent session keeps both (design section 4b).
func TestStartupSweep(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	newSession(t, s, "live", "agent", "ask")
	newSession(t, s, "stale", "agent", "ask")
	data := s.cfg.DataDir
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{data}, parts...)...)
		os.MkdirAll(p, 0o700)
		os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o600)
		return p
	}
	liveScratch, liveSnaps := mk("scratch", "live"), mk("snapshots", "live")
	ghostScratch, ghostSnaps := mk("scratch", "ghost"), mk("snapshots", "ghost")
	staleScratch := mk("scratch", "stale")
	old := time.Now().Add(-8 * 24 * time.Hour)
	os.Chtimes(filepath.Join(staleScratch, "f"), old, old) // nothing in it touched either
	os.Chtimes(staleScratch, old, old)

	if err := s.SweepOrphans(t.Context()); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{liveScratch: true, liveSnaps: true, ghostScratch: false, ghostSnaps: false, staleScratch: false} {
		_, err := os.Stat(p)
		if exists := err == nil; exists != want {
			t.Errorf("%s: exists=%v, want %v", p, exists, want)
		}
	}
}
