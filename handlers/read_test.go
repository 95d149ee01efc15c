package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hostcore/handlers/tools"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func readArgsJSON(path string, offset, limit int) json.RawMessage {
	m := map[string]any{"path": path}
	if offset > 0 {
		m["offset"] = offset
	}
	if limit > 0 {
		m["limit"] = limit
	}
	b, _ := json.Marshal(m)
	return b
}

func TestReadWindowsAndNotices(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(b.String()), 0o644)

	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("big.txt", 0, 0)})
	d := r.Details.(tools.ReadDetails)
	if !r.OK || !d.Truncated || d.StartLine != 1 || d.EndLine != tools.ReadDefaultLines || d.TotalLines == nil || *d.TotalLines != 2500 {
		t.Fatalf("default window: ok=%v details=%+v", r.OK, d)
	}
	text := r.Content[0].Text
	if !strings.HasPrefix(text, "1\tline 1\n2\tline 2\n") || strings.Contains(text, "\r") {
		t.Fatalf("numbering or CRLF handling wrong: %q", text[:40])
	}
	if !strings.Contains(text, "use offset 2001 to continue") {
		t.Fatalf("no continuation notice: %q", text[len(text)-120:])
	}

	r = run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "b", ToolName: "Read", Args: readArgsJSON("big.txt", 2499, 5)})
	d = r.Details.(tools.ReadDetails)
	if r.Content[0].Text != "2499\tline 2499\n2500\tline 2500\n" || d.Truncated || d.EndLine != 2500 {
		t.Fatalf("tail window: %q %+v", r.Content[0].Text, d)
	}

	r = run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "c", ToolName: "Read", Args: readArgsJSON("big.txt", 3000, 0)})
	if r.OK || r.ErrorCode != tools.CodeInvalidArgument {
		t.Fatalf("offset past the end: %+v", r)
	}
}

func TestReadCutsLongLinesOnRuneBoundaries(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	long := strings.Repeat("é", 100_000) // 200 KB in one line, crossing reader buffers
	os.WriteFile(filepath.Join(ws, "long.txt"), []byte(long+"\nshort\n"), 0o644)
	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("long.txt", 0, 0)})
	text := r.Content[0].Text
	if !utf8.ValidString(text) {
		t.Fatal("cut line is not valid UTF-8")
	}
	first, rest, _ := strings.Cut(text, "\n")
	if got := strings.Count(first, "é"); got != tools.ReadMaxLineChars {
		t.Fatalf("kept %d characters, want %d", got, tools.ReadMaxLineChars)
	}
	if !strings.Contains(first, fmt.Sprintf("[line cut: %d more characters]", 100_000-tools.ReadMaxLineChars)) {
		t.Fatalf("no cut marker: %q", first[len(first)-60:])
	}
	if rest != "2\tshort\n" {
		t.Fatalf("line after the long one: %q", rest)
	}
}

func TestReadRefusesBinaryAndReportsEmpty(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	os.WriteFile(filepath.Join(ws, "bin"), []byte("ELF\x00\x01\x02"), 0o644)
	os.WriteFile(filepath.Join(ws, "empty"), nil, 0o644)
	if r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("bin", 0, 0)}); r.OK || !strings.Contains(r.Message, "binary") {
		t.Fatalf("binary: %+v", r)
	}
	if r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "b", ToolName: "Read", Args: readArgsJSON("empty", 0, 0)}); !r.OK || r.Content[0].Text != "(empty file)" {
		t.Fatalf("empty: %+v", r)
	}
}

// TestReadHugeFileReadsOnlyTheWindow: a 2 GiB (sparse) file with limit 10
// answers at once with its first lines and no total, instead of reading
// two gigabytes.
func TestReadHugeFileReadsOnlyTheWindow(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	p := filepath.Join(ws, "huge.log")
	f, _ := os.Create(p)
	for i := 1; i <= 2000; i++ { // text well past the binary sniff
		fmt.Fprintf(f, "entry %d\n", i)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("huge.log", 0, 10)})
	d := r.Details.(tools.ReadDetails)
	if !r.OK || !d.Truncated || d.TotalLines != nil || d.EndLine != 10 {
		t.Fatalf("huge file: ok=%v %+v %q", r.OK, d, r.Message)
	}
	if !strings.HasPrefix(r.Content[0].Text, "1\tentry 1\n") || !strings.Contains(r.Content[0].Text, "10\tentry 10\n") {
		t.Fatalf("huge file text: %q", r.Content[0].Text)
	}
}

