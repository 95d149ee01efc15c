package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"
	"time"

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
	if _, err := s.loadSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	rt := s.runtime(p.SessionID)
	rt.mu.Lock()
	r := rt.running[p.ToolCallID]
	if r != nil {
		r.stop(errCallCancelled)
	}
	rt.mu.Unlock()
	if r == nil {
		return map[string]bool{"cancelled": false}, nil
	}
	n, ended := waitStopped(ctx, []*running{r})
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
	if _, err := s.loadSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	rt := s.runtime(p.SessionID)
	rt.mu.Lock()
	var stopped []*running
	for _, r := range rt.running {
		if r.turnID == p.TurnID {
			r.stop(errTurnCancelled)
			stopped = append(stopped, r)
		}
	}
	rt.mu.Unlock()
	n, ended := waitStopped(ctx, stopped)
	return map[string]any{"cancelled": n, "ended": ended}, nil
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

// auditRow is the wire form of an audit row: externalPath, errorCode,
// delegate and ruleId are null when empty.
type auditRow struct {
	store.AuditRow
	ExternalPath *string `json:"externalPath"`
	ErrorCode    *string `json:"errorCode"`
	Delegate     *string `json:"delegate"`
	RuleID       *string `json:"ruleId"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
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
	// Each row is encoded as SQLite reads it, into the one array the
	// answer carries: up to store.MaxAuditRows rows are held once, as
	// JSON, not as rows, wire rows and their encoding at the same time.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	buf.WriteByte('[')
	err := s.store.EachAudit(ctx, store.AuditFilter{SessionID: p.SessionID, ToolCallID: p.ToolCallID, Limit: p.Limit}, func(r store.AuditRow) error {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(auditRow{AuditRow: r, ExternalPath: strOrNil(r.ExternalPath), ErrorCode: strOrNil(r.ErrorCode), Delegate: strOrNil(r.Delegate), RuleID: strOrNil(r.RuleID)}); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's '\n'
		return nil
	})
	if err != nil {
		return nil, storageError("reading audit", err)
	}
	buf.WriteByte(']')
	return &auditAnswer{Rows: buf.Bytes()}, nil
}

// auditAnswer is audit.query's result.
type auditAnswer struct {
	Rows json.RawMessage `json:"rows"`
}

// auditFreeAfter is the answer size past which audit.query hands memory
// back to the system once the answer is written.
const auditFreeAfter = 1 << 20

// AfterReply gives back the memory of a large answer once it is written:
// the rows, their encoding and the line are garbage by then, but the Go
// runtime would keep their pages for minutes, and a long session would
// carry a query's peak for good. A collection of a heap this size costs
// a few milliseconds, paid after the answer, only for large ones.
func (a *auditAnswer) AfterReply() {
	if len(a.Rows) > auditFreeAfter {
		a.Rows = nil
		debug.FreeOSMemory()
	}
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
