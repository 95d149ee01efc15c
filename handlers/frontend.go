package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"hostcore/perms"
	"hostcore/store"
)

// This file is the door for frontends: transports other than hostcore's own
// JSON-RPC (rpc/mcp serves MCP) that drive one session. They reach the same
// session store, the same tool set and the same execute path as
// tools.execute, so containment, the permission policy and its card,
// timeouts, review snapshots and the audit cannot differ between them.

// FrontendTool is one tool as a frontend lists it.
type FrontendTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// ReadOnly tools only read (Read, Glob, Grep); Destructive ones may
	// change or delete what is there (Write, Edit, Bash).
	ReadOnly    bool
	Destructive bool
}

// FrontendSessionID is the session a frontend serves for a workspace: the
// same canonical workspace always gives the same id, so restarting the
// frontend on the same data dir continues the session (its audit, its
// call ids) instead of piling up new ones.
func FrontendSessionID(frontend, canonicalWorkspace string) string {
	sum := sha256.Sum256([]byte(canonicalWorkspace))
	return frontend + "-" + hex.EncodeToString(sum[:8])
}

// EnsureSession creates, or reuses, the agent-mode session of a frontend
// bound to workspace, and stores permissionMode on it: the mode a frontend
// was started with is the one that applies, whatever an earlier run used.
func (s *Server) EnsureSession(ctx context.Context, frontend, workspace, permissionMode string) (string, error) {
	if !perms.ValidMode(permissionMode) {
		return "", fmt.Errorf("permission mode %q: want ask, accept-edits, auto or inherit", permissionMode)
	}
	root, err := canonicalDir(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %q: must be an existing directory", workspace)
	}
	id := FrontendSessionID(frontend, root)
	for range 2 {
		row, err := s.store.GetSession(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			row = store.Session{ID: id, WorkspaceRoot: root, PermissionMode: permissionMode, Mode: perms.OpAgent, Subagents: "[]", CreatedAt: store.Now()}
			err = s.store.CreateSession(ctx, row)
			if errors.Is(err, store.ErrExists) {
				continue // another frontend process created it first
			}
			if err != nil {
				return "", fmt.Errorf("creating session: %w", err)
			}
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("looking up session: %w", err)
		}
		if row.WorkspaceRoot != root {
			return "", fmt.Errorf("session %s is bound to %s, not %s", id, row.WorkspaceRoot, root)
		}
		if row.PermissionMode != permissionMode {
			row.PermissionMode = permissionMode
			if err := s.store.UpdateSession(ctx, row); err != nil {
				return "", fmt.Errorf("updating session: %w", err)
			}
		}
		return id, nil
	}
	return "", fmt.Errorf("session %s: created and missing at once", id)
}

// FrontendTools lists the session's tools a frontend serves: what the
// session's mode shows, less the tools that only make sense to hostcore's
// own agent runtime. Control tools (mode and submit tools, whose approval
// needs approval.resolve; new_context; ToolSearch, as every tool is listed
// at once; Task; asktool) and BrowserPreview (it opens a panel of the
// native client) are left out; so are plugin tools, which only a native
// client can register.
func (s *Server) FrontendTools(ctx context.Context, sessionID string) ([]FrontendTool, error) {
	sess, err := s.loadSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	infos, _ := s.visibleTools(sess, "")
	var out []FrontendTool
	for _, info := range infos {
		t := s.tools.Get(info.Name)
		if t == nil || t.Name == "BrowserPreview" {
			continue
		}
		switch {
		// KillShell ends what the frontend's own Bash ran in the background.
		case t.Class == perms.ClassRead, t.Class == perms.ClassEdit, t.Class == perms.ClassExec, t.Name == "KillShell":
			out = append(out, FrontendTool{
				Name: t.Name, Description: t.Description, InputSchema: t.SchemaJSON,
				ReadOnly: t.Class == perms.ClassRead, Destructive: t.Class != perms.ClassRead,
			})
		}
	}
	return out, nil
}

// Execute runs one call through the execute path of tools.execute. The
// mutation ticket is taken on entry, so a frontend that calls Execute in
// arrival order gets its mutations applied in that order.
func (s *Server) Execute(ctx context.Context, p ExecuteParams) (*ToolResult, error) {
	return s.ExecuteArrival(ctx, s.Arrive(p), p.Args)
}

// Arrival is a call registered the moment a frontend read it (Arrive),
// as the native loop registers each line: its place among its session's
// mutations is taken then, whatever order the frontend's goroutines run
// in afterwards. It is run once with ExecuteArrival, or dropped.
type Arrival struct {
	s  *Server
	p  ExecuteParams
	tk *ticket
}

// Arrive registers a call; p needs no args yet (and its args, if set, are
// not encoded here: the ticket needs only the ids and the tool's name).
func (s *Server) Arrive(p ExecuteParams) *Arrival {
	ids := p
	ids.Args = nil
	raw, _ := json.Marshal(ids)
	tk := s.takeTicket(raw)
	if tk != nil {
		tk.partial = true // execute decodes the params with their args
	}
	return &Arrival{s: s, p: p, tk: tk}
}

// ExecuteArrival runs a registered call with its args, as Execute does.
func (s *Server) ExecuteArrival(ctx context.Context, a *Arrival, args json.RawMessage) (*ToolResult, error) {
	p := a.p
	p.Args = args
	raw, err := json.Marshal(p)
	if err != nil {
		a.Drop()
		return nil, err
	}
	out, err := s.execute(ctx, raw, a.tk)
	if err != nil {
		return nil, err
	}
	res := out.(*ToolResult)
	res.AfterReply() // a frontend writes the answer after this returns
	return res, nil
}

// Drop gives up a registered call that will not run: the mutations after
// it do not wait for it.
func (a *Arrival) Drop() { a.s.releaseTicket(a.tk) }

// AbortArrival ends a registered call that will never run (its frontend
// is closing) the way a native call read as shutdown begins ends: as
// TOOL_ABORTED, with its audit row (PROTOCOL section 6: every call that
// reaches a session has one). Its args are those given to Arrive.
func (s *Server) AbortArrival(a *Arrival) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := a.p.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	s.ExecuteArrival(ctx, a, args)
}

// ModeWithoutCard names the least permissive permission mode under which a
// call that needed a card (reason "tool" or "outside-path") runs without
// one, or "" when none does. A frontend that cannot show cards says it in
// its fail-closed message.
func (s *Server) ModeWithoutCard(toolName, reason string) string {
	t := s.tools.Get(toolName)
	if t == nil {
		return ""
	}
	for _, m := range []string{perms.ModeAcceptEdits, perms.ModeAuto} {
		v := perms.Decide(perms.Request{Tool: t.Name, Class: t.Class, Risk: t.Risk, OpMode: perms.OpAgent, PermMode: m,
			Outside: reason == perms.ReasonOutsidePath})
		if v.Outcome == perms.Allow {
			return m
		}
	}
	return ""
}
