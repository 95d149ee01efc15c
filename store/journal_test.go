package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// crashCopy copies a data dir as a crash of the process holding it would
// leave it: the database, its WAL and the journal as they are on disk now
// (nothing is flushed or closed first).
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{"hostcore.db", "hostcore.db-wal", journalName} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// mustOpen opens the store in dir.
func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func auditRow(session, id string) AuditRow {
	return AuditRow{SessionID: session, TurnID: "t", ToolCallID: id, ToolName: "Read", ArgsHash: "h", ArgsPreview: `{"path":"a"}`,
		Decision: "auto-allow", OK: true, CreatedAt: Now()}
}

func countAudit(t *testing.T, s *Store, session string) map[string]int {
	t.Helper()
	rows, err := s.QueryAudit(context.Background(), AuditFilter{SessionID: session, Limit: MaxAuditRows})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range rows {
		n[r.ToolCallID]++
	}
	return n
}

// A row is committed once InsertAudit returns: a crash right after (the
// background flush has not run) loses nothing, and the restart moves it
// into the audit table, with the call ids it records.
func TestJournalRowsSurviveACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
	for i := range 50 {
		if err := s.InsertAudit(ctx, auditRow("a", fmt.Sprint("c", i)), true); err != nil {
			t.Fatal(err)
		}
	}
	if s.journal.npend.Load() != 50 {
		t.Fatalf("the flush ran already (%d pending): the test would prove nothing", s.journal.npend.Load())
	}
	copyDir := crashCopy(t, dir)

	s2 := mustOpen(t, copyDir)
	defer s2.Close()
	got := countAudit(t, s2, "a")
	for i := range 50 {
		if got[fmt.Sprint("c", i)] != 1 {
			t.Fatalf("after the crash, c%d has %d rows: %v", i, got[fmt.Sprint("c", i)], got)
		}
	}
	if seen, err := s2.ToolCallSeen(ctx, "a", "c49"); err != nil || !seen {
		t.Fatalf("a recorded call id was lost in the crash: %v %v", seen, err)
	}
}

// Rows already moved are not moved twice when a crash leaves them in the
// journal, and a torn last line (an append the crash cut short, never
// acknowledged) is dropped.
func TestJournalReplayIsExactlyOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	for i := range 10 {
		s.InsertAudit(ctx, auditRow("a", fmt.Sprint("c", i)), false)
	}
	countAudit(t, s, "a") // moves them; the journal keeps its lines
	for i := 10; i < 15; i++ {
		s.InsertAudit(ctx, auditRow("a", fmt.Sprint("c", i)), false)
	}
	copyDir := crashCopy(t, dir)
	f, _ := os.OpenFile(filepath.Join(copyDir, journalName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":16,"row":{"sessionId":"a","toolCallId":"torn"`)
	f.Close()

	s2 := mustOpen(t, copyDir)
	got := countAudit(t, s2, "a")
	if len(got) != 15 || got["torn"] != 0 {
		t.Fatalf("rows after replay: %v", got)
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("%s has %d rows", id, n)
		}
	}
	// Rows appended after the replay continue the sequence.
	s2.InsertAudit(ctx, auditRow("a", "after"), false)
	s2.Close()
	s3 := mustOpen(t, copyDir)
	defer s3.Close()
	if got := countAudit(t, s3, "a"); len(got) != 16 || got["after"] != 1 {
		t.Fatalf("rows after a second start: %v", got)
	}
}

// A read's call id is seen as soon as its row is committed, before the
// journal reaches SQLite, in a set already loaded or loaded later; after
// session.delete the ids are forgotten even when their rows reach SQLite
// later.
func TestJournaledCallIDs(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	sess := Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}
	s.CreateSession(ctx, sess)
	if seen, _ := s.ToolCallSeen(ctx, "a", "x"); seen {
		t.Fatal("x seen before it ran")
	}
	s.InsertAudit(ctx, auditRow("a", "x"), true)
	if seen, _ := s.ToolCallSeen(ctx, "a", "x"); !seen {
		t.Fatal("x not seen in a loaded set")
	}
	s.CreateSession(ctx, Session{ID: "b", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
	s.InsertAudit(ctx, auditRow("b", "y"), true)
	s.journal.mu.Lock()
	pending := len(s.journal.pending)
	s.journal.mu.Unlock()
	if pending == 0 {
		t.Fatal("the flush ran already: the test would prove nothing")
	}
	if seen, _ := s.ToolCallSeen(ctx, "b", "y"); !seen {
		t.Fatal("y not seen in a set loaded after it was journaled")
	}
	if err := s.ReserveToolCall(ctx, "b", "y"); err != ErrExists {
		t.Fatalf("reserving a journaled id: %v", err)
	}

	s.InsertAudit(ctx, auditRow("a", "z"), true)
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	s.CreateSession(ctx, sess)
	for _, id := range []string{"x", "z"} {
		if seen, _ := s.ToolCallSeen(ctx, "a", id); seen {
			t.Fatalf("%s outlived its session's deletion", id)
		}
	}
	if got := countAudit(t, s, "a"); got["x"] != 1 || got["z"] != 1 {
		t.Fatalf("audit rows must stay after deletion: %v", got)
	}
}

// After Close no row is accepted (the caller is told), and what was
// journaled is in SQLite.
func TestJournalClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	s.InsertAudit(ctx, auditRow("a", "1"), false)
	s.Close()
	if err := s.InsertAudit(ctx, auditRow("a", "2"), false); err == nil {
		t.Fatal("a row was accepted after Close")
	}
	if fi, err := os.Stat(filepath.Join(dir, journalName)); err != nil || fi.Size() != 0 {
		t.Fatalf("the journal after a clean close: %v %v", fi, err)
	}
	s2 := mustOpen(t, dir)
	defer s2.Close()
	if got := countAudit(t, s2, "a"); len(got) != 1 || got["1"] != 1 {
		t.Fatalf("rows: %v", got)
	}
}

