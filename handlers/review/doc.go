// Package review is the review record of workspace mutations (design
// section 4c): the snapshot a Write or Edit saves before it changes a
// file (Save), and review.rollback's hash-guarded restore (Restore),
// which puts the file back only while it still holds what the change
// wrote.
//
// It is cut out of handlers so that what a rollback checks and writes
// reads in one place; the method in handlers decodes the params, finds
// the snapshot and waits for the rollback's turn among the session's
// mutations, then hands over.
package review
