package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/store"
	"io/fs"
	"time"
)

// The mode tools: EnterPlanMode and EnterGoalMode move a session from
// agent mode into a contract mode, SubmitPlan and SubmitGoal ask the user
// to approve its result (approval.resolve returns it to agent mode). They
// are the session's own state machine, so they live here beside the
// session methods; they are typed tools of the one registry all the same.

// modeTools are the mode tools of design section 10.1. Their Modes are the
// tools.list half of the design section 10 matrix; checkMode enforces the
// same fields on every call.
func (s *Server) modeTools() []*tools.Def {
	agentOnly := []string{perms.OpAgent}
	enter := func(name, desc, to string) *tools.Def {
		return tools.Tool[struct{}, modeDetails]{
			Spec: tools.Spec{Name: name, Class: perms.ClassControl, Risk: perms.RiskLow, Description: desc,
				Modes: agentOnly, NeedsWorkspace: true, AloneInBatch: true},
			Precheck: func(ctx context.Context, tc *tools.Call, _ struct{}) error { return callOf(tc).enterPrecheck() },
			Run: func(ctx context.Context, tc *tools.Call, _ struct{}) (tools.Out[modeDetails], error) {
				return callOf(tc).enterMode(ctx, to)
			},
		}.Def()
	}
	submit := func(name, desc, kind string) *tools.Def {
		return tools.Tool[submitArgs, submitDetails]{
			Spec: tools.Spec{Name: name, Class: perms.ClassControl, Risk: perms.RiskLow, Description: desc,
				Modes: []string{kind}, NeedsWorkspace: true, AloneInBatch: true},
			Precheck: func(ctx context.Context, tc *tools.Call, _ submitArgs) error {
				return callOf(tc).submitModeCheck(ctx, kind)
			},
			Run: func(ctx context.Context, tc *tools.Call, a submitArgs) (tools.Out[submitDetails], error) {
				return callOf(tc).submit(ctx, kind, a)
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

// modeDetails are the details of EnterPlanMode and EnterGoalMode.
type modeDetails struct {
	Mode         string `json:"mode"`
	PreviousMode string `json:"previousMode"`
}

// submitArgs are the arguments of SubmitPlan and SubmitGoal.
type submitArgs struct {
	Markdown string `json:"markdown"`
}

// submitDetails are the details of SubmitPlan and SubmitGoal.
type submitDetails struct {
	ApprovalID   string `json:"approvalId"`
	Kind         string `json:"kind"`
	ArtifactPath string `json:"artifactPath"`
	AbsPath      string `json:"absPath"`
	Bytes        int    `json:"bytes"`
	Sha256       string `json:"sha256"`
	Warning      string `json:"warning,omitempty"`
}

// runEnterMode moves the session from agent to the given contract mode.
// checkMode has already required agent mode and batchSize 1; here the mode
// is changed by compare-and-set, so two racing transitions cannot both win,
// and only when no other call of the session is in flight (the active-turn
// boundary of design section 10.1): a Write already past the mode check
// must not land after the session entered Plan.
func (c *call) enterMode(ctx context.Context, to string) (tools.Out[modeDetails], error) {
	var none tools.Out[modeDetails]
	if n := c.othersRunning(); n > 0 {
		return none, tools.Fail(tools.CodeNotAlone, "%s must run alone: %d other tool call(s) of this session are still running", c.tool.Name, n)
	}
	// Calls on later lines that Plan and Goal refuse and that are past
	// their mode check finish first; the others are checked after.
	// A delegate's Bash can take minutes: the wait ends with a cancel.
	if !lockCtx(ctx, c.rt.modeGate.TryLock, c.rt.modeGate.Lock, c.rt.modeGate.Unlock) {
		return none, tools.Fail(tools.CodeToolAborted, "%s was cancelled while later calls finished; the mode was not changed", c.tool.Name)
	}
	err := c.s.store.SwapMode(context.WithoutCancel(ctx), c.sess.ID, perms.OpAgent, to)
	c.rt.modeGate.Unlock()
	switch {
	case errors.Is(err, store.ErrStale):
		return none, tools.Fail(tools.CodeWrongMode, "%s is only available in agent mode; the session is no longer in agent mode", c.tool.Name)
	case err != nil:
		return none, tools.Fail(tools.CodeToolFailed, "cannot change the session mode: %v", err)
	}
	submit := "SubmitPlan"
	if to == perms.OpGoal {
		submit = "SubmitGoal"
	}
	return tools.Out[modeDetails]{
		Text: fmt.Sprintf("The session is now in %s mode. Read, Glob, Grep, BrowserPreview and Bash remain available; "+
			"Write, Edit and plugin tools are not. When ready, call %s with the complete Markdown; the user's approval returns the session to agent mode.", to, submit),
		Details: modeDetails{Mode: to, PreviousMode: perms.OpAgent},
	}, nil
}

// The prechecks below refuse a control call before its id is reserved, so
// the same call can be sent again once what stopped it has changed (an ask
// answered, a plan approved). The bodies check again where a race could
// change the answer.

func (c *call) enterPrecheck() error {
	if n := c.othersRunning(); n > 0 {
		return tools.Fail(tools.CodeNotAlone, "%s must run alone: %d other tool call(s) of this session are still running", c.tool.Name, n)
	}
	return nil
}

// submitModeCheck reads the mode again: an approval resolved since the call
// arrived may have ended the contract mode.
func (c *call) submitModeCheck(ctx context.Context, kind string) error {
	if cur, err := c.s.store.GetSession(ctx, c.sess.ID); err != nil {
		return tools.Fail(tools.CodeToolFailed, "cannot read the session: %v", err)
	} else if cur.Mode != kind {
		return tools.Fail(tools.CodeWrongMode, "%s is only available in %s mode; the session is in %s mode", c.tool.Name, kind, cur.Mode)
	}
	return nil
}

// othersRunning counts the session's calls in flight that arrived before
// this one. Calls on later lines are registered as soon as they are read,
// but they are not counted: each checks the session's mode again right
// before its body (decideAndRun), so one that starts after the switch is
// judged in the new mode, and "EnterPlanMode, then a Read" in one write
// works.
func (c *call) othersRunning() int {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	n := 0
	for id, r := range c.rt.running {
		if id != c.p.ToolCallID && (c.entry == nil || r.seq < c.entry.seq) {
			n++
		}
	}
	return n
}

// submitAttempts bounds the retries when a fresh artifact name is taken.
const submitAttempts = 8

// runSubmit stores the exact Markdown bytes in a new artifact and opens one
// pending approval (design section 10.1). The artifact is created with
// O_EXCL through the workspace's os.Root, so it never overwrites anything
// and cannot be redirected out of the workspace by a planted symlink.
func (c *call) submit(ctx context.Context, kind string, a submitArgs) (tools.Out[submitDetails], error) {
	var none tools.Out[submitDetails]
	if err := c.submitModeCheck(ctx, kind); err != nil {
		return none, err
	}
	data := []byte(a.Markdown)
	var res sandbox.Resolved
	var warning string // saved, but not synced
	for attempt := 0; ; attempt++ {
		rel := ".pi/" + kind + "/" + artifactName(time.Now())
		var err error
		res, err = sandbox.Roots{Workspace: c.sess.WorkspaceRoot}.Resolve(rel)
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
		ID: c.sess.ID + ":" + c.p.ToolCallID, SessionID: c.sess.ID, Kind: kind,
		ArtifactPath: res.Display, State: "pending", CreatedAt: store.Now(),
	}
	if err := c.s.store.InsertApproval(context.WithoutCancel(ctx), ap); err != nil {
		sandbox.Remove(res)
		return none, tools.Fail(tools.CodeToolFailed, "cannot record the approval request: %v", err)
	}
	c.s.client.Notify(context.WithoutCancel(ctx), "approval.requested", map[string]string{
		"sessionId": c.sess.ID, "approvalId": ap.ID, "kind": kind, "artifactPath": ap.ArtifactPath,
	})
	sum := sha256.Sum256(data)
	// The result names the artifact as a file tool's names its path.
	c.tc.Target, c.tc.HasTarget = res, true
	return tools.Out[submitDetails]{
		Text: fmt.Sprintf("Saved the %s to %s (%d bytes) and asked the user to approve it. "+
			"Stop here and wait for the user's decision; approval returns the session to agent mode.", kind, res.Display, len(data)) + tools.NotDurable(warning),
		Details: submitDetails{ApprovalID: ap.ID, Kind: kind, ArtifactPath: res.Display, AbsPath: res.Abs,
			Bytes: len(data), Sha256: hex.EncodeToString(sum[:]), Warning: warning},
	}, nil
}

// artifactName is a new file name that sorts by creation time.
func artifactName(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]) + ".md"
}
