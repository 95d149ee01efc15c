package handlers

import (
	"context"
	"encoding/json"
	"log/slog"

	"hostcore/handlers/modes"
	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/sandbox/background"
	"hostcore/sandbox/process"
	"hostcore/store"
)

// builtinTools is the registry of the built-in tools, each with its
// compiled schema. A schema that fails to compile stops the program at
// start-up.
func (s *Server) builtinTools() (*tools.Registry, error) {
	defs := []*tools.Def{
		tools.Read.Def(), tools.Glob.Def(), tools.Grep.Def(), tools.Write.Def(), tools.Edit.Def(), tools.Bash.Def(),
		tools.NewContext.Def(), tools.ToolSearch.Def(), tools.Task.Def(), tools.Ask.Def(), tools.BrowserPreview.Def(),
		tools.PluginCheck.Def(), tools.PluginScaffold.Def(), tools.PluginPack.Def(), tools.Skill.Def(),
		tools.BashOutput.Def(), tools.KillShell.Def(),
	}
	modeTools := modes.Tools(s.store, func(tc *tools.Call) modes.Envelope { return callOf(tc) })
	return tools.NewRegistry(append(defs, modeTools...)...)
}

// policyChecks are the envelope's own checks of a tool's call, run before
// the permission decision with the tool's precheck: a refusal there never
// shows a card. They are policy, not the tool's: Bash's denylist and the
// pinning of the turn's shell.
var policyChecks = map[string]func(ctx context.Context, c *call) *ToolResult{
	"Bash": bashPrecheck,
}

// decodeAny decodes one JSON value as encoding/json does into an
// interface{}, numbers as json.Number.
func decodeAny(raw json.RawMessage) (any, error) { return redact.Decode(raw) }

// toolCall is the call as its tool's body sees it.
func (c *call) toolCall() *tools.Call {
	if c.tc == nil {
		c.tc = &tools.Call{
			SessionID: c.sess.ID, TurnID: c.p.TurnID, ToolCallID: c.p.ToolCallID, PromptID: c.p.PromptID,
			MessageID: c.p.MessageID, Delegate: c.p.Delegate, Shell: c.p.Shell, Name: c.tool.Name,
			Workspace: c.sess.WorkspaceRoot, Scratch: c.scratchDir(), Subagents: subagentsOf(c.sess),
			Host: c,
		}
	}
	c.tc.Target, c.tc.HasTarget = c.target, c.hasTarget
	return c.tc
}

// callOf is the envelope's call behind a tool's call (the mode tools,
// which are the session's).
func callOf(tc *tools.Call) *call { return tc.Host.(*call) }

// The call is its body's tools.Host.

func (c *call) LockPath(abs string) func() { return c.s.lockPath(abs) }

func (c *call) SaveSnapshot(ctx context.Context, b *tools.Before, after []byte) (*store.Snapshot, error) {
	return c.s.saveSnapshot(ctx, c, b, after)
}

func (c *call) DropSnapshot(ctx context.Context, sn *store.Snapshot) { c.s.dropSnapshot(ctx, sn) }

func (c *call) CountFailure(kind, key string) int { return c.countFailure(kind, key) }

func (c *call) Notify(ctx context.Context, method string, params any) {
	c.s.client.Notify(ctx, method, params)
}

func (c *call) Request(ctx context.Context, method string, params, result any) error {
	return c.s.client.Call(ctx, method, params, result)
}

func (c *call) VisibleTools() []tools.ToolInfo {
	visible, _ := c.s.visibleTools(c.sess, "")
	return visible
}

func (c *call) Skills() tools.SkillSet { return c.s.tools }

func (c *call) Log() *slog.Logger { return c.s.log }

func (c *call) Bash() tools.BashHost { return bashHost{c} }

// bashHost is the call as Bash's tools.BashHost.
type bashHost struct{ c *call }

func (b bashHost) CheckShell(ctx context.Context) (string, error) {
	shell, r := b.c.checkShell(ctx)
	if r != nil {
		return "", &tools.Failure{Code: r.ErrorCode, Message: r.Message}
	}
	return shell, nil
}

func (b bashHost) EnvFile(shell string) string { return b.c.s.bashEnvFile(shell) }

func (b bashHost) Output() func(stream string, seq int, chunks [][]byte) { return b.c.outputNotifier() }

func (b bashHost) Warm() *process.Warm { return b.c.s.warm }

func (b bashHost) Batch() bool { return b.c.s.cfg.BatchCommands }

func (b bashHost) Sandbox(a tools.BashArgs, env []string) (tools.BashSandbox, error) {
	return b.c.bashSandbox(a, env)
}

func (b bashHost) CardNote(a tools.BashArgs) string { return b.c.bashCardNote(a) }

func (b bashHost) Background() *background.Registry { return b.c.s.bg }
