package handlers

import (
	"context"
	"encoding/json"

	"hostcore/handlers/modes"
	"hostcore/handlers/tools"
)

// The operating modes (design section 10) are package modes: the matrix,
// delegates' rights and the mode tools. The envelope applies them here.

// checkMode applies the operating-mode matrix before anything else.
func (s *Server) checkMode(c *call) *ToolResult {
	if f := modes.Check(c.tool, c.sess.Mode, c.p.BatchSize); f != nil {
		return failureResult(f)
	}
	return nil
}

// checkDelegate judges a delegate's call by its definition's rights.
func (s *Server) checkDelegate(ctx context.Context, c *call) *ToolResult {
	if f := modes.CheckDelegate(c.tool, c.sess.Mode, c.p.Delegate, c.sess.Subagents); f != nil {
		return failureResult(f)
	}
	return nil
}

// parseSubagents validates session.configure's subagent definitions.
func parseSubagents(raw json.RawMessage) ([]tools.Subagent, []string, error) {
	defs, warnings, err := modes.ParseSubagents(raw, unreadable)
	if err != nil {
		return nil, nil, invalidParams("invalid params: %v", err)
	}
	return defs, warnings, nil
}

// EarlierRunning counts the session's calls in flight that arrived before
// this one (modes.Envelope).
func (c *call) EarlierRunning() int {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	n := 0
	for id, r := range c.rt.running {
		if id != c.p.ToolCallID && (c.entry == nil || r.seq < c.entry.seq) {
			n++
		}
	}
	return n
}

// LockModeGate takes the session's mode gate for writing (modes.Envelope).
func (c *call) LockModeGate(ctx context.Context) (unlock func(), ok bool) {
	g := &c.rt.modeGate
	return g.Unlock, lockCtx(ctx, g.TryLock, g.Lock, g.Unlock)
}
