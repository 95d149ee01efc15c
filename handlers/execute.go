package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

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

// Content is one block of what the model is shown.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Timing is the segmented timing of design section 9.
type Timing struct {
	Prompted         bool  `json:"prompted"`
	PermissionWaitMs int64 `json:"permissionWaitMs"`
	DurationMs       int64 `json:"durationMs"`
	OverheadMs       int64 `json:"overheadMs"`
	TotalMs          int64 `json:"totalMs"`
}

// ToolResult is the answer to tools.execute.
type ToolResult struct {
	ToolCallID string        `json:"toolCallId"`
	TraceID    string        `json:"traceId"`
	OK         bool          `json:"ok"`
	IsError    bool          `json:"isError"`
	ErrorCode  string        `json:"errorCode,omitempty"`
	Message    string        `json:"message,omitempty"`
	Content    []Content     `json:"content"`
	Details    any           `json:"details,omitempty"`
	Root       string        `json:"root,omitempty"`
	Path       string        `json:"path,omitempty"`
	Review     *ReviewChange `json:"review,omitempty"`
	Terminate  bool          `json:"terminate,omitempty"`
	Decision   string        `json:"decision"`
	Timing     Timing        `json:"timing"`
	// AuditError says the call ran but its audit row could not be written
	// (a full disk): its effects are real, and the result says what they
	// were rather than failing the request.
	AuditError string `json:"auditError,omitempty"`
	// stopped: the call ended early because it was cancelled, in the way
	// its tool defines (TOOL_ABORTED; an asktool resolved as skipped).
	stopped bool
	// after is work left for once the answer is written (AfterReply).
	after []func()
	log   *slog.Logger // says when a piece of after panics
}

// AfterReply runs what the call left for once its answer was written
// (rpc calls it right after, whatever became of the answer): the timing
// log line, and the files a quick Read (quick.go) left open.
//
// It runs after the handler's own recover: a piece that panics is logged
// and the rest still run (a file left open would leak).
func (r *ToolResult) AfterReply() {
	for _, f := range r.after {
		r.runAfter(f)
	}
	r.after = nil
}

func (r *ToolResult) runAfter(f func()) {
	defer func() {
		if p := recover(); p != nil && r.log != nil {
			r.log.Error("work after an answer panicked", "toolCallId", r.ToolCallID, "panic", fmt.Sprint(p))
		}
	}()
	f()
}

// Decisions as they appear in results and the audit.
const (
	decAuto    = "auto-allow"
	decOnce    = "allow-once"
	decSession = "allow-session"
	decDeny    = "deny"
	decTimeout = "timeout"
	decCancel  = "cancelled"
	decPolicy  = "policy-deny"
)

// okResult is a successful result with text content.
func okResult(text string) *ToolResult {
	return &ToolResult{OK: true, Content: []Content{{Type: "text", Text: text}}}
}

// failResult is a failure the model is shown.
func failResult(code, format string, a ...any) *ToolResult {
	msg := fmt.Sprintf(format, a...)
	return &ToolResult{OK: false, IsError: true, ErrorCode: code, Message: msg, Content: []Content{{Type: "text", Text: msg}}}
}

