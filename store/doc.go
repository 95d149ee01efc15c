// Package store keeps hostcore's durable state in SQLite: schema
// migrations, settings, sessions, the tool-call ids each session has used,
// the audit, review snapshot records, pending approvals and remembered
// permission rules (kept per workspace, not per session: they are the
// user's standing answers for a project). It holds no business rules:
// handlers decide, store remembers.
//
// # One user per data dir
//
// A data dir serves one hostcore at a time. hostcore.lock is locked for
// the life of the process, with the holder's pid inside, so a second
// hostcore stops at once with "in use by another hostcore (pid N)"
// instead of waiting out SQLite's busy timeout. The database is opened in
// exclusive locking mode: hostcore is its only reader and writer, which
// keeps the page cache warm between calls and lets the audit journal
// (below) delay its flush without anyone outside seeing a stale table. A
// database that opens read-only stops start-up: a write that changes
// nothing is tried first, since SQLite would otherwise open it read-only
// without a word and fail every later call.
//
// # The audit journal
//
// Every tools.execute writes one audit row before its answer goes out,
// and a SQLite commit per call would be a large share of a small Read. So
// a row is committed by appending one line to audit.journal with a single
// write(2). From then on a crash of hostcore cannot lose it, the same
// promise as a transaction committed to SQLite's WAL with
// synchronous=NORMAL (neither is fsynced: a power loss may drop the last
// rows of either). A background flush moves journaled rows into the audit
// table in batches, and every other use of the database moves them first,
// so audit.query, a session's ids and its deletion always see every row
// committed before them, in order.
//
// Each journal line carries a sequence number, and the last one moved is
// stored in the same transaction as the rows (journal_state), so Open can
// replay what a crash left without moving a row twice; a last line the
// crash cut short belongs to a call that was never answered and is
// dropped. When the journal cannot take a row (a full disk, a journal
// removed, replaced or moved while hostcore runs, too many rows waiting),
// rows go straight to SQLite, which takes the waiting ones first. A
// journal that is not a regular file stops start-up. The journal is
// emptied only while hostcore.db and its WAL are the files opened at
// start: rows written into a deleted database would reach no later start.
//
// # Snapshots
//
// Review snapshots are saved before the mutation they undo (SaveSnapshot):
// the previous bytes are made durable, then the row is committed, so
// every change that lands can be rolled back. Previous content that is
// not what was taken (a size or sha256 that differs) is reported damaged
// (DamagedError) rather than restored.
//
// Content costs what it holds. Up to SmallSnapshot (64 KiB) it lives in
// the database: in the snapshot's row under 128 bytes (a reference and
// its blob row would cost more than such content), else in
// snapshot_blobs under its sha256. Larger content is a file,
// snapshot-blobs/<first byte>/<sha256>, written to a temporary name,
// fsynced and renamed. Identical content is kept once, with a count of
// the snapshots that name it; the last one gone takes it along. Rows of
// the older format, one file per snapshot under snapshots/<session>/
// (BeforeFile), still roll back and count like the others.
//
// Totals (count and bytes of previous content, per session and for the
// data dir) are kept by triggers as rows are inserted, deleted or
// evicted: a save reads two rows, never a sum over the history.
//
// # The retention rule
//
// Config.Retention bounds the previous content kept, per session and for
// the whole data dir, in snapshots and in bytes (bytes count each
// snapshot's content in full, shared or not). DefaultRetention: 5,000
// snapshots and 1 GiB per session, 20,000 snapshots and 4 GiB per data
// dir: a session of days of edits keeps its last few thousand changes
// reversible, and the data dir stays a small share of a disk.
//
// A save that takes its session, then the data dir, past a bound evicts
// the oldest snapshots holding content (in the order they were saved,
// across sessions for the data dir's bound, never the snapshot being
// saved) until it is back under the bound with room for 1/64 of it, so a
// session at its bound pays for an eviction on one save in about 78, and
// in one transaction. An evicted snapshot keeps its row: it becomes
// reversible:false, and its note says why ("evicted by the retention
// rule: a session keeps the previous content of its last 5000 snapshots
// and 1073741824 bytes at most, oldest evicted first"), which a rollback
// returns (NotReversibleError), never a rollback that silently fails.
// Content alone larger than a byte bound is not kept at all, and the
// snapshot says so the same way. Snapshots of a file that did not exist
// hold nothing and are never evicted: their rollback removes the file.
//
// # Start-up
//
// Open does no work that grows with the history: it checks the schema
// version, migrates (once per version), probes that the database can be
// written and replays the audit journal, which holds at most the rows a
// crash left. There is no integrity check, VACUUM or count. What a crash
// or an older hostcore left behind (blob files no row names, per-snapshot
// files and directories of deleted sessions) is removed by
// SweepSnapshots, which walks the data dir and is run by the caller in the
// background once the first answer is out; saves may run beside it.
package store
