package main

// Edges of the JSON-RPC surface that need lines too large for a
// transcript: the 16 MiB line cap, the memory one such line costs, and the
// 64 MiB budget of calls waiting at their cards. Each test names the
// PROTOCOL.md rule it checks; the edges that are plain request/answer
// sequences are in testdata/transcripts (framing, replies).

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// quiet is the environment of the tests that measure hostcore's own cost:
// the default log level, not the debug level the other tests log at.
var quiet = []string{"HOSTCORE_LOG_LEVEL=info"}

// PROTOCOL §1 / README Limits: "A line over 16 MiB is answered -32600 and
// skipped." readLine allowed MaxLine+2 bytes including the terminator, so
// a line of 16 MiB + 1 byte ending in a bare "\n" was accepted.
func TestEdgeLineOneByteOver16MiBIsRefused(t *testing.T) {
	h, _, _, _ := sessionHost(t, "auto", quiet)
	const max = 16 << 20
	head := `{"jsonrpc":"2.0","id":2,"method":"settings.get","params":{"pad":"`
	tail := `"}}`
	line := head + strings.Repeat("a", max+1-len(head)-len(tail)) + tail
	if len(line) != max+1 {
		t.Fatal("bad test line")
	}
	h.send(t, line)
	// The line is refused unread, so the answer cannot name its id.
	got := h.nextWithin(t, 30*time.Second, `{"id":null}`, `{"id":2}`)
	var m struct{ Error struct{ Code int } }
	json.Unmarshal([]byte(got), &m)
	if m.Error.Code != -32600 {
		t.Fatalf("a %d-byte line was accepted, want -32600: %.200s", len(line), got)
	}
}

// "No input may crash": one accepted line (under 16 MiB) used to cost a
// gigabyte: jsonrpc2 decoded the params into interface{} values on the
// read goroutine, validation decoded the args again, the audit hash again.
// Now args of more than maxArgValues values are refused unread, and a
// large legitimate one (15 MiB of Write content) is decoded once.
func TestEdgeOneMaxLineStaysSmall(t *testing.T) {
	const max = 16 << 20
	checkPeak := func(t *testing.T, h *host, limit int64, what string) {
		t.Helper()
		if raceEnabled {
			return // the race detector multiplies memory: no bound to check
		}
		peak, err := procStatus(h.cmd.Process.Pid, "VmHWM")
		if err != nil {
			t.Fatal(err)
		}
		if peak > limit {
			t.Fatalf("peak RSS %d MiB for %s, want at most %d MiB", peak>>20, what, limit>>20)
		}
	}
	t.Run("numbers", func(t *testing.T) {
		h, _, _, _ := sessionHost(t, "auto", quiet)
		var sb strings.Builder
		sb.WriteString(`{"jsonrpc":"2.0","id":9,"method":"tools.execute","params":{"sessionId":"s","turnId":"t","toolCallId":"c","toolName":"Bash","args":{"command":"true","x":[`)
		for sb.Len() < max-100 {
			sb.WriteString("1,")
		}
		sb.WriteString("1]}}}")
		h.send(t, sb.String())
		if got := h.nextWithin(t, 120*time.Second, `{"id":9}`); !strings.Contains(got, "INVALID_ARGUMENT") {
			t.Fatalf("want INVALID_ARGUMENT, got %.300s", got)
		}
		checkPeak(t, h, 160<<20, fmt.Sprintf("one %d MiB line", sb.Len()>>20))
	})
	t.Run("write", func(t *testing.T) {
		h, _, _, _ := sessionHost(t, "auto", quiet)
		h.send(t, execLine(9, "s", "c", "Write", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 15<<20)}, nil))
		if got := h.nextWithin(t, 120*time.Second, `{"id":9}`); !strings.Contains(got, `"ok":true`) {
			t.Fatalf("Write: %.300s", got)
		}
		checkPeak(t, h, 256<<20, "one 15 MiB Write")
	})
}

// TestEdgeBusyWriteKeepsTheOrder: a Write refused BUSY had already taken
// its session's mutation ticket in Route; nothing released it, so every
// later Write/Edit of the session waited forever (and stdin EOF no longer
// ended hostcore). The budget is now taken before Route.
func TestEdgeBusyWriteKeepsTheOrder(t *testing.T) {
	h, _, _, _ := sessionHost(t, "ask", quiet)
	big := strings.Repeat("x", 16<<20-400)
	var writes []string
	for i := range 4 { // three fill the 64 MiB budget at their cards; the fourth is BUSY
		h.send(t, execLine(100+i, "s", fmt.Sprint("w", i), "Write", map[string]any{"path": fmt.Sprint("f", i), "content": big}, nil))
		writes = append(writes, fmt.Sprintf(`{"id":%d}`, 100+i))
	}
	var cards []json.RawMessage
	busy := false
	for len(cards) < 3 || !busy {
		var m struct {
			ID     json.RawMessage
			Method string
			Error  json.RawMessage
		}
		json.Unmarshal([]byte(h.nextWithin(t, 30*time.Second, append(writes, `{"method":"permission.request"}`)...)), &m)
		switch {
		case m.Method == "permission.request":
			cards = append(cards, m.ID)
		case strings.Contains(string(m.Error), "BUSY"):
			busy = true
		default:
			t.Fatalf("setup: a Write answered %s before three cards and a BUSY", m.Error)
		}
	}
	for _, id := range cards {
		h.answer(t, id, "deny")
	}
	h.send(t, execLine(200, "s", "small", "Write", map[string]any{"path": "small.txt", "content": "hi"}, map[string]any{"turnId": "t2"}))
	h.answer(t, h.nextCard(t), "allow-once")
	if got := h.nextWithin(t, 15*time.Second, `{"id":200}`); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("a Write after a BUSY-refused Write: %s", got)
	}
}
