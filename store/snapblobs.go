package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// SmallSnapshot is the largest previous content kept inside the database.
// Larger content goes to a file of its own under the data dir: a row of a
// few MiB would bloat every page SQLite copies through the WAL, while a
// file below this size would cost a disk block (4 KiB) and an inode for a
// few bytes, which is what most edits keep.
const SmallSnapshot = 64 << 10

// blobDirName is the blob store's directory in the data dir, beside (not
// inside) snapshots/, whose entries are per-session directories.
const blobDirName = "snapshot-blobs"

// Retention bounds what the review snapshots keep for rollback, per
// session and for the whole data dir. Past a bound, the oldest snapshots
// holding previous content are evicted (see the package documentation).
type Retention struct {
	SessionCount int   // snapshots holding previous content, per session
	SessionBytes int64 // bytes of previous content, per session
	DataDirCount int   // snapshots holding previous content, all sessions
	DataDirBytes int64 // bytes of previous content, all sessions
}

// DefaultRetention is the rule a Config that sets none gets.
func DefaultRetention() Retention {
	return Retention{SessionCount: 5000, SessionBytes: 1 << 30, DataDirCount: 20000, DataDirBytes: 4 << 30}
}

// keepsNone says why previous content of size bytes cannot be kept at all
// ("" if it can): alone, it is past a bound.
func (r Retention) keepsNone(size int64) string {
	switch {
	case r.SessionCount < 1 || r.DataDirCount < 1:
		return "the retention rule keeps no previous content"
	case size > r.SessionBytes:
		return fmt.Sprintf("the previous content, %d bytes, is larger than the retention rule's bound of %d bytes per session", size, r.SessionBytes)
	case size > r.DataDirBytes:
		return fmt.Sprintf("the previous content, %d bytes, is larger than the retention rule's bound of %d bytes per data dir", size, r.DataDirBytes)
	}
	return ""
}

// An evicted snapshot's note is stored as a short code with the bounds
// in force ("evicted:session:5000:1073741824"), a few bytes where the
// sentence would take 150 on every evicted row; noteText writes it out.
func (r Retention) sessionReason() string {
	return fmt.Sprintf("evicted:session:%d:%d", r.SessionCount, r.SessionBytes)
}

func (r Retention) dataDirReason() string {
	return fmt.Sprintf("evicted:datadir:%d:%d", r.DataDirCount, r.DataDirBytes)
}

// noteText is the note a snapshot row holds, as it is said.
func noteText(note string) string {
	var scope string
	var count, size int64
	if n, _ := fmt.Sscanf(strings.ReplaceAll(note, ":", " "), "evicted %s %d %d", &scope, &count, &size); n != 3 {
		return note
	}
	if scope == "session" {
		return fmt.Sprintf("evicted by the retention rule: a session keeps the previous content of its last %d snapshots and %d bytes at most, oldest evicted first", count, size)
	}
	return fmt.Sprintf("evicted by the retention rule: the data dir keeps the previous content of its last %d snapshots and %d bytes at most, across sessions, oldest evicted first", count, size)
}

