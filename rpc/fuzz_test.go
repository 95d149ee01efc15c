package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// echoDispatcher answers every method but "missing" with its params; a
// method named "inline" runs on the read goroutine like the configuring
// methods do. It counts what it ran.
type echoDispatcher struct {
	mu  sync.Mutex
	ran int
}

func (d *echoDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	if method == "missing" {
		return nil, false
	}
	if method == "panic" {
		return func(context.Context) (any, error) { panic("handler bug") }, false
	}
	return func(context.Context) (any, error) {
		d.mu.Lock()
		d.ran++
		d.mu.Unlock()
		return map[string]any{"method": method, "params": params}, nil
	}, method == "inline"
}

// serve runs a Server over input until it ends and returns its output lines
// and how many requests the dispatcher ran.
func serve(t testing.TB, input []byte) ([]string, int) {
	t.Helper()
	var out bytes.Buffer
	d := &echoDispatcher{}
	s := NewServer(bytes.NewReader(input), &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), table(d, "echo", "inline", "note", "panic", "m")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Run did not return within 10s on %q\n%s", input, buf[:runtime.Stack(buf, true)])
	}
	text := out.String()
	if text == "" {
		return nil, d.ran
	}
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("output does not end in a newline: %q", text)
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n"), d.ran
}

// wireMsg is an output line as a client reads it.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func checkOutputLine(t testing.TB, line string) wireMsg {
	t.Helper()
	if !utf8.ValidString(line) {
		t.Fatalf("output line is not UTF-8: %q", line)
	}
	var m wireMsg
	if !json.Valid([]byte(line)) || json.Unmarshal([]byte(line), &m) != nil {
		t.Fatalf("output line is not a JSON object: %q", line)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("output line without jsonrpc 2.0: %q", line)
	}
	if (m.Result == nil) == (m.Error == nil) {
		t.Fatalf("output line must carry exactly one of result and error: %q", line)
	}
	if m.Error != nil && m.Error.Code == 0 {
		t.Fatalf("error code 0 on the wire: %q", line)
	}
	return m
}

// FuzzLineStream feeds arbitrary bytes to a whole Server. Properties:
// nothing panics; every output line is one UTF-8 JSON-RPC response; a
// stream never gets more responses than it has lines; taken line by line,
// each line gets at most one response, and a line that gets none was run
// as a notification or is a client reply (dropped) or a notification for
// an unknown method.
func FuzzLineStream(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","method":"inline"}` + "\r\n" + `{"jsonrpc":"2.0","method":"echo"}`,
		`{"jsonrpc":"2.0","id":1,"method":"missing"}`,
		`{"jsonrpc":"2.0","id":1,"method":"panic"}`,
		`not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`,
		`[]`,
		`{"jsonrpc":"1.0","id":1,"method":"echo"}`,
		`{"id":1,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":null,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":-1,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":{},"method":"echo"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"echo","result":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":null}`,
		`{"jsonrpc":"2.0","result":1}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":"\xff","method":"echo"}`,
		`{"jsonrpc":"2.0","id":"\u0000","method":"echo","params":"x"}`,
		`{"jsonrpc":"2.0","id":18446744073709551615,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":18446744073709551616,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,2,{"a":null}],"meta":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"echo"} trailing`,
		"\n\n\r\n   \n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\r\r\n",
		"\x00\x01\x02",
		`"just a string"`,
		`123`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) > 64<<10 {
			return
		}
		lines := bytes.Split(input, []byte("\n"))
		nonblank := 0
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) > 0 {
				nonblank++
			}
		}
		out, _ := serve(t, input)
		for _, l := range out {
			checkOutputLine(t, l)
		}
		if len(out) > nonblank {
			t.Fatalf("%d responses for %d lines:\n%s", len(out), nonblank, strings.Join(out, "\n"))
		}
		if len(lines) > 16 {
			return // line by line only for short inputs: a Server per line
		}
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			out, ran := serve(t, l)
			if len(out) > 1 {
				t.Fatalf("line %q got %d responses:\n%s", l, len(out), strings.Join(out, "\n"))
			}
			if len(out) == 0 && ran == 0 && !silentLine(l) {
				t.Fatalf("line %q was neither answered nor run", l)
			}
			if len(out) == 1 && ran == 1 {
				m := checkOutputLine(t, out[0])
				if m.Result == nil {
					t.Fatalf("line %q ran but was answered with an error: %s", l, out[0])
				}
				if !sameID(requestID(l), m.ID) {
					t.Fatalf("line %q was answered with id %s", l, m.ID)
				}
			}
		}
	})
}