// The background flush moves rows without anyone reading.
func TestJournalFlushesInTheBackground(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	s.InsertAudit(context.Background(), auditRow("a", "1"), false)
	for range 100 {
		if s.journal.npend.Load() == 0 {
			return
		}
		waitFlush()
	}
	t.Fatal("the journal was never flushed")
}

func waitFlush() { time.Sleep(flushDelay / 4) }

// Past maxPending rows waiting, a row goes to SQLite directly, moving the
// waiting ones first: memory stays bounded when the flush cannot keep up.
func TestJournalBoundsWhatWaits(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	s.journal.mu.Lock()
	for i := range maxPending {
		s.journal.pending = append(s.journal.pending, journalRow{Seq: uint64(i + 1), Row: auditRow("a", fmt.Sprint("p", i))})
	}
	s.journal.seq = maxPending
	s.journal.npend.Store(maxPending)
	s.journal.mu.Unlock()
	if err := s.InsertAudit(ctx, auditRow("a", "over"), false); err != nil {
		t.Fatal(err)
	}
	if n := s.journal.npend.Load(); n != 0 {
		t.Fatalf("%d rows still wait after a direct write", n)
	}
	var n int64
	s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT COUNT(*) FROM audit WHERE session_id = 'a'`, &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { n = st.ColumnInt64(0); return nil },
		})
	})
	if n != maxPending+1 {
		t.Fatalf("%d rows in the audit, want %d", n, maxPending+1)
	}
}

// A journal removed, replaced or moved while hostcore runs loses no
// acknowledged row to a crash: rows go to SQLite from then on (at once
// for one removed or replaced; by the next flush for one moved away),
// and one that cannot be written is tried in SQLite.
func TestJournalTamperedWith(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"remove", "replace", "move", "unwritable"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			defer s.Close()
			s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
			s.InsertAudit(ctx, auditRow("a", "before"), false)
			jpath := filepath.Join(dir, journalName)
			switch how {
			case "remove":
				os.Remove(jpath)
			case "replace":
				os.WriteFile(jpath+".new", nil, 0o600)
				os.Rename(jpath+".new", jpath)
			case "move":
				os.Rename(jpath, jpath+".moved")
				s.flushJournal()
			case "unwritable":
				ro, err := os.Open(jpath)
				if err != nil {
					t.Fatal(err)
				}
				s.journal.mu.Lock()
				s.journal.f, ro = ro, s.journal.f
				s.journal.mu.Unlock()
				defer ro.Close()
			}
			if err := s.InsertAudit(ctx, auditRow("a", "after"), true); err != nil {
				t.Fatalf("a row the database can take was refused: %v", err)
			}
			// A crash now: the copy holds only what is on disk under
			// the names a start reads.
			s2 := mustOpen(t, crashCopy(t, dir))
			defer s2.Close()
			got := countAudit(t, s2, "a")
			if got["after"] != 1 || got["before"] != 1 {
				t.Fatalf("rows after the crash: %v", got)
			}
			if seen, _ := s2.ToolCallSeen(ctx, "a", "after"); !seen {
				t.Fatal("the read's id was lost with its journal")
			}
		})
	}
}

// TestJournalLineDecodesAsMarshal: a row appended to the journal is read
// back by the next start as json.Marshal's encoding of it reads, whatever
// its strings hold.
func TestJournalLineDecodesAsMarshal(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "tab\tnewline\n", "\x00\x1f\x7f", "é 中 \u2028", "bad \xff utf-8", "<html>&"} {
		checkJournalLine(t, s == "plain", s, -3, s != "")
	}
}

func FuzzJournalLine(f *testing.F) {
	f.Add(true, "ghp_x \"q\"", int64(5), false)
	f.Add(false, "\xff\xfe", int64(-1<<63), true)
	f.Fuzz(func(t *testing.T, rc bool, s string, n int64, b bool) {
		checkJournalLine(t, rc, s, n, b)
	})
}

// checkJournalLine appends one row and reads the journal as a start after
// a crash does.
func checkJournalLine(t *testing.T, rc bool, s string, n int64, b bool) {
	t.Helper()
	row := AuditRow{
		SessionID: s, TurnID: s + "t", ToolCallID: "c" + s, ToolName: s, ArgsHash: s, ArgsPreview: s + s,
		ExternalPath: s, Decision: s, Prompted: b, PermissionWaitMs: n, DurationMs: -n, OverheadMs: n / 2,
		TotalMs: n, OK: !b, ErrorCode: s, Delegate: s, CreatedAt: s,
	}
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if err := st.journalAppend(row, rc); err != nil {
		t.Fatal(err)
	}
	copied := crashCopy(t, dir)
	st.Close()
	j, err := openJournal(copied, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer j.f.Close()
	var want journalRow
	m, _ := json.Marshal(journalRow{Seq: 1, RecordCall: rc, Row: row})
	json.Unmarshal(m, &want)
	if len(j.pending) != 1 || !reflect.DeepEqual(j.pending[0], want) {
		t.Fatalf("journal reads %+v\nwant %+v", j.pending, want)
	}
}

// oldJournalLine is a line as data dirs in use hold it.
const oldJournalLine = `{"seq":3,"recordCall":true,"row":{"sessionId":"a","turnId":"t\u003c\u0026\u003e","toolCallId":"c1","toolName":"Bash","argsHash":"h","argsPreview":"{\"command\":\"echo \\u2028 é\\t\"}","externalPath":"","decision":"auto-allow","prompted":true,"permissionWaitMs":5,"durationMs":7,"overheadMs":1,"totalMs":13,"ok":true,"errorCode":"","delegate":"","createdAt":"2026-12-04T09:05:07.123Z"}}`

// The journal's lines keep the encoding existing data dirs hold, byte for
// byte, and a start reads such a line.
func TestJournalLineFormatIsStable(t *testing.T) {
	jr := journalRow{Seq: 3, RecordCall: true, Row: AuditRow{SessionID: "a", TurnID: "t<&>", ToolCallID: "c1", ToolName: "Bash",
		ArgsHash: "h", ArgsPreview: `{"command":"echo \u2028 é\t"}`, Decision: "auto-allow", Prompted: true, PermissionWaitMs: 5,
		DurationMs: 7, OverheadMs: 1, TotalMs: 13, OK: true, CreatedAt: "2026-12-04T09:05:07.123Z"}}
	if m, _ := json.Marshal(jr); string(m) != oldJournalLine {
		t.Errorf("line\n%s\nwant\n%s", m, oldJournalLine)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, journalName), []byte(oldJournalLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := openJournal(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer j.f.Close()
	if len(j.pending) != 1 || !reflect.DeepEqual(j.pending[0], jr) {
		t.Fatalf("journal reads %+v\nwant %+v", j.pending, jr)
	}
}

// A database deleted under a running hostcore took the rows moved into it,
// and the clean exit then emptied the journal that still held them: after
// a restart, no row was left. The journal is now emptied only while the
// database and its WAL are the files Open found, and Close says what
// happened.
func TestJournalKeptWhenTheDatabaseIsDeleted(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"hostcore.db", "hostcore.db-wal"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
			s.InsertAudit(ctx, auditRow("a", "before"), true)
			s.flushJournal()
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			s.InsertAudit(ctx, auditRow("a", "after"), true)
			err := s.Close()
			if replaced := err != nil && strings.Contains(err.Error(), "deleted or replaced"); replaced != (name == "hostcore.db") {
				// A deleted WAL is checkpointed from the descriptor
				// SQLite holds: nothing is lost at a clean close.
				t.Fatalf("Close after %s was deleted: %v", name, err)
			}
			s2 := mustOpen(t, dir)
			defer s2.Close()
			if got := countAudit(t, s2, "a"); got["before"] != 1 || got["after"] != 1 {
				t.Fatalf("rows after the restart: %v", got)
			}
		})
	}
}

// While hostcore runs, the journal is not emptied into a database or WAL
// deleted under it (a crash would lose what went into them): it grows
// past truncateAt instead, and a crash copy still has every row.
func TestJournalNotEmptiedIntoADeletedDatabase(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"hostcore.db", "hostcore.db-wal"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			defer s.Close()
			s.CreateSession(ctx, Session{ID: "a", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
			s.flushJournal()
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			const n = 4000 // about 1.5 MB of journal: past truncateAt
			for i := range n {
				s.InsertAudit(ctx, auditRow("a", fmt.Sprint("r", i)), false)
				if i%500 == 0 {
					s.flushJournal()
				}
			}
			s.flushJournal()
			if fi, err := os.Stat(filepath.Join(dir, journalName)); err != nil || fi.Size() < truncateAt {
				t.Fatalf("the journal was emptied into a deleted %s: %v %v", name, fi.Size(), err)
			}
			// What a crash now leaves: the journal's rows come back.
			s2 := mustOpen(t, crashCopy(t, dir))
			defer s2.Close()
			if got := countAudit(t, s2, "a"); len(got) != n {
				t.Fatalf("rows after a crash: %d of %d", len(got), n)
			}
		})
	}
}