// TestReadStopsInsideAGiantFirstLine: a file too big to count whose first
// line runs past tools.ReadCountLimit is read no further than that with limit 10
// (a review: a 2 GB file of one line took 5.4 s to count the cut
// characters). Past the budget the file is a hole of NULs, so reading on
// would refuse it as binary instead of answering.
func TestReadStopsInsideAGiantFirstLine(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	p := filepath.Join(ws, "oneline.log")
	if err := os.WriteFile(p, bytes.Repeat([]byte("q"), tools.ReadCountLimit+128<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 2<<30); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("oneline.log", 0, 10)})
	if !r.OK {
		t.Fatalf("giant line: %+v", r)
	}
	d := r.Details.(tools.ReadDetails)
	text := r.Content[0].Text
	if !d.Truncated || d.TotalLines != nil || d.EndLine != 1 ||
		!strings.HasPrefix(text, "1\t"+strings.Repeat("q", tools.ReadMaxLineChars)+"… [line cut: more than ") ||
		!strings.Contains(text, "the rest of the line was not read]") ||
		!strings.Contains(text, "use offset 2 to continue") {
		t.Fatalf("giant line: %+v %q", d, text[len(text)-200:])
	}
}

// TestReadRefusesNULPastTheSniff: text for well over 8 KiB, then a hole of
// NULs (a sparse file): the window that reaches the NULs is refused as
// binary, never shown with NUL characters, and never read as one line of
// gigabytes (a review's 1 TB file ran past every timeout and cancel).
func TestReadRefusesNULPastTheSniff(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	p := filepath.Join(ws, "sparse.log")
	f, _ := os.Create(p)
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "a", ToolName: "Read", Args: readArgsJSON("sparse.log", 0, 10)})
	if !r.OK || !strings.Contains(r.Content[0].Text, "10\tline 10\n") {
		t.Fatalf("window before the hole: %+v", r)
	}
	r = run(t, s, ExecuteParams{SessionID: "r", ToolCallID: "b", ToolName: "Read", Args: readArgsJSON("sparse.log", 1995, 0)})
	if r.OK || !strings.Contains(r.Message, "binary") || !strings.Contains(r.Message, "line 2001") {
		t.Fatalf("window reaching the hole: %+v", r)
	}
	for _, c := range r.Content {
		if strings.ContainsRune(c.Text, 0) {
			t.Fatalf("NUL shown to the model: %q", c.Text)
		}
	}
}

// A window that ends exactly at the end of the file is not truncated (a
// review: "use offset 2001 to continue", and offset 2001 was refused), and
// the '\r' of a CRLF line of exactly the cut length is no cut character.
func TestReadWindowEndingWithTheFile(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "r", "agent", "ask")
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	os.WriteFile(filepath.Join(ws, "seq2000.txt"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(ws, "three.txt"), []byte("a\nb\nc\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "crlf.txt"), []byte(strings.Repeat("x", tools.ReadMaxLineChars)+"\r\n"), 0o644)
	for i, c := range []struct {
		path  string
		limit int
	}{{"seq2000.txt", 0}, {"three.txt", 3}, {"crlf.txt", 0}} {
		r := run(t, s, ExecuteParams{SessionID: "r", ToolCallID: fmt.Sprint("w", i), ToolName: "Read", Args: readArgsJSON(c.path, 0, c.limit)})
		text := r.Content[0].Text
		if d := r.Details.(tools.ReadDetails); d.Truncated || strings.Contains(text, "truncated") || strings.Contains(text, "line cut") {
			t.Errorf("%s limit %d: truncated=%v\n...%s", c.path, c.limit, d.Truncated, text[max(0, len(text)-120):])
		}
	}
}
