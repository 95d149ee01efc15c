package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireHost is a hostcore child driven by concurrent callers: requests get
// numeric ids, responses are routed to the caller waiting on that id, and
// host requests go to onRequest (which may answer later, from any
// goroutine). It is what the crash and load tests use; rpcClient and host
// stay the simple sequential drivers.
type wireHost struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncWriter

	wmu sync.Mutex // one line at a time on stdin

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan json.RawMessage
	// OnRequest answers host→client requests; nil answers nothing.
	onRequest func(id json.RawMessage, method string, params json.RawMessage)
	// OnNotify sees host notifications.
	onNotify func(method string, params json.RawMessage)
	closed   chan struct{}
	lines    int64
}

// wireMsg is any line hostcore writes.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func startWireHost(t testing.TB, bin string, env []string, onRequest func(h *wireHost, id json.RawMessage, method string, params json.RawMessage), args ...string) *wireHost {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// A home of its own, as startHost gives; env may name another.
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	h := &wireHost{cmd: cmd, stdin: stdin, stderr: &syncWriter{w: &bytes.Buffer{}}, waiting: map[int64]chan json.RawMessage{}, closed: make(chan struct{})}
	if onRequest != nil {
		h.onRequest = func(id json.RawMessage, method string, params json.RawMessage) { onRequest(h, id, method, params) }
	}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.closed)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			var m wireMsg
			if err := json.Unmarshal(line, &m); err != nil {
				panic(fmt.Sprintf("hostcore wrote a line that is not JSON: %q", line))
			}
			h.mu.Lock()
			h.lines++
			h.mu.Unlock()
			switch {
			case m.Method != "" && m.ID != nil:
				if h.onRequest != nil {
					go h.onRequest(m.ID, m.Method, m.Params)
				}
			case m.Method != "":
				if h.onNotify != nil {
					h.onNotify(m.Method, m.Params)
				}
			default:
				id, _ := strconv.ParseInt(string(m.ID), 10, 64)
				h.mu.Lock()
				ch := h.waiting[id]
				delete(h.waiting, id)
				h.mu.Unlock()
				if ch != nil {
					ch <- line
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			tail := h.stderr.String()
			if len(tail) > 8000 {
				tail = tail[len(tail)-8000:]
			}
			t.Logf("hostcore stderr (tail):\n%s", tail)
		}
	})
	return h
}

func (h *wireHost) writeLine(b []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err := h.stdin.Write(append(b, '\n'))
	return err
}

// start sends a request and returns the channel its response arrives on.
func (h *wireHost) start(method string, params any) (int64, <-chan json.RawMessage, error) {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	ch := make(chan json.RawMessage, 1)
	h.waiting[id] = ch
	h.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id, ch, h.writeLine(b)
}

// call sends a request and waits for its result; an error answer or no
// answer within d fails the test.
func (h *wireHost) call(t testing.TB, d time.Duration, method string, params any) json.RawMessage {
	t.Helper()
	_, ch, err := h.start(method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case line := <-ch:
		var m wireMsg
		json.Unmarshal(line, &m)
		if m.Error != nil {
			t.Fatalf("%s: error %s", method, m.Error)
		}
		return m.Result
	case <-h.closed:
		t.Fatalf("%s: hostcore closed stdout", method)
	case <-time.After(d):
		t.Fatalf("%s: no answer within %v", method, d)
	}
	return nil
}

// reply answers a host request.
func (h *wireHost) reply(id json.RawMessage, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	h.writeLine(b)
}

// waitExit waits for the process and returns its exit code.
func (h *wireHost) waitExit(t testing.TB, d time.Duration) int {
	t.Helper()
	return waitCmd(t, h.cmd, d)
}

// procStatus reads a size field of /proc/pid/status ("VmRSS", "VmHWM")
// in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// toolResult is the part of a ToolResult the crash and load tests read.
type toolResult struct {
	ToolCallID string `json:"toolCallId"`
	OK         bool   `json:"ok"`
	ErrorCode  string `json:"errorCode"`
	Message    string `json:"message"`
	Decision   string `json:"decision"`
	Review     *struct {
		SnapshotID string `json:"snapshotId"`
	} `json:"review"`
}
