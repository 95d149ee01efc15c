//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hostcore/scratch"
)

// details is a tools.execute result's details, re-decoded into v.
func detailsOf(t *testing.T, r map[string]any, v any) {
	t.Helper()
	b, _ := json.Marshal(r["details"])
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestPluginScaffoldCheckPackThroughBinary: the developer loop through
// the built binary: a scaffold asks as a Write does and comes back with
// its review, passes its check, and packs into the session's scratch
// directory, the same bytes each time.
func TestPluginScaffoldCheckPackThroughBinary(t *testing.T) {
	h, c, ws, data := sessionHost(t, "ask", nil)
	c.send(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "sc", "toolName": "PluginScaffold",
		"args": map[string]any{"path": "plugins/acme", "pluginId": "acme"}})
	card, id := cardOf(t, h)
	if card["toolName"] != "PluginScaffold" || !strings.Contains(card["preview"].(string), "--- plugin.json") {
		t.Fatalf("card: %v", card)
	}
	h.answer(t, id, "allow-once")
	r := c.result(2)
	review, _ := r["review"].(map[string]any)
	if r["ok"] != true || review["path"] != "plugins/acme/plugin.json" || review["status"] != "added" {
		t.Fatalf("scaffold: %v", r)
	}
	for _, f := range []string{"plugin.json", "skills/getting-started/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(ws, "plugins", "acme", f)); err != nil {
			t.Fatal(err)
		}
	}

	r = c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "ck", "toolName": "PluginCheck", "args": map[string]any{"path": "plugins/acme"}})
	var check struct {
		Valid    bool
		Tools    []string
		Problems []any
	}
	detailsOf(t, r, &check)
	if r["ok"] != true || !check.Valid || len(check.Problems) != 0 || !slices.Equal(check.Tools, []string{"plugin_acme_hello"}) {
		t.Fatalf("check: %v", r)
	}

	var sums []string
	for i, id := range []string{"pk1", "pk2"} {
		r = c.call(4+i, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": id, "toolName": "PluginPack", "args": map[string]any{"path": "plugins/acme"}})
		var pack struct {
			Path   string
			Size   int
			SHA256 string
		}
		detailsOf(t, r, &pack)
		if r["ok"] != true || !strings.HasPrefix(pack.Path, scratch.Dir(data, "s")+string(filepath.Separator)) {
			t.Fatalf("pack: %v", r)
		}
		b, err := os.ReadFile(pack.Path)
		sum := sha256.Sum256(b)
		if err != nil || len(b) != pack.Size || hex.EncodeToString(sum[:]) != pack.SHA256 {
			t.Fatalf("the archive is not what the details say: %v %d %+v", err, len(b), pack)
		}
		sums = append(sums, pack.SHA256)
	}
	if sums[0] != sums[1] {
		t.Fatalf("two packs differ: %v", sums)
	}
}

// TestPluginCheckListsEveryProblemThroughBinary: a broken plugin's
// check names each problem with its file, and PluginPack packs nothing.
func TestPluginCheckListsEveryProblemThroughBinary(t *testing.T) {
	_, c, ws, _ := sessionHost(t, "auto", nil)
	dir := filepath.Join(ws, "broken")
	os.MkdirAll(filepath.Join(dir, "skills", "one"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"id":"broken","version":"1","tools":[{"name":"t","description":"T.","inputSchema":{"type":7},"risk":"severe"}],"skills":["skills/one","skills/two"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "skills", "one", "SKILL.md"), []byte("---\nname: uno\n---\n"), 0o644)
	r := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "ck", "toolName": "PluginCheck", "args": map[string]any{"path": "broken"}})
	var check struct {
		Valid    bool
		Problems []struct{ File, Message string }
	}
	detailsOf(t, r, &check)
	want := []struct{ file, msg string }{
		{"plugin.json", "/version"},
		{"plugin.json", "/tools/0/risk"},
		{"plugin.json", "tools[0].inputSchema"},
		{"plugin.json", "grants lacks agent.tool.register"},
		{"skills/one/SKILL.md", `not its folder's name "one"`},
		{"skills/one/SKILL.md", "no description"},
		{"skills/two/SKILL.md", "missing"},
	}
	for _, w := range want {
		if !slices.ContainsFunc(check.Problems, func(p struct{ File, Message string }) bool {
			return p.File == w.file && strings.Contains(p.Message, w.msg)
		}) {
			t.Errorf("no problem %s: %q in %+v", w.file, w.msg, check.Problems)
		}
	}
	if r["ok"] != true || check.Valid || len(check.Problems) != len(want) {
		t.Fatalf("check: %d problems, want %d: %v", len(check.Problems), len(want), r)
	}
	if _, code := execCode(c, 3, "PluginPack", map[string]any{"path": "broken"}); code != "INVALID_ARGUMENT" {
		t.Fatalf("pack of a broken plugin: %s", code)
	}
}