// snapshotBlobsSchema is migration v5. A snapshot holds previous content
// when blob or before_file (a per-snapshot file) is set. blob is the
// content itself when it is short (under 32 bytes here, under inlineMax
// from v7), else the sha256, the key of snapshot_blobs.
//
// The retention rule's order is the rowid's, the order of insertion. The
// partial indexes name only the snapshots holding content, so the oldest
// is found in one step however many were evicted before it; every such
// snapshot has existed = 1, which makes snapshots_held an index in rowid
// order of a few bytes an entry. The triggers keep snapshot_totals, snapshot_total and the
// blobs' reference counts in step with every insert, delete and
// eviction, whichever statement makes it, and drop a blob no snapshot
// names.
const snapshotBlobsSchema = `CREATE TABLE snapshot_blobs (
		hash BLOB PRIMARY KEY,
		size INTEGER NOT NULL,
		data BLOB,
		refs INTEGER NOT NULL DEFAULT 0
	) WITHOUT ROWID;
	ALTER TABLE snapshots ADD COLUMN blob BLOB;
	ALTER TABLE snapshots ADD COLUMN note TEXT;
	CREATE INDEX snapshots_held ON snapshots (existed) WHERE blob IS NOT NULL OR before_file IS NOT NULL;
	CREATE INDEX snapshots_held_session ON snapshots (session_id) WHERE blob IS NOT NULL OR before_file IS NOT NULL;
	CREATE TABLE snapshot_totals (session_id TEXT PRIMARY KEY, count INTEGER NOT NULL, bytes INTEGER NOT NULL) WITHOUT ROWID;
	CREATE TABLE snapshot_total (id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL, bytes INTEGER NOT NULL);
	INSERT INTO snapshot_totals (session_id, count, bytes)
		SELECT session_id, COUNT(*), SUM(before_size) FROM snapshots WHERE before_file IS NOT NULL GROUP BY session_id;
	INSERT INTO snapshot_total (id, count, bytes)
		SELECT 1, COUNT(*), COALESCE(SUM(before_size), 0) FROM snapshots WHERE before_file IS NOT NULL;
	CREATE TRIGGER snapshot_held AFTER INSERT ON snapshots
	WHEN NEW.blob IS NOT NULL OR NEW.before_file IS NOT NULL BEGIN
		INSERT INTO snapshot_totals (session_id, count, bytes) VALUES (NEW.session_id, 1, NEW.before_size)
			ON CONFLICT (session_id) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
		UPDATE snapshot_total SET count = count + 1, bytes = bytes + NEW.before_size;
		UPDATE snapshot_blobs SET refs = refs + 1 WHERE hash = NEW.blob;
	END;
	CREATE TRIGGER snapshot_deleted AFTER DELETE ON snapshots
	WHEN OLD.blob IS NOT NULL OR OLD.before_file IS NOT NULL BEGIN
		UPDATE snapshot_totals SET count = count - 1, bytes = bytes - OLD.before_size WHERE session_id = OLD.session_id;
		UPDATE snapshot_total SET count = count - 1, bytes = bytes - OLD.before_size;
		UPDATE snapshot_blobs SET refs = refs - 1 WHERE hash = OLD.blob;
	END;
	CREATE TRIGGER snapshot_evicted AFTER UPDATE OF blob, before_file ON snapshots
	WHEN (OLD.blob IS NOT NULL OR OLD.before_file IS NOT NULL) AND NEW.blob IS NULL AND NEW.before_file IS NULL BEGIN
		UPDATE snapshot_totals SET count = count - 1, bytes = bytes - OLD.before_size WHERE session_id = OLD.session_id;
		UPDATE snapshot_total SET count = count - 1, bytes = bytes - OLD.before_size;
		UPDATE snapshot_blobs SET refs = refs - 1 WHERE hash = OLD.blob;
	END;
	CREATE TRIGGER snapshot_blob_unused AFTER UPDATE OF refs ON snapshot_blobs
	WHEN NEW.refs <= 0 BEGIN
		DELETE FROM snapshot_blobs WHERE hash = NEW.hash;
	END;`

// Totals are what a session's snapshots, or all of them, hold.
type Totals struct {
	Count int   // snapshots holding previous content
	Bytes int64 // bytes of that content, each snapshot counted in full
}

// SnapshotTotals returns a session's totals, kept as they change: one row
// read, whatever the session's history.
func (s *Store) SnapshotTotals(ctx context.Context, sessionID string) (Totals, error) {
	var t Totals
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		var err error
		t, err = sessionTotals(conn, sessionID)
		return err
	})
	return t, err
}

// DataDirSnapshotTotals returns the totals of every session.
func (s *Store) DataDirSnapshotTotals(ctx context.Context) (Totals, error) {
	var t Totals
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		var err error
		t, err = dataDirTotals(conn)
		return err
	})
	return t, err
}

func sessionTotals(conn *sqlite.Conn, sessionID string) (Totals, error) {
	var t Totals
	err := sqlitex.Execute(conn, `SELECT count, bytes FROM snapshot_totals WHERE session_id = ?`, &sqlitex.ExecOptions{
		Args:       []any{sessionID},
		ResultFunc: func(st *sqlite.Stmt) error { t = Totals{int(st.ColumnInt64(0)), st.ColumnInt64(1)}; return nil },
	})
	return t, err
}

func dataDirTotals(conn *sqlite.Conn) (Totals, error) {
	var t Totals
	err := sqlitex.Execute(conn, `SELECT count, bytes FROM snapshot_total WHERE id = 1`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { t = Totals{int(st.ColumnInt64(0)), st.ColumnInt64(1)}; return nil },
	})
	return t, err
}

