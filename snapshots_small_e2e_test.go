package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The retention rule over small previous content, which the store keeps
// in the database (in the snapshot's row under 128 bytes, in its blob
// table above): past the count bound the oldest snapshots are evicted and
// their rollback answers CONFLICT with the rule; content alone past the
// byte bound is never kept, and its Write says reversible:false at once;
// after a restart the evicted ones still say so and the kept ones roll
// back to their bytes, of either kind.
func TestSnapshotRetentionOfSmallContentAcrossARestart(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	env := []string{"HOSTCORE_SNAPSHOT_RETENTION=3,1000"}
	before := []string{"tiny 0\n", strings.Repeat("in the blob table 1 ", 10), "tiny 2\n", strings.Repeat("in the blob table 3 ", 10), "tiny 4\n"}
	for i, c := range before {
		os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte(c), 0o644)
	}
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("past the byte bound\n", 60)), 0o644)

	type review struct {
		SnapshotID string `json:"snapshotId"`
		Reversible bool   `json:"reversible"`
	}
	write := func(h *wireHost, id, path string) review {
		t.Helper()
		var r struct {
			OK      bool   `json:"ok"`
			Message string `json:"message"`
			Review  review `json:"review"`
		}
		json.Unmarshal(h.call(t, 10*time.Second, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": id,
			"toolName": "Write", "args": map[string]any{"path": path, "content": "after\n"}}), &r)
		if !r.OK {
			t.Fatalf("Write %s: %s", path, r.Message)
		}
		return r.Review
	}
	h := startWireHost(t, bin, env, nil, "--data-dir", data)
	h.call(t, 10*time.Second, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	var snaps []string
	for i := range before {
		r := write(h, fmt.Sprint("w", i), fmt.Sprintf("f%d.txt", i))
		if !r.Reversible {
			t.Fatalf("overwrite of f%d.txt: not reversible", i)
		}
		snaps = append(snaps, r.SnapshotID)
	}
	if r := write(h, "wbig", "big.txt"); r.Reversible {
		t.Fatal("a Write whose previous content is past the byte bound says reversible:true")
	} else if res, e := rollbackAnswer(t, h, "s", r.SnapshotID); !strings.Contains(e, "CONFLICT") || !strings.Contains(e, "larger than the retention rule's bound") {
		t.Fatalf("rollback of content past the byte bound: result %s, error %s", res, e)
	}
	h.stdin.Close()
	if code := h.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("hostcore exited %d", code)
	}

	h2 := startWireHost(t, bin, env, nil, "--data-dir", data)
	for i := range 2 {
		if res, e := rollbackAnswer(t, h2, "s", snaps[i]); !strings.Contains(e, "CONFLICT") || !strings.Contains(e, "evicted by the retention rule") {
			t.Fatalf("rollback of evicted snapshot %d after a restart: result %s, error %s", i, res, e)
		}
	}
	for i := 2; i < len(before); i++ {
		if res, e := rollbackAnswer(t, h2, "s", snaps[i]); !strings.Contains(res, "rolledBack") {
			t.Fatalf("rollback of kept snapshot %d after a restart: result %s, error %s", i, res, e)
		}
		if got, _ := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i))); string(got) != before[i] {
			t.Fatalf("after its rollback f%d.txt holds %q, want %q", i, got, before[i])
		}
	}
	h2.stdin.Close()
	if code := h2.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("restarted hostcore exited %d", code)
	}
}
