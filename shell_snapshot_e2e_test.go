//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests drive the login profile's snapshot (sandbox/shellenv, the
// setting bashShellMode) through the built binary, each with a HOME of its
// own holding the profile under test.

// snapshotHost starts hostcore with HOME holding profile as its
// .bash_profile and SHELL a probe that prints "/probed/bin:$PATH", and
// creates session "s".
func snapshotHost(t *testing.T, profile string) (h *host, c rpcClient, home string) {
	t.Helper()
	bin := buildBinary(t)
	ws, data := newWorkspace(t)
	dir := t.TempDir()
	home = filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(profile), 0o600)
	shell := filepath.Join(dir, "loginshell")
	os.WriteFile(shell, []byte("#!/bin/sh\nprintf %s \"/probed/bin:$PATH\"\n"), 0o755)
	h = startHostEnv(t, bin, []string{"HOME=" + home, "SHELL=" + shell}, "--data-dir", data)
	c = rpcClient{t, h}
	c.call(1, "session.create", map[string]any{"sessionId": "s", "workspaceRoot": ws, "permissionMode": "auto"})
	return h, c, home
}

// TestBashSnapshotCarriesTheProfile: the profile runs once, not per
// command; its PATH (behind the probed $SHELL one), its variables, a
// function and an alias reach every command; a change to the profile
// takes the snapshot again.
func TestBashSnapshotCarriesTheProfile(t *testing.T) {
	t.Parallel()
	profile := `echo ran >> "$HOME/runs"
PATH=/profile/bin:$PATH; export PATH
export GREETING=hello
greet() { printf '%s %s\n' "$GREETING" "$1"; }
alias shout='printf "%s!\n"'
`
	_, c, home := snapshotHost(t, profile)
	const show = `printf '%s|%s|%s\n' "$PATH" "$GREETING" "${HOSTCORE_STARTED-unset}"; greet world; shout hey`
	for i := range 3 {
		id := 10 + i
		r := c.call(id, "tools.execute", bashParams("b"+string(rune('0'+i)), show, 0))
		out, _ := details(r)["stdout"].(string)
		lines := strings.Split(out, "\n")
		if r["ok"] != true || len(lines) < 3 {
			t.Fatalf("command %d: %v %q", i, r["message"], out)
		}
		if !strings.HasPrefix(lines[0], "/probed/bin:") || !strings.Contains(lines[0], ":/profile/bin") || !strings.HasSuffix(lines[0], "|hello|unset") {
			t.Fatalf("command %d saw %q", i, lines[0])
		}
		if lines[1] != "hello world" || lines[2] != "hey!" {
			t.Fatalf("command %d: the function and the alias gave %q", i, lines[1:])
		}
	}
	if runs, _ := os.ReadFile(filepath.Join(home, "runs")); string(runs) != "ran\n" {
		t.Fatalf("the profile ran %q for three commands, want once", runs)
	}
	// A changed profile is read again (its mtime is a second later, for
	// file systems that keep whole seconds).
	later := time.Now().Add(2 * time.Second)
	os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(strings.Replace(profile, "GREETING=hello", "GREETING=howdy", 1)), 0o600)
	os.Chtimes(filepath.Join(home, ".bash_profile"), later, later)
	// The stale snapshot may serve the call that notices; the next one
	// has the new one.
	deadline := time.Now().Add(15 * time.Second)
	for id := 20; ; id++ {
		r := c.call(id, "tools.execute", bashParams("c"+string(rune('0'+id-20)), `greet world`, 0))
		if out, _ := details(r)["stdout"].(string); out == "howdy world\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed profile never reached a command: %q", details(r)["stdout"])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBashProfileThatHangs: the snapshot's take gives up at its bound and