// execCode runs a tool in session s and returns its result and errorCode.
func execCode(c rpcClient, id int, tool string, args map[string]any) (map[string]any, string) {
	r := c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": tool + "-" + string(rune('a'+id)), "toolName": tool, "args": args})
	code, _ := r["errorCode"].(string)
	return r, code
}

// TestPluginToolsRefuseOutsidePathsThroughBinary: a directory outside
// the workspace and scratch is refused by policy, with no card, in ask
// mode (a card would end as a timeout, not a policy denial).
func TestPluginToolsRefuseOutsidePathsThroughBinary(t *testing.T) {
	_, c, _, _ := sessionHost(t, "ask", nil, "--permission-timeout", "2s")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "plugin.json"), []byte(`{"id":"x","version":"1.0.0"}`), 0o644)
	for i, call := range []struct {
		tool string
		args map[string]any
	}{
		{"PluginCheck", map[string]any{"path": outside}},
		{"PluginPack", map[string]any{"path": outside}},
		{"PluginScaffold", map[string]any{"path": filepath.Join(outside, "new"), "pluginId": "x"}},
	} {
		r, code := execCode(c, 2+i, call.tool, call.args)
		if code != "TOOL_DENIED" || r["decision"] != "policy-deny" || !strings.Contains(r["message"].(string), "inside the workspace and the scratch directory only") {
			t.Errorf("%s outside: %v", call.tool, r)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Fatalf("the scaffold wrote outside: %v", err)
	}
}

// TestSkillsThroughBinary: skills a registration contributes are in the
// catalog under Skill; Skill returns one's instructions and base
// directory; an unknown name lists the near ones; a delegate never gets
// Skill.
func TestSkillsThroughBinary(t *testing.T) {
	_, c, _, _ := sessionHost(t, "auto", nil)
	r := c.call(2, "plugins.register", map[string]any{"pluginId": "acme", "grants": toolGrant, "skills": []any{
		map[string]any{"name": "release-notes", "description": "Write release notes from the log.", "instructions": "Run git log, then write.", "baseDir": "/opt/acme/skills/release-notes"},
		map[string]any{"name": "release-check", "description": "Check a release.", "instructions": "Check it."},
	}})
	if !slices.Equal(asStrings(r["skills"]), []string{"release-notes", "release-check"}) {
		t.Fatalf("register: %v", r)
	}
	list := c.call(3, "tools.list", map[string]any{"sessionId": "s"})
	catalog, _ := list["catalog"].(string)
	if !slices.Contains(toolNames(c, 4, "s"), "Skill") || !strings.Contains(catalog, "- skill release-notes: Write release notes from the log.") || !strings.Contains(catalog, "- skill release-check: Check a release.") {
		t.Fatalf("catalog:\n%s", catalog)
	}
	r, code := execCode(c, 5, "Skill", map[string]any{"name": "release-notes"})
	if code != "" || !strings.Contains(r["content"].([]any)[0].(map[string]any)["text"].(string), "Base directory for this skill: /opt/acme/skills/release-notes\n\nRun git log, then write.") {
		t.Fatalf("Skill: %v", r)
	}
	r, code = execCode(c, 6, "Skill", map[string]any{"name": "release-note"})
	if code != "INVALID_ARGUMENT" || !strings.Contains(r["message"].(string), "did you mean release-notes?") {
		t.Fatalf("unknown skill: %v", r)
	}
	out := c.call(7, "session.configure", map[string]any{"sessionId": "s", "subagents": []any{map[string]any{"name": "helper", "tools": []string{"Read", "Skill"}}}})
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `tool \"Skill\" cannot be assigned to a delegate`) {
		t.Fatalf("configure: %s", b)
	}
	c.send(8, "tools.list", map[string]any{"sessionId": "s", "delegate": "helper"})
	if names := c.result(8)["tools"].([]any); len(names) != 1 {
		t.Fatalf("the delegate's tools: %v", names)
	}
	c.send(9, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "dk", "toolName": "Skill", "delegate": "helper", "args": map[string]any{"name": "release-notes"}})
	if r := c.result(9); r["errorCode"] != "TOOL_DENIED" {
		t.Fatalf("a delegate's Skill: %v", r)
	}
}

func asStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
