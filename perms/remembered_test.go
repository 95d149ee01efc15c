package perms

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRememberedLiftsOnlyTheToolCard: a remembered rule answers the card
// a tool itself would get, and nothing else: the operating mode's denies
// and an outside-path card stand in every permission mode.
func TestRememberedLiftsOnlyTheToolCard(t *testing.T) {
	t.Parallel()
	for _, pm := range []string{ModeAsk, ModeAcceptEdits} {
		for _, c := range []struct {
			class Class
			tool  string
		}{{ClassEdit, "Write"}, {ClassExec, "Bash"}, {ClassPlugin, "plugin_p_x"}} {
			base := Request{Tool: c.tool, Class: c.class, Risk: RiskHigh, OpMode: OpAgent, PermMode: pm, Remembered: true}
			if v := Decide(base); v.Outcome != Allow {
				t.Errorf("%s under %s with a rule: %v, want allow", c.tool, pm, v.Outcome)
			}
			out := base
			out.Outside = true
			if v := Decide(out); v.Outcome != Ask || v.Reason != ReasonOutsidePath {
				t.Errorf("%s outside under %s with a rule: %v %q, want an outside-path card", c.tool, pm, v.Outcome, v.Reason)
			}
			for _, op := range []string{OpPlan, OpGoal} {
				in := base
				in.OpMode = op
				if v := Decide(in); c.class != ClassExec && v.Outcome != Deny {
					t.Errorf("%s in %s under %s with a rule: %v, want deny", c.tool, op, pm, v.Outcome)
				}
			}
		}
	}
}

// TestWaitOptions: a reply counts only if the card offered it; the
// remembered answers are offered only where they apply.
func TestWaitOptions(t *testing.T) {
	t.Parallel()
	reply := func(d string) Asker {
		return AskerFunc(func(context.Context, time.Duration) (string, error) { return d, nil })
	}
	ctx := t.Context()
	if ans := Wait(ctx, reply(AllowAlways), time.Second); ans.Decision != DenyAnswer || !strings.Contains(ans.Why, "is not allow-once, allow-session or deny") {
		t.Errorf("allow-always on a card that did not offer it: %+v, want a deny saying so", ans)
	}
	opts := []string{AllowOnce, AllowSession, AllowAlways, AllowAlwaysCommand, DenyAnswer}
	for _, d := range opts {
		if ans := Wait(ctx, reply(d), time.Second, opts...); ans.Decision != d {
			t.Errorf("%s offered: %+v", d, ans)
		}
	}
	if ans := Wait(ctx, reply(AllowAlwaysCommand), time.Second, AllowOnce, AllowAlways, DenyAnswer); ans.Decision != DenyAnswer || ans.Allowed() ||
		!strings.Contains(ans.Why, "is not allow-once, allow-always or deny") {
		t.Errorf("allow-always-command not offered: %+v", ans)
	}
	if !(Answer{Decision: AllowAlwaysCommand}).Allowed() || !(Answer{Decision: AllowAlways}).Allowed() {
		t.Error("the remembered answers do not allow")
	}
}
