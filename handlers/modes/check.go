package modes

import (
	"encoding/json"

	"hostcore/handlers/tools"
	"hostcore/perms"
)

// Check applies the operating-mode matrix (design section 10) to a call
// of t in the session's mode, before anything else: no card, no argument
// check, in every permission mode. batchSize is the call's, if it gave
// one.
func Check(t *tools.Def, mode string, batchSize *int) *tools.Failure {
	if mode != perms.OpAgent {
		v := perms.Decide(perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: mode, PermMode: perms.ModeAuto})
		if v.Outcome == perms.Deny {
			return tools.Fail(v.Code, "%s", v.Message)
		}
	}
	if !t.AvailableIn(mode) {
		switch t.Name {
		case "EnterPlanMode", "EnterGoalMode":
			return tools.Fail(tools.CodeWrongMode, "%s is only available in agent mode; the session is in %s mode", t.Name, mode)
		case "SubmitPlan", "SubmitGoal":
			if mode == perms.OpAgent {
				return tools.Fail(tools.CodeWrongMode, "%s is only available in its own mode; the session is in agent mode", t.Name)
			}
		}
		return tools.Fail(tools.CodeToolDenied, "%s is not available in %s mode", t.Name, mode)
	}
	if batchSize != nil && *batchSize < 1 {
		return tools.Fail(tools.CodeInvalidArgument, "batchSize must be at least 1 (the calls in this call's assistant batch); it is %d", *batchSize)
	}
	if t.AloneInBatch && batchSize != nil && *batchSize != 1 {
		return tools.Fail(tools.CodeNotAlone, "%s must be the only tool call in its assistant batch (batchSize is %d)", t.Name, *batchSize)
	}
	return nil
}

// CheckDelegate judges a delegate's call of t by its definition's rights
// (subagents, the session's definitions as JSON), never the session's.
// delegate "" is the agent itself.
func CheckDelegate(t *tools.Def, mode, delegate, subagents string) *tools.Failure {
	if delegate == "" {
		return nil
	}
	// Plan and Goal are contract negotiations: a delegate with Bash, Edit or
	// Write would drive straight through them (design section 10.2). The
	// matrix already refuses Edit and Write there; a delegate's Bash is
	// refused too, while its reads stay allowed.
	if mode != perms.OpAgent && t.Class == perms.ClassExec {
		return tools.Fail(tools.CodeToolDenied, "delegate %q cannot run %s in %s mode: delegates only read during a contract negotiation", delegate, t.Name, mode)
	}
	var defs []tools.Subagent
	json.Unmarshal([]byte(subagents), &defs)
	for _, d := range defs {
		if d.Name != delegate {
			continue
		}
		for _, name := range d.Tools {
			if name == t.Name {
				return nil
			}
		}
		return tools.Fail(tools.CodeToolDenied, "delegate %q may not call %s: its definition grants %v", d.Name, t.Name, d.Tools)
	}
	return tools.Fail(tools.CodeToolDenied, "unknown delegate %q: the session has no such subagent definition", delegate)
}
