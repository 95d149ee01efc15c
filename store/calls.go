package store

import (
	"context"
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// seenCalls holds, per session, the tool call ids used since the session
// was created, loaded from tool_calls the first time a session is asked
// about. hostcore is the database's only user, so the set stays exact: a
// lookup costs a map access instead of a statement (17 µs of a Read, and
// a move of the audit journal into SQLite on every call).
//
// A session of days makes hundreds of thousands of calls, so an id is
// held as a keyed 64-bit hash, 8 bytes in a sorted slice, not as a
// string in a map (about 75 bytes an id). A hash found is confirmed
// against the database: two ids sharing a hash never refuse a fresh call.
type seenCalls struct {
	mu       sync.Mutex
	seed     maphash.Seed
	sessions map[string]*idSet
}

// idSet is a set of id hashes: a sorted slice, and the hashes added since
// it was last merged (merged every idMerge, so that an add costs no copy
// of the slice).
type idSet struct {
	sorted []uint64
	recent map[uint64]struct{}
}

const idMerge = 1024

func (s *idSet) has(h uint64) bool {
	if _, ok := s.recent[h]; ok {
		return true
	}
	_, ok := slices.BinarySearch(s.sorted, h)
	return ok
}

func (s *idSet) add(h uint64) {
	if s.recent == nil {
		s.recent = map[uint64]struct{}{}
	}
	s.recent[h] = struct{}{}
	if len(s.recent) < idMerge {
		return
	}
	add := slices.Sorted(maps.Keys(s.recent))
	merged := make([]uint64, 0, len(s.sorted)+len(add))
	i, j := 0, 0
	for i < len(s.sorted) || j < len(add) {
		switch {
		case j == len(add) || i < len(s.sorted) && s.sorted[i] < add[j]:
			merged = append(merged, s.sorted[i])
			i++
		case i == len(s.sorted) || add[j] < s.sorted[i]:
			merged = append(merged, add[j])
			j++
		default: // in both
			merged = append(merged, add[j])
			i, j = i+1, j+1
		}
	}
	s.sorted, s.recent = merged, nil
}

func (c *seenCalls) hash(toolCallID string) uint64 { return maphash.String(c.seed, toolCallID) }

// add records an id in a session's set, if the set is loaded (otherwise
// loading it finds the id).
func (c *seenCalls) add(sessionID, toolCallID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ids, ok := c.sessions[sessionID]; ok {
		ids.add(c.hash(toolCallID))
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
		ids = &idSet{}
		err := s.read(ctx, func(conn *sqlite.Conn) error {
			return sqlitex.Execute(conn, `SELECT tool_call_id FROM tool_calls WHERE session_id = ?`, &sqlitex.ExecOptions{
				Args:       []any{sessionID},
				ResultFunc: func(st *sqlite.Stmt) error { ids.add(c.hash(st.ColumnText(0))); return nil },
			})
		})
		if err != nil {
			return false, err
		}
		// Rows the journal could not move yet.
		for _, id := range s.journal.pendingCalls(sessionID) {
			ids.add(c.hash(id))
		}
		if c.sessions == nil {
			c.sessions = map[string]*idSet{}
		}
		c.sessions[sessionID] = ids
	}
	if !ids.has(c.hash(toolCallID)) {
		return false, nil
	}
	return s.callRecorded(ctx, sessionID, toolCallID)
}

// callRecorded says whether the database, or the journal's rows not yet
// moved into it (take moves them first; what it could not move, or what
// came after, is still pending), holds a session's call id.
func (s *Store) callRecorded(ctx context.Context, sessionID, toolCallID string) (bool, error) {
	found := false
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT 1 FROM tool_calls WHERE session_id = ? AND tool_call_id = ?`, &sqlitex.ExecOptions{
			Args:       []any{sessionID, toolCallID},
			ResultFunc: func(*sqlite.Stmt) error { found = true; return nil },
		})
	})
	if err != nil {
		return false, err
	}
	return found || slices.Contains(s.journal.pendingCalls(sessionID), toolCallID), nil
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