// requestID returns the id member of a line as sent.
func requestID(l []byte) json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(bytes.TrimSpace(l), &m)
	return m["id"]
}

// sameID says whether an answer's id is the request's: a number exactly as
// written, a string with the same value (its escapes may differ).
func sameID(sent, got json.RawMessage) bool {
	if len(sent) > 0 && sent[0] == '"' {
		var a, b string
		return json.Unmarshal(sent, &a) == nil && json.Unmarshal(got, &b) == nil && a == b
	}
	return string(sent) == string(got)
}

// silentLine says whether a line may go unanswered: a client's reply to a
// host request, or a notification (no id) the dispatcher does not run.
func silentLine(l []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(l), &m) != nil {
		return false
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	_, hasMethod := m["method"]
	_, hasID := m["id"]
	return (!hasMethod && (hasResult || hasError)) || (hasMethod && !hasID)
}

// TestLineStreamAnswersEveryRequest pins the counting the fuzzer relies on
// with a mixed stream.
func TestLineStreamAnswersEveryRequest(t *testing.T) {
	var in strings.Builder
	for i := range 50 {
		in.WriteString(`{"jsonrpc":"2.0","id":` + strings.Repeat("1", 1+i%3) + `,"method":"echo"}` + "\n")
		in.WriteString("garbage\n")
		in.WriteString(`{"jsonrpc":"2.0","method":"note"}` + "\n")
	}
	out, ran := serve(t, []byte(in.String()))
	if len(out) != 100 || ran != 100 {
		t.Fatalf("got %d lines and %d runs, want 100 and 100", len(out), ran)
	}
}

func (d *echoDispatcher) Inline(method string) bool { return method == "inline" }

// FuzzReadProbe: the one-pass envelope reader finds exactly the members
// a decode into a map finds (the last of a repeated name; names with
// escapes; values kept byte for byte).
func FuzzReadProbe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":"}"}]}}`,
		`{"id":"x\"}","method":"m","id":2}`,
		`{"\u006dethod":"m","jsonrpc":"2.0","result":null}`,
		` { "error" : { "code" : 1 } , "id" : [1, "]"] } `,
		`{"JSONRPC":"2.0","ERROR":{}}`,
		`{"jsonrpc":2,"params":"\\"}`,
		`{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(s)
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("valid object does not decode: %v", err)
		}
		p, err := readProbe(line)
		if err != nil {
			t.Fatalf("readProbe(%s): %v", line, err)
		}
		for name, got := range map[string]json.RawMessage{"id": p.ID, "method": p.Method, "params": p.Params, "result": p.Result, "error": p.Error} {
			if !bytes.Equal(got, m[name]) {
				t.Fatalf("readProbe(%s).%s = %s, the map has %s", line, name, got, m[name])
			}
		}
		var want *string
		if raw, ok := m["jsonrpc"]; ok {
			var v string
			if json.Unmarshal(raw, &v) == nil {
				want = &v
			}
		}
		if (want == nil) != (p.JSONRPC == nil) || want != nil && *want != *p.JSONRPC {
			t.Fatalf("readProbe(%s).jsonrpc = %v, want %v", line, p.JSONRPC, want)
		}
	})
}
