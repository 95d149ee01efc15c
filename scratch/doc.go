// Package scratch manages per-session scratch directories:
// <data-dir>/scratch/<sessionId>, where the agent keeps drafts, long
// scripts and the complete output of commands whose result was cut.
//
// A scratch directory is created lazily, on first use, and private to the
// user: other local users have no business in an agent's drafts. It is
// removed with its session. Removal first makes read-only directories
// writable (a command may leave a Go module cache behind), without
// following links, because what is left would otherwise go to the next
// session given the same id.
//
// The start-up sweep removes the directories of sessions that no longer
// exist, and those in which nothing changed for MaxAge. "Changed" looks at
// everything inside, not only the top directory's time: a file rewritten
// in place leaves its parent's time as it was. The package knows nothing of
// the database; the caller says which sessions exist, and skips the sweep
// when its database is new and empty, since the directories may then be
// all that is left of a lost database's sessions.
package scratch
