package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestEarlierCallJudgedUnderEarlierSettings: a Write sent under the
// default mode ask, with settings.update to auto on the very next line,
// still asks: the mode in force when its line was read decides (PROTOCOL
// section 1 orders configuring methods before later lines, and a review
// saw 36 of 100 such Writes auto-allowed).
func TestEarlierCallJudgedUnderEarlierSettings(t *testing.T) {
	h := edgeStart(t)
	ws := t.TempDir()
	h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws})
	if m, _ := h.until(10*time.Second, isResponse(`"mk"`)); m == nil || m["error"] != nil {
		t.Fatalf("session.create: %v", m)
	}
	for i := range 30 {
		h.send(t, fmt.Sprint("ask", i), "settings.update", map[string]any{"defaultPermissionMode": "ask"})
		h.until(10*time.Second, isResponse(fmt.Sprintf(`"ask%d"`, i)))
		exec, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("w", i), "method": "tools.execute", "params": map[string]any{
			"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("w", i), "toolName": "Write", "args": map[string]any{"path": fmt.Sprint("f", i), "content": "x"}}})
		auto, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("auto", i), "method": "settings.update", "params": map[string]any{"defaultPermissionMode": "auto"}})
		h.raw(t, string(exec)+"\n"+string(auto))
		var result map[string]any
		h.until(20*time.Second, func(m map[string]json.RawMessage) bool {
			if string(m["method"]) == `"permission.request"` {
				h.raw(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"decision":"deny"}}`, m["id"]))
			}
			if string(m["id"]) == fmt.Sprintf(`"w%d"`, i) {
				json.Unmarshal(m["result"], &result)
				return true
			}
			return false
		})
		if result == nil || result["decision"] != "deny" {
			t.Fatalf("Write %d sent under ask, before the switch to auto: %v", i, result)
		}
	}
}

// TestEnterPlanModeThenReadInOneWrite: a script that enters plan mode and
// reads on the next line works: the Read, registered as soon as its line
// is read, is not counted as "another call in flight" against the mode
// switch that came before it (a code review saw NOT_ALONE_IN_BATCH 20 of
// 20 times). A Write on that next line is judged in the mode it runs in.
func TestEnterPlanModeThenReadInOneWrite(t *testing.T) {
	h := edgeStart(t)
	for i := range 10 {
		sid := fmt.Sprint("s", i)
		h.send(t, "mk"+sid, "session.create", map[string]any{"sessionId": sid, "workspaceRoot": t.TempDir(), "permissionMode": "auto"})
		h.until(10*time.Second, isResponse(`"mk`+sid+`"`))
		line := func(id, tool string, args map[string]any) string {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id + sid, "method": "tools.execute", "params": map[string]any{
				"sessionId": sid, "turnId": "t" + id, "toolCallId": id, "toolName": tool, "args": args}})
			return string(b)
		}
		h.raw(t, line("enter", "EnterPlanMode", map[string]any{})+"\n"+line("read", "Read", map[string]any{"path": "missing.txt"})+"\n"+
			line("write", "Write", map[string]any{"path": "w.txt", "content": "x"}))
		results := map[string]map[string]any{}
		h.until(20*time.Second, func(m map[string]json.RawMessage) bool {
			for _, id := range []string{"enter", "read", "write"} {
				if string(m["id"]) == `"`+id+sid+`"` {
					var r map[string]any
					json.Unmarshal(m["result"], &r)
					results[id] = r
				}
			}
			return len(results) == 3
		})
		if r := results["enter"]; r == nil || r["ok"] != true {
			t.Fatalf("%s: EnterPlanMode followed by a Read and a Write: %v", sid, r)
		}
		if r := results["read"]; r == nil || r["errorCode"] == "NOT_ALONE_IN_BATCH" {
			t.Fatalf("%s: the Read: %v", sid, r)
		}
		// The Write either ran before the switch or is refused in plan mode.
		if r := results["write"]; r == nil || (r["ok"] != true && r["errorCode"] != "TOOL_DENIED") {
			t.Fatalf("%s: the Write: %v", sid, r)
		}
	}
}
