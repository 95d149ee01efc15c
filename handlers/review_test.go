package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

	big := strings.Repeat("x", reviewMaxSnapshot+1)
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
	if entries, _ := os.ReadDir(snaps); len(entries) == 0 {
		t.Fatal("no snapshot files were kept")
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
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); err != nil {
		t.Error("session.delete touched the workspace")
	}
}
