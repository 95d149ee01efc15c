package store

import (
	"context"
	"errors"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// ErrStale means a compare-and-set found the row no longer in the state the
// caller checked: the session left the expected mode, or the approval was
// already resolved. Nothing was changed.
var ErrStale = errors.New("state changed since it was read")

// SwapMode moves a session's operating mode from one value to another in
// one statement, so a mode transition never acts on a mode read earlier and
// never rewrites the session's other fields. ErrStale if the session is not
// in from, ErrNotFound if there is no such session.
func (s *Store) SwapMode(ctx context.Context, id, from, to string) error {
	defer s.changeSession(id)()
	return s.write(ctx, func(conn *sqlite.Conn) error {
		return swapMode(conn, id, from, to)
	})
}

func swapMode(conn *sqlite.Conn, id, from, to string) error {
	if err := sqlitex.Execute(conn, `UPDATE sessions SET mode = ? WHERE id = ? AND mode = ?`, &sqlitex.ExecOptions{
		Args: []any{to, id, from},
	}); err != nil {
		return err
	}
	if conn.Changes() == 1 {
		return nil
	}
	exists := false
	err := sqlitex.Execute(conn, `SELECT 1 FROM sessions WHERE id = ?`, &sqlitex.ExecOptions{
		Args:       []any{id},
		ResultFunc: func(*sqlite.Stmt) error { exists = true; return nil },
	})
	if err != nil {
		return err
	}
	if !exists {
		return ErrNotFound
	}
	return ErrStale
}

// SettleApproval moves a pending approval to state and, when toMode is not
// "", the session from fromMode to toMode and every other pending approval
// of the session to superseded, all in one transaction: either all change
// or nothing does. ErrStale if the approval is no longer
// pending or the session is no longer in fromMode.
func (s *Store) SettleApproval(ctx context.Context, sessionID, id, state, fromMode, toMode string) error {
	defer s.changeSession(sessionID)()
	return s.write(ctx, func(conn *sqlite.Conn) error {
		if err := sqlitex.Execute(conn, `UPDATE approvals SET state = ? WHERE id = ? AND session_id = ? AND state = 'pending'`, &sqlitex.ExecOptions{
			Args: []any{state, id, sessionID},
		}); err != nil {
			return err
		}
		if conn.Changes() != 1 {
			return ErrStale
		}
		if toMode == "" {
			return nil
		}
		if err := swapMode(conn, sessionID, fromMode, toMode); err != nil {
			return err
		}
		// The round is over: what else was submitted in it is superseded,
		// and cannot end a later round of the same mode.
		return sqlitex.Execute(conn, `UPDATE approvals SET state = 'superseded' WHERE session_id = ? AND state = 'pending'`, &sqlitex.ExecOptions{
			Args: []any{sessionID},
		})
	})
}
