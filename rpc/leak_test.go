//go:build unix

package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"hostcore/handlers"
	"hostcore/rpc"
	"hostcore/store"
)

// pipeClient drives an in-process rpc.Server over io.Pipes.
type pipeClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]json.RawMessage
	held  []map[string]json.RawMessage
}

func (c *pipeClient) send(id int, method string, params any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// next returns the first line for which match holds, holding the others.
func (c *pipeClient) next(match func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
	c.t.Helper()
	for i, m := range c.held {
		if match(m) {
			c.held = append(c.held[:i], c.held[i+1:]...)
			return m
		}
	}
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatal("server closed its output")
			}
			if match(m) {
				return m
			}
			c.held = append(c.held, m)
		case <-time.After(20 * time.Second):
			c.t.Fatal("no matching line within 20s")
		}
	}
}

func (c *pipeClient) result(id int) map[string]any {
	c.t.Helper()
	m := c.next(func(m map[string]json.RawMessage) bool {
		return string(m["id"]) == fmt.Sprint(id) && m["method"] == nil
	})
	if m["error"] != nil {
		c.t.Fatalf("id %d: %s", id, m["error"])
	}
	var r map[string]any
	json.Unmarshal(m["result"], &r)
	return r
}

func (c *pipeClient) call(id int, method string, params any) map[string]any {
	c.t.Helper()
	c.send(id, method, params)
	return c.result(id)
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestNoLeaksAfterSessionDeleteAndClose runs a real handlers.Server behind
// rpc.Server over pipes. Deleting sessions (one with a running Bash, one
// with a card still open) must leave no goroutine of theirs behind; closing
// the connection must leave none at all, and no file descriptor open.
func TestNoLeaksAfterSessionDeleteAndClose(t *testing.T) {
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	ws, data := filepath.Join(tmp, "ws"), filepath.Join(tmp, "data")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "a.go"), []byte("package a\n// needle\n"), 0o644)
	t.Setenv("HOME", tmp) // Bash's login-shell probe reads no developer rc files
	fdsBefore := openFDs(t)

	st, err := store.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := rpc.NewServer(inR, outW, log)
	h, err := handlers.New(handlers.Config{DataDir: data, PermissionTimeout: time.Minute, Version: "test", Shutdown: func() {}}, st, srv, log)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background(), h.Methods()) }()
	c := &pipeClient{t: t, in: inW, lines: make(chan map[string]json.RawMessage, 256)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			json.Unmarshal(sc.Bytes(), &m)
			c.lines <- m
		}
	}()
	c.call(1, "initialize", map[string]any{})
	// Run's goroutines may still be starting once initialize is
	// answered: a notification written, the connection is up, and
	// nothing it starts later is counted as left behind by the sessions.
	if err := srv.Notify(context.Background(), "test.connected", nil); err != nil {
		t.Fatal(err)
	}
	// Everything running now belongs to the connection, not to a session.
	idle := goleak.IgnoreCurrent()

	c.call(2, "session.create", map[string]any{"sessionId": "a", "workspaceRoot": ws, "permissionMode": "auto"})
	c.call(3, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": ws, "permissionMode": "ask"})
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	b, _ := json.Marshal(c.call(4, "tools.list", map[string]any{"sessionId": "a"}))
	json.Unmarshal(b, &tools)
	hasBash := strings.Contains(string(b), `"name":"Bash"`)

	id := 10
	for _, x := range []struct {
		tool string
		args map[string]any
	}{
		{"Write", map[string]any{"path": "out/w.txt", "content": "one\ntwo\n"}},
		{"Edit", map[string]any{"path": "out/w.txt", "old_string": "two", "new_string": "2"}},
		{"Read", map[string]any{"path": "out/w.txt"}},
		{"Glob", map[string]any{"pattern": "**/*"}},
		{"Grep", map[string]any{"pattern": "needle"}},
	} {
		id++
		if r := c.call(id, "tools.execute", map[string]any{"sessionId": "a", "turnId": "t", "toolCallId": fmt.Sprint("c", id), "toolName": x.tool, "args": x.args}); r["ok"] != true {
			t.Fatalf("%s: %v", x.tool, r)
		}
	}
	if hasBash {
		r := c.call(30, "tools.execute", map[string]any{"sessionId": "a", "turnId": "t", "toolCallId": "bash1", "toolName": "Bash", "args": map[string]any{"command": "echo hi; (sleep 30 &) ; sleep 0.1"}})
		if r["ok"] != true {
			t.Fatalf("Bash: %v", r)
		}
		// A command still running when its session is deleted.
		c.send(31, "tools.execute", map[string]any{"sessionId": "a", "turnId": "t", "toolCallId": "bash2", "toolName": "Bash", "args": map[string]any{"command": "sleep 30"}})
		time.Sleep(300 * time.Millisecond)
	} else {
		t.Log("Bash is not registered: no command runs while its session is deleted")
	}
	// A card still open when its session is deleted.
	c.send(40, "tools.execute", map[string]any{"sessionId": "b", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": "x", "content": "x"}})
	c.next(func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"permission.request"` })

	c.call(50, "session.delete", map[string]any{"sessionId": "a"})
	c.call(51, "session.delete", map[string]any{"sessionId": "b"})
	if r := c.result(40); r["ok"] != false {
		t.Fatalf("the Write whose card was open when its session went: %v", r)
	}
	if hasBash {
		if r := c.result(31); r["errorCode"] != "TOOL_ABORTED" {
			t.Fatalf("the Bash running when its session went: %v", r)
		}
	}
	// Nothing of the deleted sessions keeps running. Idle request workers
	// and the one waiting for the next line belong to the connection (they
	// end with Run, checked below); one still busy would not have loop on
	// top of its stack, and a call run by the goroutine that read it is
	// not inside the framing's next.
	if err := goleak.Find(idle, goleak.IgnoreAnyFunction("hostcore/sandbox/process.LoginPath"), goleak.IgnoreTopFunction("hostcore/rpc.(*workers).loop"), goleak.IgnoreAnyFunction("hostcore/rpc.(*lineStream).next")); err != nil {
		t.Errorf("goroutines left after session.delete: %v", err)
	}

	// Close the connection: Run returns, and with the store closed nothing
	// is left at all.
	inW.Close()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after input closed")
	}
	outW.Close()
	for range c.lines {
	}
	h.Close()
	st.Close()
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("hostcore/sandbox/process.LoginPath"))
	deadline := time.Now().Add(3 * time.Second)
	for openFDs(t) > fdsBefore && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := openFDs(t); after > fdsBefore {
		ents, _ := os.ReadDir("/proc/self/fd")
		var names []string
		for _, e := range ents {
			l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
			names = append(names, l)
		}
		t.Errorf("file descriptors: %d before, %d after: %v", fdsBefore, after, names)
	}
}
