package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Findings of a review of sessions, settings and shells.

// A link put in place of the workspace directory does not move Bash's cwd
// there (the file tools already treated every path as outside).
func TestBashRefusesAWorkspaceReplacedByALink(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	os.Rename(ws, ws+".old")
	os.Symlink("/etc", ws)
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "b", "toolName": "Bash", "args": map[string]any{"command": "pwd -P"}})
	if r["errorCode"] != "TOOL_DENIED" || strings.Contains(r["message"].(string), "\n/etc") {
		t.Fatalf("Bash in a workspace swapped for a link: %v", r)
	}
}

// A rollback queued behind the session's mutations when the session is
// deleted does not run afterwards.
func TestRollbackQueuedBehindADeletedSessionDoesNotRun(t *testing.T) {
	_, h, c, ws, _ := hostWithSession(t, "accept-edits")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("ORIGINAL"), 0o644)
	snap := snapshotOf(t, c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write",
		"args": map[string]any{"path": "a.txt", "content": "CHANGED"}}))
	c.call(3, "session.configure", map[string]any{"sessionId": "s", "permissionMode": "ask"})
	c.send(4, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w2", "toolName": "Write", "args": map[string]any{"path": "b.txt", "content": "x"}})
	h.nextCard(t) // the Write waits on its card, holding the session's turn
	c.send(5, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": snap})
	c.call(6, "session.delete", map[string]any{"sessionId": "s"})
	c.result(4)
	if _, code := c.answerOf(5); code != "error:SESSION_NOT_FOUND" {
		t.Fatalf("rollback after the delete: %q", code)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != "CHANGED" {
		t.Fatalf("a.txt is %q: the rollback ran after the session was deleted", got)
	}
}

// "link/.." is bound as the system opens it: the parent of where the link
// leads, not the directory the link is in.
func TestWorkspaceRootDotDotAfterALink(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	target := filepath.Join(t.TempDir(), "deep", "dir")
	os.MkdirAll(target, 0o755)
	os.Symlink(target, filepath.Join(ws, "deeplink"))
	r := c.call(2, "session.create", map[string]any{"sessionId": "dd", "workspaceRoot": filepath.Join(ws, "deeplink") + "/.."})
	want, _ := filepath.EvalSymlinks(filepath.Dir(target))
	if r["workspaceRoot"] != want {
		t.Fatalf("workspaceRoot %v, want %s", r["workspaceRoot"], want)
	}
	c.send(3, "session.create", map[string]any{"sessionId": "nx", "workspaceRoot": filepath.Join(ws, "nonexist") + "/.."})
	if _, code := c.answerOf(3); code != "error:INVALID_ARGUMENT" {
		t.Fatalf("a path through a missing directory: %q", code)
	}
}

// cardBehindSlowDeletes starts hostcore with a 1 s permission timeout,
// runs a command that ignores TERM in each of the sessions slow (so that
// deleting one takes about a second: TERM, a grace, then KILL), and opens
// a Write's card (call id 4) in session "b" (ask).
func cardBehindSlowDeletes(t *testing.T, slow ...string) (h *host, c rpcClient, ws string, card json.RawMessage) {
	t.Helper()
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	h = startHost(t, bin, "--data-dir", data, "--permission-timeout", "1s")
	c = rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": ws, "permissionMode": "ask"})
	for i, sid := range slow {
		c.call(20+2*i, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": ws, "permissionMode": "auto"})
		c.send(21+2*i, "tools.execute", map[string]any{"sessionId": sid, "turnId": "t", "toolCallId": "stubborn", "toolName": "Bash",
			"args": map[string]any{"command": "trap '' TERM; echo up; while :; do sleep 0.05; done"}})
		h.next(t, `{"method":"tool.output"}`) // it runs, ignoring TERM
	}
	c.send(4, "tools.execute", map[string]any{"sessionId": "b", "turnId": "t", "toolCallId": "w", "toolName": "Write",
		"args": map[string]any{"path": "x.txt", "content": "hi"}})
	return h, c, ws, h.nextCard(t)
}

// A card answered while a session.delete waits for another session's
// command to die counts, although the card's timeout passes before the
// delete ends: the reply was read in time, and is acted on once the
// delete (read before it) has finished, as PROTOCOL section 1 orders. It
// used to stay unread behind the delete, and the card denied as timed
// out (a chaos review).
func TestCardAnsweredDuringASessionDeleteCounts(t *testing.T) {
	h, c, ws, card := cardBehindSlowDeletes(t, "s")
	start := time.Now()
	c.send(5, "session.delete", map[string]any{"sessionId": "s"})
	h.answer(t, card, "allow-once")
	if r := c.result(5); r["deleted"] != true {
		t.Fatalf("delete: %v", r)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("the delete took %v, less than the card's timeout: the test no longer shows a card answered behind it", took)
	}
	if r := c.result(4); r["ok"] != true {
		t.Fatalf("the Write answered in time: %v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "x.txt")); string(got) != "hi" {
		t.Fatalf("x.txt is %q", got)
	}
}

// A card answered in time behind slow session.deletes, whose deadline
// passes meanwhile, still ends at once when its own session's delete
// (read before the reply) comes: a review found the wait deaf to
// cancellation past the deadline, so that delete and the call waited on
// each other for 5 s.
func TestDeletingTheSessionOfAReplyWaitingPastItsDeadline(t *testing.T) {
	h, c, ws, card := cardBehindSlowDeletes(t, "s", "s2")
	c.send(5, "session.delete", map[string]any{"sessionId": "s"})  // about 1 s each:
	c.send(6, "session.delete", map[string]any{"sessionId": "s2"}) // the card's 1 s pass
	c.send(7, "session.delete", map[string]any{"sessionId": "b"})
	h.answer(t, card, "allow-once")
	c.result(6)
	start := time.Now()
	if r := c.result(7); r["deleted"] != true {
		t.Fatalf("delete b: %v", r)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("deleting the card's session took %v after the delete before it ended", took)
	}
	if r := c.result(4); r["errorCode"] != "TOOL_ABORTED" {
		t.Fatalf("the Write of the deleted session: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
		t.Fatal("x.txt was written although its session was deleted before the allow counted")
	}
}
