package store

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// ErrNotFound says a row does not exist. Any other error is a storage
// failure and must never be read as "not found".
var ErrNotFound = errors.New("not found")

// ErrExists says a row with that key already exists.
var ErrExists = errors.New("already exists")

// Store is the database: one connection, taken in turn by every read and
// write, so SQLite never answers SQLITE_BUSY between our own connections.
type Store struct {
	// conn holds the connection while nobody uses it (a one-slot
	// semaphore that a cancelled caller can stop waiting on); done is
	// closed by Close.
	conn     chan *sqlite.Conn
	done     chan struct{}
	cmuClose sync.Mutex
	closed   bool
	// journal holds audit rows committed but not yet in SQLite
	// (journal.go); seen, the tool call ids of the sessions asked about.
	journal *journal
	seen    seenCalls
	path    string
	dataDir string
	lock    *os.File // hostcore.lock, held while open
	cfg     Config
	// openedAt: files in the blob store older than this were not written
	// by this process, so the background sweep may judge them.
	openedAt time.Time
	// fileMu orders the writes and removals of blob files with the rows
	// that name them (snapblobs.go).
	fileMu sync.Mutex
	// files are the database and its WAL as Open found them: rows moved
	// into a database that was since deleted or replaced under hostcore
	// are in a file no start reads, so the journal keeps them (intact).
	files [2]os.FileInfo
	// NoAudit turns audit inserts into no-ops. Benchmark-only switch, used to
	// measure what the audit costs.
	NoAudit bool
	// Fresh: Open found no schema and created it (a new data dir, or a
	// database file that was emptied or removed).
	Fresh bool

	// cache holds settings and sessions read on every tool call. They only
	// change through this Store (hostcore is the database's only user), so
	// a write-through cache is exact.
	cmu      sync.Mutex
	gen      uint64             // bumped by every invalidation; a fill that raced one is dropped
	changing int                // changes to cached rows in flight (see change)
	settings map[string]*string // nil value: known to be unset
	sessions map[string]Session
}

// cacheGen is read before a database read whose result may be cached.
func (s *Store) cacheGen() uint64 {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.gen
}

// change marks a change to cached rows as in flight until the function it
// returns runs. Meanwhile the cache is neither read nor filled: the change
// may have committed while the old row is still cached, and a reader that
// saw the commit elsewhere (a snapshot gone with its session) must not be
// told the row is still there. drop removes the rows the change touches.
func (s *Store) change(drop func()) (done func()) {
	s.cmu.Lock()
	s.changing++
	s.gen++
	drop()
	s.cmu.Unlock()
	return func() {
		s.cmu.Lock()
		s.changing--
		s.gen++
		drop()
		s.cmu.Unlock()
	}
}

// cacheUsable reports whether the cache may be used now (no change in flight).
// The caller holds cmu.
func (s *Store) cacheUsable() bool { return s.changing == 0 }

