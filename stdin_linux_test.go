package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startSharingStdin starts hostcore with args on a blocking pipe for stdin
// whose read end the test keeps open too, as a parent that shares its
// stdin with hostcore does; makeNonBlocking sets O_NONBLOCK through the
// test's copy, on the open file description the two share.
func startSharingStdin(t *testing.T, args ...string) (h *host, makeNonBlocking func()) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	parentCopy := os.NewFile(uintptr(fds[0]), "stdin") // blocking, as a pipe comes
	t.Cleanup(func() { parentCopy.Close() })
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stdin = parentCopy
	h = startCmd(t, cmd)
	h.stdin = os.NewFile(uintptr(fds[1]), "client")
	return h, func() {
		t.Helper()
		if err := unix.SetNonblock(fds[0], true); err != nil {
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
