package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

func openRetention(t *testing.T, dir string, r Retention) *Store {
	t.Helper()
	s, err := OpenWith(dir, Config{Retention: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func createSession(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.CreateSession(context.Background(), Session{ID: id, WorkspaceRoot: "/w", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()}); err != nil {
		t.Fatal(err)
	}
}

// seq makes snapshot creation times strictly increasing, so "oldest" is
// the order of the saves.
var seq = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func save(t *testing.T, s *Store, session, id string, before []byte) Snapshot {
	t.Helper()
	seq = seq.Add(time.Millisecond)
	sn, err := s.SaveSnapshot(context.Background(), Snapshot{
		ID: id, SessionID: session, MessageID: "m", Path: "f.txt", AbsPath: "/w/f.txt", Existed: true,
		AfterHash: afterHash, Reversible: true, State: "active", CreatedAt: seq.Format(timeLayout),
	}, before)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// afterHash is a sha256 in hex, as handlers record it.
const afterHash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func get(t *testing.T, s *Store, session, id string) Snapshot {
	t.Helper()
	sn, err := s.GetSnapshot(context.Background(), session, id)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// mustBefore reads a snapshot's previous content and compares it.
func mustBefore(t *testing.T, s *Store, session, id string, want []byte) {
	t.Helper()
	got, err := s.SnapshotBefore(context.Background(), get(t, s, session, id))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: previous content %q, want %q", id, got, want)
	}
}

// mustEvicted: the snapshot answers reversible:false, and its rollback
// data an error naming the retention rule.
func mustEvicted(t *testing.T, s *Store, session, id, bound string) {
	t.Helper()
	sn := get(t, s, session, id)
	if sn.Reversible || !strings.Contains(sn.Note, "evicted by the retention rule") || !strings.Contains(sn.Note, bound) {
		t.Fatalf("%s: reversible %v, note %q; want evicted by the %s bound", id, sn.Reversible, sn.Note, bound)
	}
	_, err := s.SnapshotBefore(context.Background(), sn)
	var nr *NotReversibleError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "evicted by the retention rule") {
		t.Fatalf("%s: rollback data of an evicted snapshot: %v", id, err)
	}
}

func content(i int) []byte { return []byte(fmt.Sprintf("previous content %04d", i)) }

func TestRetentionEvictsOldestFirst(t *testing.T) {
	s := openRetention(t, t.TempDir(), Retention{SessionCount: 3, SessionBytes: 1 << 20, DataDirCount: 5, DataDirBytes: 1 << 30})
	createSession(t, s, "a")
	createSession(t, s, "b")
	for i := range 5 {
		save(t, s, "a", fmt.Sprint("a", i), content(i))
	}
	for i := range 2 {
		mustEvicted(t, s, "a", fmt.Sprint("a", i), "a session keeps")
	}
	for i := 2; i < 5; i++ {
		mustBefore(t, s, "a", fmt.Sprint("a", i), content(i))
	}
	// The data dir's bound (5) evicts across sessions: a's oldest go first.
	for i := range 3 {
		save(t, s, "b", fmt.Sprint("b", i), content(100+i))
	}
	mustEvicted(t, s, "a", "a2", "the data dir keeps")
	for i := range 3 {
		mustBefore(t, s, "b", fmt.Sprint("b", i), content(100+i))
	}
	mustBefore(t, s, "a", "a3", content(3))
	checkTotals(t, s)

	// Bytes bound: each image is 21 bytes, the session keeps 50.
	s2 := openRetention(t, t.TempDir(), Retention{SessionCount: 100, SessionBytes: 50, DataDirCount: 100, DataDirBytes: 1 << 30})
	createSession(t, s2, "a")
	for i := range 3 {
		save(t, s2, "a", fmt.Sprint("a", i), content(i))
	}
	mustEvicted(t, s2, "a", "a0", "50 bytes")
	mustBefore(t, s2, "a", "a1", content(1))
	mustBefore(t, s2, "a", "a2", content(2))

	// Content larger than a bound is never kept, and the snapshot says so.
	sn := save(t, s2, "a", "big", bytes.Repeat([]byte("x"), 51))
	if sn.Reversible || !strings.Contains(sn.Note, "larger than the retention rule's bound") {
		t.Fatalf("content past the bound: reversible %v, note %q", sn.Reversible, sn.Note)
	}
	if got := get(t, s2, "a", "big"); got.Reversible || got.Note != sn.Note {
		t.Fatalf("stored as %+v", got)
	}
	mustBefore(t, s2, "a", "a2", content(2))
	checkTotals(t, s2)
}

// TestRollbackDataSurvivesReopen: small (in the database) and large (a
// file) previous content read back after a restart.
func TestRollbackDataSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	createSession(t, s, "a")
	small := []byte("hello\n")
	large := bytes.Repeat([]byte("0123456789abcdef"), SmallSnapshot/16+1)
	save(t, s, "a", "small", small)
	save(t, s, "a", "large", large)
	save(t, s, "a", "empty", []byte{})
	seq = seq.Add(time.Millisecond)
	created, err := s.SaveSnapshot(context.Background(), Snapshot{ID: "created", SessionID: "a", MessageID: "m", Path: "n.txt", AbsPath: "/w/n.txt",
		AfterHash: "after", Reversible: true, State: "active", CreatedAt: seq.Format(timeLayout)}, nil)
	if err != nil || !created.Reversible || created.BeforeHash != "" {
		t.Fatalf("snapshot of a created file: %+v, %v", created, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openRetention(t, dir, Retention{})
	mustBefore(t, s, "a", "small", small)
	mustBefore(t, s, "a", "large", large)
	if sn := get(t, s, "a", "small"); sn.AfterHash != afterHash || sn.BeforeHash != fmt.Sprintf("%x", sha256.Sum256(small)) {
		t.Fatalf("hashes read back: after %q, before %q", sn.AfterHash, sn.BeforeHash)
	}
	mustBefore(t, s, "a", "empty", []byte{})
	mustBefore(t, s, "a", "created", nil)
	if tot, _ := s.SnapshotTotals(context.Background(), "a"); tot != (Totals{3, int64(len(small) + len(large))}) {
		t.Fatalf("totals after reopen: %+v", tot)
	}

	// A large blob cut short on disk is reported damaged, not restored.
	sn := get(t, s, "a", "large")
	os.WriteFile(s.blobPath(sn.BeforeHash), large[:100], 0o600)
	var damaged *DamagedError
	if _, err := s.SnapshotBefore(context.Background(), sn); !errors.As(err, &damaged) || !strings.Contains(err.Error(), fmt.Sprintf("100 bytes on disk, %d taken", len(large))) {
		t.Fatalf("damaged blob: %v", err)
	}
	os.Remove(s.blobPath(sn.BeforeHash))
	if _, err := s.SnapshotBefore(context.Background(), sn); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing blob: %v", err)
	}
}

func countRows(t *testing.T, s *Store, q string) int {
	t.Helper()
	n := 0
	if err := s.read(context.Background(), func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, q, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error { n = int(st.ColumnInt64(0)); return nil }})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func blobFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(dir, blobDirName), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func TestIdenticalContentStoredOnce(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	s := openRetention(t, dir, Retention{})
	createSession(t, s, "a")
	createSession(t, s, "b")
	small := []byte(strings.Repeat("same content, past the bound of content in the row; ", 3))
	large := bytes.Repeat([]byte("L"), SmallSnapshot+1)
	for i, sess := range []string{"a", "a", "b"} {
		save(t, s, sess, fmt.Sprint("s", i), small)
		save(t, s, sess, fmt.Sprint("l", i), large)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM snapshot_blobs`); n != 2 {
		t.Fatalf("%d blob rows for two contents", n)
	}
	if n := countRows(t, s, `SELECT SUM(refs) FROM snapshot_blobs`); n != 6 {
		t.Fatalf("%d references for six snapshots", n)
	}
	if n := blobFiles(t, dir); n != 1 {
		t.Fatalf("%d blob files for one large content", n)
	}
	// Dropping some keeps the content for the others.
	for _, id := range []string{"s0", "l0"} {
		if err := s.DropSnapshot(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	mustBefore(t, s, "b", "s2", small)
	mustBefore(t, s, "b", "l2", large)
	// The last reference gone, the content goes.
	for _, id := range []string{"s2", "l2"} {
		if err := s.DropSnapshot(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM snapshot_blobs`); n != 0 {
		t.Fatalf("%d blob rows left with no snapshot", n)
	}
	if n := blobFiles(t, dir); n != 0 {
		t.Fatalf("%d blob files left with no snapshot", n)
	}
	checkTotals(t, s)
}

// checkTotals compares the kept totals with sums over every row.
func checkTotals(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	held := `(blob IS NOT NULL OR before_file IS NOT NULL)`
	sessions := map[string]bool{}
	s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT session_id FROM snapshots UNION SELECT session_id FROM snapshot_totals`, &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { sessions[st.ColumnText(0)] = true; return nil },
		})
	})
	for id := range sessions {
		want := Totals{
			countRows(t, s, `SELECT COUNT(*) FROM snapshots WHERE `+held+` AND session_id = '`+id+`'`),
			int64(countRows(t, s, `SELECT COALESCE(SUM(before_size), 0) FROM snapshots WHERE `+held+` AND session_id = '`+id+`'`)),
		}
		if got, err := s.SnapshotTotals(ctx, id); err != nil || got != want {
			t.Errorf("session %s: totals %+v, rows sum to %+v (%v)", id, got, want, err)
		}
	}
	want := Totals{
		countRows(t, s, `SELECT COUNT(*) FROM snapshots WHERE `+held),
		int64(countRows(t, s, `SELECT COALESCE(SUM(before_size), 0) FROM snapshots WHERE `+held)),
	}
	if got, err := s.DataDirSnapshotTotals(ctx); err != nil || got != want {
		t.Errorf("data dir: totals %+v, rows sum to %+v (%v)", got, want, err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM snapshot_blobs b WHERE refs != (SELECT COUNT(*) FROM snapshots WHERE blob = b.hash AND before_size >= 128)`); n != 0 {
		t.Errorf("%d blobs with a wrong reference count", n)
	}
}

func TestTotalsFollowEveryChange(t *testing.T) {
	ctx := context.Background()
	s := openRetention(t, t.TempDir(), Retention{SessionCount: 4, SessionBytes: 1 << 20, DataDirCount: 7, DataDirBytes: 1 << 30})
	for _, id := range []string{"a", "b", "c"} {
		createSession(t, s, id)
	}
	for i := range 6 { // insert and evict
		save(t, s, "a", fmt.Sprint("a", i), content(i%3))
		checkTotals(t, s)
	}
	for i := range 4 { // evict across sessions
		save(t, s, "b", fmt.Sprint("b", i), content(i))
		checkTotals(t, s)
	}
	if err := s.DropSnapshot(ctx, "b1"); err != nil { // delete
		t.Fatal(err)
	}
	checkTotals(t, s)
	if err := s.DropSnapshot(ctx, "a0"); err != nil { // delete an evicted one
		t.Fatal(err)
	}
	checkTotals(t, s)
	save(t, s, "c", "c0", content(9))
	if err := s.DeleteSession(ctx, "b"); err != nil { // session delete
		t.Fatal(err)
	}
	checkTotals(t, s)
	if tot, _ := s.SnapshotTotals(ctx, "b"); tot != (Totals{}) {
		t.Fatalf("deleted session's totals: %+v", tot)
	}
	// The deprecated per-file API keeps the totals too.
	if err := s.InsertSnapshot(ctx, Snapshot{ID: "old", SessionID: "c", MessageID: "m", Path: "f", AbsPath: "/w/f", BeforeFile: "/nowhere", Existed: true, BeforeSize: 7, AfterHash: "h", Reversible: true, State: "active", CreatedAt: Now()}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.SnapshotBytes(ctx, "c"); n != int64(len(content(9)))+7 {
		t.Fatalf("SnapshotBytes %d", n)
	}
	if err := s.DeleteSnapshot(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	checkTotals(t, s)
}

// TestRetentionUsesIndexes: eviction finds its victim through an index,
// whatever the history, and no statement of a save scans the snapshots.
func TestRetentionUsesIndexes(t *testing.T) {
	s := openTestStore(t)
	for _, c := range []struct {
		q     string
		args  []any
		index string
	}{
		{oldestInSession, []any{"a", "x"}, "snapshots_held_session"},
		{oldestInDataDir, []any{"x"}, "snapshots_held"},
	} {
		plan := ""
		s.read(context.Background(), func(conn *sqlite.Conn) error {
			return sqlitex.Execute(conn, "EXPLAIN QUERY PLAN "+c.q, &sqlitex.ExecOptions{Args: c.args, ResultFunc: func(st *sqlite.Stmt) error {
				plan += st.ColumnText(3) + "\n"
				return nil
			}})
		})
		if !strings.Contains(plan, "INDEX "+c.index) || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("plan %q: want index %s, no sort", plan, c.index)
		}
	}
}

// databaseAt creates the database of a data dir at schema version v, as
// a hostcore of that version left it, and returns its connection.
func databaseAt(t *testing.T, dir string, v int) *sqlite.Conn {
	t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(dir, "hostcore.db"), sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteScript(conn, `CREATE TABLE schema_version (version INTEGER NOT NULL);`, nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:v] {
		if err := sqlitex.ExecuteScript(conn, m, nil); err != nil {
			t.Fatal(err)
		}
		sqlitex.Execute(conn, `INSERT INTO schema_version (version) VALUES (?)`, &sqlitex.ExecOptions{Args: []any{i + 1}})
	}
	return conn
}

// TestMigrationFromPerFileSnapshots: a data dir of schema v4, whose
// snapshots each have a file, opens; its snapshots still roll back, count
// in the totals, and are evicted like the others (their files removed).
func TestMigrationFromPerFileSnapshots(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	conn := databaseAt(t, dir, 4)
	sqlitex.Execute(conn, `INSERT INTO sessions (id, workspace_root, created_at) VALUES ('a', '/w', '2026-01-01T00:00:00.000Z')`, nil)
	snapDir := filepath.Join(dir, "snapshots", "a")
	os.MkdirAll(snapDir, 0o700)
	files := map[string][]byte{}
	for i := range 3 {
		id := fmt.Sprint("old", i)
		f := filepath.Join(snapDir, id+".before")
		files[id] = content(i)
		os.WriteFile(f, content(i), 0o600)
		if err := sqlitex.Execute(conn, `INSERT INTO snapshots (id, session_id, message_id, path, abs_path, before_file, existed, before_size, after_hash, reversible, created_at)
			VALUES (?, 'a', 'm', 'f.txt', '/w/f.txt', ?, 1, ?, 'h', 1, ?)`, &sqlitex.ExecOptions{
			Args: []any{id, f, len(content(i)), fmt.Sprintf("2026-01-01T00:00:00.00%dZ", i)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()

	s := openRetention(t, dir, Retention{SessionCount: 4, SessionBytes: 1 << 20, DataDirCount: 100, DataDirBytes: 1 << 30})
	if s.Fresh {
		t.Fatal("an old database read as new")
	}
	for id, want := range files {
		mustBefore(t, s, "a", id, want)
	}
	if tot, _ := s.SnapshotTotals(ctx, "a"); tot.Count != 3 || tot.Bytes != int64(3*len(content(0))) {
		t.Fatalf("migrated totals %+v", tot)
	}
	checkTotals(t, s)
	save(t, s, "a", "new0", content(7))
	save(t, s, "a", "new1", content(8))
	mustEvicted(t, s, "a", "old0", "a session keeps")
	if _, err := os.Stat(filepath.Join(snapDir, "old0.before")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an evicted per-snapshot file stays: %v", err)
	}
	mustBefore(t, s, "a", "old1", files["old1"])
	checkTotals(t, s)
}

// TestMigrationMovesShortContentIntoRows: a data dir of schema v5, which
// keeps content of 32 bytes and more in snapshot_blobs, opens; content
// under inlineMax moves into its rows and out of the blob table, longer
// content stays, every snapshot still rolls back, and one whose content is
// missing says so. A row's content of 32 bytes equal to another content's
// sha256 is not counted as a reference to it.
func TestMigrationMovesShortContentIntoRows(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	conn := databaseAt(t, dir, 5)
	sqlitex.Execute(conn, `INSERT INTO sessions (id, workspace_root, created_at) VALUES ('a', '/w', '2026-01-01T00:00:00.000Z')`, nil)
	mid := []byte("forty bytes of previous content, shared\n")
	exact := bytes.Repeat([]byte("3"), 32)
	long := bytes.Repeat([]byte("long previous content "), 10)
	lost := []byte("fifty bytes of previous content whose blob is gone")
	short := []byte("short\n")
	// What v5 wrote: the content in the row under 32 bytes, else its
	// sha256 there and the content in snapshot_blobs (lost's row is gone).
	for _, c := range [][]byte{mid, exact, long} {
		sum := sha256.Sum256(c)
		sqlitex.Execute(conn, `INSERT INTO snapshot_blobs (hash, size, data) VALUES (?, ?, ?)`, &sqlitex.ExecOptions{Args: []any{sum[:], len(c), c}})
	}
	for i, sn := range []struct {
		id string
		c  []byte
	}{{"mid0", mid}, {"mid1", mid}, {"exact", exact}, {"long", long}, {"lost", lost}, {"short", short}} {
		ref := sn.c
		if len(sn.c) >= 32 {
			sum := sha256.Sum256(sn.c)
			ref = sum[:]
		}
		if err := sqlitex.Execute(conn, `INSERT INTO snapshots (id, session_id, message_id, path, abs_path, existed, before_size, after_hash, reversible, created_at, blob)
			VALUES (?, 'a', 'm', 'f.txt', '/w/f.txt', 1, ?, 'h', 1, ?, ?)`, &sqlitex.ExecOptions{
			Args: []any{sn.id, len(sn.c), fmt.Sprintf("2026-01-01T00:00:00.00%dZ", i), ref},
		}); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()

	s := openRetention(t, dir, Retention{})
	for id, want := range map[string][]byte{"mid0": mid, "mid1": mid, "exact": exact, "long": long, "short": short} {
		mustBefore(t, s, "a", id, want)
	}
	if sn := get(t, s, "a", "lost"); sn.Reversible || !strings.Contains(sn.Note, "missing") {
		t.Fatalf("a snapshot whose content is gone: reversible %v, note %q", sn.Reversible, sn.Note)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM snapshot_blobs`); n != 1 {
		t.Fatalf("%d blob rows; want the long content's alone", n)
	}
	checkTotals(t, s)
	// 32 bytes of content that are the sha256 of content saved after
	// them are no reference to it: dropped, they leave it in place.
	later := bytes.Repeat([]byte("saved later "), 20)
	sum := sha256.Sum256(later)
	save(t, s, "a", "hashlike", sum[:])
	save(t, s, "a", "later", later)
	checkTotals(t, s)
	if err := s.DropSnapshot(ctx, "hashlike"); err != nil {
		t.Fatal(err)
	}
	mustBefore(t, s, "a", "later", later)
	save(t, s, "a", "hashlike2", sum[:])
	checkTotals(t, s)
	mustBefore(t, s, "a", "long", long)
	checkTotals(t, s)
}

func TestSweepSnapshots(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	createSession(t, s, "a")
	large := bytes.Repeat([]byte("K"), SmallSnapshot+1)
	kept := save(t, s, "a", "k", large)
	s.Close()
	// What a crash leaves: a blob file with no row, an unfinished write,
	// a per-snapshot file with no row, the directory of a gone session.
	stray := strings.Repeat("ab", 32)
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{
		filepath.Join(dir, blobDirName, "ab", stray),
		filepath.Join(dir, blobDirName, "ab", ".tmp-123"),
		filepath.Join(dir, "snapshots", "a", "snap_x.before"),
		filepath.Join(dir, "snapshots", "gone", "snap_y.before"),
	} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, old, old)
		os.Chtimes(filepath.Dir(p), old, old)
	}
	os.Chtimes(s.blobPath(kept.BeforeHash), old, old)
	s = openRetention(t, dir, Retention{})
	// Made after start-up: not judged.
	young := filepath.Join(dir, blobDirName, "cd", strings.Repeat("cd", 32))
	os.MkdirAll(filepath.Dir(young), 0o700)
	os.WriteFile(young, []byte("y"), 0o600)

	rep, err := s.SweepSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.StrayBlobs != 2 || rep.StrayFiles != 1 || rep.SessionDirs != 1 {
		t.Fatalf("sweep report %+v", rep)
	}
	mustBefore(t, s, "a", "k", large)
	if _, err := os.Stat(young); err != nil {
		t.Fatalf("a blob written after start-up was swept: %v", err)
	}

	// A new database beside snapshot files keeps them.
	s.Close()
	os.Remove(filepath.Join(dir, "hostcore.db"))
	os.Remove(filepath.Join(dir, "hostcore.db-wal"))
	s = openRetention(t, dir, Retention{})
	rep, err = s.SweepSnapshots(ctx)
	if err != nil || len(rep.Kept) == 0 || rep.StrayBlobs != 0 {
		t.Fatalf("sweep beside a new database: %+v, %v", rep, err)
	}
	if _, err := os.Stat(s.blobPath(kept.BeforeHash)); err != nil {
		t.Fatal("a new database's sweep removed content")
	}
}

// TestEvictionMakesRoom: past a bound of more than evictRoom snapshots,
// one eviction frees 1/evictRoom of it, so the next saves evict nothing.
func TestEvictionMakesRoom(t *testing.T) {
	ctx := context.Background()
	s := openRetention(t, t.TempDir(), Retention{SessionCount: 128, SessionBytes: 1 << 30, DataDirCount: 1000, DataDirBytes: 1 << 30})
	createSession(t, s, "a")
	for i := range 128 {
		save(t, s, "a", fmt.Sprint("a", i), content(i))
	}
	if tot, _ := s.SnapshotTotals(ctx, "a"); tot.Count != 128 {
		t.Fatalf("at the bound: %+v", tot)
	}
	save(t, s, "a", "a128", content(128))
	if tot, _ := s.SnapshotTotals(ctx, "a"); tot.Count != 126 {
		t.Fatalf("past the bound: %+v, want 126 (128 less 2 of room)", tot)
	}
	for i := range 3 {
		mustEvicted(t, s, "a", fmt.Sprint("a", i), "a session keeps")
	}
	mustBefore(t, s, "a", "a3", content(3))
	save(t, s, "a", "a129", content(129))
	mustBefore(t, s, "a", "a3", content(3))
	checkTotals(t, s)
}
