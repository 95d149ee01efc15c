package store

import (
	"context"
	"fmt"
	"testing"
)

// TestCallIDsHeldAsHashes: a session's ids, reserved and journaled, past
// several merges of the set, are all seen and no other is; the set holds
// one 8-byte hash an id, not the id; and an id whose hash the set holds
// (another id's, as a collision would make it) is not refused unless the
// database or the journal holds the id itself.
func TestCallIDsHeldAsHashes(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	createSession(t, s, "a")
	if seen, err := s.ToolCallSeen(ctx, "a", "first"); err != nil || seen {
		t.Fatalf("an unused id: seen %v, %v", seen, err)
	}
	const n = 3*idMerge + 100
	for i := range n {
		id := fmt.Sprintf("toolu_%06d", i)
		var err error
		if i%2 == 0 {
			err = s.ReserveToolCall(ctx, "a", id)
		} else {
			err = s.InsertAudit(ctx, auditRow("a", id), true)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if seen, err := s.ToolCallSeen(ctx, "a", fmt.Sprintf("toolu_%06d", i)); err != nil || !seen {
			t.Fatalf("id %d: seen %v, %v", i, seen, err)
		}
		if seen, err := s.ToolCallSeen(ctx, "a", fmt.Sprintf("other_%06d", i)); err != nil || seen {
			t.Fatalf("an unused id %d: seen %v, %v", i, seen, err)
		}
	}
	s.seen.mu.Lock()
	ids := s.seen.sessions["a"]
	if len(ids.sorted)+len(ids.recent) != n || len(ids.sorted) < 3*idMerge {
		t.Errorf("%d hashes held (%d merged) for %d ids", len(ids.sorted)+len(ids.recent), len(ids.sorted), n)
	}
	// A collision: the hash of a fresh id is in the set.
	ids.add(s.seen.hash("fresh"))
	s.seen.mu.Unlock()
	if seen, err := s.ToolCallSeen(ctx, "a", "fresh"); err != nil || seen {
		t.Fatalf("an unused id whose hash the set holds: seen %v, %v", seen, err)
	}
	if err := s.ReserveToolCall(ctx, "a", "fresh"); err != nil {
		t.Fatal(err)
	}
	if seen, err := s.ToolCallSeen(ctx, "a", "fresh"); err != nil || !seen {
		t.Fatalf("the same id once used: seen %v, %v", seen, err)
	}
	// A reopened store loads the set from the database.
	dir := s.dataDir
	s.Close()
	s2 := mustOpen(t, dir)
	defer s2.Close()
	for _, id := range []string{"toolu_000000", fmt.Sprintf("toolu_%06d", n-1), "fresh"} {
		if seen, err := s2.ToolCallSeen(ctx, "a", id); err != nil || !seen {
			t.Fatalf("%s after a restart: seen %v, %v", id, seen, err)
		}
	}
}
