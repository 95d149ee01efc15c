package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expect lines of testdata/transcripts from what the binary sends")

// TestTranscripts replays every testdata/transcripts/*.txtar through the
// built binary, as a client would drive it.
//
// A transcript's comment says what it pins. Files named ws/... seed the
// workspace; "flags" holds extra command-line flags; "args", when given,
// is the whole command line instead of "--data-dir {{DATA}}" and the
// flags (for "mcp --workspace {{WS}} --data-dir {{DATA}}"); "script"
// holds one directive per line:
//
//	send JSON      write a line to hostcore's stdin ({{WS}}, {{DATA}} and
//	               {{SCRATCH}} are replaced first)
//	raw TEXT       write TEXT as a line unchanged (for malformed input); a
//	               Go-quoted "TEXT" is unquoted first (for \r, \x00 ...)
//	expect JSON    the next host line with the same id (responses) or the
//	               same method (host requests and notifications) must
//	               contain JSON: objects match as subsets, "*" matches any
//	               value, arrays must match element by element
//	               a member whose value is "<absent>" must not be there;
//	               a string "<contains TEXT>" matches any string holding TEXT;
//	               a string "$name" matches any value and captures it;
//	               later send/reply lines have "$name" replaced by it
//	reply JSON     answer the last expected host request with this result
//	log JSON       a line hostcore logged to stderr (now or within 5 s)
//	               must contain JSON, matched as expect matches
//	sleep DUR      wait
//	eof            close stdin
//	exit N         hostcore must exit with status N; every host line must
//	               have been expected
//	# ...          comment
func TestTranscripts(t *testing.T) {
	bin := buildBinary(t)
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, bin, file)
		})
	}
}

func runTranscript(t *testing.T, bin, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	data := filepath.Join(tmp, "data")
	os.MkdirAll(ws, 0o755)
	var script []string
	var flags, args []string
	scriptIdx := -1
	for i, f := range ar.Files {
		switch {
		case f.Name == "script":
			script = strings.Split(string(f.Data), "\n")
			scriptIdx = i
		case f.Name == "flags":
			flags = strings.Fields(string(f.Data))
		case f.Name == "args":
			args = strings.Fields(string(f.Data))
		case strings.HasPrefix(f.Name, "ws/"):
			p := filepath.Join(ws, strings.TrimPrefix(f.Name, "ws/"))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if scriptIdx < 0 {
		t.Fatal("transcript has no script section")
	}
	ws, _ = filepath.EvalSymlinks(ws)
	os.MkdirAll(data, 0o700)
	data, _ = filepath.EvalSymlinks(data)
	subst := strings.NewReplacer("{{WS}}", ws, "{{DATA}}", data, "{{SCRATCH}}", filepath.Join(data, "scratch"))

	if args == nil {
		args = append([]string{"--data-dir", "{{DATA}}"}, flags...)
	}
	for i := range args {
		args[i] = subst.Replace(args[i])
	}
	h := startHost(t, bin, args...)
	var lastRequestID json.RawMessage
	vars := map[string]string{}
	withVars := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, `"$`+k+`"`, v)
		}
		return s
	}
	var out []string
	for n, line := range script {
		trimmed := strings.TrimSpace(line)
		verb, arg, _ := strings.Cut(trimmed, " ")
		switch verb {
		case "", "#":
			out = append(out, line)
			continue
		case "send":
			h.send(t, withVars(subst.Replace(arg)))
		case "raw":
			if strings.HasPrefix(arg, `"`) {
				u, err := strconv.Unquote(arg)
				if err != nil {
					t.Fatalf("line %d: raw: %v", n+1, err)
				}
				arg = u
			}
			h.send(t, arg)
		case "reply":
			if lastRequestID == nil {
				t.Fatalf("line %d: reply without a host request", n+1)
			}
			h.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, lastRequestID, withVars(subst.Replace(arg))))
		case "expect":
			want := subst.Replace(arg)
			got := h.next(t, want)
			var gotMsg map[string]json.RawMessage
			json.Unmarshal([]byte(got), &gotMsg)
			if _, isReq := gotMsg["method"]; isReq && gotMsg["id"] != nil {
				lastRequestID = gotMsg["id"]
			}
			if *update {
				out = append(out, "expect "+strings.NewReplacer(ws, "{{WS}}", data, "{{DATA}}").Replace(normalize(got)))
				continue
			}
			if err := matchJSON(want, got, vars); err != nil {
				t.Fatalf("line %d: %v\nwant ⊆ %s\ngot    %s", n+1, err, want, got)
			}
		case "log":
			want := subst.Replace(arg)
			if err := h.waitLog(want, vars); err != nil {
				t.Fatalf("line %d: %v\nstderr:\n%s", n+1, err, h.stderr.String())
			}
		case "sleep":
			d, _ := time.ParseDuration(arg)
			time.Sleep(d)
		case "eof":
			h.stdin.Close()
		case "exit":
			code := h.wait(t)
			if fmt.Sprint(code) != arg {
				t.Fatalf("line %d: exit status %d, want %s\nstderr:\n%s", n+1, code, arg, h.stderr.String())
			}
			if left := h.pending(); len(left) > 0 && !*update {
				t.Fatalf("host lines never expected:\n%s", strings.Join(left, "\n"))
			}
		default:
			t.Fatalf("line %d: unknown directive %q", n+1, verb)
		}
		out = append(out, line)
	}
	if *update {
		ar.Files[scriptIdx].Data = []byte(strings.Join(out, "\n"))
		os.WriteFile(file, txtar.Format(ar), 0o644)
	}
}

