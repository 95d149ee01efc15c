package auditquery

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime/debug"

	"hostcore/store"
)

// Store reads the audit rows.
type Store interface {
	EachAudit(ctx context.Context, f store.AuditFilter, each func(store.AuditRow) error) error
}

// row is the wire form of an audit row: externalPath, errorCode,
// delegate and ruleId are null when empty.
type row struct {
	store.AuditRow
	ExternalPath *string `json:"externalPath"`
	ErrorCode    *string `json:"errorCode"`
	Delegate     *string `json:"delegate"`
	RuleID       *string `json:"ruleId"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Query reads the rows f selects into audit.query's answer. Each row is
// encoded as SQLite reads it, into the one array the answer carries: up
// to store.MaxAuditRows rows are held once, as JSON, not as rows, wire
// rows and their encoding at the same time.
func Query(ctx context.Context, st Store, f store.AuditFilter) (*Answer, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	buf.WriteByte('[')
	err := st.EachAudit(ctx, f, func(r store.AuditRow) error {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(row{AuditRow: r, ExternalPath: strOrNil(r.ExternalPath), ErrorCode: strOrNil(r.ErrorCode), Delegate: strOrNil(r.Delegate), RuleID: strOrNil(r.RuleID)}); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's '\n'
		return nil
	})
	if err != nil {
		return nil, err
	}
	buf.WriteByte(']')
	return &Answer{Rows: buf.Bytes()}, nil
}

// Answer is audit.query's result.
type Answer struct {
	Rows json.RawMessage `json:"rows"`
}

// freeAfter is the answer size past which audit.query hands memory back
// to the system once the answer is written.
const freeAfter = 1 << 20

// AfterReply gives back the memory of a large answer once it is written:
// the rows, their encoding and the line are garbage by then, but the Go
// runtime would keep their pages for minutes, and a long session would
// carry a query's peak for good. A collection of a heap this size costs
// a few milliseconds, paid after the answer, only for large ones.
func (a *Answer) AfterReply() {
	if len(a.Rows) > freeAfter {
		a.Rows = nil
		debug.FreeOSMemory()
	}
}
