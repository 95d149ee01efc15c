//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRestartKeepsSessionsAuditAndCallIDs(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "durable", "workspaceRoot": ws, "permissionMode": "auto"})
	c.call(2, "settings.update", map[string]any{"defaultPermissionMode": "accept-edits"})
	c.call(5, "session.create", map[string]any{"sessionId": "planner", "workspaceRoot": ws, "mode": "plan"})
	r := c.call(3, "tools.execute", map[string]any{"sessionId": "durable", "turnId": "t", "toolCallId": "once", "toolName": "Write", "args": map[string]any{"path": "f.txt", "content": "1"}})
	if r["ok"] != true {
		t.Fatalf("write: %v", r)
	}
	// A Read's id is committed with its audit row rather than ahead: it
	// must survive the restart all the same.
	if r := c.call(6, "tools.execute", map[string]any{"sessionId": "durable", "turnId": "t", "toolCallId": "looked", "toolName": "Read", "args": map[string]any{"path": "f.txt"}}); r["ok"] != true {
		t.Fatalf("read: %v", r)
	}
	h.stdin.Close()
	if code := h.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}

	h2 := startHost(t, bin, "--data-dir", data)
	c2 := rpcClient{t, h2}
	s := c2.call(1, "session.get", map[string]any{"sessionId": "durable"})
	if s["workspaceRoot"] != ws || s["permissionMode"] != "auto" {
		t.Fatalf("session after restart: %v", s)
	}
	if p := c2.call(5, "session.get", map[string]any{"sessionId": "planner"}); p["mode"] != "plan" {
		t.Fatalf("operating mode after restart: %v", p["mode"])
	}
	if set := c2.call(2, "settings.get", map[string]any{}); set["defaultPermissionMode"] != "accept-edits" {
		t.Fatalf("settings after restart: %v", set)
	}
	r = c2.call(3, "tools.execute", map[string]any{"sessionId": "durable", "turnId": "t", "toolCallId": "once", "toolName": "Write", "args": map[string]any{"path": "f.txt", "content": "2"}})
	if r["errorCode"] != "DUPLICATE_TOOL_CALL" {
		t.Fatalf("repeated call id after restart: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "1" {
		t.Fatalf("duplicate call ran: file is %q", b)
	}
	if r := c2.call(6, "tools.execute", map[string]any{"sessionId": "durable", "turnId": "t", "toolCallId": "looked", "toolName": "Read", "args": map[string]any{"path": "f.txt"}}); r["errorCode"] != "DUPLICATE_TOOL_CALL" {
		t.Fatalf("repeated Read id after restart: %v", r)
	}
	rows := c2.call(4, "audit.query", map[string]any{"sessionId": "durable"})["rows"].([]any)
	if len(rows) != 4 {
		t.Fatalf("audit rows after restart: %d, want 4 (the write, the read and the two refused duplicates)", len(rows))
	}
	h2.stdin.Close()
	h2.wait(t)
}

func TestClientVanishingWhileIdleEndsHostcore(t *testing.T) {
	bin := buildBinary(t)
	_, data := newWorkspace(t)
	cmd := exec.Command(bin, "--data-dir", data)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io := json.NewDecoder(stdout)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	var m map[string]any
	if err := io.Decode(&m); err != nil {
		t.Fatal(err)
	}
	// The client stops reading but keeps stdin open: hostcore must notice
	// on its own, without a write to fail.
	stdout.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hostcore did not notice its client vanished")
	}
}

// SIGHUP (a closed terminal, a parent hanging up) stops hostcore as
// SIGTERM does; before, it killed hostcore on the spot, without answers
// or a clean close of the database.
func TestSignalsCancelEverythingAndExitZeroFast(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			skipIfIgnored(t, sig)
			bin := buildBinary(t)
			ws, data := newWorkspace(t)
			h := startHost(t, bin, "--data-dir", data)
			c := rpcClient{t, h}
			c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws})
			c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": "x", "content": "x"}})
			h.next(t, `{"method":"permission.request"}`)
			start := time.Now()
			t.Logf("signalling at %s", start.UTC().Format("15:04:05.000000"))
			h.cmd.Process.Signal(sig)
			// PROTOCOL section 1: "pending waits resolve as deny".
			// The card is withdrawn: the client closes it.
			if l := h.next(t, `{"method":"permission.cancelled"}`); !strings.Contains(l, `"toolCallId":"w"`) || !strings.Contains(l, `"reason":"cancelled"`) {
				t.Fatalf("withdrawal: %s", l)
			}
			r := c.result(2)
			if r["errorCode"] != "TOOL_DENIED" || r["decision"] != "deny" {
				t.Fatalf("pending call after %v: %v", sig, r)
			}
			if code := h.wait(t); code != 0 {
				t.Fatalf("exit %d after %v", code, sig)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("exit took %v, want < 3s", d)
			}
			if _, err := os.Stat(filepath.Join(ws, "x")); err == nil {
				t.Fatal("the denied write ran")
			}
			// The database was closed cleanly: it opens again.
			h2 := startHost(t, bin, "--data-dir", data)
			rpcClient{t, h2}.call(1, "session.get", map[string]any{"sessionId": "s"})
		})
	}
}

