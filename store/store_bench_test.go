package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkInsertAudit measures one committed audit row.
func BenchmarkInsertAudit(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	row := AuditRow{SessionID: "s", TurnID: "t", ToolName: "Write", ArgsHash: "h", ArgsPreview: `{"path":"a.txt","content":"hello"}`, Decision: "auto-allow", OK: true, CreatedAt: Now()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		row.ToolCallID = fmt.Sprint("c", i)
		if err := s.InsertAudit(ctx, row, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReserveToolCall measures one committed call-id reservation.
func BenchmarkReserveToolCall(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.ReserveToolCall(ctx, "s", fmt.Sprint("c", i)); err != nil {
			b.Fatal(err)
		}
	}
}
