package tools

import (
	"strings"
	"testing"

	"hostcore/sandbox/landlock"
)

func TestBashSandboxHint(t *testing.T) {
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, "/ws", "/scratch", []string{"HOME=/home/u"})
	sb := BashSandbox{Policy: &p, Kind: SandboxLandlock}
	one := 1
	f := &Failure{Code: CodeToolFailed, Text: "Exit code 1.", Details: BashDetails{ExitCode: &one, BashStreams: BashStreams{Stderr: "cat: /home/u/.ssh/id_rsa: Permission denied\n"}}}
	sb.annotate(nil, f)
	if d := f.Details.(BashDetails); d.Sandbox != SandboxLandlock || !strings.Contains(f.Text, "may write only in the workspace (/ws)") {
		t.Errorf("denied: details %+v, text %q", d, f.Text)
	}
	f = &Failure{Code: CodeToolFailed, Text: "Exit code 1.", Details: BashDetails{ExitCode: &one, BashStreams: BashStreams{Stderr: "no such file\n"}}}
	sb.annotate(nil, f)
	if strings.Contains(f.Text, "Sandbox:") {
		t.Errorf("a failure that is no refusal got the hint: %q", f.Text)
	}
	var out Out[BashDetails]
	BashSandbox{Kind: SandboxNone, Reason: "no Landlock"}.annotate(&out, nil)
	if out.Details.Sandbox != SandboxNone || out.Details.SandboxReason != "no Landlock" {
		t.Errorf("success details: %+v", out.Details)
	}
}
