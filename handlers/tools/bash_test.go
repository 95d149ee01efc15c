package tools

import (
	"bytes"
	"encoding/json"
	"hostcore/sandbox/process"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBashResultShape(t *testing.T) {
	res := process.Result{
		ExitCode: 2,
		Stdout:   process.Stream{Head: "head\n", Tail: "tail\n", Total: 100010, Omitted: 100000, Truncated: true, FullPath: "/s/stdout-1.log"},
		Stderr:   process.Stream{Head: "bad\n", Total: 4},
	}
	_, f := bashResult(res, "bash", BashArgs{Timeout: 60})
	want := "Exit code 2.\n\nstdout:\nhead\n[... 100000 bytes omitted ...]\ntail\n[full output: /s/stdout-1.log]\n\nstderr:\nbad"
	if diff := cmp.Diff(want, f.Text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	// The details as the wire has them.
	wantD := map[string]any{
		"exitCode": 2.0, "stdout": "head\n[... 100000 bytes omitted ...]\ntail\n[full output: /s/stdout-1.log]", "stderr": "bad\n",
		"stdoutTruncated": true, "stderrTruncated": false, "stdoutBytes": 100010.0, "stderrBytes": 4.0,
		"timedOut": false, "shell": "bash", "stdoutFile": "/s/stdout-1.log",
	}
	if diff := cmp.Diff(wantD, wire(t, f.Details)); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if f.Code != CodeToolFailed || f.Message != "Exit code 2." {
		t.Errorf("result %+v", f)
	}

	_, f = bashResult(process.Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true, Stdout: process.Stream{Head: "so far\n", Total: 7}}, "bash", BashArgs{Timeout: 5})
	if f.Code != CodeToolTimeout || wire(t, f.Details)["exitCode"] != nil || !strings.Contains(f.Text, "so far") {
		t.Errorf("timeout result %+v", f)
	}
	if out, f := bashResult(process.Result{Stdout: process.Stream{Head: "ok\n", Total: 3}}, "bash", BashArgs{Timeout: 5}); f != nil || *out.Details.ExitCode != 0 {
		t.Errorf("success result %+v %+v", out, f)
	}
}

// wire is v as its JSON decodes into an object.
func wire(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// scriptAt is a bashEnv envFile that writes nothing.
func scriptAt(p string) func() string { return func() string { return p } }

func TestBashEnv(t *testing.T) {
	got := bashEnv([]string{"A=1", "PATH=/usr/bin:/bin", "PI_SCRATCH_DIR=/old", "PAGER=less"}, "/opt/nvm/bin:/usr/bin", "/data/scratch/s", false, nil)
	want := []string{"A=1", "PAGER=less", "PATH=/opt/nvm/bin:/usr/bin:/bin", "PI_SCRATCH_DIR=/data/scratch/s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	got = bashEnv([]string{"PATH=/bin", "PAGER=less"}, "", "/s", true, nil)
	want = []string{"PATH=/bin", "PI_SCRATCH_DIR=/s", "PAGER=cat", "GIT_PAGER=cat"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tty env (-want +got):\n%s", diff)
	}
	// With the BASH_ENV script: its variables, stale ones replaced, the
	// level bash -lc will have.
	got = bashEnv([]string{"PATH=/bin", "HOSTCORE_COMMAND_PATH=/stale", "HOSTCORE_SHLVL=9", "SHLVL=2"}, "/opt/bin", "/s", false, scriptAt("/data/bash_env.sh"))
	want = []string{"SHLVL=2", "PATH=/opt/bin:/bin", "PI_SCRATCH_DIR=/s", "BASH_ENV=/data/bash_env.sh", "HOSTCORE_COMMAND_PATH=/opt/bin:/bin", "HOSTCORE_SHLVL=3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BASH_ENV env (-want +got):\n%s", diff)
	}
	// Not with a BASH_ENV of the user's, POSIXLY_CORRECT, or no PATH at all.
	for _, base := range [][]string{{"PATH=/bin", "BASH_ENV=/home/me/env.sh"}, {"PATH=/bin", "POSIXLY_CORRECT=1"}, {}} {
		login := "/opt/bin"
		if len(base) == 0 {
			login = ""
		}
		written := false
		env := bashEnv(base, login, "/s", false, func() string { written = true; return "/data/bash_env.sh" })
		if written {
			t.Errorf("env %v: the script was written, and not used", base)
		}
		for _, kv := range env {
			if strings.HasPrefix(kv, "HOSTCORE_") || kv == "BASH_ENV=/data/bash_env.sh" {
				t.Errorf("env %v: %s", base, kv)
			}
		}
	}
	for in, want := range map[string]int{"": 1, "0": 1, "2": 3, " 4 ": 5, "x": 1, "-5": 0, "999": 1, "998": 999} {
		if got := bashLevel(in); got != want {
			t.Errorf("bashLevel(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestBashEnvScript runs the BASH_ENV script under bash -lc with profiles
// that set PATH outright (as Debian's /etc/profile does) and worse: the
// command sees hostcore's PATH first, then what the profile added, once
// each, no empty entry, and none of the script's variables; the script
// prints nothing and leaves the profile's options; a bash the command
// starts is left alone.
func TestBashEnvScript(t *testing.T) {
	bash, dir, script := bashEnvScriptFile(t)
	const show = `printf '%s|%s|%s|%s|%s' "$PATH" "${BASH_ENV-unset}" "${HOSTCORE_COMMAND_PATH-unset}" "$(env | grep -c __hostcore)" "$-"; /bin/bash -c 'printf "|%s" "${PATH%%:*}"'`
	for _, c := range []struct {
		name, profile, commandPath string
		want                       string // the output's start
		wantEnd                    string
		stderr                     string
	}{
		{"outright", "PATH=/profile/bin:/usr/bin:/bin\nexport PATH\n", "/probed/bin:/usr/bin:/bin", "/probed/bin:/usr/bin:/bin:/profile/bin|unset|unset|0|", "|/probed/bin", ""},
		{"empty entries", "PATH=:/profile/bin::/bin:\nexport PATH\n", "/probed/bin:/bin", "/probed/bin:/bin:/profile/bin|", "", ""},
		{"set -u, PATH unset", "set -u\nunset PATH\n", "/probed/bin:/usr/bin:/bin", "/probed/bin:/usr/bin:/bin|unset|unset|0|", "", ""},
		{"set -x", "set -x\n", "/probed/bin:/usr/bin:/bin", "/probed/bin:/usr/bin:/bin", "", "\x00"},
		{"read-only PATH", "PATH=/ro/bin:/usr/bin:/bin\nreadonly PATH\n", "/probed/bin:/usr/bin:/bin", "/ro/bin:/usr/bin:/bin|unset|unset|0|", "", ""},
		{"a child with its own PATH", "PATH=/usr/bin:/bin\n", "/probed/bin:/usr/bin:/bin", "/probed/bin:", "|/probed/bin", ""},
	} {
		home := filepath.Join(dir, c.name)
		os.MkdirAll(home, 0o700)
		os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(c.profile), 0o600)
		command := show
		if c.name == "a child with its own PATH" {
			// The child is a bash started with BASH_ENV and the variables
			// still set (as when bash -lc did not read them): one level
			// down, the script does nothing.
			// ("; true": a last command that is bash itself would be
			// exec'd in place, at bash -lc's own level.)
			command = `PATH=/child/bin:$PATH BASH_ENV=` + script + ` HOSTCORE_COMMAND_PATH=/probed/bin HOSTCORE_SHLVL=$SHLVL /bin/bash -c 'printf "%s|" "${PATH%%:*}"'; true`
			c.want, c.wantEnd = "/child/bin|", "/child/bin|"
		}
		cmd := exec.Command(bash, "-lc", command)
		cmd.Env = []string{"HOME=" + home, "PATH=" + c.commandPath, "BASH_ENV=" + script, "HOSTCORE_COMMAND_PATH=" + c.commandPath, "HOSTCORE_SHLVL=1"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %v: %s %s", c.name, err, stdout.String(), stderr.String())
			continue
		}
		got := stdout.String()
		if !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, c.wantEnd) {
			t.Errorf("%s: the command saw %q, want %q...%q", c.name, got, c.want, c.wantEnd)
		}
		if c.stderr == "\x00" {
			// set -x: the profile's trace and the command's, none of the script's.
			if strings.Contains(stderr.String(), "__hostcore_new") || strings.Contains(stderr.String(), "HOSTCORE_SHLVL") {
				t.Errorf("%s: the script was traced: %q", c.name, stderr.String())
			}
			if !strings.Contains(got, "x") {
				t.Errorf("%s: set -x was not restored: %q", c.name, got)
			}
		} else if stderr.Len() > 0 {
			t.Errorf("%s: stderr %q", c.name, stderr.String())
		}
	}
}

// bashEnvScriptFile writes BashEnvScript into a temporary dir and finds
// bash to run it (the test is skipped without one).
func bashEnvScriptFile(t *testing.T) (bash, dir, script string) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir = t.TempDir()
	script = filepath.Join(dir, "env.sh")
	os.WriteFile(script, []byte(BashEnvScript), 0o600)
	return bash, dir, script
}
