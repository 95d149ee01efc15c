package main

import (
	"os"
	"path/filepath"
	"testing"
)

// An allow-session answer to an outside-path card covers the directory
// the card names (grantScope: the file's parent, a Glob's root) and what
// lies beneath it; every other outside path still gets its own card.
func TestOutsideGrantCoversItsDirectoryOnly(t *testing.T) {
	h, c, ws, _ := sessionHost(t, "ask", nil)
	out := filepath.Join(filepath.Dir(ws), "out")
	for _, d := range []string{"a/sub", "ab", "g/deep"} {
		os.MkdirAll(filepath.Join(out, d), 0o755)
	}
	for _, f := range []string{"a/x.txt", "a/y.txt", "a/sub/z.txt", "ab/x.txt", "b.txt", "g/deep/k.txt"} {
		os.WriteFile(filepath.Join(out, f), []byte(f+"\n"), 0o644)
	}
	read := func(id int, callID, p string) {
		c.send(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": callID, "toolName": "Read", "args": map[string]any{"path": p}})
	}
	read(2, "r1", filepath.Join(out, "a", "x.txt"))
	card, id := cardOf(t, h)
	if card["reason"] != "outside-path" || card["grantScope"] != filepath.Join(out, "a") {
		t.Fatalf("card = %v, want outside-path with grantScope %s", card, filepath.Join(out, "a"))
	}
	h.answer(t, id, "allow-session")
	if r := c.result(2); r["ok"] != true || r["decision"] != "allow-session" {
		t.Fatalf("r1 = %v", r)
	}
	// Covered: the same directory and below, no card.
	for i, f := range []string{"a/y.txt", "a/sub/z.txt"} {
		read(3+i, "c"+f, filepath.Join(out, f))
		if r := c.result(3 + i); r["ok"] != true || r["decision"] != "allow-session" {
			t.Errorf("Read %s under the grant = %v", f, r)
		}
	}
	// Not covered: a prefix sibling, the parent, another directory.
	for i, f := range []string{"ab/x.txt", "b.txt"} {
		read(10+i, "n"+f, filepath.Join(out, f))
		card, id := cardOf(t, h)
		if card["grantScope"] != filepath.Dir(filepath.Join(out, f)) {
			t.Errorf("card for %s = %v", f, card)
		}
		h.answer(t, id, "deny")
		if r, _ := c.answerOf(10 + i); r["errorCode"] != "TOOL_DENIED" {
			t.Errorf("Read %s outside the grant = %v, want a card and TOOL_DENIED", f, r)
		}
	}
	// A Glob's grant is for its root; a Read is another tool.
	c.send(20, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "g1", "toolName": "Glob", "args": map[string]any{"pattern": "**/*.txt", "path": filepath.Join(out, "g")}})
	card, id = cardOf(t, h)
	if card["grantScope"] != filepath.Join(out, "g") {
		t.Errorf("Glob card = %v, want grantScope %s", card, filepath.Join(out, "g"))
	}
	h.answer(t, id, "allow-session")
	c.result(20)
	c.send(21, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "g2", "toolName": "Glob", "args": map[string]any{"pattern": "*.txt", "path": filepath.Join(out, "g", "deep")}})
	if r := c.result(21); r["ok"] != true || r["decision"] != "allow-session" {
		t.Errorf("Glob beneath its grant = %v", r)
	}
}
