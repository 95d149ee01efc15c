//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wireError is the error member of an answer.
type wireError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func errorOf(t *testing.T, m map[string]json.RawMessage) wireError {
	t.Helper()
	var e wireError
	if m == nil || json.Unmarshal(m["error"], &e) != nil || e.Code == 0 {
		t.Fatalf("want an error answer, got %v", stringify(m))
	}
	return e
}

func stringify(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// frictionHost drives the binary line by line for the framing cases: raw
// lines in, every host line seen in order until one matches.
type frictionHost struct{ *host }

func edgeStart(t *testing.T, args ...string) frictionHost {
	t.Helper()
	return frictionHost{startHost(t, buildBinary(t), append([]string{"--data-dir", t.TempDir()}, args...)...)}
}

func (h frictionHost) raw(t *testing.T, line string) { t.Helper(); h.host.send(t, line) }

func (h frictionHost) send(t *testing.T, id any, method string, params any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h.raw(t, string(b))
}

// until collects lines until match holds or d passes; it returns the match
// (nil on timeout) and every line seen.
func (h frictionHost) until(d time.Duration, match func(map[string]json.RawMessage) bool) (map[string]json.RawMessage, []map[string]json.RawMessage) {
	var seen []map[string]json.RawMessage
	deadline := time.After(d)
	for {
		select {
		case line, ok := <-h.lines:
			if !ok {
				return nil, seen
			}
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(line), &m)
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

func edgeSession(t *testing.T, h frictionHost, mode string) {
	t.Helper()
	h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": t.TempDir(), "permissionMode": mode})
	if m, _ := h.until(10*time.Second, isResponse(`"mk"`)); m == nil || m["error"] != nil {
		t.Fatalf("session.create: %v", m)
	}
}

// TestContentLengthFramingIsRefusedInWords: a client framing with
// Content-Length headers (LSP, vscode-jsonrpc's default) is told at once,
// in words, that hostcore reads one JSON message per line; the body that
// follows the headers is not run, and a request body is refused with its
// own id, so that its sender's wait ends. A body written without a line
// ending, the next header glued to it, is answered as the first header
// was. The client is answered for every message and nothing hangs: a
// plain line after all of it is answered as usual.
func TestContentLengthFramingIsRefusedInWords(t *testing.T) {
	h := edgeStart(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"session.list","params":{}}`
	h.raw(t, "Content-Length: "+strconv.Itoa(len(body))+"\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"+body)
	m, seen := h.until(10*time.Second, isResponse(`1`))
	if len(seen) != 2 {
		t.Fatalf("want the header's error, then the body's: %d lines", len(seen))
	}
	first := errorOf(t, seen[0])
	if first.Code != -32700 || string(seen[0]["id"]) != "null" || !strings.Contains(first.Message, "one JSON message per line, with no headers") {
		t.Fatalf("the header line: %s", stringify(seen[0]))
	}
	if e := errorOf(t, m); e.Code != -32600 || !strings.Contains(e.Message, "no headers") {
		t.Fatalf("the body after the header: %s", stringify(m))
	}

	// vscode-jsonrpc writes a body without a line ending: the next
	// message's header follows it on the same line.
	second := `{"jsonrpc":"2.0","id":3,"method":"session.list","params":{}}`
	h.raw(t, "content-length: 60\r\n\r\n"+body+"Content-Length: "+strconv.Itoa(len(second))+"\r\n\r\n"+second)
	h.send(t, 4, "session.list", map[string]any{})
	m, seen = h.until(10*time.Second, isResponse(`4`))
	if m == nil || m["error"] != nil {
		t.Fatalf("a plain line after the headers: %v", stringify(m))
	}
	var codes []int64
	for _, l := range seen[:len(seen)-1] {
		codes = append(codes, errorOf(t, l).Code)
	}
	if len(codes) != 3 || codes[0] != -32700 || codes[1] != -32700 || codes[2] != -32600 || string(seen[2]["id"]) != "3" {
		t.Fatalf("want two header errors and the refusal of id 3 before the answer: %v", seen)
	}
}

// TestDollarMethods: methods beginning with "$/" follow LSP: any such
// notification but $/cancelRequest is ignored without a word, and such a
// request is answered -32601.
func TestDollarMethods(t *testing.T) {
	h := edgeStart(t)
	h.raw(t, `{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}`)
	h.raw(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"nothing runs with this id"}}`)
	h.send(t, "p", "$/progress", map[string]any{})
	m, seen := h.until(10*time.Second, isResponse(`"p"`))
	if len(seen) != 1 || errorOf(t, m).Code != -32601 {
		t.Fatalf("want only the -32601 of the $/ request: %v", seen)
	}
}

// TestDollarCancelRequestAbortsLikeToolsCancel: $/cancelRequest {id}, as
// vscode-jsonrpc's cancellation tokens send it, ends the tools.execute
// sent with that request id exactly as tools.cancel ends it: TOOL_ABORTED,
// the command's process tree killed, the audit row written. Only the
// message, which names what cancelled the call, differs.
func TestDollarCancelRequestAbortsLikeToolsCancel(t *testing.T) {
	h := edgeStart(t)
	ws := t.TempDir()
	h.send(t, "mk", "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	if m, _ := h.until(10*time.Second, isResponse(`"mk"`)); m == nil || m["error"] != nil {
		t.Fatalf("session.create: %v", m)
	}
	type ending struct {
		OK        bool   `json:"ok"`
		ErrorCode string `json:"errorCode"`
		Decision  string `json:"decision"`
		Message   string `json:"message"`
	}
	run := func(callID, reqID string, cancel func()) ending {
		t.Helper()
		pidFile := filepath.Join(ws, callID+".pid")
		h.send(t, json.RawMessage(reqID), "tools.execute", map[string]any{"sessionId": "s", "turnId": "t-" + callID, "toolCallId": callID, "toolName": "Bash",
			"args": map[string]any{"command": "sleep 120 & echo $! > " + pidFile + "; echo started; wait"}})
		if m, _ := h.until(20*time.Second, isMethod("tool.output")); m == nil {
			t.Fatalf("%s: no output", callID)
		}
		cancel()
		start := time.Now()
		m, _ := h.until(20*time.Second, isResponse(reqID))
		if m == nil {
			t.Fatalf("%s: not answered", callID)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("%s: answered %v after the cancel", callID, d)
		}
		var e ending
		json.Unmarshal(m["result"], &e)
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		deadline := time.Now().Add(5 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the command's child %d outlived the cancel", callID, pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		h.send(t, "a-"+callID, "audit.query", map[string]any{"sessionId": "s", "toolCallId": callID})
		am, _ := h.until(10*time.Second, isResponse(`"a-`+callID+`"`))
		var rows struct {
			Rows []struct {
				ErrorCode *string `json:"errorCode"`
			} `json:"rows"`
		}
		json.Unmarshal(am["result"], &rows)
		if len(rows.Rows) != 1 || rows.Rows[0].ErrorCode == nil || *rows.Rows[0].ErrorCode != "TOOL_ABORTED" {
			t.Fatalf("%s: audit: %s", callID, am["result"])
		}
		return e
	}
	byTools := run("c1", `"x1"`, func() {
		h.send(t, "cancel", "tools.cancel", map[string]any{"sessionId": "s", "toolCallId": "c1"})
	})
	byDollar := run("c2", `17`, func() {
		h.raw(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":17}}`)
	})
	if byDollar.OK || byDollar.ErrorCode != "TOOL_ABORTED" || !strings.Contains(byDollar.Message, "$/cancelRequest") {
		t.Fatalf("$/cancelRequest: %+v", byDollar)
	}
	byTools.Message, byDollar.Message = "", ""
	if byTools != byDollar {
		t.Fatalf("tools.cancel ended the call as %+v, $/cancelRequest as %+v", byTools, byDollar)
	}
}

// alive says whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc (macOS): the signal test stands
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestClientErrorsReadInProtocolTerms: what a client's odd replies to a
// permission card become in the call's result names JSON and JSON-RPC,
// not this program's Go types or libraries: a bare string where an
// object is due, and an error reply.
func TestClientErrorsReadInProtocolTerms(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply string
		want  string
	}{
		{"bare string", `"result":"allow-once"`, "must be an object, not a string"},
		{"error reply", `"error":{"code":-32603,"message":"the UI crashed"}`, "the client answered with error -32603: the UI crashed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := edgeStart(t)
			edgeSession(t, h, "ask")
			h.send(t, "w", "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w", "toolName": "Write",
				"args": map[string]any{"path": "a.txt", "content": "x"}})
			card, _ := h.until(10*time.Second, isMethod("permission.request"))
			if card == nil {
				t.Fatal("no card")
			}
			h.raw(t, `{"jsonrpc":"2.0","id":`+string(card["id"])+`,`+c.reply+`}`)
			m, _ := h.until(10*time.Second, isResponse(`"w"`))
			var r struct {
				ErrorCode string `json:"errorCode"`
				Message   string `json:"message"`
			}
			json.Unmarshal(m["result"], &r)
			if r.ErrorCode != "TOOL_DENIED" || !strings.Contains(r.Message, c.want) {
				t.Fatalf("want TOOL_DENIED saying %q: %s", c.want, m["result"])
			}
			for _, leak := range []string{"Go value", "json:", "jsonrpc2", "map[", "RawMessage"} {
				if strings.Contains(r.Message, leak) {
					t.Fatalf("the message names %q: %s", leak, r.Message)
				}
			}
		})
	}
}
