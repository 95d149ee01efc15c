package handlers

import (
	"context"
	"encoding/json"

	"hostcore/handlers/tools"
	"hostcore/perms"
)

// ProtocolVersion is the wire contract's version.
const ProtocolVersion = "1"

// Settings is the wire form (PROTOCOL section 2).
type Settings struct {
	DefaultPermissionMode string  `json:"defaultPermissionMode"`
	DefaultCommandShell   *string `json:"defaultCommandShell"`
	// BashDenylist extends Bash's built-in denylist (bash.go); hostcore's
	// own addition to the wire Settings.
	BashDenylist []string `json:"bashDenylist"`
	// The command sandbox (sandbox.go): commandSandbox is
	// "workspace-write", "read-only" or "off"; sandboxWritableDirs are
	// writable besides the roots; planBashReadOnly runs Plan and Goal's
	// commands read-only; sandbox is what the system offers.
	CommandSandbox      string        `json:"commandSandbox"`
	SandboxWritableDirs []string      `json:"sandboxWritableDirs"`
	PlanBashReadOnly    bool          `json:"planBashReadOnly"`
	Sandbox             SandboxStatus `json:"sandbox"`
	// BashShellMode is how Bash commands get the login profile's
	// environment (bash_snapshot.go): "snapshot" or "login".
	BashShellMode string `json:"bashShellMode"`
}

const (
	keyDefaultMode  = "defaultPermissionMode"
	keyDefaultShell = "defaultCommandShell"
)

func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		ClientInfo      json.RawMessage `json:"clientInfo"`
		ProtocolVersion string          `json:"protocolVersion"`
	}
	if err := decodeLenient(raw, &p); err != nil {
		return nil, err
	}
	return map[string]any{
		"protocolVersion":     ProtocolVersion,
		"serverInfo":          map[string]string{"name": "hostcore", "version": s.cfg.Version},
		"dataDir":             s.cfg.DataDir,
		"permissionTimeoutMs": s.cfg.PermissionTimeout.Milliseconds(),
		"sandbox":             sandboxStatus(),
	}, nil
}

func (s *Server) globalMode(ctx context.Context) (string, error) {
	v, ok, err := s.store.GetSetting(ctx, keyDefaultMode)
	if err != nil {
		return "", err
	}
	if !ok {
		return perms.ModeAsk, nil
	}
	return v, nil
}

func (s *Server) settings(ctx context.Context) (Settings, error) {
	mode, err := s.globalMode(ctx)
	if err != nil {
		return Settings{}, storageError("reading settings", err)
	}
	out := Settings{DefaultPermissionMode: mode}
	if v, ok, err := s.store.GetSetting(ctx, keyDefaultShell); err != nil {
		return Settings{}, storageError("reading settings", err)
	} else if ok {
		out.DefaultCommandShell = &v
	}
	if out.BashDenylist, err = s.bashDenylist(ctx); err != nil {
		return Settings{}, storageError("reading settings", err)
	}
	if err = s.sandboxSettings(ctx, &out); err != nil {
		return Settings{}, storageError("reading settings", err)
	}
	out.BashShellMode = string(s.shellMode(ctx))
	return out, nil
}

func (s *Server) settingsGet(ctx context.Context, raw json.RawMessage) (any, error) {
	return s.settings(ctx)
}

// settingsUpdate checks every field before it saves any, and saves them in
// one transaction: a request answered with an error changes nothing (a
// rejected shell must not leave the mode switched to auto behind it).
func (s *Server) settingsUpdate(ctx context.Context, raw json.RawMessage) (any, error) {
	s.settleLookups() // calls read before this line are judged as things stood then (ticket.go)
	var p struct {
		DefaultPermissionMode *string         `json:"defaultPermissionMode"`
		DefaultCommandShell   json.RawMessage `json:"defaultCommandShell"`
		BashDenylist          json.RawMessage `json:"bashDenylist"`
		sandboxUpdate
		BashShellMode json.RawMessage `json:"bashShellMode"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	changes := map[string]*string{}
	if p.DefaultPermissionMode != nil {
		m := *p.DefaultPermissionMode
		if m != perms.ModeAsk && m != perms.ModeAcceptEdits && m != perms.ModeAuto {
			return nil, invalidParams("invalid params: defaultPermissionMode must be ask, accept-edits or auto")
		}
		changes[keyDefaultMode] = &m
	}
	if len(p.DefaultCommandShell) > 0 {
		if string(p.DefaultCommandShell) == "null" {
			changes[keyDefaultShell] = nil
		} else {
			var id string
			if err := json.Unmarshal(p.DefaultCommandShell, &id); err != nil {
				return nil, invalidParams("invalid params: defaultCommandShell must be a string or null")
			}
			if !shellAvailable(id) {
				return nil, appError(tools.CodeShellInvalid, "shell %q is unknown or not available on this platform", id)
			}
			changes[keyDefaultShell] = &id
		}
	}
	if len(p.BashDenylist) > 0 {
		v, err := parseBashDenylist(p.BashDenylist)
		if err != nil {
			return nil, err
		}
		changes[keyBashDenylist] = v
	}
	if err := p.sandboxUpdate.check(changes); err != nil {
		return nil, err
	}
	if len(p.BashShellMode) > 0 {
		v, err := parseShellMode(p.BashShellMode)
		if err != nil {
			return nil, err
		}
		changes[keyShellMode] = v
	}
	if err := s.store.SetSettings(ctx, changes); err != nil {
		return nil, storageError("saving settings", err)
	}
	return s.settings(ctx)
}

func (s *Server) shutdown(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.cfg.Shutdown != nil {
		s.cfg.Shutdown()
	}
	return struct{}{}, nil
}
