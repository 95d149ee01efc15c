package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"hostcore/handlers/tools"
	"hostcore/sandbox/process"
	"hostcore/sandbox/shellenv"
)

// keyShellMode is the setting that says how Bash commands get the login
// profile's environment: "snapshot" (the default: the profile runs once,
// its environment, functions and aliases restored for each command) or
// "login" (`bash -lc`, the profile run for each command).
const keyShellMode = "bashShellMode"

// newShellCache is the snapshot cache of the Server: its restore scripts
// live in the data dir. A snapshot that cannot be taken (a profile that
// hangs past 10 s, one whose restore would print) is logged once, and
// commands run with `bash -lc` until a profile file changes.
func newShellCache(cfg Config, log *slog.Logger) *shellenv.Cache {
	return shellenv.NewCache(shellenv.Options{Dir: cfg.DataDir, Env: os.Environ()}, func(err error) {
		log.Warn("shell snapshot unavailable; Bash commands run with bash -lc", "err", err)
	})
}

// shellMode reads the setting; a stored value it does not know, or one
// that cannot be read, is the default.
func (s *Server) shellMode(ctx context.Context) shellenv.Mode {
	v, _, err := s.store.GetSetting(ctx, keyShellMode)
	if err != nil {
		return shellenv.ModeSnapshot
	}
	m, err := shellenv.ParseMode(v)
	if err != nil {
		return shellenv.ModeSnapshot
	}
	return m
}

// parseShellMode checks settings.update's bashShellMode and returns the
// value to store: nil (JSON null) goes back to the default.
func parseShellMode(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, invalidParams("invalid params: bashShellMode must be %q, %q or null", shellenv.ModeSnapshot, shellenv.ModeLogin)
	}
	m, err := shellenv.ParseMode(v)
	if err != nil || v == "" {
		return nil, invalidParams("invalid params: bashShellMode must be %q, %q or null", shellenv.ModeSnapshot, shellenv.ModeLogin)
	}
	out := string(m)
	return &out, nil
}

// prefetchShellEnv readies what the next command starts from while its
// card is open: the snapshot (taken in the background if there is none,
// or it is stale) or, in login mode, the login shell's PATH (cached, up
// to 5 s). Either way the first command does not wait for it.
func (s *Server) prefetchShellEnv(ctx context.Context) {
	if s.shellMode(ctx) == shellenv.ModeLogin {
		go process.LoginPath()
		return
	}
	if bash, err := process.ResolveBash(); err == nil {
		s.snap.Prefetch(bash)
	}
}

func (b bashHost) ShellEnv(ctx context.Context) (shellenv.Mode, *shellenv.Cache) {
	return b.c.s.shellMode(ctx), b.c.s.snap
}

var _ tools.BashHost = bashHost{}
