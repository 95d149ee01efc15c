package store

import (
	"context"
	"errors"
	"fmt"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// AuditRow is one tools.execute call (PROTOCOL section 6).
type AuditRow struct {
	SessionID        string `json:"sessionId"`
	TurnID           string `json:"turnId"`
	ToolCallID       string `json:"toolCallId"`
	ToolName         string `json:"toolName"`
	ArgsHash         string `json:"argsHash"`
	ArgsPreview      string `json:"argsPreview"`
	ExternalPath     string `json:"externalPath"` // "", "allowed" or "denied"; "" goes out as null
	Decision         string `json:"decision"`
	Prompted         bool   `json:"prompted"`
	PermissionWaitMs int64  `json:"permissionWaitMs"`
	DurationMs       int64  `json:"durationMs"`
	OverheadMs       int64  `json:"overheadMs"`
	TotalMs          int64  `json:"totalMs"`
	OK               bool   `json:"ok"`
	ErrorCode        string `json:"errorCode"`
	Delegate         string `json:"delegate"`
	CreatedAt        string `json:"createdAt"`
	// RuleID names the remembered approval (Rule) that let the call run
	// without a card; for a command line whose parts were allowed by
	// several, their ids separated by spaces. "" goes out as null; the
	// journal leaves it out, so its lines keep their encoding.
	RuleID string `json:"ruleId,omitempty"`
}

// InsertAudit commits one audit row. Callers commit it before the response
// is written, so an acknowledged call is never missing after a crash. With
// recordCall the call's id is recorded with it, for calls that were not
// reserved ahead (see ReserveToolCall). The row is committed to the
// journal (see journal.go) and reaches the audit table before anything
// reads it.
func (s *Store) InsertAudit(ctx context.Context, r AuditRow, recordCall bool) error {
	if s.NoAudit {
		if recordCall {
			return s.ReserveToolCall(ctx, r.SessionID, r.ToolCallID)
		}
		return nil
	}
	err := s.journalAppend(r, recordCall)
	if errors.Is(err, errJournalBroken) {
		if werr := s.write(ctx, func(conn *sqlite.Conn) error { return insertAudit(conn, r, recordCall) }); werr != nil {
			err = fmt.Errorf("%v; and the database: %w", err, werr)
		} else {
			err = nil
		}
	}
	if recordCall && err == nil {
		// The id is committed with the row. A read whose row could be
		// written nowhere is not answered (handlers withhold its result),
		// so its id stays free for the read to be sent again.
		s.seen.add(r.SessionID, r.ToolCallID)
	}
	return err
}

// MaxAuditRows is the most rows one QueryAudit returns.
const MaxAuditRows = 10000

// auditLimit is the rows a query with limit n returns at most: no limit
// means 100; more than MaxAuditRows means MaxAuditRows, not the default (a
// client asking for 20000 rows got 100).
func auditLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > MaxAuditRows:
		return MaxAuditRows
	}
	return n
}

// AuditFilter narrows QueryAudit.
type AuditFilter struct {
	SessionID, ToolCallID string
	Limit                 int
}

// QueryAudit returns rows newest first.
func (s *Store) QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRow, error) {
	out := []AuditRow{}
	err := s.EachAudit(ctx, f, func(r AuditRow) error { out = append(out, r); return nil })
	return out, err
}

// EachAudit hands QueryAudit's rows to fn one at a time as SQLite reads
// them, newest first, so that a caller that encodes them (audit.query)
// holds its encoding and not the rows as well; an error from fn stops it.
func (s *Store) EachAudit(ctx context.Context, f AuditFilter, fn func(AuditRow) error) error {
	f.Limit = auditLimit(f.Limit)
	q, args := auditQuery(f)
	return s.read(ctx, func(conn *sqlite.Conn) error {
		// An answer must hold every acknowledged call: rows take could
		// not move (or appended since) are moved now, or the query fails.
		if s.journal.npend.Load() > 0 {
			if err := s.applyJournal(conn); err != nil {
				return err
			}
		}
		return sqlitex.Execute(conn, q, &sqlitex.ExecOptions{
			Args: args,
			ResultFunc: func(st *sqlite.Stmt) error {
				return fn(AuditRow{
					SessionID: st.ColumnText(0), TurnID: st.ColumnText(1), ToolCallID: st.ColumnText(2), ToolName: st.ColumnText(3),
					ArgsHash: st.ColumnText(4), ArgsPreview: st.ColumnText(5), ExternalPath: st.ColumnText(6), Decision: st.ColumnText(7),
					Prompted: st.ColumnBool(8), PermissionWaitMs: st.ColumnInt64(9), DurationMs: st.ColumnInt64(10),
					OverheadMs: st.ColumnInt64(11), TotalMs: st.ColumnInt64(12), OK: st.ColumnBool(13), ErrorCode: st.ColumnText(14),
					Delegate: st.ColumnText(15), CreatedAt: st.ColumnText(16), RuleID: st.ColumnText(17),
				})
			},
		})
	})
}

// auditQuery is QueryAudit's statement. There is one per filter, so that
// each uses its index: written as one statement with "(? = ” OR column =
// ?)" terms, SQLite planned a scan of the whole table for all of them.
func auditQuery(f AuditFilter) (string, []any) {
	const cols = `SELECT session_id, turn_id, tool_call_id, tool_name, args_hash, args_preview, COALESCE(external_path, ''), decision,
		prompted, permission_wait_ms, duration_ms, overhead_ms, total_ms, ok, COALESCE(error_code, ''), COALESCE(delegate, ''), created_at,
		COALESCE(rule_id, '') FROM audit `
	switch {
	case f.ToolCallID != "" && f.SessionID != "":
		return cols + `WHERE tool_call_id = ? AND session_id = ? ORDER BY id DESC LIMIT ?`, []any{f.ToolCallID, f.SessionID, f.Limit}
	case f.ToolCallID != "":
		return cols + `WHERE tool_call_id = ? ORDER BY id DESC LIMIT ?`, []any{f.ToolCallID, f.Limit}
	case f.SessionID != "":
		return cols + `WHERE session_id = ? ORDER BY id DESC LIMIT ?`, []any{f.SessionID, f.Limit}
	}
	return cols + `ORDER BY id DESC LIMIT ?`, []any{f.Limit}
}
