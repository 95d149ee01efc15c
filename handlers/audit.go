package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/store"
	"log/slog"
	"time"
)

// auditing collects what the audit row and timing need.
type auditing struct {
	start    time.Time
	prompted bool
	wait     time.Duration
	body     time.Duration
	decision string
	external string // "", "allowed", "denied"
	rule     string // the remembered rules that allowed the call (permrules.go)
}

// redactName is a tool name as audited and logged: a name the model made
// up (no tool has it) may hold a secret; a registered one is kept as is.
func (s *Server) redactName(name string) string {
	if s.tools.Get(name) != nil {
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
		OK: res.OK, ErrorCode: res.ErrorCode, Delegate: c.p.Delegate, CreatedAt: store.Now(), RuleID: a.rule,
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
			return nil, &Error{Code: rpcInternal, Kind: tools.CodeToolFailed, Message: msg, Err: err}
		}
		if c.recordCall {
			// A read changed nothing, so nothing is lost by withholding
			// its result, and answering it unaudited would let a command
			// that fills the data dir's disk read files unrecorded. Its
			// id was committed with nothing: the read may be sent again.
			return nil, &Error{Code: rpcInternal, Kind: tools.CodeToolFailed, Message: "audit write failed, so the read's result is withheld (a read is answered only once its audit row is committed): " + err.Error(), Err: err}
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
	if d, ok := res.Details.(interface{ MutationFailed() (string, int) }); ok {
		if kind, attempt := d.MutationFailed(); kind != "" {
			attrs = append(attrs, "mutationFailureKind", kind, "mutationFailureAttempt", attempt, "terminate", res.Terminate)
		}
	}
	res.after = append(res.after, func() { s.log.Info("tool timing", attrs...) })
	return res, nil
}
