package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hostcore/sandbox/landlock"
)

func TestSandboxWired(t *testing.T) {
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip(reason)
	}
	ws := t.TempDir()
	out := filepath.Join("/var/tmp", "llwire-out")
	os.MkdirAll(out, 0o777)
	defer os.RemoveAll(out)
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, ws, "", os.Environ())
	for _, batch := range []bool{false, true} {
		for _, tty := range []bool{false, true} {
			res, err := Run(context.Background(), Spec{Path: "/bin/bash", Args: []string{"-c", `echo a > ws.txt && echo ok-ws; (echo b > ` + out + `/x) 2>/dev/null || echo denied-out; kill -STOP $PPID 2>/dev/null || echo denied-stop; cat ~/.ssh/id_rsa 2>/dev/null || echo denied-ssh; [ -t 0 ] && stty size`},
				Dir: ws, Sandbox: &p, Batch: batch, TTY: tty})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(res.Stdout.Head, "\r\n", "\n")
			want := "ok-ws\ndenied-out\ndenied-stop\ndenied-ssh\n"
			if tty {
				want += "50 200\n"
			}
			if got != want {
				t.Errorf("batch %v tty %v: %q (stderr %q, exit %d)", batch, tty, got, res.Stderr.Head, res.ExitCode)
			}
		}
	}
	bad := p
	bad.Mode = "nonsense"
	_, err := Run(context.Background(), Spec{Path: "/bin/true", Sandbox: &bad})
	if err == nil || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("a policy that cannot be enforced: err = %v", err)
	}
}
