package modes

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/store"
)

// Store is what the mode tools keep in the database.
type Store interface {
	GetSession(ctx context.Context, id string) (store.Session, error)
	SwapMode(ctx context.Context, id, from, to string) error
	InsertApproval(ctx context.Context, a store.Approval) error
}

// Envelope is what a mode tool needs of the call that runs it, beyond
// its tools.Call: the session's other calls in flight, and the session's
// mode gate.
type Envelope interface {
	// EarlierRunning counts the session's calls in flight that were read
	// before this one.
	EarlierRunning() int
	// LockModeGate takes the session's mode gate for writing, or gives up
	// when ctx ends (ok false). The gate makes a switch into Plan or Goal
	// and the calls those modes refuse one after the other: such a call
	// holds it for reading from its last mode check to the end of its
	// body.
	LockModeGate(ctx context.Context) (unlock func(), ok bool)
}

// Tools are the mode tools of design section 10.1: EnterPlanMode and
// EnterGoalMode move a session from agent mode into a contract mode,
// SubmitPlan and SubmitGoal ask the user to approve its result
// (approval.resolve returns it to agent mode). Their Modes are the
// tools.list half of the design section 10 matrix; Check enforces the
// same fields on every call. env gives the envelope's side of a call.
func Tools(st Store, env func(*tools.Call) Envelope) []*tools.Def {
	m := modeTools{st: st, env: env}
	agentOnly := []string{perms.OpAgent}
	enter := func(name, desc, to string) *tools.Def {
		return tools.Tool[struct{}, Details]{
			Spec: tools.Spec{Name: name, Class: perms.ClassControl, Risk: perms.RiskLow, Description: desc,
				Modes: agentOnly, NeedsWorkspace: true, AloneInBatch: true},
			Precheck: func(ctx context.Context, tc *tools.Call, _ struct{}) error { return m.enterPrecheck(tc) },
			Run: func(ctx context.Context, tc *tools.Call, _ struct{}) (tools.Out[Details], error) {
				return m.enter(ctx, tc, to)
			},
		}.Def()
	}
	submit := func(name, desc, kind string) *tools.Def {
		return tools.Tool[SubmitArgs, SubmitDetails]{
			Spec: tools.Spec{Name: name, Class: perms.ClassControl, Risk: perms.RiskLow, Description: desc,
				Modes: []string{kind}, NeedsWorkspace: true, AloneInBatch: true},
			Precheck: func(ctx context.Context, tc *tools.Call, _ SubmitArgs) error {
				return m.submitModeCheck(ctx, tc, kind)
			},
			Run: func(ctx context.Context, tc *tools.Call, a SubmitArgs) (tools.Out[SubmitDetails], error) {
				return m.submit(ctx, tc, kind, a)
			},
		}.Def()
	}
	return []*tools.Def{
		enter("EnterPlanMode", enterPlanDescription, perms.OpPlan),
		enter("EnterGoalMode", enterGoalDescription, perms.OpGoal),
		submit("SubmitPlan", submitPlanDescription, perms.OpPlan),
		submit("SubmitGoal", submitGoalDescription, perms.OpGoal),
	}
}

const (
	enterPlanDescription = "Switch this session from agent mode to plan mode to work out a plan before changing anything. " +
		"Must be the only tool call in its batch. In plan mode Write, Edit and plugin tools are unavailable; finish with SubmitPlan."
	enterGoalDescription = "Switch this session from agent mode to goal mode to agree a goal with the user before working on it. " +
		"Must be the only tool call in its batch. In goal mode Write, Edit and plugin tools are unavailable; finish with SubmitGoal."
	submitPlanDescription = "Submit the finished plan as Markdown for the user's approval. The exact text is saved to a new file under .pi/plan/ in the workspace. " +
		"Only in plan mode, and only as the sole tool call of its batch. Approval returns the session to agent mode."
	submitGoalDescription = "Submit the agreed goal as Markdown for the user's approval. The exact text is saved to a new file under .pi/goal/ in the workspace. " +
		"Only in goal mode, and only as the sole tool call of its batch. Approval returns the session to agent mode."
)

