//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPCardShowsDiffAsRealLines: the elicitation shows an Edit's change
// as a unified diff of real lines (from the card's raw member), not as the
// preview's one escaped line.
func TestMCPCardShowsDiffAsRealLines(t *testing.T) {
	ws, data := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644)
	e := &elicitor{answers: []string{"deny"}}
	h := startMCP(t, &sdk.ClientOptions{ElicitationHandler: e.handle}, "--workspace", ws, "--data-dir", data)
	res := h.call(t, t.Context(), "Edit", map[string]any{"path": "a.txt", "old_string": "beta\ngamma", "new_string": "BETA\ngamma"})
	if !res.IsError {
		t.Fatalf("denied Edit ran: %s", text(res))
	}
	e.mu.Lock()
	msgs := e.messages
	e.mu.Unlock()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "\n-beta\n+BETA\n gamma") || strings.Contains(msgs[0], `\n`) {
		t.Errorf("elicitation message: %q", msgs)
	}
}
