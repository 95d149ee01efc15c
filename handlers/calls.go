package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"hostcore/handlers/auditquery"
	"hostcore/store"
)

func decodeInto(raw json.RawMessage, v any) { json.Unmarshal(raw, v) }

var errCallCancelled = errors.New("cancelled by tools.cancel")
var errTurnCancelled = errors.New("cancelled by turn.cancel")

// cancelWait bounds how long tools.cancel and turn.cancel wait for the
// calls they stopped to end. A stopped call ends within moments (a
// command's tree is killed after a short grace); one that does not (a read
// stuck in a dead network mount) is answered as cancelled, with ended
// false: it was told to stop and its own answer will say how it ended.
// (session.delete waits only 5 s: it runs inline, holding up every later
// line; a cancel runs on a worker.) A cancel's answer can come before the
// answer of the call it stopped: both are written once the call has ended.
const cancelWait = 10 * time.Second

// toolsCancel aborts one call of the session, running or still waiting to
// start, and answers once it has ended: cancelled is true only when the
// call ended as TOOL_ABORTED. A call that had already done its work (a
// Write that landed before the cancel) is answered cancelled: false, so a
// client never believes an applied change was stopped.
func (s *Server) toolsCancel(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID  string `json:"sessionId"`
		ToolCallID string `json:"toolCallId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" || p.ToolCallID == "" {
		return nil, invalidParams("invalid params: sessionId and toolCallId are required")
	}
	stopped, err := s.stopCalls(ctx, p.SessionID, errCallCancelled, func(id string, _ *running) bool { return id == p.ToolCallID })
	if err != nil {
		return nil, err
	}
	if len(stopped) == 0 {
		return map[string]bool{"cancelled": false}, nil
	}
	n, ended := waitStopped(ctx, stopped)
	return map[string]bool{"cancelled": n == 1, "ended": ended}, nil
}

// turnCancel aborts every call of a turn, running or waiting to start, and
// answers once they have ended with the number that ended as TOOL_ABORTED.
func (s *Server) turnCancel(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		TurnID    string `json:"turnId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" || p.TurnID == "" {
		return nil, invalidParams("invalid params: sessionId and turnId are required")
	}
	stopped, err := s.stopCalls(ctx, p.SessionID, errTurnCancelled, func(_ string, r *running) bool { return r.turnID == p.TurnID })
	if err != nil {
		return nil, err
	}
	n, ended := waitStopped(ctx, stopped)
	return map[string]any{"cancelled": n, "ended": ended}, nil
}

// stopCalls stops the calls of an existing session that match, with cause.
func (s *Server) stopCalls(ctx context.Context, sessionID string, cause error, match func(id string, r *running) bool) ([]*running, error) {
	if _, err := s.loadSession(ctx, sessionID); err != nil {
		return nil, err
	}
	rt := s.runtime(sessionID)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var stopped []*running
	for id, r := range rt.running {
		if match(id, r) {
			r.stop(cause)
			stopped = append(stopped, r)
		}
	}
	return stopped, nil
}

// waitStopped waits (at most cancelWait) for stopped calls to end and
// counts those that ended aborted; a call still running at the deadline
// counts as cancelled, and ended is false.
func waitStopped(ctx context.Context, calls []*running) (n int, ended bool) {
	deadline := time.NewTimer(cancelWait)
	defer deadline.Stop()
	ended = true
	for _, r := range calls {
		if ended {
			select {
			case <-r.done:
			case <-deadline.C:
				ended = false
			case <-ctx.Done():
				ended = false
			}
		}
		select {
		case <-r.done:
			if r.stopped {
				n++
			}
		default:
			n++
		}
	}
	return n, ended
}

func (s *Server) auditQuery(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID  string `json:"sessionId"`
		ToolCallID string `json:"toolCallId"`
		Limit      int    `json:"limit"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	ans, err := auditquery.Query(ctx, s.store, store.AuditFilter{SessionID: p.SessionID, ToolCallID: p.ToolCallID, Limit: p.Limit})
	if err != nil {
		return nil, storageError("reading audit", err)
	}
	return ans, nil
}

func (s *Server) toolsList(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		Delegate  string `json:"delegate"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	tools, catalog := s.visibleTools(sess, p.Delegate)
	return map[string]any{"tools": tools, "catalog": catalog}, nil
}
