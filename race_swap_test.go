package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestApprovalCannotBeRaced swaps the file system under an open permission
// card; approving the card must not write outside the workspace (design
// section 4: symlinks are resolved again after approval).
func TestApprovalCannotBeRaced(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "victim"), []byte("untouched"), 0o644)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644)
	os.Symlink("a.txt", filepath.Join(ws, "link"))
	os.MkdirAll(filepath.Join(ws, "d"), 0o755)

	h := startHost(t, bin, "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "ask"})

	cases := []struct {
		name string
		path string
		swap func()
	}{
		{"symlink retargeted outside", "link", func() {
			os.Remove(filepath.Join(ws, "link"))
			os.Symlink(filepath.Join(outside, "victim"), filepath.Join(ws, "link"))
		}},
		{"directory renamed and replaced by a link outside", "d/victim", func() {
			os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d.old"))
			os.Symlink(outside, filepath.Join(ws, "d"))
		}},
	}
	for i, tc := range cases {
		id := 10 + i
		c.send(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": tc.name, "toolName": "Write",
			"args": map[string]any{"path": tc.path, "content": "pwned"}})
		card := h.nextCard(t)
		tc.swap()
		h.answer(t, card, "allow-once")
		r := c.result(id)
		if r["ok"] == true || r["errorCode"] != "TOOL_DENIED" {
			t.Errorf("%s: want TOOL_DENIED after the swap, got %v", tc.name, r)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "untouched" {
			t.Fatalf("%s: the outside file was written: %q", tc.name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.tmp")); err == nil {
		t.Fatal("a temp file was left outside")
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("files appeared outside the workspace: %v", entries)
	}
}

// TestSameFileTwiceInOneBatch: in ask mode, two Writes and an Edit of one
// file sent together all run once approved. The first Write's atomic
// rename gives the file a new inode; that is the same approved location,
// not a swap (found by the load test: the recheck refused the second call).
func TestSameFileTwiceInOneBatch(t *testing.T) {
	_, h, c, ws, _ := hostWithSession(t, "ask")
	c.send(10, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write", "args": map[string]any{"path": "new/f.txt", "content": "one\n"}})
	c.send(11, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w2", "toolName": "Write", "args": map[string]any{"path": "new/f.txt", "content": "two\n"}})
	c.send(12, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "e1", "toolName": "Edit", "args": map[string]any{"path": "new/f.txt", "old_string": "two", "new_string": "three"}})
	for range 3 {
		h.answer(t, h.nextCard(t), "allow-once")
	}
	for _, id := range []int{10, 11, 12} {
		if r := c.result(id); r["ok"] != true {
			t.Fatalf("call %d: %v", id, r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new", "f.txt")); string(b) != "three\n" {
		t.Fatalf("file is %q, want the three calls applied in order", b)
	}
}
