package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A call is judged by the session as it was when its line was read
// (design section 10: nothing bypasses the matrix). Before, only the
// permission mode was fixed then: an approval.resolve, session.configure
// or session.create on the next line decided an earlier call (a review
// of the wire contract, 6 of 6, 3 of 3 and 3 of 3 runs).
func TestLaterLinesDoNotJudgeEarlierCalls(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "p", "workspaceRoot": ws, "mode": "plan", "permissionMode": "auto"})
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "p", "turnId": "t", "toolCallId": "sp", "toolName": "SubmitPlan", "args": map[string]any{"markdown": "the plan"}})
	approval := r["details"].(map[string]any)["approvalId"].(string)

	// A Write read while the session is in plan, then the approval.
	pipe(t, h,
		execLine(3, "p", "w0", "Write", map[string]any{"path": "early.txt", "content": "1"}, nil),
		line(4, "approval.resolve", map[string]any{"sessionId": "p", "approvalId": approval, "decision": "approve"}))
	if r, _ := c.answerOf(3); r["ok"] != false || r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("a Write read in plan ran after a later approval: %v", r)
	}
	c.answerOf(4)
	if _, err := os.Stat(filepath.Join(ws, "early.txt")); err == nil {
		t.Error("early.txt was written")
	}

	// A delegate's Write read while its definition allows Read only.
	c.call(5, "session.configure", map[string]any{"sessionId": "p", "subagents": []any{map[string]any{"name": "d", "tools": []string{"Read"}}}})
	pipe(t, h,
		execLine(6, "p", "w1", "Write", map[string]any{"path": "delegate.txt", "content": "1"}, map[string]any{"delegate": "d"}),
		line(7, "session.configure", map[string]any{"sessionId": "p", "subagents": []any{map[string]any{"name": "d", "tools": []string{"Write"}}}}))
	if r, _ := c.answerOf(6); r["ok"] != false || r["errorCode"] != "TOOL_DENIED" {
		t.Errorf("a delegate's Write ran under a definition set on a later line: %v", r)
	}
	c.answerOf(7)

	// A call on a session that does not exist yet.
	pipe(t, h,
		execLine(8, "late", "w2", "Write", map[string]any{"path": "late.txt", "content": "1"}, nil),
		line(9, "session.create", map[string]any{"sessionId": "late", "workspaceRoot": ws, "permissionMode": "auto"}))
	if _, code := c.answerOf(8); code != "error:SESSION_NOT_FOUND" {
		t.Errorf("a call read before its session was created: %q", code)
	}
	c.answerOf(9)
	for _, f := range []string{"delegate.txt", "late.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}