// skipIfIgnored skips a test of how hostcore takes sig when the tests
// themselves run with sig ignored (under nohup, or as a script's
// background job): hostcore inherits that and keeps ignoring it, as it
// should.
func skipIfIgnored(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if signal.Ignored(sig) {
		t.Skipf("the tests run with %v ignored, which hostcore inherits", sig)
	}
}

// Started with SIGHUP or SIGINT ignored (`nohup hostcore`, `hostcore &`
// in a script), hostcore keeps ignoring it: the session goes on answering
// and no stop begins. (Registering the signal would have undone the
// ignoring.)
func TestSignalIgnoredAtStartStaysIgnored(t *testing.T) {
	bin := buildBinary(t)
	for _, c := range []struct {
		sig  syscall.Signal
		trap string
	}{{syscall.SIGHUP, "HUP"}, {syscall.SIGINT, "INT"}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			ws, data := newWorkspace(t)
			// `trap '' SIG` sets it ignored, and exec keeps it so.
			h := startHost(t, "/bin/sh", "-c", `trap '' `+c.trap+`; exec "$0" "$@"`, bin, "--data-dir", data)
			cl := rpcClient{t, h}
			cl.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws})
			h.cmd.Process.Signal(c.sig)
			time.Sleep(200 * time.Millisecond)
			// A stopping hostcore refuses session methods: this one is
			// answered only if no stop began.
			if r := cl.call(2, "session.get", map[string]any{"sessionId": "s"}); r["sessionId"] != "s" {
				t.Fatalf("session.get after %v: %v", c.sig, r)
			}
			if strings.Contains(h.stderr.String(), "shutting down") {
				t.Fatalf("%v started a stop:\n%s", c.sig, h.stderr.String())
			}
			h.terminate(t)
		})
	}
}

func TestConcurrentEditsOfOneFileAllLand(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	var lines []string
	for i := range 16 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "a", "workspaceRoot": ws, "permissionMode": "auto"})
	c.call(2, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": ws, "permissionMode": "auto"})
	// Two sessions, eight edits each, all in flight at once.
	for i := range 16 {
		sess := []string{"a", "b"}[i%2]
		c.send(100+i, "tools.execute", map[string]any{"sessionId": sess, "turnId": "t", "toolCallId": fmt.Sprint("e", i), "toolName": "Edit",
			"args": map[string]any{"path": "f.txt", "old_string": lines[i], "new_string": fmt.Sprintf("LINE %02d", i)}})
	}
	for i := range 16 {
		if r := c.result(100 + i); r["ok"] != true {
			t.Errorf("edit %d: %v", i, r)
		}
	}
	got, _ := os.ReadFile(filepath.Join(ws, "f.txt"))
	for i := range 16 {
		if !strings.Contains(string(got), fmt.Sprintf("LINE %02d", i)) {
			t.Errorf("edit %d was lost:\n%s", i, got)
		}
	}
}

// TestConcurrentSameCallIDRunsOnce sends one toolCallId many times at once,
// for a Read (recorded with its audit row) and for a Write (reserved ahead):
// exactly one of each runs, the rest are DUPLICATE_TOOL_CALL.
func TestConcurrentSameCallIDRunsOnce(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "r.txt"), []byte("r\n"), 0o644)
	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	const n = 24
	for i := range n {
		args := map[string]any{"path": "r.txt"}
		tool, id := "Read", "same-read"
		if i%2 == 1 {
			tool, id, args = "Write", "same-write", map[string]any{"path": "w.txt", "content": fmt.Sprint(i)}
		}
		c.send(100+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": id, "toolName": tool, "args": args})
	}
	ok := map[string]int{}
	for i := range n {
		r := c.result(100 + i)
		switch {
		case r["ok"] == true:
			ok[r["toolCallId"].(string)]++
		case r["errorCode"] != "DUPLICATE_TOOL_CALL":
			t.Errorf("call %d: %v", i, r)
		}
	}
	if ok["same-read"] != 1 || ok["same-write"] != 1 {
		t.Errorf("calls that ran: %v, want one of each", ok)
	}
	rows := c.call(2, "audit.query", map[string]any{"sessionId": "s"})["rows"].([]any)
	if len(rows) != n {
		t.Errorf("audit rows: %d, want %d", len(rows), n)
	}
	h.stdin.Close()
	h.wait(t)
}

