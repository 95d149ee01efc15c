// Package order is the order in which mutations apply: a session's
// Write, Edit and review.rollback calls run one at a time in the order
// their lines arrived (Queue); one file is changed by one session at a
// time (PathLocks); and a configuring method first settles the calls read
// before it (Pending), so a call is judged as things stood when its line
// was read.
//
// It is cut out of handlers because none of them needs to know what a
// call is: they are small concurrency primitives with their own tests,
// and the envelope only takes a ticket when a line is read, waits for its
// turn before the body, and locks the file the body changes.
package order