// Details are the details of EnterPlanMode and EnterGoalMode.
type Details struct {
	Mode         string `json:"mode"`
	PreviousMode string `json:"previousMode"`
}

// SubmitArgs are the arguments of SubmitPlan and SubmitGoal.
type SubmitArgs struct {
	Markdown string `json:"markdown"`
}

// SubmitDetails are the details of SubmitPlan and SubmitGoal.
type SubmitDetails struct {
	ApprovalID   string `json:"approvalId"`
	Kind         string `json:"kind"`
	ArtifactPath string `json:"artifactPath"`
	AbsPath      string `json:"absPath"`
	Bytes        int    `json:"bytes"`
	Sha256       string `json:"sha256"`
	Warning      string `json:"warning,omitempty"`
}

// modeTools are the bodies of the mode tools.
type modeTools struct {
	st  Store
	env func(*tools.Call) Envelope
}

// enter moves the session from agent to the given contract mode. Check
// has already required agent mode and batchSize 1; here the mode is
// changed by compare-and-set, so two racing transitions cannot both win,
// and only when no other call of the session is in flight (the
// active-turn boundary of design section 10.1): a Write already past the
// mode check must not land after the session entered Plan.
func (m modeTools) enter(ctx context.Context, tc *tools.Call, to string) (tools.Out[Details], error) {
	var none tools.Out[Details]
	if err := m.enterPrecheck(tc); err != nil {
		return none, err
	}
	// Calls on later lines that Plan and Goal refuse and that are past
	// their mode check finish first; the others are checked after.
	// A delegate's Bash can take minutes: the wait ends with a cancel.
	unlock, ok := m.env(tc).LockModeGate(ctx)
	if !ok {
		return none, tools.Fail(tools.CodeToolAborted, "%s was cancelled while later calls finished; the mode was not changed", tc.Name)
	}
	err := m.st.SwapMode(context.WithoutCancel(ctx), tc.SessionID, perms.OpAgent, to)
	unlock()
	switch {
	case errors.Is(err, store.ErrStale):
		return none, tools.Fail(tools.CodeWrongMode, "%s is only available in agent mode; the session is no longer in agent mode", tc.Name)
	case err != nil:
		return none, tools.Fail(tools.CodeToolFailed, "cannot change the session mode: %v", err)
	}
	submit := "SubmitPlan"
	if to == perms.OpGoal {
		submit = "SubmitGoal"
	}
	return tools.Out[Details]{
		Text: fmt.Sprintf("The session is now in %s mode. Read, Glob, Grep, BrowserPreview and Bash remain available; "+
			"Write, Edit and plugin tools are not. When ready, call %s with the complete Markdown; the user's approval returns the session to agent mode.", to, submit),
		Details: Details{Mode: to, PreviousMode: perms.OpAgent},
	}, nil
}

// The prechecks below refuse a mode tool's call before its id is
// reserved, so the same call can be sent again once what stopped it has
// changed (an ask answered, a plan approved). The bodies check again
// where a race could change the answer.

// enterPrecheck refuses to switch while an earlier call of the session is
// in flight. Calls on later lines are not counted: each checks the
// session's mode again right before its body, so one that starts after
// the switch is judged in the new mode, and "EnterPlanMode, then a Read"
// in one write works.
func (m modeTools) enterPrecheck(tc *tools.Call) error {
	if n := m.env(tc).EarlierRunning(); n > 0 {
		return tools.Fail(tools.CodeNotAlone, "%s must run alone: %d other tool call(s) of this session are still running", tc.Name, n)
	}
	return nil
}

