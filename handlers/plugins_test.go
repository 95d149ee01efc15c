//go:build unix

package handlers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"hostcore/handlers/tools"
	"hostcore/scratch"
	"hostcore/store"
)

// cardCounter is a client that allows every card and counts them.
func cardCounter(cards *atomic.Int32, previews *[]string) *fakeClient {
	return &fakeClient{call: func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		if method == "permission.request" {
			cards.Add(1)
			b, _ := json.Marshal(params)
			var p struct{ Preview string }
			json.Unmarshal(b, &p)
			*previews = append(*previews, p.Preview)
		}
		return json.RawMessage(`{"decision":"allow-once"}`), nil
	}}
}

func exec1(t *testing.T, s *Server, id, tool string, args any) *ToolResult {
	t.Helper()
	raw, _ := json.Marshal(args)
	return run(t, s, ExecuteParams{SessionID: "p", ToolCallID: id, ToolName: tool, Args: raw})
}

// TestPluginScaffoldCheckPack: a scaffold asks as a Write does and
// reviews each file, passes its check, packs into scratch, and rolls
// back file by file.
func TestPluginScaffoldCheckPack(t *testing.T) {
	var cards atomic.Int32
	var previews []string
	s := newTestServer(t, cardCounter(&cards, &previews))
	ws := newSession(t, s, "p", "agent", "ask")

	r := exec1(t, s, "sc", "PluginScaffold", map[string]any{"path": "plugins/acme", "pluginId": "acme", "description": "Acme's tools."})
	if !r.OK || cards.Load() != 1 || !strings.Contains(previews[0], "--- plugin.json") || !strings.Contains(previews[0], "--- skills/getting-started/SKILL.md") {
		t.Fatalf("scaffold: %+v cards=%d previews=%q", r, cards.Load(), previews)
	}
	d := r.Details.(tools.PluginScaffoldDetails)
	if len(d.Files) != 2 || r.Review == nil || r.Review.Path != "plugins/acme/plugin.json" || r.Review.Status != "added" {
		t.Fatalf("scaffold review: %+v %+v", r.Review, d)
	}
	for _, f := range d.Files {
		if f.Review == nil || f.Review.Path != f.Path || !f.Created || f.Review.Additions == 0 {
			t.Fatalf("file %+v", f)
		}
	}

	r = exec1(t, s, "ck", "PluginCheck", map[string]any{"path": "plugins/acme"})
	if cd := r.Details.(tools.PluginCheckDetails); !r.OK || !cd.Valid || cd.PluginID != "acme" || len(cd.Tools) != 1 || len(cd.Skills) != 1 {
		t.Fatalf("check: %+v", r)
	}
	first := exec1(t, s, "pk1", "PluginPack", map[string]any{"path": "plugins/acme"})
	pd, _ := first.Details.(tools.PluginPackDetails)
	if fi, err := os.Stat(pd.Path); !first.OK || err != nil || fi.Size() != int64(pd.Size) || filepath.Dir(pd.Path) != filepath.Join(scratch.Dir(s.cfg.DataDir, "p"), "plugins") || filepath.Base(pd.Path) != "acme-0.1.0.tgz" {
		t.Fatalf("pack: %+v %v", first, err)
	}
	again := exec1(t, s, "pk2", "PluginPack", map[string]any{"path": "plugins/acme"})
	if ad, _ := again.Details.(tools.PluginPackDetails); ad.SHA256 != pd.SHA256 || cards.Load() != 1 {
		t.Fatalf("two packs: %+v %+v, cards %d", first, again, cards.Load())
	}

	r = exec1(t, s, "sc2", "PluginScaffold", map[string]any{"path": "plugins/acme", "pluginId": "acme"})
	if r.OK || r.ErrorCode != tools.CodeInvalidArgument || !strings.Contains(r.Message, "already exists") || cards.Load() != 1 {
		t.Fatalf("a scaffold over a plugin: %+v", r)
	}
	for _, f := range d.Files {
		raw, _ := json.Marshal(map[string]string{"sessionId": "p", "snapshotId": f.Review.SnapshotID})
		if _, err := s.reviewRollback(t.Context(), raw); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(ws, f.Path)); !os.IsNotExist(err) {
			t.Fatalf("%s after rollback: %v", f.Path, err)
		}
	}
}

