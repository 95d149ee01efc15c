package handlers

import (
	"context"
	"errors"
	"fmt"
	"hostcore/handlers/tools"
	"hostcore/perms"
	"log/slog"
)

// Content is one block of what the model is shown.
type Content = tools.Content

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
	ToolCallID string              `json:"toolCallId"`
	TraceID    string              `json:"traceId"`
	OK         bool                `json:"ok"`
	IsError    bool                `json:"isError"`
	ErrorCode  string              `json:"errorCode,omitempty"`
	Message    string              `json:"message,omitempty"`
	Content    []Content           `json:"content"`
	Details    any                 `json:"details,omitempty"`
	Root       string              `json:"root,omitempty"`
	Path       string              `json:"path,omitempty"`
	Review     *tools.ReviewChange `json:"review,omitempty"`
	Terminate  bool                `json:"terminate,omitempty"`
	Decision   string              `json:"decision"`
	Timing     Timing              `json:"timing"`
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
// log line, whose formatting is no part of what the client waits for.
//
// It runs after the handler's own recover: a piece that panics is logged
// and the rest still run.
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

// failResult is a failure the model is shown.
func failResult(code, format string, a ...any) *ToolResult {
	msg := fmt.Sprintf(format, a...)
	return &ToolResult{OK: false, IsError: true, ErrorCode: code, Message: msg, Content: []Content{{Type: "text", Text: msg}}}
}

// policyDenied is a containment refusal the envelope makes: audited as a
// policy denial, not as an allowed call that failed.
func policyDenied(format string, a ...any) *ToolResult {
	r := failResult(tools.CodeToolDenied, format, a...)
	r.Decision = decPolicy
	return r
}

func duplicate(id string) *ToolResult {
	return failResult(tools.CodeDuplicateToolCall, "tool call %q was already executed in this session; it is not run again", id)
}

func denied(ans perms.Answer, ctx context.Context) *ToolResult {
	switch {
	case ans.Withdrawn:
		r := failResult(tools.CodeToolDenied, "the permission request was withdrawn unanswered (%s), which is a deny; the tool did not run", context.Cause(ctx))
		r.Decision = decDeny
		return r
	case ans.Decision == "timeout":
		r := failResult(tools.CodeToolDenied, "permission was not granted in time (the request timed out and was denied); the tool did not run")
		r.Decision = decTimeout
		return r
	case ans.Decision == "cancelled":
		r := aborted(ctx)
		r.Decision = decCancel
		return r
	case ans.Why != "":
		r := failResult(tools.CodeToolDenied, "%s, which is a deny; the tool did not run", ans.Why)
		r.Decision = decDeny
		return r
	}
	r := failResult(tools.CodeToolDenied, "the user denied permission for this tool call; it did not run")
	r.Decision = decDeny
	return r
}

func aborted(ctx context.Context) *ToolResult {
	r := failResult(tools.CodeToolAborted, "%s", tools.AbortedMessage(ctx))
	r.Decision = ""
	return r
}

// resultOf is a body's answer, or its failure, as the envelope's result.
func resultOf(ctx context.Context, ans tools.Answer, err error) *ToolResult {
	var f *tools.Failure
	switch {
	case err == nil:
		r := &ToolResult{OK: true, Content: ans.Content, Details: ans.Details, Review: ans.Review, Terminate: ans.Terminate, stopped: ans.Stopped}
		if r.Content == nil {
			r.Content = []Content{{Type: "text", Text: ans.Text}}
		}
		return r
	case errors.Is(err, tools.ErrAborted):
		return aborted(ctx)
	case errors.As(err, &f):
		return failureResult(f)
	}
	return failResult(tools.CodeToolFailed, "%v", err)
}

// failureResult is a tool's failure as the envelope's result.
func failureResult(f *tools.Failure) *ToolResult {
	r := failResult(f.Code, "%s", f.Message)
	r.Details, r.Terminate = f.Details, f.Terminate
	switch {
	case f.Content != nil:
		r.Content = f.Content
	case f.Text != "":
		r.Content[0].Text = f.Text
	}
	if f.Policy {
		r.Decision = decPolicy
	}
	return r
}
