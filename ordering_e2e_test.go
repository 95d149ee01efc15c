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
