package tools

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hostcore/perms/redact"
	"hostcore/sandbox/background"
	"hostcore/sandbox/process"
)

// bashStartWait bounds how long Bash with runInBackground waits for its
// shell to begin the command (the snapshot's restore, or the login
// profile, done) before it answers: long enough for any profile that
// works, short of the 10 s a snapshot may take; a profile that hangs is
// said in the answer, and the command keeps its chance to start.
const bashStartWait = 5 * time.Second

// bashStartPoll is how often the wait looks for the start mark.
const bashStartPoll = 2 * time.Millisecond

// BashStartDetails are the details of Bash with runInBackground.
type BashStartDetails struct {
	ShellID string `json:"shellId"`
	// State is "running", or "exited" when it ended before the answer.
	State string `json:"state"`
	// Started: the shell began the command before the answer (false when
	// hostcore cannot tell, or the profile had not finished).
	Started    bool   `json:"started"`
	Shell      string `json:"shell"`
	StdoutFile string `json:"stdoutFile"`
	StderrFile string `json:"stderrFile,omitempty"`
	// Sandbox and SandboxReason as a foreground command's (bash_sandbox.go).
	Sandbox       string `json:"sandbox,omitempty"`
	SandboxReason string `json:"sandboxReason,omitempty"`
}

// BackgroundNote is what a card says before a background command: the
// person approves a process that outlives the call.
func (a BashArgs) BackgroundNote() string {
	if !a.RunInBackground {
		return ""
	}
	return "[runs in the background until it ends, KillShell ends it or the session ends] "
}

// bashBackgroundPrecheck refuses a background command past the session's
// bound before any card: the person is not asked for what cannot run.
func bashBackgroundPrecheck(ctx context.Context, c *Call, a BashArgs) error {
	if a.RunInBackground && len(c.Host.Bash().Background().Running(c.SessionID)) >= background.MaxRunning {
		return PolicyDenied("%v", background.ErrLimit)
	}
	return nil
}

// startBackground starts the command prepared as a foreground one would
// run (the same shell, environment, sandbox and reaper) in the session's
// background registry, and answers once its shell has begun it. The
// call's context does not reach the command: it outlives the call, the
// turn and turn.cancel.
func startBackground(ctx context.Context, c *Call, bh BashHost, spec process.Spec, launch bashLaunch, shell string, sb BashSandbox) (Out[any], error) {
	if ctx.Err() != nil {
		return Out[any]{}, ErrAborted // nothing started
	}
	// Its output goes to the registry, not to tool.output: the call
	// answers before the command writes.
	sh, err := bh.Background().Start(background.Options{SessionID: c.SessionID, ToolCallID: c.ToolCallID, Dir: c.Scratch, Spec: spec})
	switch {
	case errors.Is(err, background.ErrLimit):
		return Out[any]{}, PolicyDenied("%v", err)
	case err != nil:
		return Out[any]{}, Fail(CodeToolFailed, "the background command could not be started: %v", err)
	}
	started := waitStarted(ctx, sh, launch)
	if launch.mark != nil && !started {
		// The shell may still leave its mark: the file goes when the
		// command ends.
		go func() {
			<-sh.Done()
			launch.release()
		}()
	}
	st := sh.State()
	d := BashStartDetails{ShellID: sh.ID, State: st.State, Started: started, Shell: shell, Sandbox: sb.Kind, SandboxReason: sb.Reason}
	files := sh.Files()
	d.StdoutFile = files[0]
	if len(files) > 1 {
		d.StderrFile = files[1]
	}
	return Out[any]{Text: startText(d, st, launch.mark != nil), Details: d}, nil
}

// waitStarted waits (up to bashStartWait) until the shell has begun the
// command, the command has ended, or the call is cancelled; it reports
// whether the start mark was seen. Without a mark there is nothing to
// wait for.
func waitStarted(ctx context.Context, sh *background.Shell, launch bashLaunch) bool {
	if launch.mark == nil {
		return false
	}
	tick := time.NewTicker(bashStartPoll)
	defer tick.Stop()
	limit := time.NewTimer(bashStartWait)
	defer limit.Stop()
	for !launch.mark.Done() {
		select {
		case <-tick.C:
		case <-sh.Done():
			return launch.mark.Done()
		case <-limit.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// ShellExited is the shell.exited notification's params: a background
// command has ended.
type ShellExited struct {
	SessionID  string `json:"sessionId"`
	ShellID    string `json:"shellId"`
	ToolCallID string `json:"toolCallId"`
	// ExitCode is null when a signal ended it (or it never started).
	ExitCode    *int   `json:"exitCode"`
	Signal      string `json:"signal,omitempty"`
	KilledBy    string `json:"killedBy,omitempty"`
	StartError  string `json:"startError,omitempty"`
	DurationMs  int64  `json:"durationMs"`
	StdoutBytes int64  `json:"stdoutBytes"`
	StderrBytes int64  `json:"stderrBytes"`
}

// ShellExitedNotice turns the registry's report of an ended command into
// the shell.exited notification, sent with notify.
func ShellExitedNotice(notify func(method string, params any)) func(background.Exit) {
	return func(e background.Exit) {
		notify("shell.exited", ShellExited{SessionID: e.SessionID, ShellID: e.ShellID, ToolCallID: e.ToolCallID, ExitCode: e.ExitCode,
			Signal: e.Signal, KilledBy: e.KilledBy, StartError: e.StartError, DurationMs: e.Duration.Milliseconds(),
			StdoutBytes: e.Stdout, StderrBytes: e.Stderr})
	}
}

// startText is what the model reads of a start.
func startText(d BashStartDetails, st background.Output, marked bool) string {
	var status string
	switch {
	case st.State == background.StateExited:
		status = "It has already ended: read its output and exit with BashOutput."
	case d.Started || !marked:
		status = "It is running."
	default:
		status = fmt.Sprintf("Its shell has not begun the command after %d s (the login profile, or the restore of its snapshot, has not finished); it may still start.", int(bashStartWait/time.Second))
	}
	return fmt.Sprintf("Started in the background as shellId %s. %s Read what it writes with BashOutput {\"shellId\": %q} (each read returns the output since the last), "+
		"end it with KillShell. Its complete output goes to %s. It runs until it ends or is killed, across turns, and is killed when the session ends.",
		d.ShellID, status, d.ShellID, redact.EscapeText(joinFiles(d)))
}

func joinFiles(d BashStartDetails) string {
	if d.StderrFile == "" {
		return d.StdoutFile
	}
	return d.StdoutFile + " and " + d.StderrFile
}