// TestSIGTERMWithStdoutFullStillAudits: a client that stopped reading
// while a command floods tool.output leaves hostcore blocked writing; on
// SIGTERM that write must fail in time for the call to end as
// TOOL_ABORTED with its audit row committed before the database closes
// (a review found no row at all after the restart), and hostcore still
// exits 0 within 3 seconds.
func TestSIGTERMWithStdoutFullStillAudits(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	cmd := exec.Command(bin, "--data-dir", data)
	// GORACE: under -race the binary would sleep 1 s at exit, which is
	// the race runtime's, not hostcore's, time.
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"session.create","params":{"sessionId":"s","workspaceRoot":%q,"permissionMode":"auto"}}`+"\n", ws)
	first := make([]byte, 512)
	if n, err := out.Read(first); err != nil || !strings.Contains(string(first[:n]), `"id":1`) {
		t.Fatalf("session.create: %q %v", first[:n], err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools.execute","params":{"sessionId":"s","turnId":"t","toolCallId":"flood","toolName":"Bash","args":{"command":"yes | head -c 50000000"}}}`)
	time.Sleep(2 * time.Second) // stdout fills; nothing reads it any more
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hostcore did not exit after SIGTERM with its stdout full")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("exit took %v, want < 3s", d)
	}
	h := startHost(t, bin, "--data-dir", data)
	rows := rpcClient{t, h}.call(1, "audit.query", map[string]any{"sessionId": "s", "toolCallId": "flood"})["rows"].([]any)
	if len(rows) != 1 {
		t.Fatalf("audit rows for the flood: %v", rows)
	}
	if row := rows[0].(map[string]any); row["errorCode"] != "TOOL_ABORTED" {
		t.Fatalf("audit row: %v", row)
	}
}

// TestCallIDFreeAfterCrashWithCardOpen: hostcore SIGKILLed while a Write's
// card is open never ran the Write, so its id is not "already executed"
// after the restart: the same call sent again runs (a review found it
// refused DUPLICATE_TOOL_CALL forever). An id that did run stays refused.
func TestCallIDFreeAfterCrashWithCardOpen(t *testing.T) {
	bin, h, c, ws, data := hostWithSession(t, "ask")
	c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "done", "toolName": "Write", "args": map[string]any{"path": "done.txt", "content": "x"}})
	h.answer(t, h.nextCard(t), "allow-once")
	if r := c.result(2); r["ok"] != true {
		t.Fatalf("first Write: %v", r)
	}
	c.send(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "k1", "toolName": "Write", "args": map[string]any{"path": "k1.txt", "content": "x"}})
	h.next(t, `{"method":"permission.request","params":{"toolCallId":"k1"}}`)
	h.cmd.Process.Kill()
	h.wait(t)

	h2 := startHost(t, bin, "--data-dir", data)
	c2 := rpcClient{t, h2}
	c2.call(1, "session.configure", map[string]any{"sessionId": "s", "permissionMode": "auto"})
	if r := c2.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t2", "toolCallId": "k1", "toolName": "Write", "args": map[string]any{"path": "k1.txt", "content": "x"}}); r["ok"] != true {
		t.Fatalf("the call whose card was open at the crash, sent again: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "k1.txt")); err != nil {
		t.Fatal(err)
	}
	if r := c2.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t2", "toolCallId": "done", "toolName": "Write", "args": map[string]any{"path": "done.txt", "content": "y"}}); r["errorCode"] != "DUPLICATE_TOOL_CALL" {
		t.Fatalf("a call that ran, sent again: %v", r)
	}
}

