package store

import (
	"context"
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// seenCalls holds, per session, the tool call ids used since the session
// was created, loaded from tool_calls the first time a session is asked
// about. hostcore is the database's only user, so the set stays exact: a
// lookup costs a map access instead of a statement (17 µs of a Read).
type seenCalls struct {
	mu       sync.Mutex
	sessions map[string]map[string]struct{}
}

// add records an id in a session's set, if the set is loaded (otherwise
// loading it finds the id).
func (c *seenCalls) add(sessionID, toolCallID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ids, ok := c.sessions[sessionID]; ok {
		ids[toolCallID] = struct{}{}
	}
}

// forget drops a session's set.
func (c *seenCalls) forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, sessionID)
}

// ToolCallSeen says whether a tool call id was used in a session (reserved
// by ReserveToolCall, or recorded with an audit row by InsertAudit) since
// the session was created: DeleteSession forgets its ids.
func (s *Store) ToolCallSeen(ctx context.Context, sessionID, toolCallID string) (bool, error) {
	c := &s.seen
	c.mu.Lock()
	defer c.mu.Unlock()
	ids, ok := c.sessions[sessionID]
	if !ok {
		// Loaded under c.mu: an add waiting on it lands in the set once
		// it is there, and the statement below (after take has moved the
		// journal) sees every id recorded before it.
		ids = map[string]struct{}{}
		err := s.read(ctx, func(conn *sqlite.Conn) error {
			return sqlitex.Execute(conn, `SELECT tool_call_id FROM tool_calls WHERE session_id = ?`, &sqlitex.ExecOptions{
				Args:       []any{sessionID},
				ResultFunc: func(st *sqlite.Stmt) error { ids[st.ColumnText(0)] = struct{}{}; return nil },
			})
		})
		if err != nil {
			return false, err
		}
		// Rows the journal could not move yet.
		for _, id := range s.journal.pendingCalls(sessionID) {
			ids[id] = struct{}{}
		}
		if c.sessions == nil {
			c.sessions = map[string]map[string]struct{}{}
		}
		c.sessions[sessionID] = ids
	}
	_, seen := ids[toolCallID]
	return seen, nil
}

// ReserveToolCall records that a tool call id is being executed in a
// session. It returns ErrExists if the id was seen before, so a call never
// runs twice, even across restarts.
func (s *Store) ReserveToolCall(ctx context.Context, sessionID, toolCallID string) error {
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `INSERT INTO tool_calls (session_id, tool_call_id, created_at) VALUES (?, ?, ?)`, &sqlitex.ExecOptions{
			Args: []any{sessionID, toolCallID, Now()},
		})
	})
	if isConstraint(err) {
		return ErrExists
	}
	if err == nil {
		s.seen.add(sessionID, toolCallID)
	}
	return err
}