// volatile fields differ from run to run; -update writes them as "*".
var volatile = map[string]bool{
	"traceId": true, "createdAt": true, "permissionWaitMs": true, "durationMs": true, "overheadMs": true,
	"totalMs": true, "snapshotId": true, "approvalId": true, "artifactPath": true,
}

// normalize replaces volatile fields with "*".
func normalize(line string) string {
	var v any
	if json.Unmarshal([]byte(line), &v) != nil {
		return line
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				if volatile[k] {
					x[k] = "*"
					continue
				}
				x[k] = walk(val)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return x
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}

// matchJSON reports whether got contains want (objects as subsets, "*" as
// a wildcard).
func matchJSON(want, got string, vars map[string]string) error {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("bad expect JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("host sent invalid JSON: %v", err)
	}
	return contains(w, g, "$", vars)
}

func contains(w, g any, at string, vars map[string]string) error {
	if s, ok := w.(string); ok && (s == "*" || (strings.HasPrefix(s, "$") && len(s) > 1)) {
		if g == nil {
			return fmt.Errorf("%s: want a value, got null or nothing", at)
		}
		if s != "*" {
			b, _ := json.Marshal(g)
			vars[s[1:]] = string(b)
		}
		return nil
	}
	if s, ok := w.(string); ok && strings.HasPrefix(s, "<contains ") && strings.HasSuffix(s, ">") {
		text := strings.TrimSuffix(strings.TrimPrefix(s, "<contains "), ">")
		if gs, ok := g.(string); !ok || !strings.Contains(gs, text) {
			return fmt.Errorf("%s: want a string holding %q, got %v", at, text, g)
		}
		return nil
	}
	switch w := w.(type) {
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %v", at, g)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, present := gm[k]
			if w[k] == "<absent>" {
				if present {
					return fmt.Errorf("%s.%s: want absent, got %v", at, k, gv)
				}
				continue
			}
			if !present {
				return fmt.Errorf("%s.%s: missing", at, k)
			}
			if err := contains(w[k], gv, at+"."+k, vars); err != nil {
				return err
			}
		}
		return nil
	case []any:
		ga, ok := g.([]any)
		if !ok || len(ga) != len(w) {
			return fmt.Errorf("%s: want %d elements, got %v", at, len(w), g)
		}
		for i := range w {
			if err := contains(w[i], ga[i], fmt.Sprintf("%s[%d]", at, i), vars); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(w, g) {
		return fmt.Errorf("%s: want %v, got %v", at, w, g)
	}
	return nil
}

// host is a running hostcore driven over pipes.
type host struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
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
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	h := &host{cmd: cmd, stdin: stdin, lines: make(chan string, 1024), stderr: &syncWriter{w: &bytes.Buffer{}}, done: make(chan struct{})}
	if cmd.Stderr == nil {
		cmd.Stderr = h.stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("hostcore stderr:\n%s", h.stderr.String())
		}
	})
	return h
}

// waitLog waits up to 5 s for a stderr line that contains want (as
// matchJSON matches).
func (h *host) waitLog(want string, vars map[string]string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, line := range strings.Split(h.stderr.String(), "\n") {
			if strings.HasPrefix(line, "{") && matchJSON(want, line, map[string]string{}) == nil {
				return matchJSON(want, line, vars) // captures what it names
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no log line contains %s", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