// migrations are applied in order; the index+1 is the schema version. Never
// edit a released entry: append a new one.
var migrations = []string{
	// v1: the core.
	`CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
	CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		workspace_root TEXT,
		permission_mode TEXT NOT NULL DEFAULT 'inherit',
		mode TEXT NOT NULL DEFAULT 'agent',
		subagents TEXT NOT NULL DEFAULT '[]',
		created_at TEXT NOT NULL
	);
	CREATE TABLE tool_calls (
		session_id TEXT NOT NULL,
		tool_call_id TEXT NOT NULL,
		created_at TEXT NOT NULL,
		PRIMARY KEY (session_id, tool_call_id)
	) WITHOUT ROWID;
	-- A plain rowid: audit rows are never deleted, so it only grows, and
	-- AUTOINCREMENT would write sqlite_sequence on every insert.
	CREATE TABLE audit (
		id INTEGER PRIMARY KEY,
		session_id TEXT NOT NULL,
		turn_id TEXT NOT NULL,
		tool_call_id TEXT NOT NULL,
		tool_name TEXT NOT NULL,
		args_hash TEXT NOT NULL,
		args_preview TEXT NOT NULL,
		external_path TEXT,
		decision TEXT NOT NULL,
		prompted INTEGER NOT NULL,
		permission_wait_ms INTEGER NOT NULL,
		duration_ms INTEGER NOT NULL,
		overhead_ms INTEGER NOT NULL,
		total_ms INTEGER NOT NULL,
		ok INTEGER NOT NULL,
		error_code TEXT,
		delegate TEXT,
		created_at TEXT NOT NULL
	);
	CREATE INDEX audit_session ON audit (session_id, id);
	CREATE INDEX audit_call ON audit (tool_call_id);`,
	// v2: review snapshots and plan/goal approvals.
	`CREATE TABLE snapshots (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL,
		message_id TEXT NOT NULL,
		path TEXT NOT NULL,
		abs_path TEXT NOT NULL,
		before_file TEXT,
		existed INTEGER NOT NULL,
		after_hash TEXT NOT NULL,
		reversible INTEGER NOT NULL,
		state TEXT NOT NULL DEFAULT 'active',
		created_at TEXT NOT NULL
	);
	CREATE INDEX snapshots_session ON snapshots (session_id);
	CREATE TABLE approvals (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL,
		kind TEXT NOT NULL,
		artifact_path TEXT NOT NULL,
		state TEXT NOT NULL DEFAULT 'pending',
		created_at TEXT NOT NULL
	);`,
	// v3: the size of each snapshot's previous content, for the
	// per-session bound on what is kept.
	`ALTER TABLE snapshots ADD COLUMN before_size INTEGER NOT NULL DEFAULT 0;`,
	// v4: the audit journal's last sequence number moved into SQLite.
	`CREATE TABLE journal_state (id INTEGER PRIMARY KEY CHECK (id = 1), applied INTEGER NOT NULL);
	INSERT INTO journal_state (id, applied) VALUES (1, 0);`,
	// v5: previous content in a content-addressed blob store, totals kept
	// as they change, and the retention rule's order (snapblobs.go). The
	// totals of existing rows are summed once, here.
	snapshotBlobsSchema,
	// v6: remembered approvals, and the rule an audit row was allowed by
	// (rules.go).
	rulesSchema,
	// v7: content under 128 bytes in its snapshot's row (snapblobs.go).
	snapshotInlineSchema,
}

// Config is what the caller sets when it opens a store.
type Config struct {
	// Retention bounds the snapshots kept; the zero value is
	// DefaultRetention.
	Retention Retention
}

// Open opens (creating if needed) the database under dataDir and migrates
// it, with the default Config.
func Open(dataDir string) (*Store, error) {
	return OpenWith(dataDir, Config{})
}