// SaveSnapshot records sn and, when the file existed and sn is
// reversible, keeps before as its previous content: in the database up to
// SmallSnapshot bytes, else in a file under the data dir, fsynced before
// the row commits; identical content is kept once. The retention rule is
// applied in the same transaction, so older snapshots may lose their
// content. It returns sn as recorded: BeforeSize and BeforeHash set, or
// Reversible false with a Note when before alone is past a bound.
func (s *Store) SaveSnapshot(ctx context.Context, sn Snapshot, before []byte) (Snapshot, error) {
	sn.BeforeFile, sn.BeforeHash, sn.BeforeSize = "", "", 0
	held := sn.Existed && sn.Reversible
	if held {
		if why := s.cfg.Retention.keepsNone(int64(len(before))); why != "" {
			held, sn.Reversible, sn.Note = false, false, why
		}
	}
	var hash, ref []byte // ref: what the row's blob column holds
	if held {
		sum := sha256.Sum256(before)
		hash, ref = sum[:], sum[:]
		sn.BeforeHash, sn.BeforeSize = hex.EncodeToString(hash), int64(len(before))
		if inline(sn.BeforeSize) {
			ref = append([]byte{}, before...) // never nil: empty content is still content
			sn.inline = ref
		}
	}
	large := held && len(before) > SmallSnapshot
	if large {
		s.fileMu.Lock()
		if err := s.writeBlobFile(sn.BeforeHash, before); err != nil {
			s.fileMu.Unlock()
			return Snapshot{}, fmt.Errorf("saving previous content: %w", err)
		}
	}
	var freed evicted
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		if held && !inline(sn.BeforeSize) {
			var data any = before
			if large {
				data = nil
			}
			if err := sqlitex.Execute(conn, `INSERT INTO snapshot_blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING`,
				&sqlitex.ExecOptions{Args: []any{hash, sn.BeforeSize, data}}); err != nil {
				return err
			}
		}
		if err := insertSnapshot(conn, sn, ref); err != nil {
			return err
		}
		if !held {
			return nil
		}
		var err error
		freed, err = s.enforce(conn, sn)
		return err
	})
	if large {
		if err != nil {
			s.removeUnnamedBlobs([]string{sn.BeforeHash})
		}
		s.fileMu.Unlock()
	}
	if err != nil {
		return Snapshot{}, err
	}
	s.release(freed)
	return sn, nil
}

// inlineMax bounds the content kept in its snapshot's row rather than in
// snapshot_blobs. A reference costs a sha256 in the row and again as the
// blob row's key, with the blob row's own overhead: about 80 bytes beyond
// the content. Below 128 bytes the row is smaller however rarely the
// content repeats, and a repeat costs less than a reference saves.
const inlineMax = 128

// inline says whether content of size bytes is kept in the snapshot's
// row rather than in snapshot_blobs.
func inline(size int64) bool { return size < inlineMax }

// snapshotInlineSchema is migration v7: content of 32 to 127 bytes,
// which v5 keeps in snapshot_blobs, moves into the rows that name it
// (128 is inlineMax, written out: a migration's text never changes), and the triggers count references only from rows whose
// blob column is a sha256 (a row's content of 32 bytes could equal
// another's hash). A row whose content is missing or not of its size
// loses it as an eviction does, and says so.
const snapshotInlineSchema = `UPDATE snapshots SET blob = NULL, reversible = 0, note = 'the previous content is missing from the store'
	WHERE blob IS NOT NULL AND before_size >= 32 AND before_size < 128 AND NOT EXISTS
		(SELECT 1 FROM snapshot_blobs b WHERE b.hash = snapshots.blob AND length(b.data) = snapshots.before_size);
	UPDATE snapshots SET blob = (SELECT data FROM snapshot_blobs WHERE hash = snapshots.blob)
	WHERE blob IS NOT NULL AND before_size >= 32 AND before_size < 128;
	DELETE FROM snapshot_blobs WHERE size < 128;
	DROP TRIGGER snapshot_held;
	DROP TRIGGER snapshot_deleted;
	DROP TRIGGER snapshot_evicted;
	CREATE TRIGGER snapshot_held AFTER INSERT ON snapshots
	WHEN NEW.blob IS NOT NULL OR NEW.before_file IS NOT NULL BEGIN
		INSERT INTO snapshot_totals (session_id, count, bytes) VALUES (NEW.session_id, 1, NEW.before_size)
			ON CONFLICT (session_id) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
		UPDATE snapshot_total SET count = count + 1, bytes = bytes + NEW.before_size;
		UPDATE snapshot_blobs SET refs = refs + 1 WHERE hash = NEW.blob AND NEW.before_size >= 128;
	END;
	CREATE TRIGGER snapshot_deleted AFTER DELETE ON snapshots
	WHEN OLD.blob IS NOT NULL OR OLD.before_file IS NOT NULL BEGIN
		UPDATE snapshot_totals SET count = count - 1, bytes = bytes - OLD.before_size WHERE session_id = OLD.session_id;
		UPDATE snapshot_total SET count = count - 1, bytes = bytes - OLD.before_size;
		UPDATE snapshot_blobs SET refs = refs - 1 WHERE hash = OLD.blob AND OLD.before_size >= 128;
	END;
	CREATE TRIGGER snapshot_evicted AFTER UPDATE OF blob, before_file ON snapshots
	WHEN (OLD.blob IS NOT NULL OR OLD.before_file IS NOT NULL) AND NEW.blob IS NULL AND NEW.before_file IS NULL BEGIN
		UPDATE snapshot_totals SET count = count - 1, bytes = bytes - OLD.before_size WHERE session_id = OLD.session_id;
		UPDATE snapshot_total SET count = count - 1, bytes = bytes - OLD.before_size;
		UPDATE snapshot_blobs SET refs = refs - 1 WHERE hash = OLD.blob AND OLD.before_size >= 128;
	END;`

