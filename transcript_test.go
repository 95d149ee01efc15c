package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
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
				matchJSON(want, got, vars) // for its captures: later lines use them
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
