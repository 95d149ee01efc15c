//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Background commands (Bash with runInBackground, BashOutput, KillShell)
// through the built binary: each test leaves a unique sleep (the marker)
// in the command's tree, and /proc is searched for it after each way a
// background command can end.

// bgArgs are Bash's args for a background command.
func bgArgs(command string) map[string]any {
	return map[string]any{"command": command, "runInBackground": true}
}

// bgStart starts command in the background in session "s" and returns
// its shellId.
func bgStart(t *testing.T, c rpcClient, id int, callID, command string) string {
	t.Helper()
	r := c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t1", "toolCallId": callID, "toolName": "Bash", "args": bgArgs(command)})
	shellID, _ := details(r)["shellId"].(string)
	if r["ok"] != true || !strings.HasPrefix(shellID, "bash_") {
		t.Fatalf("starting %q in the background: %v", command, r)
	}
	return shellID
}

// bgCall runs BashOutput or KillShell on shellID.
func bgCall(t *testing.T, c rpcClient, id int, callID, tool, shellID string) map[string]any {
	t.Helper()
	return c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t2", "toolCallId": callID, "toolName": tool, "args": map[string]any{"shellId": shellID}})
}

// bgUntil reads shellID's output (ids from id up) until its stdout holds
// want, and returns everything read, stdout then stderr of each read.
func bgUntil(t *testing.T, c rpcClient, id int, shellID, want string) (reads []map[string]any) {
	t.Helper()
	var seen string
	for deadline := time.Now().Add(20 * time.Second); ; id++ {
		r := bgCall(t, c, id, fmt.Sprintf("out%d", id), "BashOutput", shellID)
		if r["ok"] != true {
			t.Fatalf("BashOutput: %v", r)
		}
		reads = append(reads, details(r))
		seen += fmt.Sprint(details(r)["stdout"])
		if strings.Contains(seen, want) {
			return reads
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the background output: %v", want, reads)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSurvivors waits until n processes run "sleep m".
func waitSurvivors(t *testing.T, m string, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); len(survivors(m)) != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sleeps run, want %d", len(survivors(m)), n)
		}
	}
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestBackgroundHTTPServerServesWhileTheSessionGoesOn: a dev server runs
// in the background, the test and a foreground Bash reach it, BashOutput
// returns its log once, and session.delete leaves nothing of it.
func TestBackgroundHTTPServerServesWhileTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to serve HTTP")
	}
	m := sleepMarker()
	port := freePort(t)
	h, c, _, _ := sessionHost(t, "auto", nil)
	server := fmt.Sprintf(`sleep %s & %s -e 'require("http").createServer((q, r) => { console.log("GET " + q.url); r.end("hello from " + q.url) }).listen(%d, "127.0.0.1", () => console.log("listening"))'`, m, node, port)
	shellID := bgStart(t, c, 2, "server", server)
	bgUntil(t, c, 10, shellID, "listening")

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/from-go", port))
	if err != nil {
		t.Fatalf("the background server is not reachable: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from /from-go" {
		t.Fatalf("the server answered %q", body)
	}
	fg := c.call(40, "tools.execute", bashParams("fg", fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d; printf 'GET /from-bash HTTP/1.0\r\n\r\n' >&3; cat <&3`, port), 30))
	if fg["ok"] != true || !strings.Contains(fmt.Sprint(details(fg)["stdout"]), "hello from /from-bash") {
		t.Fatalf("a foreground Bash could not reach the background server: %v", fg)
	}
	// Each read returns what came since the previous one.
	reads := bgUntil(t, c, 50, shellID, "GET /from-bash")
	all := ""
	for _, r := range reads {
		all += fmt.Sprint(r["stdout"])
	}
	if strings.Count(all, "GET /from-go") != 1 || strings.Contains(all, "listening") {
		t.Fatalf("reads after the first returned earlier output again: %q", all)
	}
	last := reads[len(reads)-1]
	if last["state"] != "running" || last["exitCode"] != nil {
		t.Fatalf("the server's state: %v", last)
	}
	file, _ := last["stdoutFile"].(string)
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "listening\n") || !strings.Contains(string(b), "GET /from-bash") {
		t.Fatalf("the output file %s holds %q", file, b)
	}

	c.call(90, "session.delete", map[string]any{"sessionId": "s"})
	if left := survivors(m); len(left) > 0 {
		t.Fatalf("session.delete left %v running", left)
	}
	if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
		t.Fatal("the server still answers after session.delete")
	}
	var note struct{ Params map[string]any }
	json.Unmarshal([]byte(h.next(t, `{"method":"shell.exited"}`)), &note)
	if note.Params["shellId"] != shellID || note.Params["killedBy"] != "session.delete" || note.Params["toolCallId"] != "server" {
		t.Fatalf("shell.exited: %v", note.Params)
	}
}

// TestBackgroundKillShellKillsTheTree: KillShell answers once the
// command, a grandchild in a session of its own and a double fork are
// all gone, and the client is told with shell.exited.
func TestBackgroundKillShellKillsTheTree(t *testing.T) {
	t.Parallel()
	m := sleepMarker()
	h, c, _, _ := sessionHost(t, "ask", nil)
	// The start is asked on a card, which says the command stays.
	c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t1", "toolCallId": "tree", "toolName": "Bash",
		"args": bgArgs(fmt.Sprintf("setsid sleep %[1]s & (sleep %[1]s &); echo ready; sleep %[1]s", m))})
	card, id := cardOf(t, h)
	if !strings.HasPrefix(fmt.Sprint(card["preview"]), "[runs in the background") {
		t.Fatalf("the card does not say the command stays: %v", card["preview"])
	}
	h.answer(t, id, "allow-once")
	r := c.result(2)
	shellID, _ := details(r)["shellId"].(string)
	if r["ok"] != true || details(r)["state"] != "running" || details(r)["started"] != true {
		t.Fatalf("start: %v", r)
	}
	bgUntil(t, c, 10, shellID, "ready")
	waitSurvivors(t, m, 3)
	// Neither read nor kill of the session's own command asks.
	k := bgCall(t, c, 40, "kill", "KillShell", shellID)
	if k["ok"] != true || details(k)["killed"] != true || details(k)["state"] != "exited" || details(k)["exitCode"] != nil {
		t.Fatalf("KillShell: %v", k)
	}
	if left := survivors(m); len(left) > 0 {
		t.Fatalf("KillShell left %v running", left)
	}
	var note struct{ Params map[string]any }
	json.Unmarshal([]byte(h.next(t, `{"method":"shell.exited"}`)), &note)
	if note.Params["shellId"] != shellID || note.Params["killedBy"] != "KillShell" || note.Params["exitCode"] != nil || note.Params["signal"] == nil {
		t.Fatalf("shell.exited: %v", note.Params)
	}
	o := bgCall(t, c, 41, "after", "BashOutput", shellID)
	if details(o)["state"] != "exited" || details(o)["killedBy"] != "KillShell" {
		t.Fatalf("BashOutput after KillShell: %v", o)
	}
	again := bgCall(t, c, 42, "again", "KillShell", shellID)
	if again["ok"] != true || details(again)["killed"] != false {
		t.Fatalf("a second KillShell: %v", again)
	}
	if r := bgCall(t, c, 43, "unknown", "KillShell", "bash_000000000000000000000000"); r["errorCode"] != "INVALID_ARGUMENT" {
		t.Fatalf("KillShell of an unknown id: %v", r)
	}
}

// TestBackgroundOutlivesTurnCancelNotItsEnds: turn.cancel of the turn that
// started a background command leaves it running; session.delete,
// shutdown, stdin's end, SIGTERM and SIGINT each kill it with its tree.
func TestBackgroundOutlivesTurnCancelNotItsEnds(t *testing.T) {
	t.Parallel()
	ends := []struct {
		name string
		end  func(t *testing.T, h *host, c rpcClient)
	}{
		{"session.delete", func(t *testing.T, h *host, c rpcClient) {
			c.call(90, "session.delete", map[string]any{"sessionId": "s"})
		}},
		{"shutdown", func(t *testing.T, h *host, c rpcClient) {
			start := time.Now()
			c.call(90, "shutdown", map[string]any{})
			if code := h.wait(t); code != 0 {
				t.Fatalf("exit %d after shutdown", code)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("exit took %v after shutdown, want < 3s", took)
			}
		}},
		{"stdin EOF", func(t *testing.T, h *host, c rpcClient) {
			h.stdin.Close()
			if code := h.wait(t); code != 0 {
				t.Fatalf("exit %d after EOF", code)
			}
		}},
		{"SIGTERM", func(t *testing.T, h *host, c rpcClient) { h.terminate(t) }},
		{"SIGINT", func(t *testing.T, h *host, c rpcClient) {
			h.cmd.Process.Signal(syscall.SIGINT)
			if code := h.wait(t); code != 0 {
				t.Fatalf("exit %d after SIGINT", code)
			}
		}},
	}
	for _, e := range ends {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			m := sleepMarker()
			h, c, _, _ := sessionHost(t, "auto", nil)
			// TERM ignored: the kill ladder's KILL ends it.
			shellID := bgStart(t, c, 2, "bg", fmt.Sprintf("trap '' TERM; setsid sleep %[1]s & (sleep %[1]s &); sleep %[1]s", m))
			waitSurvivors(t, m, 3)
			r := c.call(3, "turn.cancel", map[string]any{"sessionId": "s", "turnId": "t1"})
			if r["cancelled"] != 0.0 {
				t.Fatalf("turn.cancel: %v", r)
			}
			if o := bgCall(t, c, 4, "o", "BashOutput", shellID); details(o)["state"] != "running" || len(survivors(m)) != 3 {
				t.Fatalf("turn.cancel ended the background command: %v, %d sleeps", o, len(survivors(m)))
			}
			e.end(t, h, c)
			assertNoSurvivors(t, m, 0)
		})
	}
}

// TestBackgroundLimitDenylistAndAudit: the ninth running command is
// refused before it starts, a command the denylist refuses never starts,
// and each start, read and kill has its audit row.
func TestBackgroundLimitDenylistAndAudit(t *testing.T) {
	t.Parallel()
	m := sleepMarker()
	_, c, _, _ := sessionHost(t, "auto", nil)
	var ids []string
	for i := range 8 {
		ids = append(ids, bgStart(t, c, 10+i, fmt.Sprint("bg", i), "sleep "+m))
	}
	r := c.call(20, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t1", "toolCallId": "ninth", "toolName": "Bash", "args": bgArgs("sleep " + m)})
	if r["errorCode"] != "TOOL_DENIED" || r["decision"] != "policy-deny" || !strings.Contains(fmt.Sprint(r["message"]), "8 background commands") {
		t.Fatalf("the ninth: %v", r)
	}
	waitSurvivors(t, m, 8)
	// One ended makes room.
	bgCall(t, c, 21, "k0", "KillShell", ids[0])
	bgStart(t, c, 22, "ninth-again", "sleep "+m)

	d := sleepMarker()
	r = c.call(30, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t1", "toolCallId": "denied", "toolName": "Bash",
		"args": bgArgs("cat ~/.ssh/id_rsa; sleep " + d)})
	if r["errorCode"] != "TOOL_DENIED" || r["decision"] != "policy-deny" || details(r)["shellId"] != nil {
		t.Fatalf("a denylisted background command: %v", r)
	}
	time.Sleep(200 * time.Millisecond)
	if len(survivors(d)) > 0 {
		t.Fatal("the denylisted background command started")
	}

	for _, want := range []struct{ id, tool, decision, code string }{
		{"bg0", "Bash", "auto-allow", ""}, {"k0", "KillShell", "auto-allow", ""}, {"ninth", "Bash", "policy-deny", "TOOL_DENIED"}, {"denied", "Bash", "policy-deny", "TOOL_DENIED"},
	} {
		rows, _ := c.call(40, "audit.query", map[string]any{"sessionId": "s", "toolCallId": want.id})["rows"].([]any)
		if len(rows) != 1 {
			t.Fatalf("%s: %d audit rows, want 1", want.id, len(rows))
		}
		row := rows[0].(map[string]any)
		if row["toolName"] != want.tool || row["decision"] != want.decision || (want.code != "" && row["errorCode"] != want.code) {
			t.Fatalf("%s: audit row %v", want.id, row)
		}
	}
	c.call(50, "session.delete", map[string]any{"sessionId": "s"})
	assertNoSurvivors(t, m, 0)
}

// TestBackgroundOutputFileIsInScratch: both streams are kept apart, in
// files of the session's scratch directory, and the last read says how
// the command ended.
func TestBackgroundOutputFileIsInScratch(t *testing.T) {
	t.Parallel()
	_, c, _, data := sessionHost(t, "auto", nil)
	data, _ = filepath.EvalSymlinks(data)
	shellID := bgStart(t, c, 2, "bg", "echo out; echo err >&2")
	var last map[string]any
	for deadline := time.Now().Add(20 * time.Second); ; {
		last = details(bgCall(t, c, 3, fmt.Sprint("o", time.Now().UnixNano()), "BashOutput", shellID))
		if last["state"] == "exited" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not end: %v", last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, k := range []string{"stdoutFile", "stderrFile"} {
		f := fmt.Sprint(last[k])
		if rel, err := filepath.Rel(filepath.Join(data, "scratch"), f); err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s %s is not in the scratch dir", k, f)
		}
	}
	if last["exitCode"] != 0.0 || last["stdoutTotalBytes"] != 4.0 || last["stderrTotalBytes"] != 4.0 {
		t.Fatalf("the last read: %v", last)
	}
}