// submitModeCheck reads the mode again: an approval resolved since the call
// arrived may have ended the contract mode.
func (m modeTools) submitModeCheck(ctx context.Context, tc *tools.Call, kind string) error {
	if cur, err := m.st.GetSession(ctx, tc.SessionID); err != nil {
		return tools.Fail(tools.CodeToolFailed, "cannot read the session: %v", err)
	} else if cur.Mode != kind {
		return tools.Fail(tools.CodeWrongMode, "%s is only available in %s mode; the session is in %s mode", tc.Name, kind, cur.Mode)
	}
	return nil
}

// submitAttempts bounds the retries when a fresh artifact name is taken.
const submitAttempts = 8

// submit stores the exact Markdown bytes in a new artifact and opens one
// pending approval (design section 10.1). The artifact is created with
// O_EXCL through the workspace's os.Root, so it never overwrites anything
// and cannot be redirected out of the workspace by a planted symlink.
func (m modeTools) submit(ctx context.Context, tc *tools.Call, kind string, a SubmitArgs) (tools.Out[SubmitDetails], error) {
	var none tools.Out[SubmitDetails]
	if err := m.submitModeCheck(ctx, tc, kind); err != nil {
		return none, err
	}
	data := []byte(a.Markdown)
	var res sandbox.Resolved
	var warning string // saved, but not synced
	for attempt := 0; ; attempt++ {
		rel := ".pi/" + kind + "/" + artifactName(time.Now())
		var err error
		res, err = sandbox.Roots{Workspace: tc.Workspace}.Resolve(rel)
		if err != nil {
			return none, tools.Fail(tools.CodeToolFailed, "cannot resolve %s: %v", rel, err)
		}
		if res.Root != sandbox.RootWorkspace {
			return none, tools.PolicyDenied(".pi/%s leads outside the workspace (a symlink?); the %s was not saved", kind, kind)
		}
		warning, err = sandbox.Durable(sandbox.CreateExclusive(res, data))
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrExist) && attempt+1 < submitAttempts {
			continue
		}
		if errors.Is(err, sandbox.ErrChanged) {
			return none, tools.Fail(tools.CodeToolDenied, "the workspace changed while the %s was saved; it was not saved: %v", kind, err)
		}
		return none, tools.Fail(tools.CodeToolFailed, "cannot save the %s: %v", kind, err)
	}
	// One tool call opens at most one approval, and tool-call ids are
	// unique within a session, so the id is derived from both: unique,
	// and reproducible for the client that made the call.
	ap := store.Approval{
		ID: tc.SessionID + ":" + tc.ToolCallID, SessionID: tc.SessionID, Kind: kind,
		ArtifactPath: res.Display, State: "pending", CreatedAt: store.Now(),
	}
	if err := m.st.InsertApproval(context.WithoutCancel(ctx), ap); err != nil {
		sandbox.Remove(res)
		return none, tools.Fail(tools.CodeToolFailed, "cannot record the approval request: %v", err)
	}
	tc.Host.Notify(context.WithoutCancel(ctx), "approval.requested", map[string]string{
		"sessionId": tc.SessionID, "approvalId": ap.ID, "kind": kind, "artifactPath": ap.ArtifactPath,
	})
	sum := sha256.Sum256(data)
	// The result names the artifact as a file tool's names its path.
	tc.Target, tc.HasTarget = res, true
	return tools.Out[SubmitDetails]{
		Text: fmt.Sprintf("Saved the %s to %s (%d bytes) and asked the user to approve it. "+
			"Stop here and wait for the user's decision; approval returns the session to agent mode.", kind, res.Display, len(data)) + tools.NotDurable(warning),
		Details: SubmitDetails{ApprovalID: ap.ID, Kind: kind, ArtifactPath: res.Display, AbsPath: res.Abs,
			Bytes: len(data), Sha256: hex.EncodeToString(sum[:]), Warning: warning},
	}, nil
}

// artifactName is a new file name that sorts by creation time.
func artifactName(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]) + ".md"
}
