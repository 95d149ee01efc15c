package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// autoSessionWithHome starts hostcore with HOME set to home and creates
// session "s" on ws in auto mode, where outside paths need no card.
func autoSessionWithHome(t *testing.T, bin, home, ws, data string) rpcClient {
	t.Helper()
	c := rpcClient{t, startHostEnv(t, bin, []string{"HOME=" + home}, "--data-dir", data)}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	return c
}

// homeWithKey returns a new home directory holding ~/.ssh/id_rsa with key.
func homeWithKey(t *testing.T, key string) string {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte(key+"\n"), 0o600)
	return home
}

// The Bash denylist held for Bash only: under auto, where an outside path
// needs no card, Read of ~/.ssh/id_rsa and a Write of
// ~/.ssh/authorized_keys ran (a review against the design, section 5).
// The file tools now meet the same list, as written and as resolved.
func TestFileToolsMeetTheDenylist(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	home := homeWithKey(t, "SECRETKEY")
	os.WriteFile(filepath.Join(home, "notes.txt"), []byte("notes\n"), 0o644)
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "keys"))
	c := autoSessionWithHome(t, bin, home, ws, data)
	for i, tc := range []struct {
		tool   string
		args   map[string]any
		denied bool
	}{
		{"Read", map[string]any{"path": filepath.Join(home, ".ssh", "id_rsa")}, true},
		{"Read", map[string]any{"path": filepath.Join(home, "keys", "id_rsa")}, true},
		{"Write", map[string]any{"path": filepath.Join(home, ".ssh", "authorized_keys"), "content": "ssh-ed25519 AAAA attacker\n"}, true},
		{"Edit", map[string]any{"path": filepath.Join(home, ".ssh", "id_rsa"), "old_string": "SECRET", "new_string": "x"}, true},
		{"Grep", map[string]any{"pattern": "SECRET", "path": home}, true},
		{"Glob", map[string]any{"pattern": "*", "path": filepath.Join(home, ".ssh")}, true},
		{"Glob", map[string]any{"pattern": ".ss?/*", "path": home}, true},
		{"Glob", map[string]any{"pattern": "**/id_*", "path": home}, true},
		// A pattern's literal directories are listed like its path
		// (.ssh/* from the home directory listed the keys' names).
		{"Glob", map[string]any{"pattern": ".ssh/*", "path": home}, true},
		{"Glob", map[string]any{"pattern": ".ssh/id_rsa", "path": home}, true},
		{"Glob", map[string]any{"pattern": "keys/*", "path": home}, true},
		{"Glob", map[string]any{"pattern": "./.ssh/*", "path": home}, true},
		{"Glob", map[string]any{"pattern": filepath.Join(home, ".ssh") + "/*"}, true},
		{"Read", map[string]any{"path": filepath.Join(home, "notes.txt")}, false},
		// One directory's names: nothing below it is walked.
		{"Glob", map[string]any{"pattern": filepath.Join(home, "*.txt")}, false},
		{"Glob", map[string]any{"pattern": "*.txt", "path": home}, false},
		{"Glob", map[string]any{"pattern": "docs/*.txt", "path": home}, false},
	} {
		r := c.call(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c" + string(rune('a'+i)), "toolName": tc.tool, "args": tc.args})
		if got := r["decision"] == "policy-deny" && r["errorCode"] == "TOOL_DENIED"; got != tc.denied {
			t.Errorf("%s %v: denied=%v, want %v: %v", tc.tool, tc.args, got, tc.denied, r["message"])
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Error("authorized_keys was written")
	}
	rows := c.call(30, "audit.query", map[string]any{"sessionId": "s", "toolCallId": "ca"})["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["externalPath"] != "denied" {
		t.Errorf("audit of the refused Read: %v", rows)
	}

	// A home that is itself a link: its entries count by both names.
	link := filepath.Join(t.TempDir(), "home-link")
	os.Symlink(home, link)
	c2 := autoSessionWithHome(t, bin, link, ws, t.TempDir())
	for i, p := range []string{filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(link, ".ssh", "id_rsa")} {
		if r := c2.call(2+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "l" + string(rune('0'+i)), "toolName": "Read", "args": map[string]any{"path": p}}); r["decision"] != "policy-deny" {
			t.Errorf("HOME a link, Read %s: %v", p, r["message"])
		}
	}
}

// An entry that is itself a link (~/.ssh -> ~/dotfiles/ssh, a common
// setup) left the directory it leads to open, to the file tools and to
// Bash (an adversarial review). The shadow backups were not listed.
func TestDenylistEntriesThatAreLinks(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	base := t.TempDir()
	home, real := filepath.Join(base, "h"), filepath.Join(base, "dot", "ssh-real")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(real, 0o700)
	os.WriteFile(filepath.Join(real, "id_ed25519"), []byte("REALKEY\n"), 0o600)
	os.Symlink(real, filepath.Join(home, ".ssh"))
	c := autoSessionWithHome(t, bin, home, ws, data)
	for i, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"Read", map[string]any{"path": filepath.Join(real, "id_ed25519")}},
		{"Write", map[string]any{"path": filepath.Join(real, "authorized_keys"), "content": "ssh-ed25519 AAAA attacker\n"}},
		{"Grep", map[string]any{"pattern": "REALKEY", "path": filepath.Join(base, "dot")}},
		{"Bash", map[string]any{"command": "cat " + filepath.Join(real, "id_ed25519")}},
		{"Read", map[string]any{"path": "/etc/shadow-"}},
	} {
		r := c.call(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "c" + string(rune('a'+i)), "toolName": tc.tool, "args": tc.args})
		if r["decision"] != "policy-deny" {
			t.Errorf("%s %v: %v %v", tc.tool, tc.args, r["decision"], r["message"])
		}
	}
	if _, err := os.Stat(filepath.Join(real, "authorized_keys")); err == nil {
		t.Error("authorized_keys was written")
	}
}

// A workspace link to ~/.ssh reached by the workspace's absolute path,
// $PWD or a glob printed the key under auto (an adversarial review):
// through the built binary, each is refused and nothing runs.
func TestBashDenylistFollowsWorkspaceLinksHoweverNamed(t *testing.T) {
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	home := homeWithKey(t, "PRIVATEKEY")
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(ws, "s"))
	c := autoSessionWithHome(t, bin, home, ws, data)
	for i, cmd := range []string{"cat " + filepath.Join(ws, "s", "id_rsa"), "cat $PWD/s/id_rsa", "cat ?/id_rsa", "cat */id_rsa"} {
		r := c.call(10+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "b" + string(rune('a'+i)), "toolName": "Bash", "args": map[string]any{"command": cmd}})
		if r["decision"] != "policy-deny" || r["errorCode"] != "TOOL_DENIED" {
			t.Errorf("%s: %v %v %v", cmd, r["decision"], r["errorCode"], r["message"])
		}
		if strings.Contains(fmt.Sprint(r), "PRIVATEKEY") {
			t.Errorf("%s printed the key", cmd)
		}
	}
}
