package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRules: rules are kept per workspace, the same answer twice is one
// rule, they survive a reopen, and a removed one is gone; the audit row
// keeps the rule that allowed it, through the journal and the database.
func TestRules(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	npm := Rule{ID: "rule_1", Workspace: "/ws", Kind: "command", ToolName: "Bash", Prefix: []string{"npm", "test"}, SessionID: "s", ToolCallID: "c1", CreatedAt: "2026-01-01T00:00:00.000Z"}
	write := Rule{ID: "rule_2", Workspace: "/ws", Kind: "tool", ToolName: "Write", SessionID: "s", ToolCallID: "c2", CreatedAt: "2026-01-01T00:00:01.000Z"}
	other := Rule{ID: "rule_3", Workspace: "/other", Kind: "tool", ToolName: "plugin_p_t", PluginID: "p", PluginTool: "t", SessionID: "s2", ToolCallID: "c3", CreatedAt: "2026-01-01T00:00:02.000Z"}
	for _, r := range []Rule{npm, write, other} {
		got, err := s.AddRule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Prefix == nil {
			r.Prefix = []string{}
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("AddRule (-want +got):\n%s", diff)
		}
	}
	again := npm
	again.ID, again.ToolCallID = "rule_9", "c9"
	if got, err := s.AddRule(ctx, again); err != nil || got.ID != "rule_1" {
		t.Errorf("the same rule again = %+v, %v; want rule_1 returned", got, err)
	}
	row := AuditRow{SessionID: "s", TurnID: "t", ToolCallID: "c4", ToolName: "Bash", ArgsHash: "h", Decision: "allow-always-command", CreatedAt: Now(), RuleID: "rule_1"}
	if err := s.InsertAudit(ctx, row, false); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, err := s.Rules(ctx, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	write.Prefix = []string{}
	if diff := cmp.Diff([]Rule{npm, write}, ws); diff != "" {
		t.Errorf("Rules(/ws) after reopen (-want +got):\n%s", diff)
	}
	if all, _ := s.Rules(ctx, ""); len(all) != 3 {
		t.Errorf("Rules() = %d rules, want 3", len(all))
	}
	if got, err := s.RemoveRule(ctx, "rule_1"); err != nil || got.ID != "rule_1" {
		t.Errorf("RemoveRule = %+v, %v", got, err)
	}
	if _, err := s.RemoveRule(ctx, "rule_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RemoveRule of a removed rule: %v, want ErrNotFound", err)
	}
	if ws, _ := s.Rules(ctx, "/ws"); len(ws) != 1 || ws[0].ID != "rule_2" {
		t.Errorf("Rules(/ws) after remove = %+v", ws)
	}
	rows, err := s.QueryAudit(ctx, AuditFilter{ToolCallID: "c4"})
	if err != nil || len(rows) != 1 || rows[0].RuleID != "rule_1" {
		t.Errorf("audit row = %+v, %v; want ruleId rule_1", rows, err)
	}
}