// OpenWith is Open with a Config. It does no work that grows with the
// data dir's history: the sweep of what a crash left behind is
// SweepSnapshots, which the caller runs in the background.
func OpenWith(dataDir string, cfg Config) (*Store, error) {
	if cfg.Retention == (Retention{}) {
		cfg.Retention = DefaultRetention()
	}
	openedAt := time.Now()
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, "hostcore.db")
	if err := restrictDBFiles(path); err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening database: %w", err)
	}
	// SQLite opens a file it may not write read-only, without a word:
	// hostcore then said it was ready and failed every call. Opening its
	// files for writing finds out first, without writing to them.
	if p := notWritable(path); p != "" {
		lock.Close()
		return nil, fmt.Errorf("the database %s cannot be written (%s is not writable by this user)", path, p)
	}
	// One connection, in exclusive locking mode: hostcore is the
	// database's only user, so this keeps SQLite's page cache warm
	// (another connection's commit would invalidate it) and saves the
	// file-lock system calls on every transaction. Calls take turns on
	// it; each statement is tens of microseconds. It is held directly,
	// not through sqlitex.Pool: the pool arms an interrupt on every take
	// (a goroutine started and two channel hand-offs per statement, a
	// tenth of a Read's CPU).
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL|sqlite.OpenURI)
	if err != nil {
		lock.Close()
		return nil, openError(dataDir, path, err)
	}
	if err := prepareConn(conn); err != nil {
		conn.Close()
		lock.Close()
		return nil, openError(dataDir, path, err)
	}
	s := &Store{conn: make(chan *sqlite.Conn, 1), done: make(chan struct{}), path: path, dataDir: dataDir, cfg: cfg, openedAt: openedAt, lock: lock, settings: map[string]*string{}, sessions: map[string]Session{}}
	s.seen.seed = maphash.MakeSeed()
	s.conn <- conn
	if err := s.migrate(context.Background()); err != nil {
		s.Close()
		return nil, openError(dataDir, path, err)
	}
	for i, name := range []string{path, path + "-wal"} {
		s.files[i], _ = os.Stat(name)
	}
	// Rows a crash left in the audit journal are moved in now.
	var applied int64
	if err := s.read(context.Background(), func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT applied FROM journal_state WHERE id = 1`, &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { applied = st.ColumnInt64(0); return nil },
		})
	}); err != nil {
		s.Close()
		return nil, openError(dataDir, path, err)
	}
	if s.journal, err = openJournal(dataDir, uint64(applied)); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.read(context.Background(), s.applyJournal); err != nil {
		s.Close()
		return nil, fmt.Errorf("moving the audit journal into the database: %w", err)
	}
	return s, nil
}

// errLockHeld: another process holds the data dir's lock.
var errLockHeld = errors.New("held by another process")

// lockDataDir takes the data dir for this process: hostcore.lock, locked
// (tryLock) for as long as the process holds it, with its pid inside. A
// second hostcore on the same data dir stops at once, naming the holder,
// rather than wait SQLite's 10 s busy timeout for "database is locked".
func lockDataDir(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, "hostcore.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data dir's lock: %w", err)
	}
	if err := tryLock(f); err != nil {
		holder, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, errLockHeld) {
			return nil, fmt.Errorf("the data dir %s is in use by another hostcore (pid %s); give each hostcore its own --data-dir", dataDir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("locking the data dir: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// restrictDBFiles keeps the database and the WAL and shared-memory files
// beside it readable by the user alone, whatever the data dir's mode: the
// audit holds what the agent ran. SQLite creates a database 0644 and
// gives its WAL and shared-memory files the database's mode, so the
// database is created here, empty (SQLite takes an empty file for a new
// database), as 0600; a database or WAL that an earlier start left
// readable by others loses those bits.
func restrictDBFiles(path string) error {
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			if name != path {
				continue
			}
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			return err
		}
		// A file of another user keeps the mode its owner gave it
		// (hostcore cannot change it; what it may do with the file,
		// SQLite finds out).
		if perm := fi.Mode().Perm(); fi.Mode().IsRegular() && perm&0o077 != 0 {
			if err := os.Chmod(name, perm&^0o077); err != nil && !errors.Is(err, fs.ErrPermission) {
				return err
			}
		}
	}
	return nil
}

// openError says what a failure to open the database means: a locked one
// is in use by another hostcore (each takes its database exclusively).
func openError(dataDir, path string, err error) error {
	if code := sqlite.ErrCode(err); code == sqlite.ResultBusy || strings.Contains(err.Error(), "database is locked") {
		return fmt.Errorf("the data dir %s is in use by another hostcore (its database is locked); give each hostcore its own --data-dir: %w", dataDir, err)
	}
	if p := notWritable(path); p != "" {
		// SQLite says only "unable to open database file" when its WAL or
		// shared-memory file belongs to another user.
		return fmt.Errorf("the database %s cannot be written (%s is not writable by this user): %w", path, p, err)
	}
	return fmt.Errorf("opening database: %w", err)
}

// notWritable names the first of the database's files that exists as a
// regular file this process cannot open for writing; "" for none.
func notWritable(path string) string {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		// Stat, not Lstat: a database that is a link to a file this user
		// cannot write is as unwritable as the file.
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return p
		}
		f.Close()
	}
	return ""
}

// Close closes the database (SQLite checkpoints the WAL) once the
// statement running now, if any, has ended. Closing twice is harmless. A
// database deleted or replaced while hostcore ran is an error (errReplaced):
// the journal then keeps its rows for the next start.
func (s *Store) Close() error {
	s.cmuClose.Lock()
	defer s.cmuClose.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.done)
	conn := <-s.conn
	var err error
	if s.journal != nil {
		// Appends stop; what was journaled goes into SQLite (should this
		// fail, the journal keeps it for the next start).
		s.journal.close()
		err = s.applyJournal(conn)
	}
	// The database is closed (SQLite checkpoints its WAL into it, even a
	// WAL deleted meanwhile, which it holds open) before the journal is
	// emptied, and the journal is emptied only if the database is still
	// the file at its name.
	intact := s.intact(false)
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if s.journal != nil {
		if err == nil && intact && s.journal.size > 0 {
			s.journal.f.Truncate(0)
		}
		s.journal.f.Close()
	}
	if err == nil && !intact {
		err = errReplaced(s.path)
	}
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// intact says whether the database (and, with wal, its WAL) are still
// the files Open found at their names: deleted or replaced under hostcore
// (by hand, by a cleaner of the data dir), what is written into them
// reaches no start. The WAL matters while hostcore runs (a crash loses a
// deleted WAL's transactions); at Close, SQLite checkpoints it into the
// database from the descriptor it holds.
func (s *Store) intact(wal bool) bool {
	for i, name := range []string{s.path, s.path + "-wal"} {
		if s.files[i] == nil || i == 1 && !wal {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil || !os.SameFile(fi, s.files[i]) {
			return false
		}
	}
	return true
}

func errReplaced(path string) error {
	return fmt.Errorf("the database %s was deleted or replaced while hostcore ran: what went into it is lost, but the audit journal was not emptied: the next start moves the rows it holds in", path)
}

// prepareConn sets the connection's pragmas.
func prepareConn(conn *sqlite.Conn) error {
	conn.SetBusyTimeout(10 * time.Second)
	// NORMAL in WAL mode: a committed transaction survives a crash of
	// this process (it is in the WAL file); only power loss may drop the
	// last ones. Tool writes themselves are fsynced. temp_store=MEMORY:
	// a statement that fires triggers (every snapshot save, through the
	// kept totals) needs a statement journal, which would otherwise be a
	// temporary file written on every save.
	for _, pragma := range []string{`PRAGMA locking_mode=EXCLUSIVE`, `PRAGMA journal_mode=WAL`, `PRAGMA synchronous=NORMAL`, `PRAGMA foreign_keys=ON`, `PRAGMA temp_store=MEMORY`} {
		if err := sqlitex.ExecuteTransient(conn, pragma, nil); err != nil {
			return err
		}
	}
	return nil
}

// errClosed is returned by calls made after Close.
var errClosed = errors.New("database is closed")

// take waits for the connection. A ctx that can end arms SQLite's
// interrupt for the duration (most callers pass one that cannot).
func (s *Store) take(ctx context.Context) (*sqlite.Conn, func(), error) {
	var conn *sqlite.Conn
	select {
	case <-s.done:
		return nil, nil, errClosed
	default:
	}
	select {
	case conn = <-s.conn:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-s.done:
		return nil, nil, errClosed
	}
	if s.journal != nil && s.journal.npend.Load() > 0 {
		// Whatever runs next sees every audit row committed before it.
		// Should this fail, the rows stay journaled for the next try;
		// QueryAudit refuses to answer without them.
		s.applyJournal(conn)
	}
	if done := ctx.Done(); done != nil {
		conn.SetInterrupt(done)
		return conn, func() { conn.SetInterrupt(nil); s.conn <- conn }, nil
	}
	return conn, func() { s.conn <- conn }, nil
}

func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(conn *sqlite.Conn) error {
		if err := sqlitex.ExecuteTransient(conn, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`, nil); err != nil {
			return err
		}
		version := 0
		err := sqlitex.ExecuteTransient(conn, `SELECT COALESCE(MAX(version),0) FROM schema_version`, &sqlitex.ExecOptions{
			ResultFunc: func(stmt *sqlite.Stmt) error { version = int(stmt.ColumnInt64(0)); return nil },
		})
		if err != nil {
			return err
		}
		s.Fresh = version == 0
		if version > len(migrations) {
			return fmt.Errorf("database schema v%d is newer than this hostcore (v%d)", version, len(migrations))
		}
		for i := version; i < len(migrations); i++ {
			if err := sqlitex.ExecuteScript(conn, migrations[i], nil); err != nil {
				return fmt.Errorf("migrating to v%d: %w", i+1, err)
			}
			if err := sqlitex.ExecuteTransient(conn, `INSERT INTO schema_version (version) VALUES (?)`, &sqlitex.ExecOptions{Args: []any{i + 1}}); err != nil {
				return err
			}
		}
		return nil
	})
}