// TestPluginToolsStayInsideTheRoots: an outside directory is refused by
// policy, before any card, by all three tools; bad arguments are refused
// before the card too.
func TestPluginToolsStayInsideTheRoots(t *testing.T) {
	var cards atomic.Int32
	var previews []string
	s := newTestServer(t, cardCounter(&cards, &previews))
	newSession(t, s, "p", "agent", "ask")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "plugin.json"), []byte(`{"id":"x","version":"1.0.0"}`), 0o644)
	for i, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"PluginCheck", map[string]any{"path": outside}, tools.CodeToolDenied},
		{"PluginPack", map[string]any{"path": outside}, tools.CodeToolDenied},
		{"PluginScaffold", map[string]any{"path": filepath.Join(outside, "new"), "pluginId": "x"}, tools.CodeToolDenied},
		{"PluginCheck", map[string]any{"path": "../"}, tools.CodeToolDenied},
		{"PluginScaffold", map[string]any{"path": "p", "pluginId": "not-safe"}, tools.CodeInvalidArgument},
		{"PluginScaffold", map[string]any{"path": "p", "pluginId": "ok", "version": "one"}, tools.CodeInvalidArgument},
		{"PluginCheck", map[string]any{"path": "missing"}, tools.CodeInvalidArgument},
	} {
		r := exec1(t, s, string(rune('a'+i)), c.tool, c.args)
		if r.OK || r.ErrorCode != c.code || cards.Load() != 0 {
			t.Errorf("%s %v: %s %q (cards %d)", c.tool, c.args, r.ErrorCode, r.Message, cards.Load())
		}
		if c.code == tools.CodeToolDenied && r.Decision != decPolicy {
			t.Errorf("%s %v: decision %q", c.tool, c.args, r.Decision)
		}
	}
}

