package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The audit journal.
//
// An audit row is committed by appending one line to audit.journal, in the
// data dir, with a single write(2): from then on it survives a crash of
// the process, exactly as a transaction committed to SQLite's WAL with
// synchronous=NORMAL does (neither is fsynced; power loss may drop the
// last of either). The response is written only after that. A background
// flush moves journaled rows into SQLite in batches, one transaction for
// many rows, and every other use of the database moves them first, so
// whatever reads SQLite (audit.query, the tool-call ids of a session, a
// session's deletion) sees every row committed before it, in order. Open
// moves the rows a crash left in the journal; each line carries a
// sequence number, and the highest one moved is stored in the same
// transaction as the rows, so no row is moved twice.
//
// Why: a committed SQLite transaction cost a small Read 60-95 µs of its
// 300-400 µs of CPU (modernc's SQLite, four b-tree pages, eight pwrites);
// the append costs one write of about 400 bytes.

// journalName is the journal's file name in the data dir.
const journalName = "audit.journal"

// flushDelay is how long journaled rows wait for the background flush;
// flushEarly rows start one at once. Nothing outside hostcore reads the
// database while it runs (it is held in exclusive locking mode), and
// every read inside flushes first, so the delay is invisible.
const (
	flushDelay = 100 * time.Millisecond
	flushEarly = 1024
)

// truncateAt: once every journaled row is in SQLite and the journal has
// grown past this, it is emptied.
const truncateAt = 1 << 20

// maxPending bounds the rows journaled but not yet in SQLite (they are
// held in memory too): past it, rows go to SQLite directly, which moves
// the waiting ones first or fails the way a commit to it always could
// (a database that cannot be written: the call says so).
const maxPending = 1 << 16

type journalRow struct {
	Seq        uint64   `json:"seq"`
	RecordCall bool     `json:"recordCall,omitempty"`
	Row        AuditRow `json:"row"`
}

type journal struct {
	mu      sync.Mutex
	f       *os.File
	fdn     int // f's descriptor (os.File.Fd would make it blocking)
	path    string
	size    int64  // bytes of whole lines in f
	seq     uint64 // the last sequence number written
	pending []journalRow
	npend   atomic.Int64 // len(pending), read without mu
	timer   *time.Timer
	early   bool // a flush for flushEarly is under way
	// broken: an append failed and the file could not be cut back to its
	// last whole line. Rows then go to SQLite directly, as before the
	// journal: a line appended after a torn one would be lost with it.
	broken bool
	closed bool
}

// openJournal opens (creating) the journal and reads the rows a crash may
// have left in it whose sequence numbers are above applied. A torn last
// line (a write cut short by the crash, never acknowledged) is dropped.
func openJournal(dataDir string, applied uint64) (*journal, error) {
	path := filepath.Join(dataDir, journalName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|journalOpenFlags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the audit journal: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the audit journal %s is not a regular file; move it away", path)
	}
	j := &journal{f: f, path: path, seq: applied}
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(d uintptr) { j.fdn = int(d) })
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var good int64
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a last line without '\n' is torn: dropped
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reading the audit journal: %w", err)
		}
		good += int64(len(line))
		var jr journalRow
		if json.Unmarshal(bytes.TrimSpace(line), &jr) != nil || jr.Seq == 0 {
			continue // a line no append completed
		}
		if jr.Seq > j.seq {
			j.seq = jr.Seq
		}
		if jr.Seq > applied {
			j.pending = append(j.pending, jr)
		}
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("cutting the audit journal's torn line: %w", err)
	}
	j.size = good
	j.npend.Store(int64(len(j.pending)))
	return j, nil
}

// errJournalBroken: the row must be written to SQLite directly (the
// journal could not take it, or holds maxPending rows already).
var errJournalBroken = errors.New("audit journal unusable")

// append commits one row to the journal. It returns errJournalBroken when
// the journal cannot take it any more (the caller writes SQLite instead).
func (s *Store) journalAppend(r AuditRow, recordCall bool) error {
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return errClosed
	case j.broken, len(j.pending) >= maxPending:
		return errJournalBroken
	}
	jr := journalRow{Seq: j.seq + 1, RecordCall: recordCall, Row: r}
	line, err := json.Marshal(jr)
	if err != nil {
		return fmt.Errorf("%w: encoding it: %v", errJournalBroken, err)
	}
	line = append(line, '\n')
	if n, err := j.f.Write(line); err != nil || n != len(line) {
		if err == nil {
			err = io.ErrShortWrite
		}
		if n > 0 && j.f.Truncate(j.size) != nil {
			j.broken = true
		}
		// SQLite may still take it (a journal made read-only, a disk
		// that had room for the database's pages): the caller tries.
		return fmt.Errorf("%w: writing it: %v", errJournalBroken, err)
	}
	if j.gone() {
		// Deleted or replaced under us: the line went to a file no start
		// will read. It and every later row go to SQLite, which takes
		// the rows still waiting first.
		j.broken = true
		return fmt.Errorf("%w: %s was removed or replaced while hostcore ran", errJournalBroken, j.path)
	}
	j.size += int64(len(line))
	j.seq = jr.Seq
	j.pending = append(j.pending, jr)
	n := j.npend.Add(1)
	switch {
	case n == 1:
		if j.timer == nil {
			j.timer = time.AfterFunc(flushDelay, s.flushJournal)
		} else {
			j.timer.Reset(flushDelay)
		}
	case n >= flushEarly && !j.early:
		j.early = true
		go s.flushJournal()
	}
	return nil
}

