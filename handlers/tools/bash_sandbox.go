package tools

import (
	"hostcore/sandbox/landlock"
)

// The sandbox kinds a Bash result's details name (BashDetails.Sandbox).
const (
	// SandboxLandlock: the command ran confined by a Landlock policy.
	SandboxLandlock = "landlock"
	// SandboxNone: the kernel offers no Landlock (or the system is not
	// Linux): the command ran unconfined, and SandboxReason says why.
	SandboxNone = "none"
	// SandboxOff: the command ran unconfined because the settings turn
	// the sandbox off, or the call asked for it and a person approved.
	SandboxOff = "off"
)

// BashSandbox is how one command runs: confined by Policy (Kind
// SandboxLandlock), or unconfined (Policy nil) for the reason said.
type BashSandbox struct {
	Policy *landlock.Policy
	Kind   string
	Reason string
}

// Unsandboxed reports whether the call asks to run outside the sandbox.
func (a BashArgs) Unsandboxed() bool { return a.Sandbox == SandboxOff }

// annotate writes the sandbox into a result's details, and gives a
// command that failed on what reads like a sandbox refusal a hint naming
// what the sandbox allows: the model then knows to stay in the roots, or
// to ask for an unsandboxed run, rather than retry.
func (sb BashSandbox) annotate(out *Out[BashDetails], f *Failure) {
	if f == nil {
		out.Details.Sandbox, out.Details.SandboxReason = sb.Kind, sb.Reason
		return
	}
	d, ok := f.Details.(BashDetails)
	if !ok {
		return
	}
	d.Sandbox, d.SandboxReason = sb.Kind, sb.Reason
	f.Details = d
	if sb.Policy != nil && f.Code == CodeToolFailed && d.ExitCode != nil && *d.ExitCode != 0 && landlock.LooksDenied(d.Stderr) {
		hint := "Sandbox: this may be a refusal of hostcore's command sandbox. " + sb.Policy.Summary() +
			" If the command truly needs more, call Bash again with sandbox \"off\" and a justification: a person approves that call."
		f.Text += "\n\n" + hint
	}
}
