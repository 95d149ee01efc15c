package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"hostcore/sandbox/process"
)

func TestPatchCommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"git apply x.patch":                  "git apply",
		"git -C ../wt apply --check x.patch": "git apply",
		"cd sub && patch -p1 < x.diff":       "patch",
		"apply_patch <<'EOF'\n*** x\nEOF":    "apply_patch",
		"/usr/bin/patch -p0 < d":             "patch",
		"echo done; git apply x":             "git apply",
		"git applypatch":                     "",
		"go test ./... | grep patch":         "",
		"cat patch.txt":                      "",
		"git log -p":                         "",
		"env patch -p1 < d":                  "patch",
		"env LC_ALL=C patch -p1 < d":         "patch",
		"time git apply x":                   "git apply",
		"ls *.diff | xargs -n1 patch -p1 -i": "patch",
		"if git apply --check x; then :; fi": "git apply",
		"sudo -u me patch -p0 < d":           "patch",
		"echo env patch":                     "",
	} {
		if got := patchCommand(cmd); got != want {
			t.Errorf("patchCommand(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestBashResultShape(t *testing.T) {
	res := process.Result{
		ExitCode: 2,
		Stdout:   process.Stream{Head: "head\n", Tail: "tail\n", Total: 100010, Omitted: 100000, Truncated: true, FullPath: "/s/stdout-1.log"},
		Stderr:   process.Stream{Head: "bad\n", Total: 4},
	}
	r := bashResult(res, "bash", bashArgs{Timeout: 60})
	want := "Exit code 2.\n\nstdout:\nhead\n[... 100000 bytes omitted ...]\ntail\n[full output: /s/stdout-1.log]\n\nstderr:\nbad"
	if diff := cmp.Diff(want, r.Content[0].Text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	wantD := map[string]any{
		"exitCode": 2, "stdout": "head\n[... 100000 bytes omitted ...]\ntail\n[full output: /s/stdout-1.log]", "stderr": "bad\n",
		"stdoutTruncated": true, "stderrTruncated": false, "stdoutBytes": int64(100010), "stderrBytes": int64(4),
		"timedOut": false, "shell": "bash", "stdoutFile": "/s/stdout-1.log",
	}
	if diff := cmp.Diff(wantD, r.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if r.OK || r.ErrorCode != CodeToolFailed || r.Message != "Exit code 2." {
		t.Errorf("result %+v", r)
	}

	r = bashResult(process.Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true, Stdout: process.Stream{Head: "so far\n", Total: 7}}, "bash", bashArgs{Timeout: 5})
	if r.ErrorCode != CodeToolTimeout || r.Details.(map[string]any)["exitCode"] != nil || !strings.Contains(r.Content[0].Text, "so far") {
		t.Errorf("timeout result %+v", r)
	}
}

func TestShellPinsAreBounded(t *testing.T) {
	var p shellPins
	if got := p.pin("t0", "bash"); got != "bash" {
		t.Fatal(got)
	}
	if got := p.pin("t0", "git-bash"); got != "bash" {
		t.Fatalf("a turn's pin changed to %q", got)
	}
	for i := range 2 * shellPinsKept {
		p.pin(strings.Repeat("x", i+1), "bash")
	}
	if len(p.byTurn) != shellPinsKept || len(p.order) != shellPinsKept {
		t.Fatalf("%d pins kept, want %d", len(p.byTurn), shellPinsKept)
	}
}

// appendJSONString must agree with encoding/json (without HTML escaping)
// on every input, invalid UTF-8 included.
func TestAppendJSONString(t *testing.T) {
	inputs := []string{"", "plain", "a\"b\\c", "\n\r\t\x00\x1f\x7f", "é中😀", "\u2028\u2029", "\xff\xfe", "a\xe2\x82", "<&>", strings.Repeat("x", 40000)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(in)
		if got := appendJSONString(nil, []byte(in)); string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("appendJSONString(%q) = %s, want %s", in, got, want.String())
		}
	}
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
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "env.sh")
	os.WriteFile(script, []byte(bashEnvScript), 0o600)
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

// bashEnvFile: a data dir whose name bash would expand in BASH_ENV ('$',
// '`', '\') or a shell named sh gets no script; otherwise it is written
// anew for every command, whatever was put in its place (a FIFO would
// hold every later command until its timeout).
func TestBashEnvFile(t *testing.T) {
	for _, name := range []string{"a$(touch x)", "a`id`", "a$HOME", `a\\x`} {
		dir := filepath.Join(t.TempDir(), name)
		os.MkdirAll(dir, 0o700)
		s := &Server{cfg: Config{DataDir: dir}}
		if got := s.bashEnvFile("/bin/bash"); got != "" {
			t.Errorf("data dir %q: BASH_ENV script %q", name, got)
		}
	}
	dir := t.TempDir()
	s := &Server{cfg: Config{DataDir: dir}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if got := s.bashEnvFile("/usr/local/bin/sh"); got != "" {
		t.Errorf("a shell named sh: BASH_ENV script %q", got)
	}
	p := s.bashEnvFile("/bin/bash")
	if p == "" {
		t.Fatal("no BASH_ENV script for a plain data dir")
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := s.bashEnvFile("/bin/bash"); got != p {
		t.Fatalf("script %q after a FIFO was put there", got)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != bashEnvScript {
		t.Fatalf("script %q %v", b, err)
	}
}
