//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A session created on a symlinked alias of its workspace (on macOS every
// /tmp workspace is one: /tmp is /private/tmp) keeps paths named through
// the alias in the workspace: no outside-path card, root "workspace" and
// the workspace-relative path. The scratch dir named through an alias is
// scratch. A link inside the workspace that leads out is still outside.
func TestWorkspaceAliasIsWorkspace(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, data, out := filepath.Join(tmp, "ws"), filepath.Join(tmp, "data"), filepath.Join(tmp, "out")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("inside\n"), 0o644)
	os.WriteFile(filepath.Join(out, "b.txt"), []byte("outside\n"), 0o644)
	link, datalink := filepath.Join(tmp, "wslink"), filepath.Join(tmp, "datalink")
	for name, target := range map[string]string{link: ws, datalink: data, filepath.Join(ws, "escape"): out} {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	h := startHost(t, buildBinary(t), "--data-dir", data)
	c := rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": link, "permissionMode": "ask"})

	// Ask mode cards every outside path: an answer with no card is in a root.
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "r1", "toolName": "Read", "args": map[string]any{"path": filepath.Join(link, "a.txt")}})
	if r["ok"] != true || r["root"] != "workspace" || r["path"] != "a.txt" {
		t.Errorf("Read through the alias = %v, want ok, root workspace, path a.txt", r)
	}
	r = c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "g1", "toolName": "Glob", "args": map[string]any{"pattern": "*.txt", "path": link}})
	if r["ok"] != true || r["root"] != "workspace" {
		t.Errorf("Glob through the alias = %v, want ok, root workspace", r)
	}
	r = c.call(4, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write", "args": map[string]any{"path": filepath.Join(datalink, "scratch", "s", "x.txt"), "content": "x"}})
	if r["ok"] != true || r["root"] != "scratch" || r["path"] != filepath.Join(data, "scratch", "s", "x.txt") {
		t.Errorf("Write to scratch through an alias = %v, want ok, root scratch, the canonical path", r)
	}

	c.send(5, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "r2", "toolName": "Read", "args": map[string]any{"path": filepath.Join(link, "escape", "b.txt")}})
	card, id := cardOf(t, h)
	if card["reason"] != "outside-path" || card["path"] != filepath.Join(out, "b.txt") {
		t.Errorf("card for a link leading out = %v, want outside-path for %s", card, filepath.Join(out, "b.txt"))
	}
	h.answer(t, id, "deny")
	c.answerOf(5)
}
