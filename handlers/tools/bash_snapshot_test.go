//go:build !windows

package tools

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hostcore/sandbox/process"
	"hostcore/sandbox/shellenv"
)

// TestBashEnvScriptLeavesTheStartMark: after the profile, the login
// mode's BASH_ENV script leaves the start mark and unsets its variable,
// silently, whatever options the profile set (errexit, nounset,
// noclobber with the mark already there, xtrace).
func TestBashEnvScriptLeavesTheStartMark(t *testing.T) {
	bash, dir, script := bashEnvScriptFile(t)
	for i, profile := range []string{"", "set -euC\n", "set -x\n"} {
		home := filepath.Join(dir, "home", string(rune('a'+i)))
		os.MkdirAll(home, 0o700)
		os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(profile), 0o600)
		mark, err := shellenv.NewStarted(dir)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			os.WriteFile(strings.TrimPrefix(mark.Env(), shellenv.StartedVar+"="), nil, 0o600)
		}
		cmd := exec.Command(bash, "-lc", `printf %s "${HOSTCORE_STARTED-unset}"`)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "BASH_ENV=" + script, "HOSTCORE_COMMAND_PATH=/usr/bin:/bin", "HOSTCORE_SHLVL=1", mark.Env()}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "unset" || !mark.Done() {
			t.Errorf("profile %q: %v, the command saw %q, mark left %v", profile, err, stdout.String(), mark.Done())
		}
		if strings.Contains(stderr.String(), "HOSTCORE_STARTED") || (profile != "set -x\n" && stderr.Len() > 0) {
			t.Errorf("profile %q: stderr %q", profile, stderr.String())
		}
		mark.Remove()
	}
}

// TestNeverStarted: a timeout whose shell did not leave the start mark
// says the profile did not finish, instead of the empty streams; one whose
// shell began the command, or without a mark to go by, keeps the report.
func TestNeverStarted(t *testing.T) {
	dir := t.TempDir()
	a := BashArgs{Command: "true", Timeout: 7}
	res := process.Result{TimedOut: true, Signal: "SIGKILL"}
	for _, c := range []struct {
		name   string
		mode   shellenv.Mode
		mark   bool
		done   bool
		stderr string
		want   string
	}{
		{"login, not started", shellenv.ModeLogin, true, false, "", "Timed out: the login profile did not finish after 7 s; the command never started, and its process tree was killed."},
		{"login, the profile printed", shellenv.ModeLogin, true, false, "waiting for lock\n", "Timed out: the login profile did not finish after 7 s; the command never started, and its process tree was killed.\n\nstdout: (empty)\n\nstderr:\nwaiting for lock"},
		{"snapshot, not started", shellenv.ModeSnapshot, true, false, "", "Timed out: the shell did not finish restoring the login profile's snapshot after 7 s; the command never started, and its process tree was killed."},
		{"started", shellenv.ModeLogin, true, true, "", "Timed out after 7 s; the command's process tree was killed. Partial output follows.\n\nstdout: (empty)\n\nstderr: (empty)"},
		{"no mark", shellenv.ModeLogin, false, false, "", "Timed out after 7 s; the command's process tree was killed. Partial output follows.\n\nstdout: (empty)\n\nstderr: (empty)"},
	} {
		r := res
		r.Stderr = process.Stream{Head: c.stderr, Total: int64(len(c.stderr))}
		l := bashLaunch{mode: c.mode}
		if c.mark {
			l.mark, _ = shellenv.NewStarted(dir)
			if c.done {
				os.WriteFile(strings.TrimPrefix(l.mark.Env(), shellenv.StartedVar+"="), nil, 0o600)
			}
		}
		_, f := bashResult(r, "bash", a)
		l.neverStarted(f, r, a)
		if f.Text != c.want || !strings.HasPrefix(c.want, f.Message) || f.Code != CodeToolTimeout {
			t.Errorf("%s: %q / %q (%s)", c.name, f.Message, f.Text, f.Code)
		}
		l.release()
	}
}
