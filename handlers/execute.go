package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/perms/redact"
	"hostcore/sandbox"
	"hostcore/scratch"
	"hostcore/store"
)

// ExecuteParams is tools.execute's params (PROTOCOL section 4).
type ExecuteParams struct {
	SessionID  string          `json:"sessionId"`
	TurnID     string          `json:"turnId"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	PromptID   string          `json:"promptId"`
	MessageID  string          `json:"messageId"`
	BatchSize  *int            `json:"batchSize"`
	Delegate   string          `json:"delegate"`
	// Shell is the command shell id the client pinned for the turn (design
	// section 5: the request carries it apart from the tool name); optional,
	// Bash only. See README "Bash".
	Shell string `json:"shell"`
}

// call is one tools.execute in flight.
type call struct {
	s        *Server
	p        ExecuteParams
	sess     store.Session
	rt       *runtime
	tool     *tools.Def
	args     json.RawMessage
	roots    sandbox.Roots
	permMode string
	// recordCall: the call id is committed with the audit row, not
	// reserved ahead (reads). Not once the session is being deleted: its
	// ids are forgotten, and a late one must not outlive it.
	recordCall bool
	// reserveCall: the call id is committed right before the body runs
	// (calls with effects).
	reserveCall bool
	// entry is the call's registration in its session's running calls.
	entry *running
	// ran: the body started. Only then is a read's id "executed".
	ran bool
	// target is the resolved explicit path argument, when the tool has one.
	target    sandbox.Resolved
	hasTarget bool
	// canon is the canonical args (for the hash and the previews), once
	// validation has decoded them.
	canon []byte
	// decoded is the args as validation decoded them (numbers as
	// json.Number), once it has: a tool reads its arguments from it
	// rather than decoding the text again.
	decoded any
	// typed is the args decoded into the tool's argument struct, once
	// validation has accepted them; tc is the call as the tool sees it.
	typed any
	tc    *tools.Call
}

// canonicalArgs returns the canonical args, computing them if validation
// has not.
func (c *call) canonicalArgs() []byte {
	if c.canon == nil {
		c.canon = redact.Canonical(c.args)
	}
	return c.canon
}

// scratchDir is the session's scratch root, created on demand.
func (c *call) scratchDir() string { return scratch.Dir(c.s.cfg.DataDir, c.sess.ID) }

// ensureScratch creates the scratch dir lazily (design section 4b).
func (c *call) ensureScratch() error { return scratch.Ensure(c.scratchDir()) }

// maxIdentBytes bounds the identifiers of a tools.execute.
const maxIdentBytes = 512

// execute is tools.execute: the one path every tool call takes.
func (s *Server) execute(ctx context.Context, raw json.RawMessage, tk *ticket) (out any, err error) {
	defer s.releaseTicket(tk)
	start := time.Now()
	var p ExecuteParams
	if tk != nil && !tk.partial {
		p = tk.p
	} else if err := decode(raw, &p); err != nil {
		return nil, err
	}
	// The first four are required. Identifiers are stored in every audit
	// row and logged: a megabyte of toolName must not be. (An array, not a
	// map: this runs on every call, and the first bad field is named.)
	for i, f := range [...]struct{ name, v string }{{"sessionId", p.SessionID}, {"turnId", p.TurnID}, {"toolCallId", p.ToolCallID},
		{"toolName", p.ToolName}, {"promptId", p.PromptID}, {"messageId", p.MessageID}, {"delegate", p.Delegate}, {"shell", p.Shell}} {
		switch {
		case f.v == "" && i < 4:
			return nil, invalidParams("invalid params: %s is required", f.name)
		case len(f.v) > maxIdentBytes && i > 0:
			return nil, invalidParams("invalid params: %s is longer than %d bytes", f.name, maxIdentBytes)
		}
	}
	if p.PromptID == "" {
		p.PromptID = p.TurnID
	}
	if p.MessageID == "" {
		p.MessageID = p.ToolCallID
	}
	if len(p.Args) == 0 || string(p.Args) == "null" {
		p.Args = json.RawMessage("{}")
	}
	// The envelope's own bookkeeping is not cancelled with the call: a call
	// that arrives as shutdown begins still reaches its session and ends as
	// TOOL_ABORTED with its audit row, not as a storage error.
	bctx := context.WithoutCancel(ctx)
	if tk == nil {
		// A caller without a ticket (a test) takes it here, the same way.
		// Its release, deferred first and so run last, takes the id out of
		// the registry only once finish has committed it to the store.
		tk = s.takeTicket(raw)
		defer s.releaseTicket(tk)
	}
	if tk == nil {
		return nil, invalidParams("invalid params: sessionId and toolCallId are required")
	}
	s.lookUp(tk)
	switch {
	case tk.absent:
		return nil, appError(tools.CodeSessionNotFound, "session %q not found", p.SessionID)
	case tk.lookupErr != nil:
		return nil, storageError("looking up session", tk.lookupErr)
	}
	sess := tk.sess
	c := &call{s: s, p: p, sess: sess, args: p.Args}
	c.roots = sandbox.Roots{Workspace: sess.WorkspaceRoot, Scratch: c.scratchDir()}
	a := &auditing{start: start}
	// The call is registered so tools.cancel, turn.cancel, session.delete
	// and shutdown can end it, whether it is waiting on a card or running.
	// The registration is also the in-process half of "a call id never
	// runs twice": a second call with the id of one still running is
	// refused here, one that ran before is refused by the store below.
	// It was registered when its line was read (takeTicket).
	c.rt = s.runtime(p.SessionID)
	// The permission mode is the one in force when the line was read: a
	// settings.update or session.configure on a later line must not judge
	// an earlier call (it may not yet have started when they run).
	c.permMode = tk.permMode
	if c.permMode == "" {
		global, err := s.globalMode(bctx)
		if err != nil {
			return nil, storageError("reading settings", err)
		}
		c.permMode = perms.Effective(sess.PermissionMode, global)
	}
	if tk.dup {
		return s.finish(ctx, c, a, duplicate(p.ToolCallID))
	}
	c.entry = tk.entry
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if deleted := c.rt.start(tk.entry, cancel); deleted {
		tk.entry.stopped = true
		a.decision = decCancel // cancelled before anything was decided
		return s.finish(ctx, c, a, failResult(tools.CodeToolAborted, "session was deleted"))
	}

	// An id that ran before is refused before anything else. A call with
	// effects (or of a tool not known yet) commits its id once it is
	// allowed, right before its body runs (reserveCall), so that it never
	// runs twice, even across a crash; an id whose call never ran (denied,
	// or hostcore died while its card was open) may be sent again. A read
	// has no effect to repeat: its id is committed with its audit row, one
	// transaction instead of two on the hottest path. Should hostcore die
	// while it runs, the read was never answered and may simply run again.
	seen, err := s.store.ToolCallSeen(bctx, p.SessionID, p.ToolCallID)
	if err != nil {
		return nil, storageError("checking tool call id", err)
	}
	if seen {
		return s.finish(ctx, c, a, duplicate(p.ToolCallID))
	}
	if t := tk.tool; t != nil && t.Class == perms.ClassRead {
		c.recordCall = true
	} else {
		c.reserveCall = true
	}

	res := s.decideAndRun(cctx, c, a, tk)
	if !res.OK && cctx.Err() != nil && res.ErrorCode != tools.CodeToolTimeout && res.ErrorCode != tools.CodeToolAborted && res.Decision != decDeny {
		// A call cancelled at any step (a precheck's store read, the
		// body) failed because it was cancelled: it ends as aborted. A
		// card denied (withdrawn as hostcore stops) stays denied.
		res = aborted(cctx)
	}
	if res.ErrorCode == tools.CodeToolAborted && a.decision == decPolicy {
		// Aborted before anything was decided: no policy refused it (the
		// audit said policy-deny for calls piped in before an EOF).
		a.decision = decCancel
	}
	tk.entry.stopped = res.stopped || res.ErrorCode == tools.CodeToolAborted
	return s.finish(ctx, c, a, res)
}

// decideAndRun is the call from its tool's checks to its body's answer.
func (s *Server) decideAndRun(ctx context.Context, c *call, a *auditing, tk *ticket) *ToolResult {
	a.decision = decPolicy
	if r := s.checkCall(ctx, c, a, tk.tool); r != nil {
		return r
	}
	outside, r := s.decide(ctx, c, a)
	if r != nil {
		return r
	}
	return s.runAllowed(ctx, c, a, tk, outside)
}

// checkCall is everything that refuses a call before the permission
// decision, so that no card is shown for it: the mode matrix and the
// delegate's rights, the args against the tool's schema (decoded once,
// validated once, decoded once into the tool's struct), the workspace,
// the explicit path and the denylist, the envelope's policy checks and
// the tool's own precheck.
func (s *Server) checkCall(ctx context.Context, c *call, a *auditing, t *tools.Def) *ToolResult {
	p := c.p
	if t == nil {
		if c.sess.Mode != perms.OpAgent {
			return failResult(tools.CodeToolDenied, "unknown tool %s is not available in %s mode", p.ToolName, c.sess.Mode)
		}
		return failResult(tools.CodeUnknownTool, "unknown tool %q", p.ToolName)
	}
	c.tool = t
	if r := s.checkMode(c); r != nil {
		if c.plainlyOutside() {
			a.external = "denied"
		}
		return r
	}
	if r := s.checkDelegate(ctx, c); r != nil {
		return r
	}
	if len(c.args) == 0 || c.args[0] != '{' {
		return failResult(tools.CodeInvalidArgument, "args must be a JSON object")
	}
	if redact.TooManyValues(c.args) {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args hold more than %d JSON values", redact.MaxValues)
	}
	decoded, err := decodeAny(c.args)
	if err != nil {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args: %v", err)
	}
	if err := t.Validate(decoded); err != nil {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: %v", err)
	}
	c.canon = redact.CanonicalValue(decoded, c.args)
	c.decoded = decoded
	if c.typed, err = t.Decode(c.args); err != nil {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args: %s", tools.JSONErrorText(err))
	}
	if t.NeedsWorkspace && c.sess.WorkspaceRoot == "" {
		if c.plainlyOutside() {
			a.external = "denied"
		}
		return failResult(tools.CodeNoWorkspace, "%s needs a project: this session has no workspace", t.Name)
	}
	if t.Class == perms.ClassEdit || t.Class == perms.ClassExec {
		// Scratch is created lazily on the first Write/Edit/Bash (design
		// section 4b), before resolution, so a path into it resolves to the
		// directory that will be operated on.
		if err := c.ensureScratch(); err != nil {
			return failResult(tools.CodeToolFailed, "%v", err)
		}
	}
	if t.PathArg != "" {
		if r := c.resolveTarget(); r != nil {
			return r
		}
		if c.hasTarget && c.target.Root == sandbox.RootExternal {
			// The denylist holds for the file tools too, in every mode:
			// under auto an outside path needs no card, and Read of
			// ~/.ssh/id_rsa or a Write of ~/.ssh/authorized_keys went
			// where Bash may not.
			if r := c.sensitiveTarget(ctx); r != nil {
				a.external = "denied"
				return r
			}
		}
	}

	if check := policyChecks[t.Name]; check != nil && t.PluginID == "" {
		if r := check(ctx, c); r != nil {
			return r
		}
	}
	if err := t.Precheck(ctx, c.toolCall(), c.typed); err != nil {
		return resultOf(ctx, tools.Answer{}, err)
	}
	return nil
}

// decide asks perms: allow, deny, or ask with a card and wait for the
// answer. outside: the call's path lies outside the workspace and scratch.
func (s *Server) decide(ctx context.Context, c *call, a *auditing) (outside bool, r *ToolResult) {
	t := c.tool
	if c.unsandboxed() {
		return false, s.decideUnsandboxed(ctx, c, a) // sandbox.go
	}
	req := perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: c.sess.Mode, PermMode: c.permMode}
	if c.hasTarget && c.target.Root == sandbox.RootExternal {
		req.Outside = true
	}
	if t.Class == perms.ClassEdit && c.hasTarget && c.target.Root == sandbox.RootScratch && sandbox.NamedInside(c.roots.Scratch, c.roots.Workspace, c.rawPath()) {
		req.Scratch = true
	}
	reason := perms.ReasonTool
	if req.Outside {
		reason = perms.ReasonOutsidePath
	}
	req.Granted = c.granted(&s.grants, reason)
	v := perms.Decide(req)
	ruled := ""
	if v.Outcome == perms.Ask && v.Reason == perms.ReasonTool {
		ruled = s.remembered(ctx, c, a) // permrules.go
		req.Remembered = ruled != ""
		v = perms.Decide(req)
	}
	switch v.Outcome {
	case perms.Deny:
		if req.Outside {
			a.external = "denied"
		}
		return req.Outside, failResult(v.Code, "%s", v.Message)
	case perms.Allow:
		a.decision = decAuto
		if req.Granted && !(req.Outside && c.permMode == perms.ModeAuto) && needsCard(req) {
			a.decision = decSession
		}
		if req.Remembered {
			a.decision = ruled
		}
	case perms.Ask:
		ans := s.askPermission(ctx, c, v.Reason)
		// prompted is whether a card was shown (design section 9): one
		// that never reached the client (stdin had closed) was not.
		a.prompted, a.wait = !ans.Unseen, ans.Wait
		switch ans.Decision {
		case perms.AllowOnce:
			a.decision = decOnce
		case perms.AllowSession:
			a.decision = decSession
			c.grant(&s.grants, v.Reason)
		case perms.AllowAlways, perms.AllowAlwaysCommand:
			if r := s.remember(ctx, c, a, ans); r != nil { // permrules.go
				return req.Outside, r
			}
		default:
			if req.Outside {
				a.external = "denied"
			}
			return req.Outside, denied(ans, ctx)
		}
	}
	if req.Outside {
		a.external = "allowed"
	}
	return req.Outside, nil
}

// runAllowed runs an allowed call once what it waits for is settled: its
// turn among the session's mutations and a mutation slot, its path
// resolved again when a card was open, the session's mode, its id
// reserved. Then the body.
func (s *Server) runAllowed(ctx context.Context, c *call, a *auditing, tk *ticket, outside bool) *ToolResult {
	p, t := c.p, c.tool

	if tk != nil && tk.mutation {
		if err := tk.rt.mut.Wait(ctx, tk.n); err != nil {
			return aborted(ctx)
		}
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return aborted(ctx)
		}
	}
	if ctx.Err() != nil {
		return aborted(ctx)
	}
	// Approval cannot be raced: after every wait, right before the body,
	// resolve again and insist on the approved location (design section
	// 4); the file operations then pin its directory themselves.
	if a.prompted && c.hasTarget {
		again, err := c.roots.Recheck(c.target)
		if err != nil {
			if outside {
				a.external = "denied"
			}
			a.decision = decPolicy
			return failResult(tools.CodeToolDenied, "the path changed while the permission card was open (%v); the call was not executed", err)
		}
		c.target = again
	}
	// The session's mode may have changed while the call waited (an
	// EnterPlanMode that ran meanwhile): the call is judged in the mode it
	// will run in, and a call that mode would refuse holds the mode still
	// until its body has ended.
	if c.modeSensitive() {
		// Waits only while an EnterPlanMode waits for earlier holders (a
		// delegate's Bash can take minutes): a cancel ends the wait.
		if !lockCtx(ctx, c.rt.modeGate.TryRLock, c.rt.modeGate.RLock, c.rt.modeGate.RUnlock) {
			return aborted(ctx)
		}
		defer c.rt.modeGate.RUnlock()
		if ctx.Err() != nil {
			return aborted(ctx)
		}
	}
	// A plugin tool withdrawn or registered anew while its card was open
	// does not run: the person approved a tool the plugin no longer
	// offers as the card showed it (schema, risk). A call that asked no
	// one runs the tool its line named when read.
	if a.prompted && t.PluginID != "" && s.tools.Get(t.Name) != t {
		a.decision = decPolicy
		return failResult(tools.CodeToolDenied, "plugin tool %s was withdrawn or registered again while its card was open; it did not run", t.Name)
	}
	if now, err := s.store.GetSession(context.WithoutCancel(ctx), p.SessionID); err != nil {
		return failResult(tools.CodeToolFailed, "reading the session's mode failed (%v); the call was not run", err)
	} else if now.Mode != c.sess.Mode {
		c.sess.Mode = now.Mode
		if r := s.checkMode(c); r != nil {
			return r
		}
		if r := s.checkDelegate(ctx, c); r != nil {
			return r
		}
	}
	if c.reserveCall {
		switch err := s.store.ReserveToolCall(context.WithoutCancel(ctx), p.SessionID, p.ToolCallID); {
		case errors.Is(err, store.ErrExists):
			a.decision = decPolicy
			return duplicate(p.ToolCallID)
		case err != nil:
			return failResult(tools.CodeToolFailed, "recording the tool call id failed (%v); the call was not run", err)
		}
	}
	bodyCtx := ctx
	if t.Class == perms.ClassRead {
		// Every tool has a timeout (design section 3): reads and searches
		// too, so a Grep of a huge tree cannot run forever.
		var cancel context.CancelFunc
		bodyCtx, cancel = context.WithTimeout(ctx, readToolTimeout)
		defer cancel()
	}
	bodyStart := time.Now()
	c.ran = true
	res := s.runBody(bodyCtx, c)
	a.body = time.Since(bodyStart)
	if ctx.Err() == nil && errors.Is(bodyCtx.Err(), context.DeadlineExceeded) {
		res = c.setPath(failResult(tools.CodeToolTimeout, "%s did not finish within %s; narrow the path or pattern", t.Name, readToolTimeout))
	}
	if res == nil {
		res = failResult(tools.CodeToolFailed, "%s returned no result", t.Name)
	}
	return res
}

// lockCtx takes a lock with try or else lock, or gives up when ctx ends; a
// lock taken after that is released with unlock. It reports whether the
// lock is held.
func lockCtx(ctx context.Context, try func() bool, lock, unlock func()) bool {
	if try() {
		return true
	}
	locked := make(chan struct{})
	go func() { lock(); close(locked) }()
	select {
	case <-locked:
		return true
	case <-ctx.Done():
		go func() { <-locked; unlock() }()
		return false
	}
}

// modeSensitive says whether Plan and Goal refuse the call: Write, Edit,
// plugin tools, and a delegate's Bash.
func (c *call) modeSensitive() bool {
	switch c.tool.Class {
	case perms.ClassEdit, perms.ClassPlugin:
		return true
	case perms.ClassExec:
		return c.p.Delegate != ""
	}
	return false
}

// readToolTimeout bounds Read, Glob, Grep and BrowserPreview.
const readToolTimeout = 60 * time.Second

// grantName is what allow-session grants are remembered under: the tool
// name, and for plugin tools the plugin id with its own tool name, so that
// two plugins whose ids sanitise alike cannot share a grant.
func grantName(t *tools.Def) string {
	if t.PluginID != "" {
		return "plugin\x00" + t.PluginID + "\x00" + t.PluginTool
	}
	return t.Name
}

// runBody runs the tool. A panic in a tool becomes TOOL_FAILED here, inside
// the envelope, so the call is still answered and audited like any other.
func (s *Server) runBody(ctx context.Context, c *call) (res *ToolResult) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", c.tool.Name, "toolCallId", c.p.ToolCallID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res = failResult(tools.CodeToolFailed, "%s failed with an internal error; it has been logged", c.tool.Name)
		}
	}()
	ans, err := c.tool.Run(ctx, c.toolCall(), c.typed)
	res = resultOf(ctx, ans, err)
	// A body may name a path of its own (BrowserPreview, a submitted
	// artifact); a result names the call's path unless it was cut short
	// by its context.
	c.target, c.hasTarget = c.tc.Target, c.tc.HasTarget
	if !errors.Is(err, tools.ErrAborted) {
		c.setPath(res)
	}
	return res
}

// needsCard says whether, without a grant, the request would have asked:
// then the grant is what allowed it.
func needsCard(r perms.Request) bool {
	r.Granted = false
	return perms.Decide(r).Outcome == perms.Ask
}