// write runs fn in an immediate transaction, serialised with every other
// use of the connection.
func (s *Store) write(ctx context.Context, fn func(*sqlite.Conn) error) (err error) {
	conn, put, err := s.take(ctx)
	if err != nil {
		return fmt.Errorf("taking db connection: %w", err)
	}
	defer func() {
		if err == nil && testAfterCommit != nil {
			testAfterCommit()
		}
	}()
	defer put()
	end, err := sqlitex.ImmediateTransaction(conn)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer end(&err)
	return fn(conn)
}

// testAfterCommit, set by tests, runs right after a write commits and
// gives its connection back.
var testAfterCommit func()

func (s *Store) read(ctx context.Context, fn func(*sqlite.Conn) error) error {
	conn, put, err := s.take(ctx)
	if err != nil {
		return fmt.Errorf("taking db connection: %w", err)
	}
	defer put()
	return fn(conn)
}

// timeLayout is how every stored timestamp is written: RFC 3339 in UTC
// with milliseconds ("2026-12-04T09:05:07.123Z"). Rows already in a
// database hold it, so it never changes.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// Now is the current time as stored.
func Now() string { return time.Now().UTC().Format(timeLayout) }

func isConstraint(err error) bool {
	code := sqlite.ErrCode(err)
	return code == sqlite.ResultConstraintPrimaryKey || code == sqlite.ResultConstraintUnique
}

