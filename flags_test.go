package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnreadableFlagsAndVariablesExit2: a value hostcore cannot read, in a
// flag or in its HOSTCORE_* variable, stops it with exit 2 and a message
// naming it; a review found HOSTCORE_MUTATION_SLOTS=-3 and
// HOSTCORE_WARM_REAPER=yes silently ignored, and a 1ns permission timeout
// accepted (cards then said timeoutMs 0).
func TestUnreadableFlagsAndVariablesExit2(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{env: []string{"HOSTCORE_MUTATION_SLOTS=-3"}, want: "HOSTCORE_MUTATION_SLOTS"},
		{env: []string{"HOSTCORE_MUTATION_SLOTS=many"}, want: "HOSTCORE_MUTATION_SLOTS"},
		{env: []string{"HOSTCORE_WARM_REAPER=yes"}, want: "HOSTCORE_WARM_REAPER"},
		{env: []string{"HOSTCORE_BATCH_COMMANDS=yes"}, want: "HOSTCORE_BATCH_COMMANDS"},
		{env: []string{"HOSTCORE_PERMISSION_TIMEOUT=1ns"}, want: "permission-timeout"},
		{args: []string{"--permission-timeout", "500us"}, want: "permission-timeout"},
		{args: []string{"--permission-timeout", "1000000h"}, want: "permission-timeout"},
		{args: []string{"--mutation-slots", "0"}, want: "mutation-slots"},
		{args: []string{"--log-level", "loud"}, want: "log-level"},
		{args: []string{"--input-spin", "2ms"}, want: "input-spin"},
		{env: []string{"HOSTCORE_INPUT_SPIN=-1us"}, want: "HOSTCORE_INPUT_SPIN"},
		{env: []string{"HOSTCORE_INPUT_SPIN=fast"}, want: "HOSTCORE_INPUT_SPIN"},
	} {
		cmd := exec.Command(bin, append([]string{"--data-dir", t.TempDir()}, tc.args...)...)
		cmd.Env = append(os.Environ(), tc.env...)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v %v: err=%v output=%q; want exit 2 naming %s", tc.env, tc.args, err, out, tc.want)
		}
	}
	// Values it can read still start it, and a flag wins over its
	// variable, however bad the variable.
	cmd := exec.Command(bin, "--data-dir", t.TempDir(), "--mutation-slots", "3")
	cmd.Env = append(os.Environ(), "HOSTCORE_MUTATION_SLOTS=-3")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"protocolVersion"`) {
		t.Fatalf("--mutation-slots 3 over HOSTCORE_MUTATION_SLOTS=-3: %v %q", err, out)
	}
	cmd = exec.Command(bin, "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "HOSTCORE_WARM_REAPER=0", "HOSTCORE_MUTATION_SLOTS=2", "HOSTCORE_PERMISSION_TIMEOUT=1ms", "HOSTCORE_INPUT_SPIN=0")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"permissionTimeoutMs":1`) {
		t.Fatalf("readable values: %v %q", err, out)
	}
}

// hostcore --data-dir D mcp served the native protocol (a stray argument
// was ignored), --help exited 2, an empty --data-dir exited 1, and a bad
// HOSTCORE_LOG_LEVEL was reported as --log-level, a flag never given
// (a newcomer's review).
func TestArgumentsAndHelp(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{args: []string{"--help"}, code: 0, want: "hostcore mcp --workspace DIR"},
		{args: []string{"--data-dir", t.TempDir(), "mcp", "--workspace", "."}, code: 2, want: `unexpected argument "mcp"`},
		{args: []string{"mcp", "--workspace", ".", "extra"}, code: 2, want: `unexpected argument "extra"`},
		{args: []string{"--data-dir", ""}, code: 2, want: "--data-dir must not be empty"},
		{env: []string{"HOSTCORE_DATA_DIR=  "}, code: 2, want: "HOSTCORE_DATA_DIR must not be empty"},
		{env: []string{"HOSTCORE_LOG_LEVEL=loud"}, args: []string{"--data-dir", t.TempDir()}, code: 2, want: `HOSTCORE_LOG_LEVEL="loud"`},
		{args: []string{"--data-dir", t.TempDir(), "--log-level", "loud"}, code: 2, want: `--log-level "loud"`},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), tc.env...)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != tc.code || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), `"protocolVersion"`) {
			t.Errorf("%v %v: exit %d, output %q; want exit %d saying %s", tc.env, tc.args, code, out, tc.code, tc.want)
		}
	}
	// A relative XDG_DATA_HOME is ignored (the XDG specification), not
	// taken from the working directory.
	home, cwd := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=relxdg", "HOSTCORE_DATA_DIR=")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), home+"/.local/share/hostcore") {
		t.Errorf("relative XDG_DATA_HOME: %v %s", err, out)
	}
}