// TestOneSocketForStdinAndStdout: socat EXEC, inetd and Popen(stdin=s,
// stdout=s) give hostcore one socket for both; making stdout non-blocking
// for write deadlines must not reach stdin through the shared description
// (a review saw hostcore read EAGAIN as the end of input and exit at once).
// A pipe stdout inherited from a shell must not be left non-blocking either.
func TestOneSocketForStdinAndStdout(t *testing.T) {
	bin := buildBinary(t)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "hostcore")
	defer ours.Close()
	cmd := exec.Command(bin, "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stdin, cmd.Stdout = theirs, theirs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(300 * time.Millisecond) // let it reach its first read
	ours.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n"))
	ours.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	n, err := ours.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"protocolVersion":"1"`) {
		t.Fatalf("initialize over one socket: %q %v", buf[:n], err)
	}

	script := fmt.Sprintf(`echo '{"jsonrpc":"2.0","id":1,"method":"initialize"}' | %s --data-dir %s 2>/dev/null; `+
		`python3 -c 'import fcntl,os,sys; sys.stderr.write(str(bool(fcntl.fcntl(1,fcntl.F_GETFL)&os.O_NONBLOCK)))'`, bin, t.TempDir())
	sh := exec.Command("sh", "-c", script)
	sh.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stderr strings.Builder
	sh.Stdout, sh.Stderr = io.Discard, &stderr
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if err := sh.Run(); err != nil || stderr.String() != "False" {
		t.Fatalf("the shell's stdout pipe after hostcore: nonblocking=%q %v", stderr.String(), err)
	}
}

// A call read right after shutdown must not run: shutdown cancels every
// call at once, before the next line is read (PROTOCOL section 1). A
// review sent shutdown and a Write in one write: when calls were cancelled
// only once Run noticed the shutdown, 48 of 60 Writes ran; and a card
// answered allow-once right after shutdown ran its Write 3 times in 40.
// A setting or session sent right after shutdown is refused with
// SHUTTING_DOWN, if it is read at all, and changes nothing that a restart
// finds (it was answered SESSION_LOOKUP_FAILED "sqlite: interrupted",
// as if storage had failed).
func TestChangesSentAfterShutdownAreRefused(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	for i := range 4 {
		h := startHost(t, bin, "--data-dir", data)
		io.WriteString(h.stdin, `{"jsonrpc":"2.0","id":1,"method":"shutdown","params":{}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"settings.update","params":{"defaultPermissionMode":"auto"}}`+"\n"+
			fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session.create","params":{"sessionId":"late%d","workspaceRoot":%q}}`, i, ws)+"\n")
		if code := h.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		for l := range h.lines {
			var m struct {
				ID    int
				Error *struct {
					Code int
					Data struct{ ErrorCode string }
				}
			}
			json.Unmarshal([]byte(l), &m)
			if m.ID >= 2 && (m.Error == nil || m.Error.Code != -32000 || m.Error.Data.ErrorCode != "SHUTTING_DOWN") {
				t.Fatalf("try %d: a change sent after shutdown was answered %s", i, l)
			}
		}
	}
	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	if got := c.call(1, "settings.get", map[string]any{})["defaultPermissionMode"]; got != "ask" {
		t.Fatalf("a settings.update sent after shutdown was applied: %v", got)
	}
	if got := c.call(2, "session.list", map[string]any{})["sessions"]; len(got.([]any)) != 0 {
		t.Fatalf("a session.create sent after shutdown was applied: %v", got)
	}
}

func TestNothingRunsAfterShutdown(t *testing.T) {
	for i := range 8 {
		bin := buildBinary(t)
		ws, data := newWorkspace(t)
		h := startHost(t, bin, "--data-dir", data)
		c := rpcClient{t, h}
		c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "ask"})
		c.call(11, "session.create", map[string]any{"sessionId": "a", "workspaceRoot": ws, "permissionMode": "auto"})
		// A card open; then, in one write, shutdown, the card's allow and
		// a Write that needs no card.
		c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": "carded.txt", "content": "x"}})
		card := h.nextCard(t)
		lines := `{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":` + string(card) + `,"result":{"decision":"allow-once"}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"tools.execute","params":{"sessionId":"a","turnId":"t","toolCallId":"late","toolName":"Write","args":{"path":"late.txt","content":"x"}}}` + "\n"
		io.WriteString(h.stdin, lines)
		h.wait(t)
		for _, f := range []string{"carded.txt", "late.txt"} {
			if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
				t.Fatalf("try %d: %s was written after shutdown", i, f)
			}
		}
	}
}
