//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// A client that never reads hostcore's stderr (Node's spawn gives it a
// pipe by default; a sidecar that listens to stdout only stops reading it
// once its own buffer is full) must not stall it: every call is still
// answered, and SIGTERM still ends it within PROTOCOL section 1's 3 s.
// Before rpc.LogWriter, the pipe filled after about 220 calls and every
// goroutine that logs, the read loop and the signal handler among them,
// waited on it for good.
func TestUnreadStderrNeverStallsHostcore(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	os.WriteFile(ws+"/a.txt", []byte("hello\n"), 0o644)
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer errR.Close() // held open and never read
	cmd := exec.Command(bin, "--data-dir", data, "--log-level", "debug")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stderr = errW
	h := startCmd(t, cmd)
	errW.Close()
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	for i := 2; i < 1200; i++ {
		done := make(chan map[string]any, 1)
		go func() {
			done <- c.call(i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("r", i), "toolName": "Read", "args": map[string]any{"path": "a.txt"}})
		}()
		select {
		case r := <-done:
			if r["ok"] != true {
				t.Fatalf("Read %d: %v", i, r)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Read %d unanswered with stderr full", i)
		}
	}
	h.terminate(t)
}

// Descriptors hostcore inherits above stderr (a sidecar's extra stdio
// channels, Node's 'ipc') are not passed on to the commands it runs: a
// command could otherwise write into the sidecar's private channels or
// hold them open.
func TestInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	var extra []*os.File
	for range 6 { // fds 3 to 8 in hostcore
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		extra = append(extra, w)
	}
	cmd := exec.Command(bin, "--data-dir", data)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.ExtraFiles = extra
	h := startCmd(t, cmd)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "b", "toolName": "Bash",
		"args": map[string]any{"command": `ls /proc/$$/fd; ls -l /proc/$$/fd >&2`}}) // the shell's, listed by a child
	out, _ := r["details"].(map[string]any)["stdout"].(string)
	if r["ok"] != true || strings.Join(strings.Fields(out), " ") != "0 1 2" {
		t.Fatalf("the command's descriptors: %q (%v)", out, r["details"].(map[string]any)["stderr"])
	}
}

// startSharingStdin starts hostcore with args on a blocking pipe for stdin
// whose read end the test keeps open too, as a parent that shares its
// stdin with hostcore does; makeNonBlocking sets O_NONBLOCK through the
// test's copy, on the open file description the two share.
func startSharingStdin(t *testing.T, args ...string) (h *host, makeNonBlocking func()) {
	t.Helper()
	parentCopy, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parentCopy.Close() })
	fd := int(parentCopy.Fd()) // Fd makes it blocking, as a pipe comes
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stdin = parentCopy
	h = startCmd(t, cmd)
	h.stdin = w
	return h, func() {
		t.Helper()
		if err := syscall.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // hostcore waits for its next line with the flag set
	}
}

// A parent that keeps its own copy of hostcore's stdin (one open file
// description: a shell's `( hostcore ) < fifo`, a launcher that also
// reads its inherited stdin) and makes it non-blocking while hostcore
// runs (libuv does, for its own stdio) does not end the session: read
// through a plain blocking read, stdin then answered EAGAIN, which hostcore
// took for the end of its input and exited, without a word, leaving every
// later request unanswered. Each request is still answered, with and
// without the spin.
func TestStdinMadeNonBlockingByAnotherHolder(t *testing.T) {
	for _, spin := range []string{"100us", "0"} {
		t.Run("spin "+spin, func(t *testing.T) {
			ws, data := newWorkspace(t)
			os.WriteFile(ws+"/a.txt", []byte("hello\n"), 0o644)
			h, makeNonBlocking := startSharingStdin(t, "--data-dir", data, "--input-spin", spin)
			c := rpcClient{t, h}
			c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
			read := func(id int) {
				t.Helper()
				if r := c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("r", id), "toolName": "Read", "args": map[string]any{"path": "a.txt"}}); r["ok"] != true {
					t.Fatalf("Read %d: %v", id, r)
				}
			}
			read(2)
			makeNonBlocking()
			for id := 3; id < 8; id++ {
				read(id)
				time.Sleep(20 * time.Millisecond)
			}
			h.terminate(t)
		})
	}
}

// The same in MCP mode, whose stdin the SDK reads: the session goes on.
func TestMCPStdinMadeNonBlockingByAnotherHolder(t *testing.T) {
	ws, data := newWorkspace(t)
	os.WriteFile(ws+"/a.txt", []byte("alpha\n"), 0o644)
	h, makeNonBlocking := startSharingStdin(t, "mcp", "--workspace", ws, "--data-dir", data, "--permission-mode", "auto")
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	h.next(t, `{"id":1}`)
	h.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	makeNonBlocking()
	for id := 2; id < 5; id++ {
		h.send(t, mcpCall(id, "Read", map[string]any{"path": "a.txt"}))
		if got := h.next(t, fmt.Sprintf(`{"id":%d}`, id)); !strings.Contains(got, "alpha") {
			t.Fatalf("Read %d: %s", id, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// At a terminal, a last line typed without a newline is ended as cat ends
// it: Ctrl-D sends the line, a second Ctrl-D ends the input, and hostcore
// answers and exits. Before, a terminal's end of input held for one read
// only, and hostcore read on until a third Ctrl-D.
func TestTerminalStdinEndsAtItsFirstEndOfInput(t *testing.T) {
	bin := buildBinary(t)
	_, data := newWorkspace(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, "--data-dir", data, "--log-level", "error")
	cmd.Stdin = tty
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	go io.Copy(io.Discard, ptmx) // the terminal's echo
	ptmx.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\x04"))
	time.Sleep(200 * time.Millisecond) // two reads: the line, then its end
	ptmx.Write([]byte("\x04"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("hostcore still reading after two Ctrl-Ds; it wrote %q", out.String())
	}
	if !strings.Contains(out.String(), `"id":1,"result"`) {
		t.Fatalf("the last line was not answered: %q", out.String())
	}
}
