package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/sandbox/landlock"
)

// The command sandbox's settings (README "Command sandbox").
const (
	keyCommandSandbox   = "commandSandbox"
	keySandboxWritable  = "sandboxWritableDirs"
	keyPlanBashReadOnly = "planBashReadOnly"

	sandboxOff = "off"
	// maxWritableDirs and maxWritableDirBytes bound sandboxWritableDirs
	// as the denylist's bounds bound bashDenylist: every entry is a rule
	// built at every command.
	maxWritableDirs     = 64
	maxWritableDirBytes = 4096
	// maxDataDirEntries bounds the data dir's listing at every command;
	// past it the whole data dir is denied (the BASH_ENV script then
	// cannot be read, and the command keeps the PATH its profile leaves).
	maxDataDirEntries = 256
)

// landlockOffVar, set to "off" in hostcore's environment, makes hostcore
// behave as on a kernel without Landlock: the tests take the "none" path
// through the binary with it. Whoever sets hostcore's environment
// controls hostcore anyway; a command cannot change it.
const landlockOffVar = "HOSTCORE_LANDLOCK"

// SandboxStatus is the sandbox the system offers, in initialize and
// settings.get: {kind: "landlock", abi} or {kind: "none", reason}. A
// reason beside "landlock" says what the kernel's ABI lacks.
type SandboxStatus struct {
	Kind   string `json:"kind"`
	ABI    int    `json:"abi,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func sandboxStatus() SandboxStatus {
	if os.Getenv(landlockOffVar) == "off" {
		return SandboxStatus{Kind: tools.SandboxNone, Reason: "Landlock is turned off in hostcore's environment (" + landlockOffVar + "=off): commands run unsandboxed"}
	}
	abi, reason := landlock.Available()
	if abi == 0 {
		return SandboxStatus{Kind: tools.SandboxNone, Reason: reason}
	}
	return SandboxStatus{Kind: tools.SandboxLandlock, ABI: abi, Reason: reason}
}

// sandboxSettings reads the sandbox's members of Settings into out. The
// default: workspace-write, no extra dirs, and Plan's commands not
// read-only, since Plan is planning intent, not a strict read-only
// profile (design section 10), and its Bash may build or test.
func (s *Server) sandboxSettings(ctx context.Context, out *Settings) error {
	out.CommandSandbox, out.SandboxWritableDirs, out.PlanBashReadOnly, out.Sandbox = string(landlock.WorkspaceWrite), []string{}, false, sandboxStatus()
	v, ok, err := s.store.GetSetting(ctx, keyCommandSandbox)
	if err != nil {
		return err
	}
	if ok {
		out.CommandSandbox = v
	}
	if v, ok, err = s.store.GetSetting(ctx, keySandboxWritable); err != nil {
		return err
	} else if ok {
		json.Unmarshal([]byte(v), &out.SandboxWritableDirs)
	}
	if v, ok, err = s.store.GetSetting(ctx, keyPlanBashReadOnly); err != nil {
		return err
	} else if ok {
		out.PlanBashReadOnly = v == "true"
	}
	return nil
}

// sandboxUpdate is settings.update's sandbox members.
type sandboxUpdate struct {
	CommandSandbox      json.RawMessage `json:"commandSandbox"`
	SandboxWritableDirs json.RawMessage `json:"sandboxWritableDirs"`
	PlanBashReadOnly    json.RawMessage `json:"planBashReadOnly"`
}

// check validates the members present and adds them to changes; null
// restores a member's default.
func (u sandboxUpdate) check(changes map[string]*string) error {
	if len(u.CommandSandbox) > 0 {
		var m *string
		if err := json.Unmarshal(u.CommandSandbox, &m); err != nil || m != nil && *m != string(landlock.WorkspaceWrite) && *m != string(landlock.ReadOnly) && *m != sandboxOff {
			return invalidParams("invalid params: commandSandbox must be workspace-write, read-only, off or null")
		}
		changes[keyCommandSandbox] = m
	}
	if len(u.SandboxWritableDirs) > 0 {
		if string(u.SandboxWritableDirs) == "null" {
			changes[keySandboxWritable] = nil
		} else {
			var dirs []string
			if err := json.Unmarshal(u.SandboxWritableDirs, &dirs); err != nil {
				return invalidParams("invalid params: sandboxWritableDirs must be an array of absolute paths or null")
			}
			if err := checkWritableDirs(dirs); err != nil {
				return err
			}
			b, _ := json.Marshal(dirs)
			v := string(b)
			changes[keySandboxWritable] = &v
		}
	}
	if len(u.PlanBashReadOnly) > 0 {
		var b *bool
		if err := json.Unmarshal(u.PlanBashReadOnly, &b); err != nil {
			return invalidParams("invalid params: planBashReadOnly must be a boolean or null")
		}
		if b == nil {
			changes[keyPlanBashReadOnly] = nil
		} else {
			v := "false"
			if *b {
				v = "true"
			}
			changes[keyPlanBashReadOnly] = &v
		}
	}
	return nil
}

// checkWritableDirs refuses what would make the sandbox pointless or the
// policy invalid: a relative path, the root, a NUL, too many or too long.
func checkWritableDirs(dirs []string) error {
	if len(dirs) > maxWritableDirs {
		return invalidParams("invalid params: sandboxWritableDirs has %d entries; at most %d", len(dirs), maxWritableDirs)
	}
	for i, d := range dirs {
		if len(d) > maxWritableDirBytes || !filepath.IsAbs(d) || filepath.Clean(d) == "/" || strings.IndexByte(d, 0) >= 0 {
			return invalidParams("invalid params: sandboxWritableDirs[%d] must be an absolute path of at most %d bytes naming more than the root", i, maxWritableDirBytes)
		}
	}
	return nil
}

// unsandboxed is the call's args when it is a Bash call that asks to run
// outside the sandbox.
func (c *call) unsandboxed() bool {
	a, ok := c.typed.(*tools.BashArgs)
	return ok && c.tool.Name == "Bash" && c.tool.PluginID == "" && a.Unsandboxed()
}

// decideUnsandboxed decides a Bash call that asks to run outside the
// sandbox: the mode matrix still refuses what it refuses, and otherwise a
// person is asked, in every permission mode, whatever the session's
// grants. The answer is never remembered: allow-session acts as
// allow-once, since a grant would let every later command leave the
// sandbox unseen.
func (s *Server) decideUnsandboxed(ctx context.Context, c *call, a *auditing) *ToolResult {
	t := c.tool
	v := perms.Decide(perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: c.sess.Mode, PermMode: perms.ModeAsk})
	if v.Outcome == perms.Deny {
		return failResult(v.Code, "%s", v.Message)
	}
	ans := s.askPermission(ctx, c, perms.ReasonTool)
	a.prompted, a.wait = !ans.Unseen, ans.Wait
	switch ans.Decision {
	case perms.AllowOnce, perms.AllowSession:
		a.decision = decOnce
		return nil
	}
	return denied(ans, ctx)
}

// bashCardNote is what a Bash card says before the command when the
// command will not run confined: the person approves knowing it.
func (c *call) bashCardNote(a tools.BashArgs) string {
	if a.Unsandboxed() {
		return "[runs OUTSIDE the sandbox, unconfined; justification: " + a.Justification + "] "
	}
	var set Settings
	err := c.s.sandboxSettings(context.Background(), &set)
	switch {
	case err != nil:
		return ""
	case set.CommandSandbox == sandboxOff:
		return "[the command sandbox is off in the settings: runs unconfined] "
	case set.Sandbox.Kind == tools.SandboxNone:
		return "[no command sandbox on this system (" + set.Sandbox.Reason + "): runs unconfined] "
	}
	return ""
}

// bashSandbox is how the command runs: confined by the policy the
// settings and the session make, or unconfined when the call was
// approved to leave the sandbox, the settings turn it off, or the system
// has none; never unconfined silently.
func (c *call) bashSandbox(a tools.BashArgs, env []string) (tools.BashSandbox, error) {
	ctx := context.Background()
	if a.Unsandboxed() {
		return tools.BashSandbox{Kind: tools.SandboxOff, Reason: "the call asked to run outside the sandbox, and a person approved it"}, nil
	}
	var set Settings
	if err := c.s.sandboxSettings(ctx, &set); err != nil {
		return tools.BashSandbox{}, tools.Fail(tools.CodeToolFailed, "reading the sandbox settings failed (%v); the command was not run", err)
	}
	switch {
	case set.CommandSandbox == sandboxOff:
		return tools.BashSandbox{Kind: tools.SandboxOff, Reason: "the commandSandbox setting is off"}, nil
	case set.Sandbox.Kind == tools.SandboxNone:
		return tools.BashSandbox{Kind: tools.SandboxNone, Reason: set.Sandbox.Reason}, nil
	}
	mode := landlock.WorkspaceWrite
	if set.CommandSandbox == string(landlock.ReadOnly) || set.PlanBashReadOnly && (c.sess.Mode == perms.OpPlan || c.sess.Mode == perms.OpGoal) {
		mode = landlock.ReadOnly
	}
	// A root that does not exist gets no rule: the scratch is made now,
	// should it have gone since the call was checked.
	if err := c.ensureScratch(); err != nil {
		return tools.BashSandbox{}, tools.Fail(tools.CodeToolFailed, "%v; the command was not run", err)
	}
	p := landlock.DefaultPolicy(mode, c.sess.WorkspaceRoot, c.scratchDir(), env)
	if mode == landlock.WorkspaceWrite && p.CacheDir != "" {
		// So is the user's cache dir, which a fresh account lacks: the
		// first build would find it closed for good.
		os.MkdirAll(p.CacheDir, 0o700)
	}
	if p.PrivateTmp != "" {
		// Read-only: the command's TMPDIR, in place of the shared temp
		// dirs it may not write.
		if err := os.MkdirAll(p.PrivateTmp, 0o700); err != nil {
			return tools.BashSandbox{}, tools.Fail(tools.CodeToolFailed, "making the command's temp dir failed (%v); the command was not run", err)
		}
	}
	p.WritableExtra = set.SandboxWritableDirs
	extra, err := c.s.bashDenylist(ctx)
	if err != nil {
		return tools.BashSandbox{}, tools.Fail(tools.CodeToolFailed, "reading the denylist failed (%v); the command was not run", err)
	}
	p.Deny = append(append(p.Deny, extra...), dataDirDeny(c.s.cfg.DataDir)...)
	return tools.BashSandbox{Policy: &p, Kind: tools.SandboxLandlock}, nil
}

// dataDirDeny is what a command may not reach of hostcore's data dir: the
// audit database, the other sessions' scratch dirs, the review snapshots,
// everything but the scripts bash reads before the command (BASH_ENV)
// and, granted as a root of its own, the session's scratch. Entries are
// denied one by one so the scripts stay readable; a data dir too large to
// list, or one that cannot be listed, is denied whole.
func dataDirDeny(dir string) []string {
	if dir == "" {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return []string{dir}
	}
	defer f.Close()
	names, err := f.Readdirnames(maxDataDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) || len(names) > maxDataDirEntries {
		return []string{dir}
	}
	var out []string
	for _, n := range names {
		if n == "bash_env.sh" || strings.HasPrefix(n, "shell-snapshot-") && strings.HasSuffix(n, ".sh") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out
}
