package store

import (
	"context"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Session is a durable session row.
type Session struct {
	ID             string
	WorkspaceRoot  string // "" for a Temporary session
	PermissionMode string // inherit | ask | accept-edits | auto
	Mode           string // agent | plan | goal
	Subagents      string // JSON array of definitions
	CreatedAt      string
}

const sessionCols = `id, workspace_root, permission_mode, mode, subagents, created_at`

func scanSession(stmt *sqlite.Stmt) Session {
	return Session{
		ID:             stmt.ColumnText(0),
		WorkspaceRoot:  stmt.ColumnText(1),
		PermissionMode: stmt.ColumnText(2),
		Mode:           stmt.ColumnText(3),
		Subagents:      stmt.ColumnText(4),
		CreatedAt:      stmt.ColumnText(5),
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateSession inserts a session; ErrExists if the id is taken.
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `INSERT INTO sessions (`+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?)`, &sqlitex.ExecOptions{
			Args: []any{sess.ID, nullable(sess.WorkspaceRoot), sess.PermissionMode, sess.Mode, sess.Subagents, sess.CreatedAt},
		})
	})
	if isConstraint(err) {
		return ErrExists
	}
	return err
}

// GetSession reads a session; ErrNotFound if there is none.
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	s.cmu.Lock()
	if sess, ok := s.sessions[id]; ok && s.cacheUsable() {
		s.cmu.Unlock()
		return sess, nil
	}
	s.cmu.Unlock()
	gen := s.cacheGen()
	var out Session
	found := false
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, &sqlitex.ExecOptions{
			Args:       []any{id},
			ResultFunc: func(stmt *sqlite.Stmt) error { out = scanSession(stmt); found = true; return nil },
		})
	})
	if err != nil {
		return Session{}, err
	}
	if !found {
		return Session{}, ErrNotFound
	}
	s.cmu.Lock()
	if gen == s.gen && s.cacheUsable() {
		s.sessions[id] = out
	}
	s.cmu.Unlock()
	return out, nil
}

// changeSession marks a change to a session in flight (see change).
func (s *Store) changeSession(id string) (done func()) {
	return s.change(func() { delete(s.sessions, id) })
}

// ListSessions returns every session, oldest first.
func (s *Store) ListSessions(ctx context.Context) ([]Session, error) {
	var out []Session
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT `+sessionCols+` FROM sessions ORDER BY created_at, id`, &sqlitex.ExecOptions{
			ResultFunc: func(stmt *sqlite.Stmt) error { out = append(out, scanSession(stmt)); return nil },
		})
	})
	return out, err
}

// UpdateSession stores the fields of a session a client configures: its
// permission mode and subagents. The operating mode is not one of them: it
// changes only through SwapMode, and writing back a mode read earlier
// would undo a switch made since (EnterPlanMode running beside
// session.configure).
func (s *Store) UpdateSession(ctx context.Context, sess Session) error {
	defer s.changeSession(sess.ID)()
	return s.write(ctx, func(conn *sqlite.Conn) error {
		if err := sqlitex.Execute(conn, `UPDATE sessions SET permission_mode = ?, subagents = ? WHERE id = ?`, &sqlitex.ExecOptions{
			Args: []any{sess.PermissionMode, sess.Subagents, sess.ID},
		}); err != nil {
			return err
		}
		if conn.Changes() == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// DeleteSession removes a session, its executed-call ids, snapshots (and
// the previous content no other session shares) and approvals. Audit rows
// stay. The per-snapshot files of InsertSnapshot are the caller's.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	defer s.changeSession(id)()
	defer s.seen.forget(id)
	var ev evicted
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		if err := sqlitex.Execute(conn, `DELETE FROM sessions WHERE id = ?`, &sqlitex.ExecOptions{Args: []any{id}}); err != nil {
			return err
		}
		if conn.Changes() == 0 {
			return ErrNotFound
		}
		var err error
		if ev, err = sessionReleases(conn, id); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM tool_calls WHERE session_id = ?`,
			`DELETE FROM snapshots WHERE session_id = ?`,
			`DELETE FROM snapshot_totals WHERE session_id = ?`,
			`DELETE FROM approvals WHERE session_id = ?`,
		} {
			if err := sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: []any{id}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.release(ev)
	}
	return err
}