// GetSetting returns a setting's value and whether it was set.
func (s *Store) GetSetting(ctx context.Context, key string) (string, bool, error) {
	s.cmu.Lock()
	if v, ok := s.settings[key]; ok && s.cacheUsable() {
		s.cmu.Unlock()
		if v == nil {
			return "", false, nil
		}
		return *v, true, nil
	}
	s.cmu.Unlock()
	gen := s.cacheGen()
	var v string
	found := false
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return sqlitex.Execute(conn, `SELECT value FROM settings WHERE key = ?`, &sqlitex.ExecOptions{
			Args:       []any{key},
			ResultFunc: func(stmt *sqlite.Stmt) error { v = stmt.ColumnText(0); found = true; return nil },
		})
	})
	if err == nil {
		s.cacheSetting(gen, key, v, found)
	}
	return v, found, err
}

func (s *Store) cacheSetting(gen uint64, key, v string, found bool) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if gen != s.gen || !s.cacheUsable() {
		return
	}
	if found {
		s.settings[key] = &v
	} else {
		s.settings[key] = nil
	}
}

// SetSetting stores a setting.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return s.SetSettings(ctx, map[string]*string{key: &value})
}

// SetSettings applies several settings in one transaction: all of them or
// none. A nil value deletes its key.
func (s *Store) SetSettings(ctx context.Context, changes map[string]*string) error {
	if len(changes) == 0 {
		return nil
	}
	defer s.change(func() {
		for key := range changes {
			delete(s.settings, key)
		}
	})()
	return s.write(ctx, func(conn *sqlite.Conn) error {
		for key, v := range changes {
			var err error
			if v == nil {
				err = sqlitex.Execute(conn, `DELETE FROM settings WHERE key = ?`, &sqlitex.ExecOptions{Args: []any{key}})
			} else {
				err = sqlitex.Execute(conn, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
					&sqlitex.ExecOptions{Args: []any{key, *v}})
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