// gone says whether the journal's file no longer has the name a start
// reads: unlinked (replaced) under us. One statx per append.
func (j *journal) gone() bool { return unlinked(j.fdn) }

// renamed says whether the journal's name now leads to another file (or
// none): moved away under us. Checked at every flush.
func (j *journal) renamed() bool {
	held, err1 := j.f.Stat()
	named, err2 := os.Lstat(j.path)
	return err1 == nil && (err2 != nil || !os.SameFile(held, named))
}

// flushJournal moves the journaled rows into SQLite (the background flush).
func (s *Store) flushJournal() {
	if _, put, err := s.take(context.Background()); err == nil {
		put()
	}
	s.journal.mu.Lock()
	s.journal.early = false
	s.journal.mu.Unlock()
}

// applyJournal moves every journaled row into SQLite in one transaction.
// The caller holds the connection. On failure the rows stay journaled
// and the next use of the connection tries again.
func (s *Store) applyJournal(conn *sqlite.Conn) (err error) {
	j := s.journal
	j.mu.Lock()
	rows := j.pending
	if !j.broken && j.renamed() {
		// Moved away under us: what waits is moved now, and later rows
		// go to SQLite (a start reads only the journal's own name).
		j.broken = true
	}
	j.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	last := rows[len(rows)-1].Seq
	if err := func() (err error) {
		end, err := sqlitex.ImmediateTransaction(conn)
		if err != nil {
			return err
		}
		defer end(&err)
		for _, jr := range rows {
			if err := insertAudit(conn, jr.Row, jr.RecordCall); err != nil {
				return err
			}
		}
		return sqlitex.Execute(conn, `UPDATE journal_state SET applied = ? WHERE id = 1`, &sqlitex.ExecOptions{Args: []any{int64(last)}})
	}(); err != nil {
		return fmt.Errorf("moving audit rows from the journal: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// Rows appended meanwhile stay; the ones moved are the first len(rows).
	j.pending = append(j.pending[:0:0], j.pending[len(rows):]...)
	j.npend.Store(int64(len(j.pending)))
	if len(j.pending) == 0 && j.size > truncateAt && s.intact(true) {
		if j.f.Truncate(0) == nil {
			j.size = 0
		}
	}
	return nil
}

// pendingCalls returns the ids of a session's journaled calls that record
// their id (not yet in tool_calls).
func (j *journal) pendingCalls(sessionID string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var ids []string
	for _, jr := range j.pending {
		if jr.RecordCall && jr.Row.SessionID == sessionID {
			ids = append(ids, jr.Row.ToolCallID)
		}
	}
	return ids
}

// closeJournal stops appends; the caller then moves what is left.
func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	if j.timer != nil {
		j.timer.Stop()
	}
}

// insertAudit writes one row (and, with recordCall, its call id) in the
// caller's transaction. A call id is recorded only while its session
// exists: a row moved after session.delete must not bring its ids back.
func insertAudit(conn *sqlite.Conn, r AuditRow, recordCall bool) error {
	if recordCall {
		err := sqlitex.Execute(conn, `INSERT OR IGNORE INTO tool_calls (session_id, tool_call_id, created_at)
			SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)`, &sqlitex.ExecOptions{
			Args: []any{r.SessionID, r.ToolCallID, r.CreatedAt},
		})
		if err != nil {
			return err
		}
	}
	return sqlitex.Execute(conn, `INSERT INTO audit (session_id, turn_id, tool_call_id, tool_name, args_hash, args_preview,
		external_path, decision, prompted, permission_wait_ms, duration_ms, overhead_ms, total_ms, ok, error_code, delegate, created_at, rule_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, &sqlitex.ExecOptions{
		Args: []any{r.SessionID, r.TurnID, r.ToolCallID, r.ToolName, r.ArgsHash, r.ArgsPreview,
			nullable(r.ExternalPath), r.Decision, r.Prompted, r.PermissionWaitMs, r.DurationMs, r.OverheadMs, r.TotalMs,
			r.OK, nullable(r.ErrorCode), nullable(r.Delegate), r.CreatedAt, nullable(r.RuleID)},
	})
}
