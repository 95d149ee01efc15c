package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// EachAudit hands the rows over newest first, and stops at fn's error.
func TestEachAudit(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.CreateSession(ctx, Session{ID: "s", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
	for i := range 5 {
		row := AuditRow{SessionID: "s", TurnID: "t", ToolCallID: fmt.Sprint("c", i), ToolName: "Read", Decision: "auto-allow", OK: true, CreatedAt: Now()}
		if err := s.InsertAudit(ctx, row, true); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	stop := errors.New("stop")
	err = s.EachAudit(ctx, AuditFilter{SessionID: "s", Limit: 10}, func(r AuditRow) error {
		ids = append(ids, r.ToolCallID)
		if len(ids) == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || fmt.Sprint(ids) != "[c4 c3 c2]" {
		t.Errorf("ids %v, err %v; want [c4 c3 c2] and the error of fn", ids, err)
	}
	rows, err := s.QueryAudit(ctx, AuditFilter{SessionID: "s"})
	if err != nil || len(rows) != 5 || rows[0].ToolCallID != "c4" {
		t.Errorf("QueryAudit: %d rows, %v", len(rows), err)
	}
}
