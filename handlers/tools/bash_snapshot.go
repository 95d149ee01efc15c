package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"hostcore/sandbox/process"
	"hostcore/sandbox/shellenv"
)

// bashLaunch is how a command's shell starts: with the login profile's
// snapshot restored (`bash -c`), or with the profile run for it (`bash
// -lc`, the login mode and the fallback).
type bashLaunch struct {
	path string
	args []string
	env  []string
	mode shellenv.Mode
	// mark is left by the shell when it begins the command; nil when no
	// script of hostcore's runs before the command to leave it (login
	// mode with the user's own BASH_ENV), and a timeout then says nothing
	// of the profile.
	mark *shellenv.Started
}

// release removes the start mark's file.
func (l bashLaunch) release() {
	if l.mark != nil {
		l.mark.Remove()
	}
}

// prepareBash says how to start the command, as the mode setting says:
// through the snapshot, taken once and again when a profile file changes,
// so that a profile that costs half a second is not paid per command; in
// login mode, or when no snapshot can be had, with `bash -lc`.
func prepareBash(ctx context.Context, c *Call, bh BashHost, bash string, a BashArgs) (bashLaunch, error) {
	mode, cache := bh.ShellEnv(ctx)
	if mode == shellenv.ModeSnapshot && cache != nil {
		l, ok, err := snapshotLaunch(ctx, c, cache, bash, a)
		if err != nil || ok {
			return l, err
		}
	}
	return loginLaunch(ctx, c, bh, bash, a)
}

// snapshotLaunch runs the command as `bash -c` with the snapshot restored.
// The first command may wait for the snapshot to be taken (up to its 10 s
// bound): that wait is bounded by the call and by the command's own
// timeout, and is not taken from the command's time. ok is false when the
// command is to run with `bash -lc`: no snapshot could be taken (the
// cache logs why, once), the wait ran out, or the restore script could
// not be put back.
func snapshotLaunch(ctx context.Context, c *Call, cache *shellenv.Cache, bash string, a BashArgs) (l bashLaunch, ok bool, err error) {
	wait, cancel := context.WithTimeout(ctx, time.Duration(a.Timeout)*time.Second)
	sn, err := cache.Get(wait, bash)
	cancel()
	if ctx.Err() != nil {
		return l, false, ErrAborted
	}
	if err != nil {
		if !isFallback(err) {
			c.Host.Log().Debug("no shell snapshot in the command's timeout; this command runs with bash -lc", "toolCallId", c.ToolCallID)
		}
		return l, false, nil
	}
	mark, err := shellenv.NewStarted(c.Scratch)
	if err != nil {
		mark = nil
	}
	base := bashEnv(os.Environ(), "", c.Scratch, a.TTY, nil)
	path, args, env, err := sn.Command(a.Command, base, mark)
	if err != nil {
		c.Host.Log().Warn("the shell snapshot cannot be used; this command runs with bash -lc", "err", err)
		return l, false, nil
	}
	if a.TTY {
		// After the profile's own: nobody types into the terminal.
		env = append(env, "PAGER=cat", "GIT_PAGER=cat")
	}
	return bashLaunch{path: path, args: args, env: env, mode: shellenv.ModeSnapshot, mark: mark}, true, nil
}

func isFallback(err error) bool {
	var fe *shellenv.FallbackError
	return errors.As(err, &fe)
}

// loginLaunch runs the command as `bash -lc`: the profile runs for it,
// then the BASH_ENV script (BashEnvScript) puts the probed login PATH
// first and leaves the start mark.
func loginLaunch(ctx context.Context, c *Call, bh BashHost, bash string, a BashArgs) (bashLaunch, error) {
	// The login PATH probe is bounded (5 s) but not cancellable: an abort
	// must not wait for it.
	login := make(chan string, 1)
	go func() { login <- process.LoginPath() }()
	var loginPath string
	select {
	case loginPath = <-login:
	case <-ctx.Done():
		return bashLaunch{}, ErrAborted
	}
	envFile := ""
	env := bashEnv(os.Environ(), loginPath, c.Scratch, a.TTY, func() string { envFile = bh.EnvFile(bash); return envFile })
	mark, err := shellenv.NewStarted(c.Scratch)
	switch {
	case err != nil || envFile == "":
		// Nothing of hostcore's runs between the profile and the
		// command to leave the mark.
		mark = nil
	default:
		env = append(env, mark.Env())
	}
	return bashLaunch{path: bash, args: []string{"-lc", a.Command}, env: env, mode: shellenv.ModeLogin, mark: mark}, nil
}

// neverStarted rewrites a timeout whose shell never began the command:
// the login profile hung (a stale lock, a prompt for input), and the
// empty output would otherwise read as a command that hung itself.
func (l bashLaunch) neverStarted(f *Failure, res process.Result, a BashArgs) {
	if !res.TimedOut || l.mark == nil || l.mark.Done() {
		return
	}
	what := "the login profile did not finish"
	if l.mode == shellenv.ModeSnapshot {
		what = "the shell did not finish restoring the login profile's snapshot"
	}
	f.Message = fmt.Sprintf("Timed out: %s after %d s; the command never started, and its process tree was killed.", what, a.Timeout)
	var b strings.Builder
	b.WriteString(f.Message)
	// What the profile printed can say why it hung.
	if res.Stdout.Total > 0 || res.Stderr.Total > 0 {
		if a.TTY {
			section(&b, "output (terminal)", res.Stdout)
		} else {
			section(&b, "stdout", res.Stdout)
			section(&b, "stderr", res.Stderr)
		}
	}
	f.Text = b.String()
}
