package handlers

import (
	"bytes"
	"encoding/json"
	"hostcore/handlers/tools"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

// plainResult is ToolResult without its AppendJSON: what encoding/json
// writes for it.
type plainResult ToolResult

// TestToolResultEncoding: AppendJSON writes encoding/json's bytes, HTML
// characters as they are.
func TestToolResultEncoding(t *testing.T) {
	total := 7
	for _, r := range []*ToolResult{
		{},
		{OK: true, Content: []Content{{Type: "text", Text: "hello\n\tworld <b> & \"q\" \\ \x00\x1f\x7f \u2028\u2029 é \xff\xfe end"}}},
		failResult(tools.CodeToolDenied, "denied %s", "x"),
		{ToolCallID: "c", TraceID: "tr", OK: true, Content: []Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}},
			Details: tools.ReadDetails{TotalLines: &total, StartLine: 1, EndLine: 2, Truncated: true}, Root: "workspace", Path: "a/b.txt",
			Decision: "auto-allow", Timing: Timing{Prompted: true, PermissionWaitMs: 1, DurationMs: 2, OverheadMs: 3, TotalMs: 6}},
		{Details: tools.ReadDetails{}, Review: &tools.ReviewChange{Version: 1, Hunks: []tools.DiffHunk{{Lines: []string{"+x"}}}}, Terminate: true, AuditError: "disk <full>"},
		{Details: map[string]any{"a": []int{1}, "b": "<x>"}},
		{Details: json.RawMessage(`{"z": 1,  "a":2}`)},
	} {
		got, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal((*plainResult)(r))
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("not JSON: %s", got)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) || !bytes.Equal(unescapeHTML(want), unescapeHTML(got)) {
			t.Errorf("AppendJSON differs:\n got %s\nwant %s", got, want)
		}
	}
}

// unescapeHTML undoes encoding/json's HTML escapes, the one difference
// AppendJSON makes.
func unescapeHTML(b []byte) []byte {
	for _, r := range [][2]string{{`\u003c`, "<"}, {`\u003e`, ">"}, {`\u0026`, "&"}} {
		b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
	}
	return b
}

// A piece of a result's after-answer work that panics is logged, and the
// pieces after it still run: it runs outside the handler's recover, and a
// piece left undone there would otherwise never run.
func TestAfterReplyPanicIsLoggedAndTheRestRun(t *testing.T) {
	var logged bytes.Buffer
	ran := false
	r := &ToolResult{ToolCallID: "c1", log: slog.New(slog.NewJSONHandler(&logged, nil)),
		after: []func(){func() { panic("boom") }, func() { ran = true }}}
	r.AfterReply()
	if !ran {
		t.Fatal("the work after the panicking piece did not run")
	}
	if !strings.Contains(logged.String(), `"panic":"boom"`) || !strings.Contains(logged.String(), `"toolCallId":"c1"`) {
		t.Fatalf("the panic was not logged: %s", logged.String())
	}
	r.AfterReply() // once only: nothing left
}
