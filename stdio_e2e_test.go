package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
