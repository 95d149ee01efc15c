package handlers

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

// plainResult is ToolResult without its MarshalJSON: what encoding/json
// writes for it.
type plainResult ToolResult

// TestToolResultEncoding: the hand encoder writes encoding/json's bytes.
func TestToolResultEncoding(t *testing.T) {
	total := 7
	for _, r := range []*ToolResult{
		{},
		okResult("hello\n\tworld <b> & \"q\" \\ \x00\x1f\x7f \u2028\u2029 é \xff\xfe end"),
		failResult(CodeToolDenied, "denied %s", "x"),
		{ToolCallID: "c", TraceID: "tr", OK: true, Content: []Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}},
			Details: ReadDetails{TotalLines: &total, StartLine: 1, EndLine: 2, Truncated: true}, Root: "workspace", Path: "a/b.txt",
			Decision: "auto-allow", Timing: Timing{Prompted: true, PermissionWaitMs: 1, DurationMs: 2, OverheadMs: 3, TotalMs: 6}},
		{Details: ReadDetails{}, Review: &ReviewChange{Version: 1, Hunks: []DiffHunk{{Lines: []string{"+x"}}}}, Terminate: true, AuditError: "disk <full>"},
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
			t.Errorf("hand encoding differs:\n got %s\nwant %s", got, want)
		}
	}
}

// unescapeHTML undoes encoding/json's HTML escapes, the one difference
// the hand encoder may make.
func unescapeHTML(b []byte) []byte {
	for _, r := range [][2]string{{`\u003c`, "<"}, {`\u003e`, ">"}, {`\u0026`, "&"}} {
		b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
	}
	return b
}

// FuzzExecuteParams: decodeExecuteParams answers as json.Unmarshal does.
func FuzzExecuteParams(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","turnId":"t","toolCallId":"c","toolName":"Read","args":{"path":"a"}}`,
		`{"SESSIONID":"a","sessionId":"b","batchSize":3,"args":null}`,
		`{"sessionId":null,"batchSize":-0,"shell":"bash","delegate":"d","promptId":"p","messageId":"m"}`,
		`{"ſessionId":"x","toolName":"\u0052ead","batchSize":1.0}`,
		`{"batchSize":99999999999999999999,"args":[1,{"a":"}"}]}`,
		`{"sessionId":5}`,
		` { "toolCallId" : "c" , "x" : { } } `,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := []byte(s)
		if !json.Valid(raw) {
			return
		}
		var want ExecuteParams
		werr := json.Unmarshal(raw, &want)
		got, gerr := decodeExecuteParams(raw)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: error %v, json.Unmarshal's %v", s, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", s, got, want)
		}
	})
}

// FuzzCanonical: appendCanonical writes the Encoder's bytes for every
// Decoder gives.
func FuzzDecodeFlat(f *testing.F) {
	for _, s := range []string{`{"path":"small.txt","offset":-1.5e3,"limit":10,"x":true,"y":false,"z":null}`, `{"a":1,"a":"b"}`, `{"é":"\u00e9"}`, `{ "a" : "b" } `, `{"a":"b"} x`, `{"a":{}}`, "{\"a\":\"\xff\"}", `{}`, `{"":""}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decodeFlat([]byte(s))
		if !ok {
			return
		}
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("%s: decodeFlat took it, the Decoder fails: %v", s, err)
		}
		if !reflect.DeepEqual(any(got), want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", s, got, want)
		}
	})
}

// A piece of a result's after-answer work that panics is logged, and the
// pieces after it still run: it runs outside the handler's recover, and a
// quick Read's file closed there would otherwise leak.
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
