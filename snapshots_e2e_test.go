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

// rollbackAnswer sends review.rollback and returns its result or its
// error, as sent.
func rollbackAnswer(t *testing.T, h *wireHost, session, snapshot string) (result, errJSON string) {
	t.Helper()
	_, ch, err := h.start("review.rollback", map[string]any{"sessionId": session, "snapshotId": snapshot})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-ch:
		var m wireMsg
		json.Unmarshal(line, &m)
		return string(m.Result), string(m.Error)
	case <-time.After(10 * time.Second):
		t.Fatal("review.rollback: no answer")
	}
	return "", ""
}

// The retention rule bounds the snapshots a session keeps: past it, the
// oldest loses its previous content (and its file), and its rollback
// answers CONFLICT with the rule, not a rollback that silently fails;
// the snapshots kept still roll back after a restart.
func TestSnapshotRetentionEvictsTheOldestAndKeepsTheRest(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	env := []string{"HOSTCORE_SNAPSHOT_RETENTION=3,1048576"}
	const n = 3
	// Past store.SmallSnapshot: each previous content is a file of its own.
	content := func(i int) string { return strings.Repeat(fmt.Sprint(i), 70000) }
	f := filepath.Join(ws, "f.txt")
	os.WriteFile(f, []byte(content(0)), 0o644)

	h := startWireHost(t, bin, env, nil, "--data-dir", data)
	h.call(t, 10*time.Second, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	var snaps []string
	for i := 1; i <= n+1; i++ {
		var r struct {
			OK     bool `json:"ok"`
			Review struct {
				SnapshotID string `json:"snapshotId"`
				Reversible bool   `json:"reversible"`
			} `json:"review"`
		}
		json.Unmarshal(h.call(t, 10*time.Second, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("w", i),
			"toolName": "Write", "args": map[string]any{"path": "f.txt", "content": content(i)}}), &r)
		if !r.OK || !r.Review.Reversible {
			t.Fatalf("overwrite %d: %+v", i, r)
		}
		snaps = append(snaps, r.Review.SnapshotID)
	}
	evicted := func(h *wireHost) {
		t.Helper()
		res, e := rollbackAnswer(t, h, "s", snaps[0])
		if !strings.Contains(e, "CONFLICT") || !strings.Contains(e, "evicted by the retention rule") {
			t.Fatalf("rollback of the evicted snapshot: result %s, error %s", res, e)
		}
	}
	evicted(h)
	if blobs, _ := filepath.Glob(filepath.Join(data, "snapshot-blobs", "*", "*")); len(blobs) > n {
		t.Errorf("%d previous-content files kept for a rule of %d snapshots", len(blobs), n)
	}
	h.stdin.Close()
	if code := h.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("hostcore exited %d", code)
	}

	h2 := startWireHost(t, bin, env, nil, "--data-dir", data)
	evicted(h2)
	if res, e := rollbackAnswer(t, h2, "s", snaps[n]); !strings.Contains(res, "rolledBack") {
		t.Fatalf("rollback of the last snapshot after a restart: result %s, error %s", res, e)
	}
	if got, _ := os.ReadFile(f); string(got) != content(n) {
		t.Fatalf("after the rollback f.txt holds %d bytes starting %q", len(got), got[:min(len(got), 8)])
	}
	h2.stdin.Close()
	if code := h2.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("restarted hostcore exited %d", code)
	}
}

// A malformed retention setting stops the start rather than be read as
// some rule.
func TestSnapshotRetentionSettingMustBeWellFormed(t *testing.T) {
	bin := buildBinary(t)
	_, data := newWorkspace(t)
	h := startWireHost(t, bin, []string{"HOSTCORE_SNAPSHOT_RETENTION=3"}, nil, "--data-dir", data)
	if code := h.waitExit(t, 15*time.Second); code == 0 {
		t.Fatal("hostcore started with HOSTCORE_SNAPSHOT_RETENTION=3")
	}
	if !strings.Contains(h.stderr.String(), "HOSTCORE_SNAPSHOT_RETENTION") {
		t.Fatalf("stderr does not name the setting: %s", h.stderr.String())
	}
}

// The data-dir sweep runs in the background once hostcore serves: the
// scratch and snapshot directories of a deleted session and a blob file
// no snapshot names go, while a live session's snapshot still rolls back.
func TestBackgroundSweepRemovesOrphansAndKeepsLiveSnapshots(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	f := filepath.Join(ws, "f.txt")
	os.WriteFile(f, []byte("before\n"), 0o644)
	h := startWireHost(t, bin, nil, nil, "--data-dir", data)
	h.call(t, 10*time.Second, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	var r struct {
		Review struct {
			SnapshotID string `json:"snapshotId"`
		} `json:"review"`
	}
	json.Unmarshal(h.call(t, 10*time.Second, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w",
		"toolName": "Write", "args": map[string]any{"path": "f.txt", "content": "after\n"}}), &r)
	h.stdin.Close()
	if code := h.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("hostcore exited %d", code)
	}

	old := time.Now().Add(-time.Hour) // nothing made since the store opened is judged
	var orphans []string
	for _, p := range []string{
		filepath.Join(data, "scratch", "ghost", "f"),
		filepath.Join(data, "snapshots", "ghost", "snap_1.before"),
		filepath.Join(data, "snapshot-blobs", "ab", strings.Repeat("ab", 32)),
	} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, old, old)
		os.Chtimes(filepath.Dir(p), old, old)
		orphans = append(orphans, p)
	}
	h2 := startWireHost(t, bin, nil, nil, "--data-dir", data)
	h2.call(t, 10*time.Second, "initialize", map[string]any{})
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range orphans {
		for {
			if _, err := os.Stat(p); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s survived the background sweep", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if res, e := rollbackAnswer(t, h2, "s", r.Review.SnapshotID); !strings.Contains(res, "rolledBack") {
		t.Fatalf("rollback after the sweep: result %s, error %s", res, e)
	}
	if got, _ := os.ReadFile(f); string(got) != "before\n" {
		t.Fatalf("after the rollback f.txt holds %q", got)
	}
	h2.stdin.Close()
	if code := h2.waitExit(t, 15*time.Second); code != 0 {
		t.Fatalf("restarted hostcore exited %d", code)
	}
}