// call is one tools.execute in flight.
type call struct {
	s        *Server
	p        ExecuteParams
	sess     store.Session
	rt       *runtime
	tool     *toolDef
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
	<-tk.looked
	switch {
	case tk.absent:
		return nil, appError(CodeSessionNotFound, "session %q not found", p.SessionID)
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
		return s.finish(ctx, c, a, failResult(CodeToolAborted, "session was deleted"))
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
	if !res.OK && cctx.Err() != nil && res.ErrorCode != CodeToolTimeout && res.ErrorCode != CodeToolAborted && res.Decision != decDeny {
		// A call cancelled at any step (a precheck's store read, the
		// body) failed because it was cancelled: it ends as aborted. A
		// card denied (withdrawn as hostcore stops) stays denied.
		res = aborted(cctx)
	}
	if res.ErrorCode == CodeToolAborted && a.decision == decPolicy {
		// Aborted before anything was decided: no policy refused it (the
		// audit said policy-deny for calls piped in before an EOF).
		a.decision = decCancel
	}
	tk.entry.stopped = res.stopped || res.ErrorCode == CodeToolAborted
	return s.finish(ctx, c, a, res)
}

// plainlyOutside says whether the call names an absolute path outside
// the workspace and scratch: a call refused before its path is resolved
// (by the mode matrix, or for want of a workspace) still has it
// classified (design section 9: externalPath whenever an explicit path
// is present).
func (c *call) plainlyOutside() bool {
	p := c.rawPath()
	return c.tool.PathArg != "" && filepath.IsAbs(p) && !sandbox.LexicallyInside(c.roots.Workspace, p) && !sandbox.LexicallyInside(c.roots.Scratch, p)
}

// auditing collects what the audit row and timing need.
type auditing struct {
	start    time.Time
	prompted bool
	wait     time.Duration
	body     time.Duration
	decision string
	external string // "", "allowed", "denied"
}

func (s *Server) decideAndRun(ctx context.Context, c *call, a *auditing, tk *ticket) *ToolResult {
	p := c.p
	a.decision = decPolicy
	t := tk.tool
	if t == nil {
		if c.sess.Mode != perms.OpAgent {
			return failResult(CodeToolDenied, "unknown tool %s is not available in %s mode", p.ToolName, c.sess.Mode)
		}
		return failResult(CodeUnknownTool, "unknown tool %q", p.ToolName)
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
		return failResult(CodeInvalidArgument, "args must be a JSON object")
	}
	if redact.TooManyValues(c.args) {
		return failResult(CodeInvalidArgument, "invalid arguments: args hold more than %d JSON values", redact.MaxValues)
	}
	decoded, err := decodeAny(c.args)
	if err != nil {
		return failResult(CodeInvalidArgument, "invalid arguments: args: %v", err)
	}
	if err := validateValue(t, decoded); err != nil {
		return failResult(CodeInvalidArgument, "invalid arguments: %v", err)
	}
	c.canon = redact.CanonicalValue(decoded, c.args)
	c.decoded = decoded
	if t.NeedsWorkspace && c.sess.WorkspaceRoot == "" {
		if c.plainlyOutside() {
			a.external = "denied"
		}
		return failResult(CodeNoWorkspace, "%s needs a project: this session has no workspace", t.Name)
	}
	if t.Class == perms.ClassEdit || t.Class == perms.ClassExec {
		// Scratch is created lazily on the first Write/Edit/Bash (design
		// section 4b), before resolution, so a path into it resolves to the
		// directory that will be operated on.
		if err := c.ensureScratch(); err != nil {
			return failResult(CodeToolFailed, "%v", err)
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

	if t.precheck != nil {
		if r := t.precheck(ctx, c); r != nil {
			return r
		}
	}

	req := perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: c.sess.Mode, PermMode: c.permMode}
	if c.hasTarget && c.target.Root == sandbox.RootExternal {
		req.Outside = true
	}
	if t.Class == perms.ClassEdit && c.hasTarget && c.target.Root == sandbox.RootScratch && sandbox.LexicallyInside(c.roots.Scratch, c.rawPath()) {
		req.Scratch = true
	}
	reason := perms.ReasonTool
	if req.Outside {
		reason = perms.ReasonOutsidePath
	}
	req.Granted = s.grants.Has(c.sess.ID, perms.GrantKey(grantName(t), reason))
	v := perms.Decide(req)
	switch v.Outcome {
	case perms.Deny:
		if req.Outside {
			a.external = "denied"
		}
		return failResult(v.Code, "%s", v.Message)
	case perms.Allow:
		a.decision = decAuto
		if req.Granted && !(req.Outside && c.permMode == perms.ModeAuto) && needsCard(req) {
			a.decision = decSession
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
			s.grants.Add(c.sess.ID, perms.GrantKey(grantName(t), v.Reason))
		default:
			if req.Outside {
				a.external = "denied"
			}
			return denied(ans, ctx)
		}
	}
	if req.Outside {
		a.external = "allowed"
	}

	if tk != nil && tk.mutation {
		if err := tk.rt.mut.wait(ctx, tk.n); err != nil {
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
			if req.Outside {
				a.external = "denied"
			}
			a.decision = decPolicy
			return failResult(CodeToolDenied, "the path changed while the permission card was open (%v); the call was not executed", err)
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
	if a.prompted && t.PluginID != "" && s.tools.get(t.Name) != t {
		a.decision = decPolicy
		return failResult(CodeToolDenied, "plugin tool %s was withdrawn or registered again while its card was open; it did not run", t.Name)
	}
	if now, err := s.store.GetSession(context.WithoutCancel(ctx), p.SessionID); err != nil {
		return failResult(CodeToolFailed, "reading the session's mode failed (%v); the call was not run", err)
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
			return failResult(CodeToolFailed, "recording the tool call id failed (%v); the call was not run", err)
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
		res = c.setPath(failResult(CodeToolTimeout, "%s did not finish within %s; narrow the path or pattern", t.Name, readToolTimeout))
	}
	if res == nil {
		res = failResult(CodeToolFailed, "%s returned no result", t.Name)
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
func grantName(t *toolDef) string {
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
			res = failResult(CodeToolFailed, "%s failed with an internal error; it has been logged", c.tool.Name)
		}
	}()
	return c.tool.run(ctx, c)
}

// needsCard says whether, without a grant, the request would have asked:
// then the grant is what allowed it.
func needsCard(r perms.Request) bool {
	r.Granted = false
	return perms.Decide(r).Outcome == perms.Ask
}

func duplicate(id string) *ToolResult {
	return failResult(CodeDuplicateToolCall, "tool call %q was already executed in this session; it is not run again", id)
}

func denied(ans perms.Answer, ctx context.Context) *ToolResult {
	switch {
	case ans.Withdrawn:
		r := failResult(CodeToolDenied, "the permission request was withdrawn unanswered (%s), which is a deny; the tool did not run", context.Cause(ctx))
		r.Decision = decDeny
		return r
	case ans.Decision == "timeout":
		r := failResult(CodeToolDenied, "permission was not granted in time (the request timed out and was denied); the tool did not run")
		r.Decision = decTimeout
		return r
	case ans.Decision == "cancelled":
		r := aborted(ctx)
		r.Decision = decCancel
		return r
	case ans.Why != "":
		r := failResult(CodeToolDenied, "%s, which is a deny; the tool did not run", ans.Why)
		r.Decision = decDeny
		return r
	}
	r := failResult(CodeToolDenied, "the user denied permission for this tool call; it did not run")
	r.Decision = decDeny
	return r
}

func aborted(ctx context.Context) *ToolResult {
	why := "cancelled"
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		why = cause.Error()
	}
	r := failResult(CodeToolAborted, "the tool call was aborted (%s)", why)
	r.Decision = ""
	return r
}

// redactName is a tool name as audited and logged: a name the model made
// up (no tool has it) may hold a secret; a registered one is kept as is.
func (s *Server) redactName(name string) string {
	if s.tools.get(name) != nil {
		return name
	}
	return redact.Redact(name)
}

// finish fills the envelope, commits the audit row and logs the timing
// line. The row is committed before the response is written.
func (s *Server) finish(ctx context.Context, c *call, a *auditing, res *ToolResult) (any, error) {
	res.log = s.log
	res.ToolCallID = c.p.ToolCallID
	res.TraceID = newID("tr_")
	if res.Decision == "" {
		res.Decision = a.decision
		if res.Decision == "" {
			res.Decision = decPolicy
		}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	if !res.OK {
		res.IsError = true
	}
	total := time.Since(a.start)
	res.Timing = Timing{
		Prompted:         a.prompted,
		PermissionWaitMs: a.wait.Milliseconds(),
		DurationMs:       a.body.Milliseconds(),
		TotalMs:          total.Milliseconds(),
	}
	res.Timing.OverheadMs = max(0, res.Timing.TotalMs-res.Timing.PermissionWaitMs-res.Timing.DurationMs)

	canon := c.canonicalArgs()
	sum := sha256.Sum256(canon)
	row := store.AuditRow{
		SessionID: c.p.SessionID, TurnID: c.p.TurnID, ToolCallID: c.p.ToolCallID, ToolName: s.redactName(c.p.ToolName),
		ArgsHash: hex.EncodeToString(sum[:]), ArgsPreview: redact.PreviewJSON(string(canon), redact.PreviewMax),
		ExternalPath: a.external, Decision: res.Decision, Prompted: a.prompted,
		PermissionWaitMs: res.Timing.PermissionWaitMs, DurationMs: res.Timing.DurationMs,
		OverheadMs: res.Timing.OverheadMs, TotalMs: res.Timing.TotalMs,
		OK: res.OK, ErrorCode: res.ErrorCode, Delegate: c.p.Delegate, CreatedAt: store.Now(),
	}
	// The audit must land even if the call was cancelled.
	if err := s.store.InsertAudit(context.WithoutCancel(ctx), row, c.recordCall && c.ran && !c.rt.isDeleted()); err != nil {
		s.log.Error("audit write failed", "toolCallId", c.p.ToolCallID, "err", err)
		if !c.ran {
			msg := "audit write failed: " + err.Error()
			if !res.OK && res.Message != "" {
				// What the call's own answer said (that it was not run,
				// and why) is not lost with it.
				msg = res.Message + "; and its audit row could not be written: " + err.Error()
			}
			return nil, &Error{Code: rpcInternal, Kind: CodeToolFailed, Message: msg, Err: err}
		}
		if c.recordCall {
			// A read changed nothing, so nothing is lost by withholding
			// its result, and answering it unaudited would let a command
			// that fills the data dir's disk read files unrecorded. Its
			// id was committed with nothing: the read may be sent again.
			return nil, &Error{Code: rpcInternal, Kind: CodeToolFailed, Message: "audit write failed, so the read's result is withheld (a read is answered only once its audit row is committed): " + err.Error(), Err: err}
		}
		// The body ran: a Write is on disk, a command has run. Answering
		// a storage error told the model it failed (it would do it again)
		// and lost the snapshot id that undoes it.
		res.AuditError = "the call ran, but its audit row could not be written: " + err.Error()
	}
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return res, nil
	}
	// The timing line is logged once the answer is written: formatting
	// it is no part of what the client waits for.
	attrs := []any{"sessionId", c.p.SessionID, "turnId", c.p.TurnID, "toolCallId", c.p.ToolCallID, "tool", s.redactName(c.p.ToolName),
		"decision", res.Decision, "ok", res.OK, "errorCode", res.ErrorCode, "prompted", a.prompted,
		"permissionWaitMs", res.Timing.PermissionWaitMs, "durationMs", res.Timing.DurationMs,
		"overheadMs", res.Timing.OverheadMs, "totalMs", res.Timing.TotalMs, "args", row.ArgsPreview}
	if d, ok := res.Details.(map[string]any); ok {
		if k, ok := d["mutationFailureKind"]; ok {
			attrs = append(attrs, "mutationFailureKind", k, "mutationFailureAttempt", d["mutationFailureAttempt"], "terminate", res.Terminate)
		}
	}
	res.after = append(res.after, func() { s.log.Info("tool timing", attrs...) })
	return res, nil
}

// rawPath is the explicit path argument as given.
func (c *call) rawPath() string {
	if m, ok := c.decoded.(map[string]any); ok {
		p, _ := m[c.tool.PathArg].(string)
		return p
	}
	var m map[string]json.RawMessage
	json.Unmarshal(c.args, &m)
	var p string
	json.Unmarshal(m[c.tool.PathArg], &p)
	return p
}

// resolveTarget classifies the explicit path argument (design section 4).
func (c *call) resolveTarget() *ToolResult {
	p := c.rawPath()
	if c.tool.targetOf != nil {
		var err error
		if p, err = c.tool.targetOf(c.args); err != nil {
			return failResult(CodeInvalidArgument, "invalid arguments: %v", err)
		}
	}
	if p == "" {
		if !c.tool.PathOptional {
			return failResult(CodeInvalidArgument, "invalid arguments: args.%s is required", c.tool.PathArg)
		}
		if c.sess.WorkspaceRoot == "" {
			return failResult(CodeNoWorkspace, "%s needs a project: this session has no workspace; give an absolute path inside the scratch directory", c.tool.Name)
		}
		p = "."
	}
	res, err := c.roots.Resolve(p)
	switch {
	case errors.Is(err, sandbox.ErrNoWorkspace):
		return failResult(CodeNoWorkspace, "this session has no workspace: a relative path has nothing to resolve against")
	case errors.Is(err, sandbox.ErrInvalidPath):
		return failResult(CodeInvalidArgument, "invalid arguments: args.%s: %v", c.tool.PathArg, err)
	case err != nil:
		return failResult(CodeToolFailed, "cannot resolve path %s: %v", redact.EscapeText(p), err)
	}
	if !c.tool.PathOptional && namesDirectory(p) {
		// "a.txt/" or "a.txt/." names a directory (POSIX refuses it with
		// ENOTDIR); resolution drops the slash, and Write would create
		// "newdir/" as a file. Only a real directory goes on, for the
		// tool's own message.
		if fi, err := sandbox.Stat(res); err != nil || !fi.IsDir() {
			return failResult(CodeInvalidArgument, "invalid arguments: args.%s ends in a slash, which names a directory, and %s is not one; %s works on files", c.tool.PathArg, res.Display, c.tool.Name)
		}
	}
	c.target, c.hasTarget = res, true
	return nil
}

// namesDirectory says p ends in a way that only a directory can: a slash,
// or a slash and "." or "..".
func namesDirectory(p string) bool {
	return strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") || p == "." || p == ".."
}

// setPath sets the file-tool fields root and path of a result.
func (c *call) setPath(r *ToolResult) *ToolResult {
	if c.hasTarget {
		r.Root = c.target.Root
		r.Path = c.target.Display
	}
	return r
}
