package handlers

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestStorageErrorIsNotAMissingSession: when the database fails, a lookup
// must fail the request as SESSION_LOOKUP_FAILED, never answer
// SESSION_NOT_FOUND (design section 4b).
func TestStorageErrorIsNotAMissingSession(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	newSession(t, s, "known", "agent", "ask")
	s.store.Close()
	for _, id := range []string{"known-but-uncached", "missing"} {
		raw, _ := json.Marshal(map[string]string{"sessionId": id})
		_, err := s.sessionGet(t.Context(), raw)
		var e *Error
		if !errors.As(err, &e) || e.Kind != CodeSessionLookupFailed {
			t.Fatalf("%s: got %v, want SESSION_LOOKUP_FAILED", id, err)
		}
	}
	p, _ := json.Marshal(ExecuteParams{SessionID: "other", TurnID: "t", ToolCallID: "c", ToolName: "Read", Args: json.RawMessage(`{"path":"a"}`)})
	_, err := s.execute(t.Context(), p, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != CodeSessionLookupFailed {
		t.Fatalf("execute: got %v, want SESSION_LOOKUP_FAILED", err)
	}
}