// TestPluginPackRefusesAFailingPlugin: nothing is packed, and the
// problems come back as PluginCheck lists them.
func TestPluginPackRefusesAFailingPlugin(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := newSession(t, s, "p", "agent", "auto")
	os.MkdirAll(filepath.Join(ws, "bad"), 0o755)
	os.WriteFile(filepath.Join(ws, "bad", "plugin.json"), []byte(`{"id":"bad","version":"x","skills":["skills/none"]}`), 0o644)
	r := exec1(t, s, "pk", "PluginPack", map[string]any{"path": "bad"})
	cd, _ := r.Details.(tools.PluginCheckDetails)
	if r.OK || r.ErrorCode != tools.CodeInvalidArgument || cd.Valid || len(cd.Problems) != 2 || !strings.Contains(r.Content[0].Text, "skills/none/SKILL.md: missing") {
		t.Fatalf("pack of a failing plugin: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(scratch.Dir(s.cfg.DataDir, "p"), "plugins")); !os.IsNotExist(err) {
		t.Fatalf("something was packed: %v", err)
	}
}

// TestSkills: a registration's skills are listed in the catalog under
// Skill, by name and description; Skill returns the instructions and
// the base directory; an unknown name gets the near names; no delegate
// gets Skill; a registration without them withdraws them.
func TestSkills(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	newSession(t, s, "p", "agent", "auto")
	sess, _ := s.store.GetSession(t.Context(), "p")
	if _, catalog := s.visibleTools(sess, ""); strings.Contains(catalog, "Skill") {
		t.Fatalf("Skill offered with no skills:\n%s", catalog)
	}
	reg := func(id, skills string) error {
		_, err := s.pluginsRegister(t.Context(), json.RawMessage(`{"pluginId":"`+id+`","grants":["agent.tool.register"],"skills":`+skills+`}`))
		return err
	}
	if err := reg("acme", `[{"name":"review-code","description":"Review code. Then more.","instructions":"Read the diff.","baseDir":"/opt/acme/skills/review-code"},
		{"name":"review-docs","description":"Review docs.","instructions":"Read the docs."}]`); err != nil {
		t.Fatal(err)
	}
	_, catalog := s.visibleTools(sess, "")
	for _, want := range []string{"- Skill: Load a skill", "  - skill review-code: Review code.\n", "  - skill review-docs: Review docs.\n"} {
		if !strings.Contains(catalog, want) {
			t.Errorf("catalog lacks %q:\n%s", want, catalog)
		}
	}
	r := exec1(t, s, "s1", "Skill", map[string]any{"name": "review-code"})
	if sd, _ := r.Details.(tools.SkillDetails); !r.OK || r.Content[0].Text != "Base directory for this skill: /opt/acme/skills/review-code\n\nRead the diff." || sd.PluginID != "acme" || sd.BaseDir != "/opt/acme/skills/review-code" {
		t.Fatalf("Skill: %+v", r)
	}
	r = exec1(t, s, "s2", "Skill", map[string]any{"name": "review-cod"})
	if r.OK || r.ErrorCode != tools.CodeInvalidArgument || !strings.Contains(r.Message, "did you mean review-code, review-docs?") {
		t.Fatalf("unknown skill: %+v", r)
	}
	r = exec1(t, s, "s3", "Skill", map[string]any{"name": "zzz"})
	if r.OK || !strings.Contains(r.Message, "the skills are review-code, review-docs") {
		t.Fatalf("a name near none: %+v", r)
	}
	if err := reg("other", `[{"name":"review-code","description":"Mine."}]`); err == nil || !strings.Contains(err.Error(), `already contributed by plugin "acme"`) {
		t.Fatalf("a skill of another plugin's name: %v", err)
	}
	for _, bad := range []string{`[{"name":"Bad Name","description":"d"}]`, `[{"name":"a","description":""}]`, `[{"name":"a","description":"d","baseDir":"rel"}]`, `[{"name":"a","description":"d"},{"name":"a","description":"d"}]`} {
		if err := reg("third", bad); err == nil {
			t.Errorf("%s was registered", bad)
		}
	}

	// Section 10.2: never assignable to a delegate.
	raw, _ := json.Marshal(map[string]any{"sessionId": "p", "subagents": []any{map[string]any{"name": "helper", "tools": []string{"Read", "Skill"}}}})
	out, err := s.sessionConfigure(t.Context(), raw)
	if b, _ := json.Marshal(out); err != nil || !strings.Contains(string(b), `tool \"Skill\" cannot be assigned to a delegate`) {
		t.Fatalf("a subagent with Skill: %v %s", err, b)
	}
	sess, _ = s.store.GetSession(t.Context(), "p")
	if visible, _ := s.visibleTools(sess, "helper"); len(visible) != 1 || visible[0].Name != "Read" {
		t.Fatalf("the delegate sees %+v", visible)
	}
	args, _ := json.Marshal(map[string]any{"name": "review-code"})
	if r := run(t, s, ExecuteParams{SessionID: "p", ToolCallID: "d1", ToolName: "Skill", Args: args, Delegate: "helper"}); r.OK || r.ErrorCode != tools.CodeToolDenied {
		t.Fatalf("a delegate's Skill: %+v", r)
	}

	if err := reg("acme", `[]`); err != nil {
		t.Fatal(err)
	}
	if visible, catalog := s.visibleTools(store.Session{ID: "p", Mode: "agent", Subagents: "[]", WorkspaceRoot: "/ws"}, ""); strings.Contains(catalog, "  - skill ") || slices.ContainsFunc(visible, func(ti tools.ToolInfo) bool { return ti.Name == "Skill" }) {
		t.Fatalf("withdrawn skills still offered:\n%s", catalog)
	}
}
