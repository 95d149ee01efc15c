package perms

import (
	"strings"
	"testing"
)

// TestOperatingModeMatrix pins design section 10 row by row in every
// permission mode of section 6: one line per (class, operating mode,
// permission mode), read as the table is.
func TestOperatingModeMatrix(t *testing.T) {
	type row struct {
		class Class
		risk  string
		tool  string
	}
	rows := map[string]row{
		"read":        {ClassRead, RiskLow, "Read"}, // Read, Glob, Grep, BrowserPreview
		"edit":        {ClassEdit, RiskHigh, "Write"},
		"exec":        {ClassExec, RiskHigh, "Bash"},
		"plugin":      {ClassPlugin, RiskMedium, "plugin_p_x"},
		"plugin-low":  {ClassPlugin, RiskLow, "plugin_p_y"},
		"plugin-high": {ClassPlugin, RiskHigh, "plugin_p_z"},
		"control":     {ClassControl, RiskLow, "asktool"},
	}
	// want[row][opMode] = outcomes under ask, accept-edits, auto.
	want := map[string]map[string][3]string{
		"read":        {OpAgent: {"allow", "allow", "allow"}, OpPlan: {"allow", "allow", "allow"}, OpGoal: {"allow", "allow", "allow"}},
		"edit":        {OpAgent: {"ask", "allow", "allow"}, OpPlan: {"deny:TOOL_DENIED", "deny:TOOL_DENIED", "deny:TOOL_DENIED"}, OpGoal: {"deny:TOOL_DENIED", "deny:TOOL_DENIED", "deny:TOOL_DENIED"}},
		"exec":        {OpAgent: {"ask", "ask", "allow"}, OpPlan: {"ask", "ask", "allow"}, OpGoal: {"ask", "ask", "allow"}},
		"plugin":      {OpAgent: {"ask", "ask", "allow"}, OpPlan: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}, OpGoal: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}},
		"plugin-low":  {OpAgent: {"allow", "allow", "allow"}, OpPlan: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}, OpGoal: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}},
		"plugin-high": {OpAgent: {"ask", "ask", "allow"}, OpPlan: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}, OpGoal: {"deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN", "deny:PLUGIN_DISABLED_IN_PLAN"}},
		"control":     {OpAgent: {"allow", "allow", "allow"}, OpPlan: {"allow", "allow", "allow"}, OpGoal: {"allow", "allow", "allow"}},
	}
	permModes := [3]string{ModeAsk, ModeAcceptEdits, ModeAuto}
	for name, r := range rows {
		for _, op := range []string{OpAgent, OpPlan, OpGoal} {
			for i, pm := range permModes {
				for _, granted := range []bool{false, true} {
					v := Decide(Request{Tool: r.tool, Class: r.class, Risk: r.risk, OpMode: op, PermMode: pm, Granted: granted})
					got := v.Outcome.String()
					if v.Outcome == Deny {
						got += ":" + v.Code
					}
					w := want[name][op][i]
					if granted && w == "ask" {
						w = "allow" // an allow-session grant answers the card
					}
					if got != w {
						t.Errorf("%s in %s/%s (granted=%v): %s, want %s", name, op, pm, granted, got, w)
					}
					if v.Outcome == Deny && (v.Message == "" || !strings.Contains(v.Message, op)) {
						t.Errorf("%s in %s/%s: denial %q does not name the mode", name, op, pm, v.Message)
					}
				}
			}
		}
	}
	// The scratch shortcut never reopens Write/Edit in a contract mode.
	for _, op := range []string{OpPlan, OpGoal} {
		if v := Decide(Request{Tool: "Write", Class: ClassEdit, Risk: RiskHigh, OpMode: op, PermMode: ModeAuto, Scratch: true}); v.Outcome != Deny {
			t.Errorf("scratch Write in %s: %v", op, v.Outcome)
		}
	}
}
