package tools

import (
	"context"
	"fmt"

	"hostcore/perms"
	"hostcore/sandbox/background"
)

const killShellDescription = "End a background command (one started by Bash with runInBackground) with its whole process tree: " +
	"TERM, then KILL after 1 s. Its output so far stays readable with BashOutput."

// KillShell ends a background command of the session. It needs no card:
// it can only end what this session started, which the person approved
// when it started (a control tool, like new_context).
var KillShell = Tool[ShellArgs, KillShellDetails]{
	Spec: Spec{Name: "KillShell", Class: perms.ClassControl, Risk: perms.RiskLow, Description: killShellDescription,
		Deferred: true, DeferredInEveryMode: true, NeedsWorkspace: true},
	Run: runKillShell,
}

// KillShellDetails are KillShell's details: Killed is false when the
// command had already ended.
type KillShellDetails struct {
	ShellID  string `json:"shellId"`
	Killed   bool   `json:"killed"`
	State    string `json:"state"`
	ExitCode *int   `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
}

func runKillShell(ctx context.Context, c *Call, a ShellArgs) (Out[KillShellDetails], error) {
	sh, err := backgroundShell(c, a)
	if err != nil {
		return Out[KillShellDetails]{}, err
	}
	killed := sh.Kill(background.KilledByKillShell)
	o := sh.State()
	d := KillShellDetails{ShellID: o.ShellID, Killed: killed, State: o.State, ExitCode: o.ExitCode, Signal: o.Signal}
	text := fmt.Sprintf("Killed %s and its process tree. %s", o.ShellID, stateText(o))
	switch {
	case o.State == background.StateRunning:
		return Out[KillShellDetails]{}, Fail(CodeToolFailed, "%s did not end within the kill's bound; its reaper goes on killing it", o.ShellID)
	case !killed:
		text = fmt.Sprintf("%s had already ended: nothing to kill. %s", o.ShellID, stateText(o))
	}
	return Out[KillShellDetails]{Text: text, Details: d}, nil
}
