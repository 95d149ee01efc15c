package handlers

import (
	"encoding/json"
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
	os.Chtimes(ghostSnaps, old, old) // the store judges nothing made since it opened

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

// A zero-length hostcore.db opened as a new database, and the sweep then
// removed every session's scratch and snapshots as orphans (a durability
// review). A new, empty database keeps what the data dir holds.
func TestSweepKeepsFilesNextToANewDatabase(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	kept := filepath.Join(s.cfg.DataDir, "snapshots", "lost", "snap_1.before")
	os.MkdirAll(filepath.Dir(kept), 0o700)
	os.WriteFile(kept, []byte("x"), 0o600)
	if err := s.SweepOrphans(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("a new database's sweep removed %s", kept)
	}
}

// A previous-content file saved by a call killed before its snapshot row
// was written stayed for the session's life, outside its budget.
func TestSweepRemovesStraySnapshotFiles(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "s1", "agent", "auto")
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("before\n"), 0o644)
	r := run(t, s, ExecuteParams{SessionID: "s1", ToolCallID: "w", ToolName: "Write", Args: []byte(`{"path":"f.txt","content":"after\n"}`)})
	if r.Review == nil {
		t.Fatalf("no review: %+v", r)
	}
	dir := s.snapshotDir("s1")
	os.MkdirAll(dir, 0o700)
	stray := filepath.Join(dir, "snap_killed.before")
	os.WriteFile(stray, []byte("x"), 0o600)
	old := time.Now().Add(-time.Hour) // the store judges nothing made since it opened
	os.Chtimes(stray, old, old)
	if err := s.SweepOrphans(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); err == nil {
		t.Error("the stray file is still there")
	}
	raw, _ := json.Marshal(map[string]string{"sessionId": "s1", "snapshotId": r.Review.SnapshotID})
	if _, err := s.reviewRollback(t.Context(), raw); err != nil {
		t.Errorf("the snapshot's own content went: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(got) != "before\n" {
		t.Errorf("after the rollback f.txt holds %q", got)
	}
}
