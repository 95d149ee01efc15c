// Package auditquery is audit.query's answer: the audit rows in their
// wire form, encoded as SQLite reads them into the one array the answer
// carries, and handed back to the system once a large answer is written.
//
// It is cut out of handlers because it is a read of the store with a
// wire encoding and a memory rule of its own, and nothing of the
// envelope; the envelope writes the rows (handlers/audit.go).
package auditquery
