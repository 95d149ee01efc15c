package handlers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadExecute is one small-file Read through the whole envelope
// (no transport): the part of the README's Read round-trip row that is
// hostcore's own.
func BenchmarkReadExecute(b *testing.B) {
	s := newTestServer(&testing.T{}, &fakeClient{})
	ws, _ := filepath.EvalSymlinks(b.TempDir())
	raw, _ := json.Marshal(map[string]any{"sessionId": "b", "workspaceRoot": ws, "permissionMode": "auto"})
	if _, err := s.sessionCreate(b.Context(), raw); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hello\nworld\n"), 0o644)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, _ := json.Marshal(ExecuteParams{SessionID: "b", TurnID: "t", ToolCallID: fmt.Sprint("c", i), ToolName: "Read", Args: json.RawMessage(`{"path":"small.txt"}`)})
		if _, err := s.execute(b.Context(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateArgs is the schema check of a small Read.
func BenchmarkValidateArgs(b *testing.B) {
	t := newTestServer(&testing.T{}, &fakeClient{}).tools.Get("Read")
	args := json.RawMessage(`{"path":"small.txt","offset":3,"limit":10}`)
	for i := 0; i < b.N; i++ {
		if err := validateArgs(t, args); err != nil {
			b.Fatal(err)
		}
	}
}