// insertSnapshot inserts sn's row; ref is its blob column (nil: NULL).
// A hex sha256 after-hash is stored as its 32 bytes.
func insertSnapshot(conn *sqlite.Conn, sn Snapshot, ref []byte) error {
	var blob, after any = nil, sn.AfterHash
	if ref != nil {
		blob = ref
	}
	if raw, err := hex.DecodeString(sn.AfterHash); err == nil && len(raw) == sha256.Size {
		after = raw
	}
	return sqlitex.Execute(conn, `INSERT INTO snapshots (id, session_id, message_id, path, abs_path, before_file, existed, before_size, after_hash, reversible, state, created_at, blob, note)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, &sqlitex.ExecOptions{
		Args: []any{sn.ID, sn.SessionID, sn.MessageID, sn.Path, sn.AbsPath, nullable(sn.BeforeFile), sn.Existed, sn.BeforeSize, after, sn.Reversible, sn.State, sn.CreatedAt, blob, nullable(sn.Note)},
	})
}

// evicted is what a transaction released: blob files and per-snapshot
// files that no row may name any more, removed once it commits.
type evicted struct {
	blobs []string // hex hashes of large blobs
	files []string // before_file of rows in the per-snapshot format
}

// oldestInSession and oldestInDataDir find the retention rule's next
// victim through the partial indexes, in rowid order, with no sort.
const (
	oldestInSession = `SELECT rowid, before_size, blob, COALESCE(before_file, '') FROM snapshots
		WHERE session_id = ? AND (blob IS NOT NULL OR before_file IS NOT NULL) AND id != ? ORDER BY rowid LIMIT 1`
	oldestInDataDir = `SELECT rowid, before_size, blob, COALESCE(before_file, '') FROM snapshots
		WHERE existed = 1 AND (blob IS NOT NULL OR before_file IS NOT NULL) AND id != ? ORDER BY rowid LIMIT 1`
)

// evictRoom: an eviction frees 1/evictRoom of a bound beyond what the
// bound needs. The oldest snapshots are neighbours on disk, so evicting
// 78 of them at once (of 5,000) writes a few pages where 78 evictions one
// save at a time would write three pages each: a session at its bound
// then saves at the cost of a fresh one, but for one save in 78.
const evictRoom = 64

// enforce applies the retention rule after sn was inserted: when its
// session, then the data dir, is past a bound, the oldest snapshots
// holding content (never sn) are evicted until it is back under the
// bound with room for 1/evictRoom of it. Each eviction is one indexed
// row, found in one step, not a walk of the history.
func (s *Store) enforce(conn *sqlite.Conn, sn Snapshot) (evicted, error) {
	var ev evicted
	r := s.cfg.Retention
	// over(t, bound) starts an eviction; it goes on down to the bound
	// less 1/evictRoom of it (a bound of 64 or less: to the bound itself).
	over := func(t Totals, count int, bytes int64) bool { return t.Count > count || t.Bytes > bytes }
	t, err := sessionTotals(conn, sn.SessionID)
	if err != nil {
		return ev, err
	}
	for evicting := over(t, r.SessionCount, r.SessionBytes); evicting && over(t, r.SessionCount-r.SessionCount/evictRoom, r.SessionBytes-r.SessionBytes/evictRoom); {
		size, ok, err := evictOldest(conn, oldestInSession, []any{sn.SessionID, sn.ID}, r.sessionReason(), &ev)
		if err != nil || !ok {
			return ev, err
		}
		t.Count, t.Bytes = t.Count-1, t.Bytes-size
	}
	if t, err = dataDirTotals(conn); err != nil {
		return ev, err
	}
	for evicting := over(t, r.DataDirCount, r.DataDirBytes); evicting && over(t, r.DataDirCount-r.DataDirCount/evictRoom, r.DataDirBytes-r.DataDirBytes/evictRoom); {
		size, ok, err := evictOldest(conn, oldestInDataDir, []any{sn.ID}, r.dataDirReason(), &ev)
		if err != nil || !ok {
			return ev, err
		}
		t.Count, t.Bytes = t.Count-1, t.Bytes-size
	}
	return ev, nil
}

// evictOldest evicts the snapshot query finds: its content is let go,
// and it becomes not reversible, with reason as its note.
func evictOldest(conn *sqlite.Conn, query string, args []any, reason string, ev *evicted) (size int64, ok bool, err error) {
	var rowid int64
	var blob []byte
	var file string
	err = sqlitex.Execute(conn, query, &sqlitex.ExecOptions{Args: args, ResultFunc: func(st *sqlite.Stmt) error {
		rowid, size, ok, file = st.ColumnInt64(0), st.ColumnInt64(1), true, st.ColumnText(3)
		if n := st.ColumnLen(2); n > 0 {
			blob = make([]byte, n)
			st.ColumnBytes(2, blob)
		}
		return nil
	}})
	if err != nil || !ok {
		return 0, false, err
	}
	if err := sqlitex.Execute(conn, `UPDATE snapshots SET blob = NULL, before_file = NULL, reversible = 0, note = ? WHERE rowid = ?`,
		&sqlitex.ExecOptions{Args: []any{reason, rowid}}); err != nil {
		return 0, false, err
	}
	ev.add(blob, size, file)
	return size, true, nil
}

func (ev *evicted) add(blob []byte, size int64, file string) {
	if blob != nil && size > SmallSnapshot {
		ev.blobs = append(ev.blobs, hex.EncodeToString(blob))
	}
	if file != "" {
		ev.files = append(ev.files, file)
	}
}

// release removes what a committed transaction let go. A crash before
// it leaves files that SweepSnapshots removes.
func (s *Store) release(ev evicted) {
	for _, f := range ev.files {
		os.Remove(f)
	}
	if len(ev.blobs) > 0 {
		s.fileMu.Lock()
		s.removeUnnamedBlobs(ev.blobs)
		s.fileMu.Unlock()
	}
}

// removeUnnamedBlobs removes the blob files of hashes no row names (a
// save may have named one again since it was let go). The caller holds
// fileMu, so no save is between writing such a file and committing its
// row.
func (s *Store) removeUnnamedBlobs(hashes []string) int {
	n := 0
	for _, h := range hashes {
		raw, err := hex.DecodeString(h)
		if err != nil {
			continue
		}
		named := false
		if err := s.read(context.Background(), func(conn *sqlite.Conn) error {
			return sqlitex.Execute(conn, `SELECT 1 FROM snapshot_blobs WHERE hash = ?`, &sqlitex.ExecOptions{
				Args: []any{raw}, ResultFunc: func(*sqlite.Stmt) error { named = true; return nil },
			})
		}); err != nil || named {
			continue
		}
		if os.Remove(s.blobPath(h)) == nil {
			n++
		}
	}
	return n
}

// blobPath is where a large blob lives: snapshot-blobs/ab/abcd…, a
// directory per first byte so that no directory grows past a few
// thousand entries.
func (s *Store) blobPath(hash string) string {
	return filepath.Join(s.dataDir, blobDirName, hash[:2], hash)
}

// writeBlobFile makes the blob file of hash hold data, durably: written
// to a temporary name, fsynced, renamed. A file already at its name with
// the right size was put there the same way and is kept (identical
// content is stored once). The caller holds fileMu.
func (s *Store) writeBlobFile(hash string, data []byte) error {
	path := s.blobPath(hash)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// DropSnapshot removes the snapshot of a mutation that did not happen,
// and its previous content if no other snapshot shares it.
func (s *Store) DropSnapshot(ctx context.Context, id string) error {
	var ev evicted
	err := s.write(ctx, func(conn *sqlite.Conn) error {
		if err := sqlitex.Execute(conn, `SELECT before_size, blob, COALESCE(before_file, '') FROM snapshots WHERE id = ?`, &sqlitex.ExecOptions{
			Args: []any{id}, ResultFunc: func(st *sqlite.Stmt) error {
				ev.add(columnBytes(st, 1), st.ColumnInt64(0), st.ColumnText(2))
				return nil
			},
		}); err != nil {
			return err
		}
		return sqlitex.Execute(conn, `DELETE FROM snapshots WHERE id = ?`, &sqlitex.ExecOptions{Args: []any{id}})
	})
	if err != nil {
		return err
	}
	s.release(ev)
	return nil
}

func columnBytes(st *sqlite.Stmt, col int) []byte {
	n := st.ColumnLen(col)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	st.ColumnBytes(col, b)
	return b
}

// sessionReleases lists what deleting a session's snapshots lets go.
func sessionReleases(conn *sqlite.Conn, sessionID string) (evicted, error) {
	var ev evicted
	err := sqlitex.Execute(conn, `SELECT before_size, blob, '' FROM snapshots WHERE session_id = ? AND blob IS NOT NULL AND before_size > ?`, &sqlitex.ExecOptions{
		Args: []any{sessionID, SmallSnapshot}, ResultFunc: func(st *sqlite.Stmt) error {
			ev.add(columnBytes(st, 1), st.ColumnInt64(0), "")
			return nil
		},
	})
	return ev, err
}

// NotReversibleError: the snapshot keeps no previous content to restore.
type NotReversibleError struct {
	ID, Reason string
}

func (e *NotReversibleError) Error() string {
	return fmt.Sprintf("snapshot %s is not reversible (%s)", e.ID, e.Reason)
}

// DamagedError: the previous content kept is not what was taken.
type DamagedError struct {
	Detail string // "12 bytes on disk, 20 taken"
}

func (e *DamagedError) Error() string { return "the snapshot is damaged (" + e.Detail + ")" }

// SnapshotBefore returns the previous content of sn, a snapshot as
// GetSnapshot read it: nil for a file that did not exist; a
// *NotReversibleError when none is kept (evicted, or too large to keep);
// a *DamagedError when what is kept is not what was taken; an error
// wrapping fs.ErrNotExist when its file is gone.
func (s *Store) SnapshotBefore(ctx context.Context, sn Snapshot) ([]byte, error) {
	switch {
	case !sn.Reversible:
		return nil, &NotReversibleError{ID: sn.ID, Reason: sn.NotReversibleReason()}
	case !sn.Existed:
		return nil, nil
	case sn.inline != nil:
		return sn.inline, nil
	case sn.BeforeHash != "":
		return s.readBlob(ctx, sn.BeforeHash)
	case sn.BeforeFile != "":
		data, err := os.ReadFile(sn.BeforeFile)
		if err != nil {
			return nil, err
		}
		// Rows of schema v1 and v2 have no size (0): not checked.
		if sn.BeforeSize > 0 && int64(len(data)) != sn.BeforeSize {
			return nil, &DamagedError{Detail: fmt.Sprintf("%d bytes on disk, %d taken", len(data), sn.BeforeSize)}
		}
		return data, nil
	}
	return nil, &DamagedError{Detail: "no previous content is recorded"}
}

func (s *Store) readBlob(ctx context.Context, hash string) ([]byte, error) {
	raw, err := hex.DecodeString(hash)
	if err != nil {
		return nil, &DamagedError{Detail: "its content hash is malformed"}
	}
	var size int64
	var data []byte
	inDB, found := false, false
	err = s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT size, data IS NOT NULL, data FROM snapshot_blobs WHERE hash = ?`, &sqlitex.ExecOptions{
			Args: []any{raw}, ResultFunc: func(st *sqlite.Stmt) error {
				size, inDB, found = st.ColumnInt64(0), st.ColumnBool(1), true
				data = make([]byte, st.ColumnLen(2))
				st.ColumnBytes(2, data)
				return nil
			},
		})
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("the previous content %s is not in the store: %w", hash, fs.ErrNotExist)
	}
	if !inDB {
		if data, err = os.ReadFile(s.blobPath(hash)); err != nil {
			return nil, err
		}
	}
	if int64(len(data)) != size {
		return nil, &DamagedError{Detail: fmt.Sprintf("%d bytes on disk, %d taken", len(data), size)}
	}
	if sum := sha256.Sum256(data); !bytes.Equal(sum[:], raw) {
		return nil, &DamagedError{Detail: "its bytes no longer have the sha256 they were taken with"}
	}
	return data, nil
}
