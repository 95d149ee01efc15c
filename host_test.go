package main

// The built binary driven as a child over pipes, as the sidecar drives
// it: host reads its lines and matches them to what a test waits for;
// rpcClient makes requests of it; the transcripts and the binary-level
// tests of this package share both.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hostcore/rpc/rpctest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// host is a running hostcore driven over pipes.
type host struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan string
	held   []string
	stderr *syncWriter
	done   chan struct{}
}

func startHost(t *testing.T, bin string, args ...string) *host {
	t.Helper()
	return startHostEnv(t, bin, nil, args...)
}

// startHostEnv is startHost with env added to the environment.
func startHostEnv(t *testing.T, bin string, env []string, args ...string) *host {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// A home of its own: Bash runs login shells, and the developer's
	// profile must neither slow commands down nor change what ~ names.
	cmd.Env = append(append(os.Environ(), "HOSTCORE_LOG_LEVEL=debug", "HOME="+t.TempDir()), env...)
	return startCmd(t, cmd)
}

// startCmd starts cmd (hostcore) as startHost does; a cmd.Stderr already
// set is kept.
func startCmd(t *testing.T, cmd *exec.Cmd) *host {
	t.Helper()
	h := &host{cmd: cmd, stderr: &syncWriter{w: &bytes.Buffer{}}, done: make(chan struct{})}
	if cmd.Stderr == nil {
		cmd.Stderr = h.stderr
	}
	h.stdin, h.lines = rpctest.Start(t, cmd)
	return h
}

// terminate sends hostcore SIGTERM and checks that it exits 0 within
// PROTOCOL section 1's 3 seconds.
func (h *host) terminate(t *testing.T) {
	t.Helper()
	start := time.Now()
	h.cmd.Process.Signal(syscall.SIGTERM)
	if code := h.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("exit took %v after SIGTERM, want < 3s", took)
	}
}

func (h *host) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		t.Fatalf("writing to hostcore: %v", err)
	}
}

// paramOf is params.name of a message, nil when absent.
func paramOf(m map[string]json.RawMessage, name string) json.RawMessage {
	var p map[string]json.RawMessage
	json.Unmarshal(m["params"], &p)
	return p[name]
}

// next returns the first host line (held or new) that answers the same id
// as want, or carries the same method; others are held for later.
func (h *host) next(t *testing.T, want string) string {
	t.Helper()
	return h.nextOf(t, want)
}

// nextOf is next for the first line that matches any of wants.
func (h *host) nextOf(t *testing.T, wants ...string) string {
	t.Helper()
	return h.nextWithin(t, 20*time.Second, wants...)
}

// nextWithin is nextOf waiting up to d (a 16 MiB line takes a while
// under the race detector).
func (h *host) nextWithin(t *testing.T, d time.Duration, wants ...string) string {
	t.Helper()
	want := strings.Join(wants, " or ")
	ws := make([]map[string]json.RawMessage, len(wants))
	for i, w := range wants {
		json.Unmarshal([]byte(w), &ws[i])
	}
	matches := func(w map[string]json.RawMessage, line string) bool {
		var g map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &g) != nil {
			return false
		}
		if m, ok := w["method"]; ok {
			// A notification is the next one of its method and, for
			// tool.output, of its stream: chunks of two streams may
			// interleave either way.
			if stream := paramOf(w, "stream"); stream != nil && !bytes.Equal(paramOf(g, "stream"), stream) {
				return false
			}
			return bytes.Equal(g["method"], m)
		}
		_, gIsReq := g["method"]
		return !gIsReq && bytes.Equal(g["id"], w["id"])
	}
	key := func(line string) bool {
		for _, w := range ws {
			if matches(w, line) {
				return true
			}
		}
		return false
	}
	for i, l := range h.held {
		if key(l) {
			h.held = append(h.held[:i], h.held[i+1:]...)
			return l
		}
	}
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatalf("hostcore closed stdout while waiting for %s\nheld: %v", want, h.held)
			}
			if key(l) {
				return l
			}
			h.held = append(h.held, l)
		case <-timeout:
			t.Fatalf("no host line matching %s within %v\nheld: %v", want, d, h.held)
		}
	}
}

func (h *host) pending() []string {
	left := append([]string(nil), h.held...)
	for l := range h.lines {
		left = append(left, l)
	}
	return left
}

func (h *host) wait(t *testing.T) int {
	t.Helper()
	return waitCmd(t, h.cmd, 15*time.Second)
}

