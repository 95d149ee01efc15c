package auditquery

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"hostcore/store"
)

type rows []store.AuditRow

func (r rows) EachAudit(_ context.Context, _ store.AuditFilter, each func(store.AuditRow) error) error {
	for _, row := range r {
		if err := each(row); err != nil {
			return err
		}
	}
	return nil
}

type failing struct{}

func (failing) EachAudit(context.Context, store.AuditFilter, func(store.AuditRow) error) error {
	return errors.New("disk I/O error")
}

// TestRowsInTheirWireForm: the answer is one array of the rows in order,
// externalPath, errorCode and delegate null when empty and a string when
// set; no rows is [], never null; a store error is the query's.
func TestRowsInTheirWireForm(t *testing.T) {
	ans, err := Query(t.Context(), rows{
		{ToolCallID: "a", ExternalPath: "denied", ErrorCode: "TOOL_DENIED", Delegate: "r", OK: false},
		{ToolCallID: "b", OK: true},
	}, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(ans.Rows, &got); err != nil || len(got) != 2 {
		t.Fatalf("rows %s: %v", ans.Rows, err)
	}
	if got[0]["toolCallId"] != "a" || got[0]["externalPath"] != "denied" || got[0]["errorCode"] != "TOOL_DENIED" || got[0]["delegate"] != "r" {
		t.Errorf("first row %v", got[0])
	}
	for _, k := range []string{"externalPath", "errorCode", "delegate"} {
		if v, ok := got[1][k]; !ok || v != nil {
			t.Errorf("second row: %s is %v, want null", k, v)
		}
	}
	if empty, err := Query(t.Context(), rows{}, store.AuditFilter{}); err != nil || string(empty.Rows) != "[]" {
		t.Fatalf("no rows: %s, %v", empty.Rows, err)
	}
	if _, err := Query(t.Context(), failing{}, store.AuditFilter{}); err == nil {
		t.Fatal("a store error was not the query's")
	}
	big := &Answer{Rows: make(json.RawMessage, freeAfter+1)}
	big.AfterReply()
	if big.Rows != nil {
		t.Fatal("a large answer kept its rows once written")
	}
}
