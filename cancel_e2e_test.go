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

// cancelResult is what a cancel answered and how its call ended.
type cancelResult struct {
	cancelled json.RawMessage
	errorCode string
	ok        bool
}

// TestCancelAnswersHowTheCallEnded: a tools.cancel or turn.cancel sent on
// the line after a Write either stopped it (cancelled, TOOL_ABORTED, no
// file) or came too late (not cancelled, ok, the file written). A review
// saw {"cancelled":true} for Writes that then landed: a client trusting the
// answer believed an applied change had not happened. The call is also
// registered when its line is read, so a cancel on the next line finds it.
func TestCancelAnswersHowTheCallEnded(t *testing.T) {
	for _, method := range []string{"tools.cancel", "turn.cancel"} {
		t.Run(method, func(t *testing.T) {
			h := edgeStart(t)
			ws := t.TempDir()
			h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
			if m, _ := h.until(10*time.Second, isResponse(`"mk"`)); m == nil || m["error"] != nil {
				t.Fatalf("session.create: %v", m)
			}
			stopped := 0
			for i := range 30 {
				id, turn := fmt.Sprint("w", i), fmt.Sprint("t", i)
				exec, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "x" + id, "method": "tools.execute", "params": map[string]any{
					"sessionId": "s", "turnId": turn, "toolCallId": id, "toolName": "Write", "args": map[string]any{"path": id + ".txt", "content": "x"}}})
				params := map[string]any{"sessionId": "s", "toolCallId": id}
				if method == "turn.cancel" {
					params = map[string]any{"sessionId": "s", "turnId": turn}
				}
				cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "c" + id, "method": method, "params": params})
				h.raw(t, string(exec)+"\n"+string(cancel)) // one write: the lines arrive together
				var got cancelResult
				answered := 0
				h.until(20*time.Second, func(m map[string]json.RawMessage) bool {
					switch string(m["id"]) {
					case `"c` + id + `"`:
						var r struct{ Cancelled json.RawMessage }
						json.Unmarshal(m["result"], &r)
						got.cancelled = r.Cancelled
						answered++
					case `"x` + id + `"`:
						var r struct {
							OK        bool
							ErrorCode string
						}
						json.Unmarshal(m["result"], &r)
						got.ok, got.errorCode = r.OK, r.ErrorCode
						answered++
					}
					return answered == 2
				})
				if answered != 2 {
					t.Fatalf("%s: not both answered", id)
				}
				_, err := os.Stat(filepath.Join(ws, id+".txt"))
				written := err == nil
				yes := string(got.cancelled) == "true" || string(got.cancelled) == "1"
				switch {
				case yes && (got.ok || got.errorCode != "TOOL_ABORTED" || written):
					t.Fatalf("%s: cancel answered %s, but the Write ended ok=%v %s, file written=%v", id, got.cancelled, got.ok, got.errorCode, written)
				case !yes && (!got.ok || !written):
					t.Fatalf("%s: cancel answered %s, but the Write ended ok=%v %s, file written=%v", id, got.cancelled, got.ok, got.errorCode, written)
				}
				if yes {
					stopped++
				}
			}
			// Registered as its line is read, a call is nearly always
			// stopped by a cancel on the next line; zero means the cancel
			// no longer finds calls that have not started yet.
			if stopped == 0 {
				t.Fatalf("none of 30 Writes was stopped by a %s on the next line", method)
			}
			t.Logf("%d of 30 stopped", stopped)
		})
	}
}

// TestCancelIsNotRefusedBusy: calls waiting on cards can fill the in-flight
// budget; cancelling them is how a client frees it, so tools.cancel and
// turn.cancel are never refused BUSY for it.
func TestCancelIsNotRefusedBusy(t *testing.T) {
	h := edgeStart(t)
	ws := t.TempDir()
	h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "ask"})
	h.until(10*time.Second, isResponse(`"mk"`))
	// Each Write weighs 64 KiB plus its params, just under 16 MiB: four
	// fill the 64 MiB budget at their cards and leave no room for a fifth
	// request of any kind.
	big := strings.Repeat("x", 16<<20-64<<10-400)
	for i := range 5 {
		h.send(t, 100+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": fmt.Sprint("t", i%2), "toolCallId": fmt.Sprint("w", i),
			"toolName": "Write", "args": map[string]any{"path": fmt.Sprint("f", i), "content": big}})
	}
	cards, busy := 0, false
	h.until(30*time.Second, func(m map[string]json.RawMessage) bool {
		if string(m["method"]) == `"permission.request"` {
			cards++
		}
		if strings.Contains(string(m["error"]), "BUSY") {
			busy = true
		}
		return cards == 4 && busy
	})
	if cards != 4 || !busy {
		t.Fatalf("setup: %d cards, busy=%v", cards, busy)
	}
	h.send(t, 200, "audit.query", map[string]any{"sessionId": "s"})
	if m, _ := h.until(10*time.Second, isResponse("200")); m == nil || !strings.Contains(string(m["error"]), "BUSY") {
		t.Fatalf("setup: the budget should be full: %v", m)
	}
	h.send(t, 201, "tools.cancel", map[string]any{"sessionId": "s", "toolCallId": "w0"})
	m, _ := h.until(20*time.Second, isResponse("201"))
	if m == nil || m["error"] != nil || !strings.Contains(string(m["result"]), `"cancelled":true`) {
		t.Fatalf("tools.cancel with the budget full: %v", m)
	}
	h.send(t, 202, "turn.cancel", map[string]any{"sessionId": "s", "turnId": "t1"})
	m, _ = h.until(20*time.Second, isResponse("202"))
	if m == nil || m["error"] != nil || !strings.Contains(string(m["result"]), `"cancelled":2`) {
		t.Fatalf("turn.cancel with the budget full: %v", m)
	}
}
