package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/perms/redact"
)

// delegateTools are the only tools a subagent definition may grant (design
// section 10.2).
var delegateTools = []string{"Read", "Glob", "Grep", "BrowserPreview", "Bash", "Edit", "Write"}

// checkMode applies the operating-mode matrix (design section 10) before
// anything else: no card, no argument check, in every permission mode.
func (s *Server) checkMode(c *call) *ToolResult {
	t, mode := c.tool, c.sess.Mode
	if mode != perms.OpAgent {
		v := perms.Decide(perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: mode, PermMode: perms.ModeAuto})
		if v.Outcome == perms.Deny {
			return failResult(v.Code, "%s", v.Message)
		}
	}
	if !t.AvailableIn(mode) {
		switch t.Name {
		case "EnterPlanMode", "EnterGoalMode":
			return failResult(tools.CodeWrongMode, "%s is only available in agent mode; the session is in %s mode", t.Name, mode)
		case "SubmitPlan", "SubmitGoal":
			if mode == perms.OpAgent {
				return failResult(tools.CodeWrongMode, "%s is only available in its own mode; the session is in agent mode", t.Name)
			}
		}
		return failResult(tools.CodeToolDenied, "%s is not available in %s mode", t.Name, mode)
	}
	if c.p.BatchSize != nil && *c.p.BatchSize < 1 {
		return failResult(tools.CodeInvalidArgument, "batchSize must be at least 1 (the calls in this call's assistant batch); it is %d", *c.p.BatchSize)
	}
	if t.AloneInBatch && c.p.BatchSize != nil && *c.p.BatchSize != 1 {
		return failResult(tools.CodeNotAlone, "%s must be the only tool call in its assistant batch (batchSize is %d)", t.Name, *c.p.BatchSize)
	}
	return nil
}

// checkDelegate judges a delegate's call by its definition's rights, never
// the session's.
func (s *Server) checkDelegate(ctx context.Context, c *call) *ToolResult {
	if c.p.Delegate == "" {
		return nil
	}
	// Plan and Goal are contract negotiations: a delegate with Bash, Edit or
	// Write would drive straight through them (design section 10.2). The
	// matrix already refuses Edit and Write there; a delegate's Bash is
	// refused too, while its reads stay allowed.
	if c.sess.Mode != perms.OpAgent && c.tool.Class == perms.ClassExec {
		return failResult(tools.CodeToolDenied, "delegate %q cannot run %s in %s mode: delegates only read during a contract negotiation", c.p.Delegate, c.tool.Name, c.sess.Mode)
	}
	var defs []tools.Subagent
	json.Unmarshal([]byte(c.sess.Subagents), &defs)
	for _, d := range defs {
		if d.Name != c.p.Delegate {
			continue
		}
		for _, t := range d.Tools {
			if t == c.tool.Name {
				return nil
			}
		}
		return failResult(tools.CodeToolDenied, "delegate %q may not call %s: its definition grants %v", d.Name, c.tool.Name, d.Tools)
	}
	return failResult(tools.CodeToolDenied, "unknown delegate %q: the session has no such subagent definition", c.p.Delegate)
}

// Bounds of session.configure {subagents}: each dropped tool name gives a
// warning naming its subagent, so without them a line of a megabyte
// asked for gigabytes of warnings.
const (
	maxSubagents     = 64
	maxSubagentName  = 128
	maxSubagentTools = 64
)

// isEmptyArray reports JSON text that is [] (blanks allowed).
func isEmptyArray(raw json.RawMessage) bool {
	var v []json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil && len(v) == 0
}

// parseSubagents validates definitions: tools drawn only from the seven;
// none declared means Read, Glob, Grep; "*" means all seven; unknown names
// are dropped with a warning.
func parseSubagents(raw json.RawMessage) ([]tools.Subagent, []string, error) {
	var in []struct {
		Name  string          `json:"name"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, nil, invalidParams("invalid params: subagents must be an array of {name, tools?}")
	}
	if len(in) > maxSubagents {
		return nil, nil, invalidParams("invalid params: %d subagents; at most %d", len(in), maxSubagents)
	}
	allowed := map[string]bool{}
	for _, t := range delegateTools {
		allowed[t] = true
	}
	seen := map[string]bool{}
	out := []tools.Subagent{}
	warnings := []string{}
	for i, d := range in {
		if d.Name == "" {
			return nil, nil, invalidParams("invalid params: subagents[%d].name is required", i)
		}
		if len(d.Name) > maxSubagentName {
			return nil, nil, invalidParams("invalid params: subagents[%d].name is longer than %d bytes", i, maxSubagentName)
		}
		if strings.IndexFunc(d.Name, unreadable) >= 0 {
			// The name is on every card its delegate asks with.
			return nil, nil, invalidParams("invalid params: subagents[%d].name holds a control or invisible character", i)
		}
		if seen[d.Name] {
			return nil, nil, invalidParams("invalid params: subagent %q is defined twice", d.Name)
		}
		seen[d.Name] = true
		def := tools.Subagent{Name: d.Name}
		switch {
		case len(d.Tools) == 0 || string(d.Tools) == "null" || isEmptyArray(d.Tools):
			// An empty list declares none too (design section 10.2).
			def.Tools = []string{"Read", "Glob", "Grep"}
		case string(d.Tools) == `"*"`:
			def.Tools = append([]string(nil), delegateTools...)
		default:
			var names []string
			if err := json.Unmarshal(d.Tools, &names); err != nil {
				return nil, nil, invalidParams(`invalid params: subagents[%d].tools must be an array of tool names or "*"`, i)
			}
			if len(names) > maxSubagentTools {
				return nil, nil, invalidParams("invalid params: subagents[%d].tools has %d names; at most %d", i, len(names), maxSubagentTools)
			}
			def.Tools = []string{}
			dropped := map[string]bool{}
			for _, n := range names {
				switch {
				case allowed[n]:
					if !slices.Contains(def.Tools, n) {
						def.Tools = append(def.Tools, n)
					}
				case !dropped[n]:
					dropped[n] = true
					warnings = append(warnings, fmt.Sprintf("subagent %q: tool %q cannot be assigned to a delegate and was dropped", d.Name, redact.Bound(n, 128)))
				}
			}
		}
		out = append(out, def)
	}
	return out, warnings, nil
}
