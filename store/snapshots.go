package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Snapshot indexes one review snapshot (design section 4c). The previous
// content is kept by the store (SaveSnapshot, SnapshotBefore), never in
// the workspace.
type Snapshot struct {
	ID         string
	SessionID  string
	MessageID  string
	Path       string // workspace-relative
	AbsPath    string
	BeforeFile string // a per-snapshot file of previous content (InsertSnapshot's format); "" otherwise
	BeforeHash string // sha256 hex of the previous content kept by SaveSnapshot; "" when none is kept
	Existed    bool
	BeforeSize int64  // bytes of previous content
	AfterHash  string // sha256 hex of the content the tool left
	Reversible bool
	Note       string // why the snapshot is not reversible, when it is not
	State      string // active | rolledBack
	CreatedAt  string
	// inline is the previous content when the row holds it itself.
	inline []byte
}

// NotReversibleReason says why the snapshot cannot be rolled back: its
// Note, or, for a snapshot recorded without one, that its previous
// content was too large to keep.
func (sn Snapshot) NotReversibleReason() string {
	if sn.Note != "" {
		return sn.Note
	}
	return "the previous content was too large to keep"
}

// InsertSnapshot records a snapshot whose previous content the caller
// keeps in a file of its own (BeforeFile).
//
// Deprecated: SaveSnapshot keeps the content in the store, applies the
// retention rule and costs no file per snapshot.
func (s *Store) InsertSnapshot(ctx context.Context, sn Snapshot) error {
	return s.write(ctx, func(conn *sqlite.Conn) error {
		return insertSnapshot(conn, sn, nil)
	})
}

// DeleteSnapshot removes a snapshot's row (its mutation did not happen).
//
// Deprecated: DropSnapshot also lets go of the content SaveSnapshot kept.
func (s *Store) DeleteSnapshot(ctx context.Context, id string) error {
	return s.write(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `DELETE FROM snapshots WHERE id = ?`, &sqlitex.ExecOptions{Args: []any{id}})
	})
}

// SnapshotBytes returns the bytes of previous content a session's
// snapshots keep, from the totals kept as they change.
//
// Deprecated: SaveSnapshot applies the retention rule itself;
// SnapshotTotals gives count and bytes.
func (s *Store) SnapshotBytes(ctx context.Context, sessionID string) (int64, error) {
	t, err := s.SnapshotTotals(ctx, sessionID)
	return t.Bytes, err
}

// SnapshotFiles returns the per-snapshot previous-content files the
// snapshots of all sessions keep, as stored (absolute paths). It reads
// every such row: the background sweep uses it, never a call.
func (s *Store) SnapshotFiles(ctx context.Context) (map[string]bool, error) {
	files := map[string]bool{}
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT before_file FROM snapshots WHERE before_file IS NOT NULL AND before_file != ''`, &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { files[st.ColumnText(0)] = true; return nil },
		})
	})
	return files, err
}

// GetSnapshot reads a snapshot of a session; ErrNotFound if none.
func (s *Store) GetSnapshot(ctx context.Context, sessionID, id string) (Snapshot, error) {
	var sn Snapshot
	found := false
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT id, session_id, message_id, path, abs_path, COALESCE(before_file, ''), existed, after_hash, reversible, state, created_at, before_size, blob, COALESCE(note, '')
			FROM snapshots WHERE id = ? AND session_id = ?`, &sqlitex.ExecOptions{
			Args: []any{id, sessionID},
			ResultFunc: func(st *sqlite.Stmt) error {
				// Types first: reading a column as text converts it.
				afterRaw := st.ColumnType(7) == sqlite.TypeBlob
				held := st.ColumnType(12) != sqlite.TypeNull
				sn = Snapshot{ID: st.ColumnText(0), SessionID: st.ColumnText(1), MessageID: st.ColumnText(2), Path: st.ColumnText(3),
					AbsPath: st.ColumnText(4), BeforeFile: st.ColumnText(5), Existed: st.ColumnBool(6), AfterHash: st.ColumnText(7),
					Reversible: st.ColumnBool(8), State: st.ColumnText(9), CreatedAt: st.ColumnText(10), BeforeSize: st.ColumnInt64(11),
					Note: noteText(st.ColumnText(13))}
				if afterRaw {
					sn.AfterHash = hex.EncodeToString(columnBytes(st, 7))
				}
				if held {
					ref := columnBytes(st, 12)
					if inline(sn.BeforeSize) {
						sn.inline = append([]byte{}, ref...)
						sum := sha256.Sum256(ref)
						ref = sum[:]
					}
					sn.BeforeHash = hex.EncodeToString(ref)
				}
				found = true
				return nil
			},
		})
	})
	if err != nil {
		return Snapshot{}, err
	}
	if !found {
		return Snapshot{}, ErrNotFound
	}
	return sn, nil
}

// SetSnapshotState changes a snapshot's state.
func (s *Store) SetSnapshotState(ctx context.Context, id, state string) error {
	return s.write(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `UPDATE snapshots SET state = ? WHERE id = ?`, &sqlitex.ExecOptions{Args: []any{state, id}})
	})
}

// Approval is a pending plan/goal approval.
type Approval struct {
	ID, SessionID, Kind, ArtifactPath, State, CreatedAt string
}

// InsertApproval records a pending approval.
func (s *Store) InsertApproval(ctx context.Context, a Approval) error {
	return s.write(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `INSERT INTO approvals (id, session_id, kind, artifact_path, state, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			&sqlitex.ExecOptions{Args: []any{a.ID, a.SessionID, a.Kind, a.ArtifactPath, a.State, a.CreatedAt}})
	})
}

// GetApproval reads an approval; ErrNotFound if none.
func (s *Store) GetApproval(ctx context.Context, sessionID, id string) (Approval, error) {
	var a Approval
	found := false
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT id, session_id, kind, artifact_path, state, created_at FROM approvals WHERE id = ? AND session_id = ?`,
			&sqlitex.ExecOptions{Args: []any{id, sessionID}, ResultFunc: func(st *sqlite.Stmt) error {
				a = Approval{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), st.ColumnText(3), st.ColumnText(4), st.ColumnText(5)}
				found = true
				return nil
			}})
	})
	if err != nil {
		return Approval{}, err
	}
	if !found {
		return Approval{}, ErrNotFound
	}
	return a, nil
}
