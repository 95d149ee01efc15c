//go:build linux || darwin

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestSandboxRulesetKeptWhileTheDiskStays: with a Warm, the ruleset
// hostcore made for a policy serves the next command of that policy
// while the paths it was planned from stay as they were, and is made
// again when one changes: a private key put in the home after the first
// command is denied to the next, a file made beside it is readable.
func TestSandboxRulesetKeptWhileTheDiskStays(t *testing.T) {
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip(reason)
	}
	base, err := os.MkdirTemp("/var/tmp", "llkeep-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(ws, 0o755)
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, ws, "", []string{"HOME=" + home})
	w := newWarm(t)
	run := func(cmd string) string {
		t.Helper()
		res, err := Run(t.Context(), Spec{Path: "/bin/bash", Args: []string{"-c", cmd}, Dir: ws, Sandbox: &p, Warm: w})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(res.Stdout.Head)
	}
	// A plan made just after its directories changed is not kept (the
	// modification times could hide a change in the same clock tick):
	// the fixture settles first, so that the second command would get
	// the first one's ruleset if nothing told the cache to plan again.
	time.Sleep(200 * time.Millisecond)
	if got := run(`echo x > a.txt && cat a.txt`); got != "x" {
		t.Fatalf("first command: %q", got)
	}
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("SECRET\n"), 0o600)
	os.WriteFile(filepath.Join(home, "notes.txt"), []byte("notes\n"), 0o644)
	if got := run(`cat ` + home + `/.ssh/id_rsa 2>/dev/null || echo denied; cat ` + home + `/notes.txt`); got != "denied\nnotes" {
		t.Errorf("after a key was put in the home: %q, want denied and the notes", got)
	}
}

// TestSandboxRulesetStuck: a ruleset whose making does not end (a file
// system that does not answer) holds the call no longer than its
// timeout, or than its cancel; nothing runs.
func TestSandboxRulesetStuck(t *testing.T) {
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip(reason)
	}
	held := make(chan struct{})
	prepareHeld.Store(&held)
	defer func() { prepareHeld.Store(nil); close(held) }()
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, t.TempDir(), "", os.Environ())
	marker := filepath.Join(t.TempDir(), "ran")
	s := Spec{Path: "/bin/bash", Args: []string{"-c", "touch " + marker}, Sandbox: &p, Timeout: 300 * time.Millisecond}
	res, err := Run(t.Context(), s)
	if err != nil || !res.TimedOut || !res.NotStarted {
		t.Errorf("timeout while the ruleset is made: %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	s.Timeout, s.Warm = 0, newWarm(t)
	if _, err := Run(ctx, s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel while the ruleset is made: err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// TestWarmRefreshesTheRuleset: once a command is done, its Warm makes
// the policy's ruleset again in the background (the first command of a
// policy keeps none: see landlock.Cache), so the next command finds one
// kept without another command before it.
func TestWarmRefreshesTheRuleset(t *testing.T) {
	if abi, reason := landlock.Available(); abi == 0 {
		t.Skip(reason)
	}
	base, err := os.MkdirTemp("/var/tmp", "llrefresh-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	p := landlock.DefaultPolicy(landlock.WorkspaceWrite, base, "", []string{"HOME=" + base})
	kept := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link == "anon_inode:[landlock-ruleset]" {
				n++
			}
		}
		return n
	}
	// Each try is the first command of a fresh Warm. Other programs'
	// changes above base may spoil a plan: a few tries.
	for try := range 5 {
		time.Sleep(200 * time.Millisecond)
		w := NewWarm(time.Minute)
		if _, err := Run(t.Context(), Spec{Path: "/bin/true", Dir: base, Sandbox: &p, Warm: w}); err != nil {
			t.Fatal(err)
		}
		got := 0
		for deadline := time.Now().Add(2 * time.Second); got == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got = kept()
		}
		w.Close()
		if got == 1 {
			return
		}
		t.Logf("try %d: %d rulesets kept", try, got)
	}
	t.Error("no ruleset was kept after the commands, though nothing changed")
}
