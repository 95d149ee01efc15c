package perms

import "fmt"

// Permission modes (design section 6).
const (
	ModeInherit     = "inherit"
	ModeAsk         = "ask"
	ModeAcceptEdits = "accept-edits"
	ModeAuto        = "auto"
)

// Operating modes (design section 10).
const (
	OpAgent = "agent"
	OpPlan  = "plan"
	OpGoal  = "goal"
)

// Risk levels.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// Class says what kind of capability a tool is; the policy is written in
// classes, not names, so a new tool only has to pick one.
type Class int

const (
	ClassRead    Class = iota // Read, Glob, Grep, BrowserPreview: low, auto-allow in the roots
	ClassEdit                 // Write, Edit: high, confirmed under ask
	ClassExec                 // Bash: high, confirmed under ask and accept-edits
	ClassPlugin               // plugin tools: registered risk, Agent mode only
	ClassControl              // new_context, asktool, ToolSearch, Task, mode tools: no card
)

// ValidMode reports whether m is a stored permission mode.
func ValidMode(m string) bool {
	switch m {
	case ModeInherit, ModeAsk, ModeAcceptEdits, ModeAuto:
		return true
	}
	return false
}

// Effective resolves the permission mode: the session's own unless it is
// inherit, then the global default, then ask (design section 6).
func Effective(session, global string) string {
	if session != "" && session != ModeInherit && ValidMode(session) {
		return session
	}
	if global != "" && global != ModeInherit && ValidMode(global) {
		return global
	}
	return ModeAsk
}

// Outcome of a policy evaluation.
type Outcome int

const (
	Allow Outcome = iota
	Ask
	Deny
)

func (o Outcome) String() string {
	return [...]string{"allow", "ask", "deny"}[o]
}

// Request is everything the policy looks at for one call.
type Request struct {
	Tool     string // tool name as called
	Class    Class
	Risk     string // the tool's risk (plugins: registered, default medium)
	OpMode   string // agent | plan | goal
	PermMode string // effective: ask | accept-edits | auto
	// Outside is set when an explicit path argument resolves outside the
	// session's workspace and scratch roots (design section 4a).
	Outside bool
	// Scratch is set when a Write/Edit path is lexically inside the
	// session's scratch root: no card in any mode (design section 4b).
	Scratch bool
	// Granted is set when the session holds an allow-session grant for the
	// key this request would be asked under (see GrantKey).
	Granted bool
	// Remembered is set when a remembered rule of the workspace (an
	// allow-always answer, perms/rules) covers the call. It lifts only a
	// card the tool itself would get: never a mode's deny, nor an
	// outside-path card.
	Remembered bool
}

// Verdict is the policy's answer.
type Verdict struct {
	Outcome Outcome
	// Reason is the card's reason when Outcome is Ask: "tool" or "outside-path".
	Reason string
	// Code is the error code when Outcome is Deny by the mode matrix.
	Code    string
	Message string
}

// Error codes the policy can produce.
const (
	CodeDenied        = "TOOL_DENIED"
	CodePluginInPlan  = "PLUGIN_DISABLED_IN_PLAN"
	ReasonTool        = "tool"
	ReasonOutsidePath = "outside-path"
)

// Decide is the whole policy. The operating-mode matrix (design section 10)
// comes first and wins over every permission mode and grant; then the
// outside-path rule (section 4a); then the risk table (section 6).
func Decide(r Request) Verdict {
	if r.OpMode == OpPlan || r.OpMode == OpGoal {
		switch r.Class {
		case ClassEdit:
			return Verdict{Outcome: Deny, Code: CodeDenied, Message: fmt.Sprintf("%s is not available in %s mode: %s mode cannot modify files", r.Tool, r.OpMode, r.OpMode)}
		case ClassPlugin:
			return Verdict{Outcome: Deny, Code: CodePluginInPlan, Message: fmt.Sprintf("plugin tool %s is disabled in %s mode", r.Tool, r.OpMode)}
		}
	}
	if r.Outside {
		// Only auto allows an explicit outside path without a card; the
		// scratch shortcut never applies to a path outside the roots.
		if r.PermMode == ModeAuto {
			return Verdict{Outcome: Allow}
		}
		if r.Granted {
			return Verdict{Outcome: Allow}
		}
		return Verdict{Outcome: Ask, Reason: ReasonOutsidePath}
	}
	switch r.Class {
	case ClassRead, ClassControl:
		return Verdict{Outcome: Allow}
	case ClassEdit:
		if r.Scratch || r.PermMode == ModeAcceptEdits || r.PermMode == ModeAuto || r.Granted || r.Remembered {
			return Verdict{Outcome: Allow}
		}
		return Verdict{Outcome: Ask, Reason: ReasonTool}
	case ClassExec, ClassPlugin:
		if r.Class == ClassPlugin && r.Risk == RiskLow {
			return Verdict{Outcome: Allow}
		}
		if r.PermMode == ModeAuto || r.Granted || r.Remembered {
			return Verdict{Outcome: Allow}
		}
		return Verdict{Outcome: Ask, Reason: ReasonTool}
	}
	return Verdict{Outcome: Deny, Code: CodeDenied, Message: "unclassified tool " + r.Tool}
}

// GrantKey is what an allow-session answer is remembered under: the tool
// name, and for outside-path cards the tool name marked as outside, so that
// approving Write inside the workspace never silently approves writing
// outside it.
func GrantKey(tool, reason string) string {
	if reason == ReasonOutsidePath {
		return tool + "\x00outside"
	}
	return tool
}
