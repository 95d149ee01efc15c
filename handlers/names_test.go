//go:build unix

package handlers

import (
	"context"
	"encoding/json"
	"hostcore/handlers/tools"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSearchOutputQuotesControlCharactersInNames: a file named
// "a.txt:1:needle\nevil.go" must not forge a second result line in Grep or
// Glob output (a review found it did): a name with a control character is
// written quoted, on one line.
func TestSearchOutputQuotesControlCharactersInNames(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "n", "agent", "auto")
	forged := "a.txt:1:needle\nevil.go"
	if err := os.WriteFile(filepath.Join(ws, forged), []byte("needle\n"), 0o644); err != nil {
		t.Skipf("cannot create the name here: %v", err)
	}
	quoted := `"a.txt:1:needle\nevil.go"`
	for i, args := range []string{
		`{"pattern":"needle","outputMode":"content"}`,
		`{"pattern":"needle","outputMode":"files_with_matches"}`,
		`{"pattern":"needle","outputMode":"count"}`,
	} {
		r := run(t, s, ExecuteParams{SessionID: "n", ToolCallID: "g" + string(rune('0'+i)), ToolName: "Grep", Args: json.RawMessage(args)})
		text := r.Content[0].Text
		if !r.OK || strings.Contains(text, "evil.go:") || strings.Contains(text, "\nevil.go") || !strings.HasPrefix(text, quoted) {
			t.Fatalf("Grep %s: %q", args, text)
		}
	}
	r := run(t, s, ExecuteParams{SessionID: "n", ToolCallID: "glob", ToolName: "Glob", Args: json.RawMessage(`{"pattern":"*"}`)})
	if text := r.Content[0].Text; !r.OK || text != quoted+"\n" {
		t.Fatalf("Glob: %q", text)
	}
}

// TestWriteOverSpecialFilesIsInvalidArgument: a FIFO, a socket or a
// directory at the path is INVALID_ARGUMENT with a plain message (a
// review got TOOL_FAILED "cannot snapshot fifo before writing").
func TestWriteOverSpecialFilesIsInvalidArgument(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "w", "agent", "auto")
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	for _, name := range []string{"fifo", "dir"} {
		args, _ := json.Marshal(map[string]string{"path": name, "content": "x"})
		r := run(t, s, ExecuteParams{SessionID: "w", ToolCallID: "w-" + name, ToolName: "Write", Args: args})
		if r.OK || r.ErrorCode != tools.CodeInvalidArgument || strings.Contains(r.Message, "snapshot") {
			t.Fatalf("Write over %s: %s %q", name, r.ErrorCode, r.Message)
		}
	}
}

// TestTrailingSlashNamesADirectory: "a.txt/" is not a.txt (a review saw
// Read and Edit accept it, and Write "newdir/" create a file "newdir").
func TestTrailingSlashNamesADirectory(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "d", "agent", "auto")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	for i, tc := range []struct{ tool, args string }{
		{"Read", `{"path":"a.txt/"}`},
		{"Edit", `{"path":"a.txt/.","old_string":"alpha","new_string":"beta"}`},
		{"Write", `{"path":"newdir/","content":"x"}`},
		{"Write", `{"path":"a.txt/","content":"x"}`},
	} {
		r := run(t, s, ExecuteParams{SessionID: "d", ToolCallID: "c" + string(rune('0'+i)), ToolName: tc.tool, Args: json.RawMessage(tc.args)})
		if r.OK || r.ErrorCode != tools.CodeInvalidArgument || !strings.Contains(r.Message, "slash") {
			t.Fatalf("%s %s: %s %q", tc.tool, tc.args, r.ErrorCode, r.Message)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "newdir")); err == nil {
		t.Fatal(`Write "newdir/" created something`)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "alpha\n" {
		t.Fatalf("a.txt changed: %q", b)
	}
	r := run(t, s, ExecuteParams{SessionID: "d", ToolCallID: "dir", ToolName: "Read", Args: json.RawMessage(`{"path":"dir/"}`)})
	if r.OK || !strings.Contains(r.Message, "Glob") {
		t.Fatalf(`Read "dir/": %q`, r.Message)
	}
}

// TestCancelledBeforeItStartsIsAborted: a call whose cancel came before it
// started (it is registered when its line is read) ends as TOOL_ABORTED,
// whichever step sees the cancel first; a code review got TOOL_FAILED
// "reading the Bash denylist: context canceled" from Bash's precheck.
func TestCancelledBeforeItStartsIsAborted(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "c", "agent", "auto")
	for _, tc := range []struct{ tool, args string }{
		{"Bash", `{"command":"touch ran"}`},
		{"Write", `{"path":"ran","content":"x"}`},
		{"Read", `{"path":"ran"}`},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		raw, _ := json.Marshal(ExecuteParams{SessionID: "c", TurnID: "t", ToolCallID: "x-" + tc.tool, ToolName: tc.tool, Args: json.RawMessage(tc.args)})
		out, err := s.execute(ctx, raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if r := out.(*ToolResult); r.ErrorCode != tools.CodeToolAborted {
			t.Fatalf("%s cancelled before it started: %s %q", tc.tool, r.ErrorCode, r.Message)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatalf("%s ran", tc.tool)
		}
	}
}

// TestIDOfACallThatNeverRanIsFree: a denied call (a Read of an outside
// file, a Write) never ran, so its id may be sent again and then runs; a
// call that ran keeps its id (a code review found denied Reads' ids taken
// while denied Writes' were free).
func TestIDOfACallThatNeverRanIsFree(t *testing.T) {
	decision := "deny"
	fc := &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		return json.RawMessage(`{"decision":"` + decision + `"}`), nil
	}}
	s := newTestServer(t, fc)
	ws := newSession(t, s, "i", "agent", "ask")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("out\n"), 0o644)
	calls := []ExecuteParams{
		{SessionID: "i", ToolCallID: "r", ToolName: "Read", Args: readArgsJSON(outside, 0, 0)},
		{SessionID: "i", ToolCallID: "w", ToolName: "Write", Args: json.RawMessage(`{"path":"w.txt","content":"x"}`)},
	}
	for _, p := range calls {
		if r := run(t, s, p); r.OK || r.Decision != "deny" {
			t.Fatalf("%s denied: %+v", p.ToolName, r)
		}
	}
	decision = "allow-once"
	for _, p := range calls {
		if r := run(t, s, p); !r.OK {
			t.Fatalf("%s sent again after a deny: %s %q", p.ToolName, r.ErrorCode, r.Message)
		}
		if r := run(t, s, p); r.ErrorCode != tools.CodeDuplicateToolCall {
			t.Fatalf("%s sent again after it ran: %s", p.ToolName, r.ErrorCode)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "w.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestBashInAWorkspaceThatIsGone: the error names the workspace, not
// "starting /bin/bash: no such file or directory" (a review's finding).
func TestBashInAWorkspaceThatIsGone(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "g", "agent", "auto")
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	r := run(t, s, ExecuteParams{SessionID: "g", ToolCallID: "b", ToolName: "Bash", Args: json.RawMessage(`{"command":"true"}`)})
	if r.OK || !strings.Contains(r.Message, "workspace directory") || strings.Contains(r.Message, "/bin/bash") {
		t.Fatalf("Bash in a deleted workspace: %s %q", r.ErrorCode, r.Message)
	}
}
