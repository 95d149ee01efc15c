// Package order is the order in which mutations apply: a session's
// Write, Edit and review.rollback calls run one at a time in the order
// their lines arrived (Queue), and one file is changed by one session at
// a time (PathLocks).
//
// It is cut out of handlers because neither needs to know what a call
// is: both are small concurrency primitives with their own tests, and
// the envelope only takes a ticket when a line is read, waits for its
// turn before the body, and locks the file the body changes.
package order