// waitCmd waits for a started command and returns its exit code, failing
// the test if it has not exited within d.
func waitCmd(t testing.TB, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(d):
		// Killed and waited for here: the test's cleanup waits for it
		// too, and a second Wait alongside this goroutine's is a data
		// race, which failed the test run a second time over.
		cmd.Process.Kill()
		<-errc
		t.Fatalf("hostcore did not exit within %v", d)
	}
	return -1
}

// rpcClient is a minimal line-delimited JSON-RPC client over a host.
type rpcClient struct {
	t *testing.T
	h *host
}

func (c rpcClient) send(id int, method string, params any) {
	c.h.send(c.t, line(id, method, params))
}

// result waits for the answer to id and decodes its result (failing on an
// error answer).
func (c rpcClient) result(id int) map[string]any {
	c.t.Helper()
	line := c.h.next(c.t, fmt.Sprintf(`{"id":%d}`, id))
	var m map[string]any
	json.Unmarshal([]byte(line), &m)
	if m["error"] != nil {
		c.t.Fatalf("id %d: error %v", id, m["error"])
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// answerOf waits for the answer to id and returns its result, or its
// error's data.errorCode as "error:CODE".
func (c rpcClient) answerOf(id int) (map[string]any, string) {
	c.t.Helper()
	var m struct {
		Result map[string]any
		Error  *struct {
			Data struct{ ErrorCode string }
		}
	}
	json.Unmarshal([]byte(c.h.next(c.t, fmt.Sprintf(`{"id":%d}`, id))), &m)
	if m.Error != nil {
		return nil, "error:" + m.Error.Data.ErrorCode
	}
	return m.Result, ""
}

func (c rpcClient) call(id int, method string, params any) map[string]any {
	c.t.Helper()
	c.send(id, method, params)
	return c.result(id)
}

// pipe sends lines in one write, so hostcore reads them back to back.
func pipe(t *testing.T, h *host, lines ...string) {
	t.Helper()
	h.send(t, strings.Join(lines, "\n"))
}

// line is a request line.
func line(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// execLine is a tools.execute line; extra adds or replaces params.
func execLine(id int, session, callID, tool string, args map[string]any, extra map[string]any) string {
	params := map[string]any{"sessionId": session, "turnId": "t", "toolCallId": callID, "toolName": tool, "args": args}
	for k, v := range extra {
		params[k] = v
	}
	return line(id, "tools.execute", params)
}

// sessionHost starts the built binary on a fresh data dir, with env added
// to its environment and flags to its command line, and creates session
// "s" on a fresh workspace in the given permission mode.
func sessionHost(t *testing.T, mode string, env []string, flags ...string) (h *host, c rpcClient, ws, data string) {
	t.Helper()
	ws, data = newWorkspace(t)
	h = startHostEnv(t, buildBinary(t), env, append([]string{"--data-dir", data}, flags...)...)
	c = rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": mode})
	return h, c, ws, data
}

// hostWithSession is sessionHost with the binary's path, for tests that
// start it again.
func hostWithSession(t *testing.T, mode string) (bin string, h *host, c rpcClient, ws, data string) {
	t.Helper()
	h, c, ws, data = sessionHost(t, mode, nil)
	return buildBinary(t), h, c, ws, data
}

// newWorkspace makes a workspace (its canonical path) and names a data
// dir beside it.
func newWorkspace(t *testing.T) (ws, data string) {
	tmp := t.TempDir()
	ws, data = filepath.Join(tmp, "ws"), filepath.Join(tmp, "data")
	os.MkdirAll(ws, 0o755)
	ws, _ = filepath.EvalSymlinks(ws)
	return ws, data
}

// cardOf waits for the next permission card and returns its params and id.
func cardOf(t *testing.T, h *host) (map[string]any, json.RawMessage) {
	t.Helper()
	var m struct {
		ID     json.RawMessage
		Params map[string]any
	}
	json.Unmarshal([]byte(h.next(t, `{"method":"permission.request"}`)), &m)
	return m.Params, m.ID
}

// nextCard waits for a permission card and returns its request id.
func (h *host) nextCard(t *testing.T) json.RawMessage {
	t.Helper()
	_, id := cardOf(t, h)
	return id
}

// answer replies to the permission card id with decision.
func (h *host) answer(t *testing.T, id json.RawMessage, decision string) {
	t.Helper()
	h.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"decision":"`+decision+`"}}`)
}
