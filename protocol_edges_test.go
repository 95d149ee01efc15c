package main

// Failing tests for defects found while driving the built binary as a
// client (review of the JSON-RPC surface). Each test names the PROTOCOL.md
// rule it checks.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

type edgeHost struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]json.RawMessage
}

func edgeStart(t *testing.T, args ...string) *edgeHost {
	t.Helper()
	bin := buildBinary(t)
	cmd := exec.Command(bin, append([]string{"--data-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &edgeHost{cmd: cmd, in: in, lines: make(chan map[string]json.RawMessage, 1024)}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				panic(fmt.Sprintf("non-JSON line on stdout: %q", sc.Bytes()))
			}
			h.lines <- m
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return h
}

func (h *edgeHost) raw(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (h *edgeHost) send(t *testing.T, id any, method string, params any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h.raw(t, string(b))
}

// until collects lines until match holds or d passes; it returns the match
// (nil on timeout) and every line seen.
func (h *edgeHost) until(d time.Duration, match func(map[string]json.RawMessage) bool) (map[string]json.RawMessage, []map[string]json.RawMessage) {
	var seen []map[string]json.RawMessage
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-h.lines:
			if !ok {
				return nil, seen
			}
			seen = append(seen, m)
			if match(m) {
				return m, seen
			}
		case <-deadline:
			return nil, seen
		}
	}
}

func isResponse(id string) func(map[string]json.RawMessage) bool {
	return func(m map[string]json.RawMessage) bool { return string(m["id"]) == id && m["method"] == nil }
}

func isMethod(name string) func(map[string]json.RawMessage) bool {
	return func(m map[string]json.RawMessage) bool { return string(m["method"]) == strconv.Quote(name) }
}

func edgeSession(t *testing.T, h *edgeHost, mode string) {
	t.Helper()
	ws := t.TempDir()
	h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": mode})
	if m, _ := h.until(10*time.Second, isResponse(`"mk"`)); m == nil || m["error"] != nil {
		t.Fatalf("session.create: %v", m)
	}
}

// PROTOCOL §5: "A permission reply other than the three decisions, an
// error reply, ... is a deny". JSON-RPC 2.0: a response is never answered.
// A reply that only lacks "jsonrpc" is answered with a -32600 error that
// carries hostcore's own request id (which is the client's id space: the
// client's request 0 gets two responses) and the card waits out the full
// permission timeout instead of denying at once.
func TestEdgeSloppyPermissionReplyIsAnsweredAndNotADeny(t *testing.T) {
	h := edgeStart(t, "--permission-timeout", "4s")
	edgeSession(t, h, "ask")
	// The client's own request id 0 ...
	h.send(t, 0, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c", "toolName": "Write", "args": map[string]any{"path": "a.txt", "content": "x"}})
	card, _ := h.until(10*time.Second, isMethod("permission.request"))
	if card == nil {
		t.Fatal("no permission.request")
	}
	// ... and hostcore's first request id is 0 too. Reply without "jsonrpc".
	h.raw(t, fmt.Sprintf(`{"id":%s,"result":{"decision":"allow-once"}}`, card["id"]))
	start := time.Now()
	var responses []string
	_, seen := h.until(6*time.Second, func(m map[string]json.RawMessage) bool {
		return string(m["id"]) == "0" && m["result"] != nil
	})
	for _, m := range seen {
		if string(m["id"]) == "0" && m["method"] == nil {
			b, _ := json.Marshal(m)
			responses = append(responses, string(b[:min(len(b), 200)]))
		}
	}
	if len(responses) != 1 {
		t.Errorf("client request id 0 got %d responses (want exactly 1):\n%s", len(responses), strings.Join(responses, "\n"))
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("an invalid permission reply was not treated as a deny: the card waited %v (the whole timeout)", el.Round(time.Millisecond))
	}
}

// PROTOCOL §5 (as above) and the requirement that a client's bad input
// gets a clear error and hangs nothing: an error reply whose "error" member
// is not an object is answered -32600 and otherwise ignored, so asktool
// (which has no deadline) waits forever.
func TestEdgeMalformedErrorReplyHangsAsktool(t *testing.T) {
	h := edgeStart(t)
	edgeSession(t, h, "auto")
	h.send(t, 7, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "q", "toolName": "asktool", "args": map[string]any{"questions": []any{map[string]any{"id": "x", "question": "?"}}}})
	ask, _ := h.until(10*time.Second, isMethod("ask.request"))
	if ask == nil {
		t.Fatal("no ask.request")
	}
	h.raw(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":"user closed the dialog"}`, ask["id"]))
	m, seen := h.until(5*time.Second, isResponse("7"))
	for _, l := range seen {
		if l["error"] != nil && l["method"] == nil && string(l["id"]) != "7" {
			t.Errorf("hostcore answered the client's reply with an error: %s", l["error"])
		}
	}
	if m == nil {
		t.Fatal("asktool never answered after an error reply to ask.request (no deadline: it hangs until cancelled)")
	}
}

// PROTOCOL §1 / README Limits: "A line over 16 MiB is answered -32600 and
// skipped." readLine allows MaxLine+2 bytes including the terminator, so a
// line of 16 MiB + 1 byte ending in a bare "\n" is accepted.
func TestEdgeLineOneByteOver16MiBIsAccepted(t *testing.T) {
	h := edgeStart(t)
	const max = 16 << 20
	head := `{"jsonrpc":"2.0","id":1,"method":"settings.get","params":{"pad":"`
	tail := `"}}`
	line := head + strings.Repeat("a", max+1-len(head)-len(tail)) + tail
	if len(line) != max+1 {
		t.Fatal("bad test line")
	}
	h.raw(t, line)
	m, _ := h.until(30*time.Second, func(map[string]json.RawMessage) bool { return true })
	if m == nil {
		t.Fatal("no answer")
	}
	var e struct{ Code int }
	json.Unmarshal(m["error"], &e)
	if e.Code != -32600 {
		t.Fatalf("a %d-byte line was accepted, want -32600: %s", len(line), m["result"])
	}
}

// PROTOCOL §1: "Params of the wrong shape: -32602." settings.get,
// session.list, shells.list and shutdown never look at their params.
func TestEdgeParamlessMethodsAcceptAnyParams(t *testing.T) {
	h := edgeStart(t)
	for i, method := range []string{"settings.get", "session.list", "shells.list", "shutdown"} {
		id := strconv.Itoa(100 + i)
		h.raw(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":"not an object"}`, id, method))
		m, _ := h.until(10*time.Second, isResponse(id))
		if m == nil {
			t.Fatalf("%s: no answer", method)
		}
		var e struct{ Code int }
		json.Unmarshal(m["error"], &e)
		if e.Code != -32602 {
			t.Errorf(`%s with params "not an object": want -32602, got %s%s`, method, m["result"], m["error"])
		}
	}
}

// PROTOCOL §1: the transport is UTF-8. A line with invalid UTF-8 used to
// have it replaced by U+FFFD, so that Write created "a\uFFFDb.txt", not
// the file the client named; it is now a parse error.
func TestEdgeInvalidUTF8LineIsAParseError(t *testing.T) {
	h := edgeStart(t)
	ws := t.TempDir()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "session.create", "params": map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"}})
	h.raw(t, string(b))
	h.until(10*time.Second, isResponse("1"))
	h.raw(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools.execute\",\"params\":{\"sessionId\":\"s\",\"turnId\":\"t\",\"toolCallId\":\"c\",\"toolName\":\"Write\",\"args\":{\"path\":\"a\xffb.txt\",\"content\":\"x\"}}}")
	m, _ := h.until(10*time.Second, isResponse("null"))
	if m == nil || !strings.Contains(string(m["error"]), "-32700") {
		t.Fatalf("want a -32700 answer, got %v", m)
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 0 {
		t.Fatalf("the workspace has %d entries, want none", len(entries))
	}
}

// "No input may crash": one accepted line (under 16 MiB) used to cost a
// gigabyte: jsonrpc2 decoded the params into interface{} values on the
// read goroutine, validation decoded the args again, the audit hash again.
// Now args of more than maxArgValues values are refused unread, and a
// large legitimate one (15 MiB of Write content) is decoded once.
func TestEdgeOneMaxLineStaysSmall(t *testing.T) {
	const max = 16 << 20
	peak := func(h *edgeHost) int {
		if raceEnabled {
			return 0 // the race detector multiplies memory: no bound to check
		}
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				kb, _ := strconv.Atoi(strings.Fields(l)[1])
				return kb >> 10
			}
		}
		t.Skip("no VmHWM in /proc")
		return 0
	}
	t.Run("numbers", func(t *testing.T) {
		h := edgeStart(t)
		edgeSession(t, h, "auto")
		var sb strings.Builder
		sb.WriteString(`{"jsonrpc":"2.0","id":9,"method":"tools.execute","params":{"sessionId":"s","turnId":"t","toolCallId":"c","toolName":"Bash","args":{"command":"true","x":[`)
		for sb.Len() < max-100 {
			sb.WriteString("1,")
		}
		sb.WriteString("1]}}}")
		h.raw(t, sb.String())
		m, _ := h.until(120*time.Second, isResponse("9"))
		if m == nil || !strings.Contains(string(m["result"]), "INVALID_ARGUMENT") {
			t.Fatalf("want INVALID_ARGUMENT, got %v", m)
		}
		if mb := peak(h); mb > 160 {
			t.Fatalf("peak RSS %d MiB for one %d MiB line", mb, sb.Len()>>20)
		}
	})
	t.Run("write", func(t *testing.T) {
		h := edgeStart(t)
		edgeSession(t, h, "auto")
		content := strings.Repeat("x", 15<<20)
		h.send(t, 9, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c", "toolName": "Write", "args": map[string]any{"path": "big.txt", "content": content}})
		m, _ := h.until(120*time.Second, isResponse("9"))
		if m == nil || !strings.Contains(string(m["result"]), `"ok":true`) {
			t.Fatalf("Write: %v", m)
		}
		if mb := peak(h); mb > 256 {
			t.Fatalf("peak RSS %d MiB for one 15 MiB Write", mb)
		}
	})
}

// TestEdgeBusyWriteKeepsTheOrder: a Write refused BUSY had already taken
// its session's mutation ticket in Route; nothing released it, so every
// later Write/Edit of the session waited forever (and stdin EOF no longer
// ended hostcore). The budget is now taken before Route.
func TestEdgeBusyWriteKeepsTheOrder(t *testing.T) {
	h := edgeStart(t)
	ws := t.TempDir()
	h.send(t, 1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "ask"})
	h.until(10*time.Second, func(m map[string]json.RawMessage) bool { return string(m["id"]) == "1" })
	big := strings.Repeat("x", 16<<20-400)
	for i := range 4 { // three fill the 64 MiB budget at their cards; the fourth is BUSY
		h.send(t, 100+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("w", i),
			"toolName": "Write", "args": map[string]any{"path": fmt.Sprint("f", i), "content": big}})
	}
	var cards []json.RawMessage
	busy := false
	h.until(30*time.Second, func(m map[string]json.RawMessage) bool {
		if string(m["method"]) == `"permission.request"` {
			cards = append(cards, m["id"])
		}
		if strings.Contains(string(m["error"]), "BUSY") {
			busy = true
		}
		return len(cards) == 3 && busy
	})
	if len(cards) != 3 || !busy {
		t.Fatalf("setup: %d cards, busy=%v", len(cards), busy)
	}
	for _, id := range cards {
		h.raw(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"decision":"deny"}}`, id))
	}
	h.send(t, 200, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t2", "toolCallId": "small",
		"toolName": "Write", "args": map[string]any{"path": "small.txt", "content": "hi"}})
	m, _ := h.until(15*time.Second, func(m map[string]json.RawMessage) bool {
		if string(m["method"]) == `"permission.request"` {
			h.raw(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"decision":"allow-once"}}`, m["id"]))
		}
		return string(m["id"]) == "200"
	})
	if m == nil {
		t.Fatal("a Write after a BUSY-refused Write was never answered")
	}
}
