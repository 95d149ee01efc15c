package handlers

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hostcore/handlers/tools"
	"hostcore/sandbox"
)

func writeJSON(path, content string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return b
}

// TestReviewRecordsTellTheTruth: binary content gets no hunks, content too
// large to keep is not reversible, and session.delete takes the snapshot
// files (and scratch) with it (design section 4c).
func TestReviewRecordsTellTheTruth(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "auto")

	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "bin", ToolName: "Write", Args: writeJSON("blob.bin", "PK\x00\x01binary")})
	if !r.OK || r.Review == nil || !r.Review.Binary || len(r.Review.Hunks) != 0 || !r.Review.Reversible || r.Review.Status != "added" {
		t.Fatalf("binary write review: %+v", r.Review)
	}

	big := strings.Repeat("x", tools.ReviewMaxSnapshot+1)
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644)
	r = run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "big", ToolName: "Write", Args: writeJSON("big.txt", "small now\n")})
	if !r.OK || r.Review == nil || r.Review.Reversible || !r.Review.Truncated {
		t.Fatalf("oversized previous content: %+v", r.Review)
	}
	raw, _ := json.Marshal(map[string]string{"sessionId": "r", "snapshotId": r.Review.SnapshotID})
	if _, err := s.reviewRollback(t.Context(), raw); err == nil {
		t.Fatal("rolled back a snapshot that kept no previous bytes")
	}

	r = run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "txt", ToolName: "Write", Args: writeJSON("blob.bin", "now text\n")})
	if !r.OK || r.Review == nil || !r.Review.Binary {
		t.Fatalf("binary→text review: %+v", r.Review)
	}
	snaps := s.snapshotDir("r")
	if held, err := s.store.SnapshotTotals(t.Context(), "r"); err != nil || held.Count == 0 {
		t.Fatalf("no previous content was kept: %+v %v", held, err)
	}
	run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "scr", ToolName: "Write", Args: writeJSON(filepath.Join(s.cfg.DataDir, "scratch", "r", "note.md"), "draft")})

	del, _ := json.Marshal(map[string]string{"sessionId": "r"})
	if _, err := s.sessionDelete(t.Context(), del); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{snaps, filepath.Join(s.cfg.DataDir, "scratch", "r")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s survived session.delete", dir)
		}
	}
	if held, err := s.store.SnapshotTotals(t.Context(), "r"); err != nil || held.Count != 0 {
		t.Errorf("previous content survived session.delete: %+v %v", held, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); err != nil {
		t.Error("session.delete touched the workspace")
	}
}

// A change that landed but whose directory could not be synced (a file
// system that fails fsync on directories) is reported as made, with a
// warning, and keeps its review record: it used to be answered "not
// written" after the file had been replaced, and its undo thrown away.
func TestChangeMadeButNotSyncedIsNoFailure(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "d", "agent", "auto")
	target := filepath.Join(ws, "a.txt")
	os.WriteFile(target, []byte("OLD\n"), 0o644)
	restore := sandbox.FailDirSyncs(errors.New("input/output error"))
	defer restore()

	r := run(t, s, ExecuteParams{SessionID: "d", ToolCallID: "w", ToolName: "Write", Args: writeJSON("a.txt", "NEW\n")})
	d, _ := r.Details.(tools.WriteDetails)
	if !r.OK || r.Review == nil || !strings.Contains(d.Warning, "power loss") || !strings.Contains(r.Content[0].Text, "Warning:") {
		t.Fatalf("Write whose directory sync failed: %+v %+v", r, r.Review)
	}
	if got, _ := os.ReadFile(target); string(got) != "NEW\n" {
		t.Fatalf("file holds %q", got)
	}
	edit, _ := json.Marshal(map[string]string{"path": "a.txt", "old_string": "NEW", "new_string": "EDITED"})
	r2 := run(t, s, ExecuteParams{SessionID: "d", ToolCallID: "e", ToolName: "Edit", Args: edit})
	if d, _ := r2.Details.(tools.EditDetails); !r2.OK || r2.Review == nil || d.Warning == "" {
		t.Fatalf("Edit whose directory sync failed: %+v", r2)
	}
	created := run(t, s, ExecuteParams{SessionID: "d", ToolCallID: "c", ToolName: "Write", Args: writeJSON("new.txt", "x")})
	if !created.OK || created.Review == nil {
		t.Fatalf("new file whose directory sync failed: %+v", created)
	}

	// The undo of each still works, the sync still failing.
	for _, sn := range []string{r2.Review.SnapshotID, r.Review.SnapshotID, created.Review.SnapshotID} {
		raw, _ := json.Marshal(map[string]string{"sessionId": "d", "snapshotId": sn})
		if _, err := s.reviewRollback(t.Context(), raw); err != nil {
			t.Fatalf("rollback of %s: %v", sn, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "OLD\n" {
		t.Fatalf("after the rollbacks the file holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("the created file survived its rollback: %v", err)
	}
}

// A snapshot whose file was cut short or changed on disk is not restored:
// the rollback would put a fragment in place of the file.
func TestRollbackRefusesADamagedSnapshot(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "k", "agent", "auto")
	target := filepath.Join(ws, "a.txt")
	old := strings.Repeat("old line\n", 8000) // past store.SmallSnapshot: a file of its own
	os.WriteFile(target, []byte(old), 0o644)
	r := run(t, s, ExecuteParams{SessionID: "k", ToolCallID: "w", ToolName: "Write", Args: writeJSON("a.txt", "new\n")})
	if !r.OK || r.Review == nil {
		t.Fatalf("Write: %+v", r)
	}
	files, _ := filepath.Glob(filepath.Join(s.cfg.DataDir, "snapshot-blobs", "*", "*"))
	if len(files) != 1 {
		t.Fatalf("snapshot files: %v", files)
	}
	os.Truncate(files[0], 100)
	raw, _ := json.Marshal(map[string]string{"sessionId": "k", "snapshotId": r.Review.SnapshotID})
	if _, err := s.reviewRollback(t.Context(), raw); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("rollback of a damaged snapshot: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Fatalf("the file was touched: %d bytes", len(got))
	}
}