// says so in the log, once; commands then run with bash -lc, and one that
// times out behind the hanging profile says the profile did not finish
// rather than showing an empty output.
func TestBashProfileThatHangs(t *testing.T) {
	t.Parallel()
	h, c, _ := snapshotHost(t, "sleep 60\n")
	for i, id := range []int{10, 11} {
		if i == 1 {
			// By now the take has hit its 10 s bound.
			waitLog(t, h, "shell snapshot unavailable", 20*time.Second)
		}
		c.send(id+10, "tools.execute", bashParams("h"+string(rune('0'+i)), "echo never", 1))
		r := c.result(id + 10)
		msg, _ := r["message"].(string)
		if r["errorCode"] != "TOOL_TIMEOUT" || !strings.Contains(msg, "the login profile did not finish after 1 s; the command never started") {
			t.Fatalf("command %d: %v %q", i, r["errorCode"], msg)
		}
		if text := toolText(r); strings.Contains(text, "(empty)") {
			t.Fatalf("command %d: the text shows the empty streams: %q", i, text)
		}
	}
	if n := strings.Count(h.stderr.String(), "shell snapshot unavailable"); n != 1 {
		t.Fatalf("the fallback was logged %d times, want once", n)
	}
}

// TestBashLoginModeProfileThatHangs: in the login mode no snapshot is
// taken, and a command behind a profile that hangs says the profile did
// not finish.
func TestBashLoginModeProfileThatHangs(t *testing.T) {
	t.Parallel()
	h, c, _ := snapshotHost(t, "sleep 60\n")
	if got := c.call(2, "settings.update", map[string]any{"bashShellMode": "login"})["bashShellMode"]; got != "login" {
		t.Fatalf("settings.update gave bashShellMode %v", got)
	}
	r := c.call(10, "tools.execute", bashParams("l1", "echo never", 2))
	if msg, _ := r["message"].(string); r["errorCode"] != "TOOL_TIMEOUT" || !strings.Contains(msg, "the login profile did not finish after 2 s; the command never started") {
		t.Fatalf("%v %q", r["errorCode"], msg)
	}
	if strings.Contains(h.stderr.String(), "shell snapshot") {
		t.Fatalf("login mode took a snapshot:\n%s", h.stderr.String())
	}
}

// TestBashTimeoutOfAStartedCommandIsNotTheProfile: a command that began
// and then hung keeps the ordinary timeout report, in both modes.
func TestBashTimeoutOfAStartedCommandIsNotTheProfile(t *testing.T) {
	t.Parallel()
	_, c, _ := snapshotHost(t, "export X=1\n")
	for i, mode := range []string{"snapshot", "login"} {
		c.call(2+i, "settings.update", map[string]any{"bashShellMode": mode})
		r := c.call(10+i, "tools.execute", bashParams("t"+mode, "echo begun; sleep 30", 1))
		msg, _ := r["message"].(string)
		if r["errorCode"] != "TOOL_TIMEOUT" || strings.Contains(msg, "never started") || details(r)["stdout"] != "begun\n" {
			t.Fatalf("%s: %v %q %q", mode, r["errorCode"], msg, details(r)["stdout"])
		}
	}
}

// TestSettingsBashShellMode: the setting round-trips, refuses a value it
// does not know without changing anything, and null restores the default.
func TestSettingsBashShellMode(t *testing.T) {
	t.Parallel()
	_, c, _ := snapshotHost(t, "")
	if got := c.call(2, "settings.get", map[string]any{})["bashShellMode"]; got != "snapshot" {
		t.Fatalf("default bashShellMode %v", got)
	}
	if got := c.call(3, "settings.update", map[string]any{"bashShellMode": "login"})["bashShellMode"]; got != "login" {
		t.Fatalf("after update: %v", got)
	}
	if got := c.call(4, "settings.get", map[string]any{})["bashShellMode"]; got != "login" {
		t.Fatalf("settings.get after update: %v", got)
	}
	for i, bad := range []any{"bogus", "", 3} {
		c.send(5+i, "settings.update", map[string]any{"bashShellMode": bad, "defaultPermissionMode": "auto"})
		line := c.h.next(t, `{"id":`+string(rune('5'+i))+`}`)
		if !strings.Contains(line, "-32602") || !strings.Contains(line, "bashShellMode") {
			t.Fatalf("bashShellMode %v: %s", bad, line)
		}
	}
	got := c.call(9, "settings.get", map[string]any{})
	if got["bashShellMode"] != "login" || got["defaultPermissionMode"] != "ask" {
		t.Fatalf("a refused update changed the settings: %v", got)
	}
	if got := c.call(10, "settings.update", map[string]any{"bashShellMode": nil})["bashShellMode"]; got != "snapshot" {
		t.Fatalf("null gave %v", got)
	}
}

// waitLog waits until hostcore's log holds text.
func waitLog(t *testing.T, h *host, text string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(h.stderr.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", text, h.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
