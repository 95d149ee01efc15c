package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"hostcore/perms"
	"hostcore/perms/redact"
	"hostcore/sandbox/background"
)

var bashOutputDescription = fmt.Sprintf("Read a background command's output (one started by Bash with runInBackground) and its state: "+
	"what it wrote since the previous read, stdout and stderr apart, each cut to its first %d and last %d bytes (its complete output is in the files named), "+
	"and whether it is still running or how it ended (exit code or signal). A read never waits for output: read again later for more.",
	bashHeadBytes, bashTailBytes)

// BashOutput reads a background command of the session. Reading one's own
// output needs no card, as a Read in the scratch does not: the card was
// shown when the command started.
var BashOutput = Tool[ShellArgs, BashOutputDetails]{
	Spec: Spec{Name: "BashOutput", Class: perms.ClassRead, Risk: perms.RiskLow, Description: bashOutputDescription,
		Deferred: true, DeferredInEveryMode: true, NeedsWorkspace: true},
	Run: runBashOutput,
}

// ShellArgs name a background command: BashOutput's and KillShell's
// arguments.
type ShellArgs struct {
	ShellID string `json:"shellId"`
}

// BashOutputDetails are BashOutput's details. The stream fields say what
// arrived since the previous read (*Bytes count all of it, *Truncated say
// it was cut); *TotalBytes count everything the stream wrote.
type BashOutputDetails struct {
	ShellID string `json:"shellId"`
	State   string `json:"state"`
	// ExitCode is null while it runs and when a signal ended it.
	ExitCode   *int   `json:"exitCode"`
	Signal     string `json:"signal,omitempty"`
	KilledBy   string `json:"killedBy,omitempty"`
	StartError string `json:"startError,omitempty"`
	DurationMs int64  `json:"durationMs"`
	BashStreams
	StdoutTotalBytes int64  `json:"stdoutTotalBytes"`
	StderrTotalBytes int64  `json:"stderrTotalBytes"`
	StdoutFile       string `json:"stdoutFile"`
	StderrFile       string `json:"stderrFile,omitempty"`
	StdoutFileCut    bool   `json:"stdoutFileCut,omitempty"`
	StderrFileCut    bool   `json:"stderrFileCut,omitempty"`
	StdoutFileError  string `json:"stdoutFileError,omitempty"`
	StderrFileError  string `json:"stderrFileError,omitempty"`
}

func runBashOutput(ctx context.Context, c *Call, a ShellArgs) (Out[BashOutputDetails], error) {
	sh, err := backgroundShell(c, a)
	if err != nil {
		return Out[BashOutputDetails]{}, err
	}
	o := sh.Read()
	d := BashOutputDetails{ShellID: o.ShellID, State: o.State, ExitCode: o.ExitCode, Signal: o.Signal, KilledBy: o.KilledBy,
		StartError: o.StartError, DurationMs: o.Duration.Milliseconds()}
	var b strings.Builder
	b.WriteString(stateText(o))
	for _, s := range o.Streams {
		label := s.Name
		if len(o.Streams) == 1 {
			label = "output (terminal)"
		}
		if s.New.Total == 0 {
			fmt.Fprintf(&b, "\n\n%s: (nothing new)", label)
		} else {
			section(&b, label+" (new)", s.New)
		}
		switch s.Name {
		case "stdout":
			d.Stdout, d.StdoutTruncated, d.StdoutBytes, d.StdoutTotalBytes = s.New.Text(), s.New.Truncated, s.New.Total, s.Bytes
			d.StdoutFile, d.StdoutFileCut, d.StdoutFileError = s.File, s.FileCut, s.FileError
		case "stderr":
			d.Stderr, d.StderrTruncated, d.StderrBytes, d.StderrTotalBytes = s.New.Text(), s.New.Truncated, s.New.Total, s.Bytes
			d.StderrFile, d.StderrFileCut, d.StderrFileError = s.File, s.FileCut, s.FileError
		}
	}
	return Out[BashOutputDetails]{Text: b.String(), Details: d}, nil
}

// backgroundShell is the session's background command the args name;
// another session's ids are not found.
func backgroundShell(c *Call, a ShellArgs) (*background.Shell, error) {
	sh, err := c.Host.Bash().Background().Get(c.SessionID, a.ShellID)
	if errors.Is(err, background.ErrNotFound) {
		return nil, Fail(CodeInvalidArgument, "no background command %q in this session: shellIds come from Bash with runInBackground, and end with their session", redact.EscapeText(a.ShellID))
	}
	return sh, err
}

// stateText says whether a background command runs, or how it ended.
func stateText(o background.Output) string {
	secs := o.Duration.Round(100 * time.Millisecond).Seconds()
	var s string
	switch {
	case o.State == background.StateRunning:
		return fmt.Sprintf("Running (for %.1f s).", secs)
	case o.StartError != "":
		return "It could not be started: " + o.StartError + "."
	case o.Signal != "":
		s = fmt.Sprintf("Ended by signal %s after %.1f s", o.Signal, secs)
	default:
		s = fmt.Sprintf("Exited with code %d after %.1f s", *o.ExitCode, secs)
	}
	switch o.KilledBy {
	case background.KilledByKillShell:
		s += " (killed by KillShell)"
	case "":
	default:
		s += " (killed: " + o.KilledBy + ")"
	}
	return s + "."
}
