package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"hostcore/handlers/frontend"
	"hostcore/perms"
)

// This file is the door for frontends: transports other than hostcore's own
// JSON-RPC (rpc/mcp serves MCP) that drive one session. They reach the same
// session store, the same tool set and the same execute path as
// tools.execute, so containment, the permission policy and its card,
// timeouts, review snapshots and the audit cannot differ between them.

// FrontendTool is one tool as a frontend lists it.
type FrontendTool = frontend.Tool

// EnsureSession creates, or reuses, the agent-mode session of a frontend
// bound to workspace, with permissionMode (frontend.EnsureSession).
func (s *Server) EnsureSession(ctx context.Context, name, workspace, permissionMode string) (string, error) {
	if !perms.ValidMode(permissionMode) {
		return "", fmt.Errorf("permission mode %q: want ask, accept-edits, auto or inherit", permissionMode)
	}
	root, err := canonicalDir(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %q: must be an existing directory", workspace)
	}
	return frontend.EnsureSession(ctx, s.store, name, root, permissionMode)
}

// FrontendTools lists the session's tools a frontend serves: what the
// session's mode shows, less those frontend.Serves leaves out.
func (s *Server) FrontendTools(ctx context.Context, sessionID string) ([]FrontendTool, error) {
	sess, err := s.loadSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	infos, _ := s.visibleTools(sess, "")
	var out []FrontendTool
	for _, info := range infos {
		if t := s.tools.Get(info.Name); t != nil {
			if ft, ok := frontend.Serves(t); ok {
				out = append(out, ft)
			}
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

// ModeWithoutCard names the least permissive permission mode under which
// a call that needed a card runs without one (frontend.ModeWithoutCard).
func (s *Server) ModeWithoutCard(toolName, reason string) string {
	if t := s.tools.Get(toolName); t != nil {
		return frontend.ModeWithoutCard(t, reason)
	}
	return ""
}
