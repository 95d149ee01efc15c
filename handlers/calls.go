package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"hostcore/store"
)

func decodeInto(raw json.RawMessage, v any) { json.Unmarshal(raw, v) }

var errCallCancelled = errors.New("cancelled by tools.cancel")
var errTurnCancelled = errors.New("cancelled by turn.cancel")

// toolsCancel aborts one running call.
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
	rt.mu.Unlock()
	if r == nil {
		return map[string]bool{"cancelled": false}, nil
	}
	r.cancel(errCallCancelled)
	return map[string]bool{"cancelled": true}, nil
}

// turnCancel aborts every running call of a turn.
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
	n := 0
	for _, r := range rt.running {
		if r.turnID == p.TurnID {
			r.cancel(errTurnCancelled)
			n++
		}
	}
	rt.mu.Unlock()
	return map[string]int{"cancelled": n}, nil
}

// auditRow is the wire form of an audit row: externalPath, errorCode and
// delegate are null when empty.
type auditRow struct {
	store.AuditRow
	ExternalPath *string `json:"externalPath"`
	ErrorCode    *string `json:"errorCode"`
	Delegate     *string `json:"delegate"`
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
	rows, err := s.store.QueryAudit(ctx, store.AuditFilter{SessionID: p.SessionID, ToolCallID: p.ToolCallID, Limit: p.Limit})
	if err != nil {
		return nil, storageError("reading audit", err)
	}
	out := make([]auditRow, len(rows))
	for i, r := range rows {
		out[i] = auditRow{AuditRow: r, ExternalPath: strOrNil(r.ExternalPath), ErrorCode: strOrNil(r.ErrorCode), Delegate: strOrNil(r.Delegate)}
	}
	return map[string]any{"rows": out}, nil
}

// ToolInfo is one entry of tools.list.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Risk        string          `json:"risk"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Deferred    bool            `json:"deferred"`
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
