package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"hostcore/handlers/tools"
	"strings"
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
		if !errors.As(err, &e) || e.Kind != tools.CodeSessionLookupFailed {
			t.Fatalf("%s: got %v, want SESSION_LOOKUP_FAILED", id, err)
		}
	}
	p, _ := json.Marshal(ExecuteParams{SessionID: "other", TurnID: "t", ToolCallID: "c", ToolName: "Read", Args: json.RawMessage(`{"path":"a"}`)})
	_, err := s.execute(t.Context(), p, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != tools.CodeSessionLookupFailed {
		t.Fatalf("execute: got %v, want SESSION_LOOKUP_FAILED", err)
	}
}

// Of a repeated sessionId the last counts, as in JavaScript: a null
// there asks for a new id, not the "abc" before it (a review found the
// two decodes of the params disagreeing).
func TestSessionCreateRepeatedIDTakesTheLast(t *testing.T) {
	s := newTestServer(t, &fakeClient{})
	ws := t.TempDir()
	for raw, want := range map[string]string{
		`{"sessionId":"abc","sessionId":null,"workspaceRoot":%q}`: "s_",
		`{"sessionId":null,"sessionId":"def","workspaceRoot":%q}`: "def",
	} {
		out, err := s.sessionCreate(t.Context(), json.RawMessage(fmt.Sprintf(raw, ws)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out)
		var got struct{ SessionID string }
		json.Unmarshal(b, &got)
		if !strings.HasPrefix(got.SessionID, want) {
			t.Errorf("%s: session %q, want %s…", raw, got.SessionID, want)
		}
	}
}
