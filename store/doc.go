// Package store keeps hostcore's durable state in SQLite: schema
// migrations, settings, sessions, the tool-call ids each session has used,
// the audit, review snapshot records and pending approvals. It holds no
// business rules: handlers decide, store remembers.
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
// Review snapshots are saved before the mutation they undo: the previous
// bytes are written and fsynced, then the row is committed, so every change
// that lands can be rolled back. A snapshot file whose size is not the one
// recorded is reported damaged rather than restored.
package store
