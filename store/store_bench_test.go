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

// BenchmarkJournalFlush measures one audit row moved from the journal into
// SQLite, in batches of 500 as the background flush moves them.
func BenchmarkJournalFlush(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.CreateSession(ctx, Session{ID: "s", PermissionMode: "ask", Mode: "agent", Subagents: "[]", CreatedAt: Now()})
	row := AuditRow{SessionID: "s", TurnID: "t", ToolName: "Read", ArgsHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		ArgsPreview: `{"path":"small.txt"}`, Decision: "auto-allow", OK: true, CreatedAt: Now()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		row.ToolCallID = fmt.Sprint("c", i)
		if err := s.InsertAudit(ctx, row, true); err != nil {
			b.Fatal(err)
		}
		if (i+1)%500 == 0 {
			s.flushJournal()
		}
	}
	s.flushJournal()
}
