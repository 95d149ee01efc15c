package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestEarlierCallJudgedUnderEarlierSettings: a Write sent under the
// default mode ask, with settings.update to auto on the very next line,
// still asks: the mode in force when its line was read decides (PROTOCOL
// section 1 orders configuring methods before later lines, and a review
// saw 36 of 100 such Writes auto-allowed).
func TestEarlierCallJudgedUnderEarlierSettings(t *testing.T) {
	ws, data := newWorkspace(t)
	h := startHost(t, buildBinary(t), "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws})
	for i := range 30 {
		id := 10 + 3*i
		c.call(id, "settings.update", map[string]any{"defaultPermissionMode": "ask"})
		pipe(t, h,
			execLine(id+1, "s", fmt.Sprint("w", i), "Write", map[string]any{"path": fmt.Sprint("f", i), "content": "x"}, nil),
			line(id+2, "settings.update", map[string]any{"defaultPermissionMode": "auto"}))
		var m struct {
			ID     json.RawMessage
			Method string
			Result map[string]any
		}
		json.Unmarshal([]byte(h.nextOf(t, `{"method":"permission.request"}`, fmt.Sprintf(`{"id":%d}`, id+1))), &m)
		if m.Method != "" {
			h.answer(t, m.ID, "deny")
			m.Result = c.result(id + 1)
		}
		if m.Result["decision"] != "deny" {
			t.Fatalf("Write %d sent under ask, before the switch to auto: %v", i, m.Result)
		}
		c.result(id + 2)
	}
}

// TestEnterPlanModeThenReadInOneWrite: a script that enters plan mode and
// reads on the next line works: the Read, registered as soon as its line
// is read, is not counted as "another call in flight" against the mode
// switch that came before it (a code review saw NOT_ALONE_IN_BATCH 20 of
// 20 times). A Write on that next line is judged in the mode it runs in.
func TestEnterPlanModeThenReadInOneWrite(t *testing.T) {
	ws, data := newWorkspace(t)
	h := startHost(t, buildBinary(t), "--data-dir", data)
	c := rpcClient{t, h}
	for i := range 10 {
		sid := fmt.Sprint("s", i)
		id := 10 + 4*i
		c.call(id, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": ws, "permissionMode": "auto"})
		pipe(t, h,
			execLine(id+1, sid, "enter", "EnterPlanMode", map[string]any{}, map[string]any{"turnId": "tenter"}),
			execLine(id+2, sid, "read", "Read", map[string]any{"path": "missing.txt"}, map[string]any{"turnId": "tread"}),
			execLine(id+3, sid, "write", "Write", map[string]any{"path": sid + ".txt", "content": "x"}, map[string]any{"turnId": "twrite"}))
		if r := c.result(id + 1); r["ok"] != true {
			t.Fatalf("%s: EnterPlanMode followed by a Read and a Write: %v", sid, r)
		}
		if r := c.result(id + 2); r == nil || r["errorCode"] == "NOT_ALONE_IN_BATCH" {
			t.Fatalf("%s: the Read: %v", sid, r)
		}
		// The Write either ran before the switch or is refused in plan mode.
		if r := c.result(id + 3); r == nil || (r["ok"] != true && r["errorCode"] != "TOOL_DENIED") {
			t.Fatalf("%s: the Write: %v", sid, r)
		}
	}
}
