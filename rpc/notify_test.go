package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// notifyDispatcher notifies from inside the first request's handler.
type notifyDispatcher struct{ s *Server }

func (d notifyDispatcher) Route(string, json.RawMessage) (func(context.Context) (any, error), bool) {
	return func(ctx context.Context) (any, error) {
		return nil, d.s.Notify(ctx, "tool.output", map[string]string{"data": "x"})
	}, false
}

// TestNotifyFromTheFirstHandler: the very first handler may notify while
// Run is still starting (its read goroutine handles requests from the
// start); the notification and the answer both go out.
func TestNotifyFromTheFirstHandler(t *testing.T) {
	for range 50 {
		var out bytes.Buffer
		s := NewServer(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"go"}`+"\n"), &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := s.Run(context.Background(), table(notifyDispatcher{s}, "go")); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(out.String(), "\n"); got != 2 {
			t.Fatalf("want the notification and the answer, got %q", out.String())
		}
	}
}

func (d notifyDispatcher) Inline(string) bool { return false }
