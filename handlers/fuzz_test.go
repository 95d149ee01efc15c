package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"hostcore/handlers/tools"
	"hostcore/store"
)

// neverExecuted are tools the fuzzer validates and decodes but does not
// run: Bash would run whatever the fuzzer writes.
var neverExecuted = map[string]bool{"Bash": true}

// checkDecodeAgrees is the property that schema validation and the typed
// decode agree: args the schema accepts must decode without error into the
// tool's struct, and every member the schema calls an integer must fit a
// Go int. Otherwise json.Unmarshal drops the field silently (its error is
// not checked in the tools) and the tool runs with its default instead.
func checkDecodeAgrees(t *testing.T, td *tools.Def, args []byte) {
	t.Helper()
	if _, err := td.Decode(args); err != nil {
		t.Fatalf("%s: schema accepted %s but the typed decode fails: %v", td.Name, args, err)
	}
	var sch struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(td.SchemaJSON, &sch)
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		t.Fatalf("%s: schema accepted %s, which is not an object", td.Name, args)
	}
	for k, raw := range m {
		if sch.Properties[k].Type != "integer" {
			continue
		}
		var n int
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatalf("%s: schema accepted %s=%s as an integer but it does not decode into an int: %v", td.Name, k, raw, err)
		}
	}
}

// fuzzEnv is one Server over a workspace, with a directory beside it that
// no call may touch: the client denies every card, so nothing outside the
// workspace and scratch may change.
type fuzzEnv struct {
	s        *Server
	tmp, ws  string
	outside  string
	snapshot string
	n        atomic.Int64
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		switch method {
		case "permission.request":
			return json.RawMessage(`{"decision":"deny"}`), nil
		case "ask.request":
			return json.RawMessage(`{"answers":{}}`), nil
		}
		return nil, errors.New("unexpected host request " + method)
	}}
	tmp, _ := filepath.EvalSymlinks(f.TempDir())
	e := &fuzzEnv{tmp: tmp, ws: filepath.Join(tmp, "ws"), outside: filepath.Join(tmp, "outside")}
	for _, d := range []string{e.ws + "/sub/deep", e.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"ws/a.txt": "alpha\nbeta\ngamma\n", "ws/crlf.txt": "one\r\ntwo\r\n", "ws/bom.txt": "\ufeffbom\n",
		"ws/sub/b.go": "package b\n", "ws/sub/deep/c.md": "# c\n", "ws/.gitignore": "ignored/\n",
		"outside/secret.txt": "secret\n",
	} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	os.Symlink(e.outside, filepath.Join(e.ws, "link_out"))
	os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.ws, "secret_link"))
	e.s = newTestServerTB(f, fc)
	e.snapshot = e.outsideState()
	return e
}

