package handlers

import (
	"encoding/json"
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
		if r.OK || r.ErrorCode != CodeInvalidArgument || strings.Contains(r.Message, "snapshot") {
			t.Fatalf("Write over %s: %s %q", name, r.ErrorCode, r.Message)
		}
	}
}
