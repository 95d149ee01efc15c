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

// TestCancelAnswersHowTheCallEnded: a tools.cancel or turn.cancel sent on
// the line after a Write either stopped it (cancelled, TOOL_ABORTED, no
// file) or came too late (not cancelled, ok, the file written). A review
// saw {"cancelled":true} for Writes that then landed: a client trusting the
// answer believed an applied change had not happened. The call is also
// registered when its line is read, so a cancel on the next line finds it.
func TestCancelAnswersHowTheCallEnded(t *testing.T) {
	for _, method := range []string{"tools.cancel", "turn.cancel"} {
		t.Run(method, func(t *testing.T) {
			h, c, ws, _ := sessionHost(t, "auto", nil)
			stopped := 0
			for i := range 30 {
				id, turn := fmt.Sprint("w", i), fmt.Sprint("t", i)
				params := map[string]any{"sessionId": "s", "toolCallId": id}
				if method == "turn.cancel" {
					params = map[string]any{"sessionId": "s", "turnId": turn}
				}
				// One write: the lines arrive together.
				pipe(t, h,
					execLine(10+2*i, "s", id, "Write", map[string]any{"path": id + ".txt", "content": "x"}, map[string]any{"turnId": turn}),
					line(11+2*i, method, params))
				cancelled, _ := json.Marshal(c.result(11 + 2*i)["cancelled"])
				w := c.result(10 + 2*i)
				ok, errorCode := w["ok"] == true, w["errorCode"]
				_, err := os.Stat(filepath.Join(ws, id+".txt"))
				written := err == nil
				yes := string(cancelled) == "true" || string(cancelled) == "1"
				if yes && (ok || errorCode != "TOOL_ABORTED" || written) || !yes && (!ok || !written) {
					t.Fatalf("%s: cancel answered %s, but the Write ended ok=%v %v, file written=%v", id, cancelled, ok, errorCode, written)
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
	h, c, _, _ := sessionHost(t, "ask", quiet)
	// Each Write weighs 64 KiB plus its params, just under 16 MiB: four
	// fill the 64 MiB budget at their cards and leave no room for a fifth
	// request of any kind.
	big := strings.Repeat("x", 16<<20-64<<10-400)
	var writes []string
	for i := range 5 {
		h.send(t, execLine(100+i, "s", fmt.Sprint("w", i), "Write", map[string]any{"path": fmt.Sprint("f", i), "content": big}, map[string]any{"turnId": fmt.Sprint("t", i%2)}))
		writes = append(writes, fmt.Sprintf(`{"id":%d}`, 100+i))
	}
	cards, busy := 0, false
	for cards < 4 || !busy {
		var m struct {
			Method string
			Error  json.RawMessage
		}
		json.Unmarshal([]byte(h.nextWithin(t, 30*time.Second, append(writes, `{"method":"permission.request"}`)...)), &m)
		switch {
		case m.Method == "permission.request":
			cards++
		case strings.Contains(string(m.Error), "BUSY"):
			busy = true
		default:
			t.Fatalf("setup: a Write answered %s before four cards and a BUSY", m.Error)
		}
	}
	c.send(200, "audit.query", map[string]any{"sessionId": "s"})
	if _, code := c.answerOf(200); code != "error:BUSY" {
		t.Fatalf("setup: the budget should be full: %q", code)
	}
	if r := c.call(201, "tools.cancel", map[string]any{"sessionId": "s", "toolCallId": "w0"}); r["cancelled"] != true {
		t.Fatalf("tools.cancel with the budget full: %v", r)
	}
	if r := c.call(202, "turn.cancel", map[string]any{"sessionId": "s", "turnId": "t1"}); r["cancelled"] != 2.0 {
		t.Fatalf("turn.cancel with the budget full: %v", r)
	}
}