// newTestServerTB is newTestServer for any testing.TB (fuzz targets too).
func newTestServerTB(tb testing.TB, fc *fakeClient) *Server {
	tb.Helper()
	dir := tb.TempDir()
	st, err := store.Open(filepath.Join(dir, "data"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	s, err := New(Config{DataDir: filepath.Join(dir, "data"), PermissionTimeout: time.Second}, st, fc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// outsideState lists everything beside the workspace with its content.
func (e *fuzzEnv) outsideState() string {
	var b strings.Builder
	filepath.WalkDir(e.tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(e.tmp, p)
		if rel == "ws" || rel == "data" {
			return filepath.SkipDir
		}
		fmt.Fprintf(&b, "%s %v", rel, d.Type())
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

func toolNames(s *Server) []string {
	var names []string
	for _, t := range s.tools.All() {
		names = append(names, t.Name)
	}
	return names
}

// FuzzToolArgs sends arbitrary args to every registered tool. Properties:
// validation never panics; what the schema accepts, the typed decode
// reads the same way; running the call (in an accept-edits session whose
// client denies every card) never panics, always answers a ToolResult for
// the same toolCallId, and never changes anything outside the workspace.
func FuzzToolArgs(f *testing.F) {
	e := newFuzzEnv(f)
	names := toolNames(e.s)
	idx := func(name string) uint8 { return uint8(slices.Index(names, name)) }
	for _, seed := range []struct{ tool, args string }{
		{"Read", `{"path":"a.txt"}`},
		{"Read", `{"path":"a.txt","offset":2,"limit":1}`},
		{"Read", `{"path":"a.txt","offset":1.0}`},
		{"Read", `{"path":"a.txt","offset":1e30}`},
		{"Read", `{"path":"a.txt","limit":9223372036854775807,"offset":9223372036854775807}`},
		{"Read", `{"path":"../outside/secret.txt"}`},
		{"Read", `{"path":"secret_link"}`},
		{"Read", `{"path":"sub"}`},
		{"Read", `{"path":"a.txt","path":"/etc/passwd"}`},
		{"Read", `{"path":"a.txt","PATH":"/etc/passwd"}`},
		{"Glob", `{"pattern":"**/*.go"}`},
		{"Glob", `{"pattern":"../outside/*"}`},
		{"Glob", `{"pattern":"/*","path":"sub"}`},
		{"Glob", `{"pattern":"{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}","headLimit":1}`},
		{"Glob", `{"pattern":"sub/**/../../..","path":"link_out"}`},
		{"Grep", `{"pattern":"a","outputMode":"content","context":2}`},
		{"Grep", `{"pattern":"(a*)*b","include":"*.{txt,md}","ignoreCase":true,"headLimit":1}`},
		{"Grep", `{"pattern":"[","path":"a.txt"}`},
		{"Grep", `{"pattern":"secret","path":"link_out"}`},
		{"Write", `{"path":"new.txt","content":"x"}`},
		{"Write", `{"path":"sub/deep/new/n.txt","content":""}`},
		{"Write", `{"path":"../outside/secret.txt","content":"pwned"}`},
		{"Write", `{"path":"link_out/x","content":"pwned"}`},
		{"Write", `{"path":"secret_link","content":"pwned"}`},
		{"Write", `{"path":"sub","content":"x"}`},
		{"Edit", `{"path":"a.txt","old_string":"beta","new_string":"BETA"}`},
		{"Edit", `{"path":"crlf.txt","old_string":"one\ntwo","new_string":"1\n2"}`},
		{"Edit", `{"path":"bom.txt","old_string":"bom","new_string":"b"}`},
		{"Edit", `{"path":"secret_link","old_string":"secret","new_string":"x"}`},
		{"Edit", `{"path":"a.txt","old_string":"a","new_string":"a"}`},
		{"Bash", `{"command":"echo hi","timeout":1.0}`},
		{"Bash", `{"command":"true","timeout":301}`},
		{"asktool", `{"questions":[{"id":"q","question":"?","options":[{"label":"a"}],"multiSelect":true}]}`},
		{"asktool", `{"questions":[{"id":"q","question":"?"},{"id":"q","question":"again"}]}`},
		{"ToolSearch", `{"query":"Glob, Grep"}`},
		{"Task", `{"subagent":"x","prompt":"y"}`},
		{"BrowserPreview", `{"path":"a.txt"}`},
		{"BrowserPreview", `{"path":"/etc/passwd"}`},
		{"SubmitPlan", `{"markdown":"# p"}`},
		{"new_context", `{}`},
		{"EnterPlanMode", `{"x":1}`},
	} {
		if i := idx(seed.tool); int(i) < len(names) && names[i] == seed.tool {
			f.Add(i, []byte(seed.args))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		if len(args) > 4<<10 {
			return
		}
		td := e.s.tools.Get(names[int(which)%len(names)])
		trimmed := bytes.TrimSpace(args)
		if json.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{' {
			if validateArgs(td, trimmed) == nil {
				checkDecodeAgrees(t, td, trimmed)
			}
		} else {
			validateArgs(td, args) // must not panic either
			return
		}
		if neverExecuted[td.Name] {
			return
		}
		n := e.n.Add(1)
		sid := fmt.Sprintf("fz%d", n)
		raw, _ := json.Marshal(map[string]any{"sessionId": sid, "workspaceRoot": e.ws, "permissionMode": "accept-edits"})
		if _, err := e.s.sessionCreate(context.Background(), raw); err != nil {
			t.Fatal(err)
		}
		defer e.s.sessionDelete(context.Background(), json.RawMessage(`{"sessionId":"`+sid+`"}`))
		params, _ := json.Marshal(map[string]any{"sessionId": sid, "turnId": "t", "toolCallId": "c", "toolName": td.Name, "args": json.RawMessage(trimmed)})
		out, err := e.s.execute(context.Background(), params, nil)
		if err != nil {
			t.Fatalf("%s %s: envelope error %v", td.Name, trimmed, err)
		}
		res := out.(*ToolResult)
		if res.ToolCallID != "c" || res.Decision == "" {
			t.Fatalf("%s %s: result for %q, decision %q", td.Name, trimmed, res.ToolCallID, res.Decision)
		}
		wire, err := json.Marshal(res)
		if err != nil || !utf8.Valid(wire) {
			t.Fatalf("%s %s: result does not marshal to UTF-8 JSON: %v", td.Name, trimmed, err)
		}
		if got := e.outsideState(); got != e.snapshot {
			t.Fatalf("%s %s changed what lies outside the workspace:\nbefore:\n%s\nafter:\n%s\nresult: %s", td.Name, trimmed, e.snapshot, got, wire)
		}
	})
}

// validateArgs checks args against the tool's schema and names the first
// failing field.
func validateArgs(t *tools.Def, args json.RawMessage) error {
	v, err := decodeAny(args)
	if err != nil {
		return errors.New("args: " + err.Error())
	}
	return t.Validate(v)
}
