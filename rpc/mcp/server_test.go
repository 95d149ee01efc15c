package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// client is the Frontend as a backend sees it.
type client interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// toolResult is the part of a ToolResult the adapter reads and passes on.
type toolResult struct {
	OK        bool      `json:"ok"`
	IsError   bool      `json:"isError"`
	ErrorCode string    `json:"errorCode,omitempty"`
	Message   string    `json:"message,omitempty"`
	Content   []content `json:"content"`
	Root      string    `json:"root,omitempty"`
	Path      string    `json:"path,omitempty"`
	Decision  string    `json:"decision"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// fakeBackend stands in for handlers.Server: its Execute asks the
// Frontend for a card (as the execute path does) and streams output.
type fakeBackend struct {
	client   client
	mu       sync.Mutex
	decision string // what the card came back with
	cardErr  error
}

func (b *fakeBackend) EnsureSession(ctx context.Context, frontend, workspace, mode string) (string, error) {
	return frontend + "-test", nil
}

func (b *fakeBackend) FrontendTools(ctx context.Context, id string) ([]Tool, error) {
	return []Tool{
		{Name: "Read", Description: "read", InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true},
		{Name: "Write", Description: "write", InputSchema: json.RawMessage(`{"type":"object"}`), Destructive: true},
	}, nil
}

func (b *fakeBackend) ModeWithoutCard(tool, reason string) string { return "accept-edits" }

func (b *fakeBackend) Execute(ctx context.Context, p Call) (any, error) {
	if p.ToolName == "Read" {
		for i, chunk := range []string{"a", "bc"} {
			b.client.Notify(ctx, "tool.output", map[string]any{"toolCallId": p.ToolCallID, "stream": "stdout", "seq": i, "data": chunk})
		}
		return &toolResult{OK: true, Content: []content{{Type: "text", Text: "abc"}}, Root: "workspace", Path: "f", Decision: "auto-allow"}, nil
	}
	var reply struct {
		Decision string `json:"decision"`
	}
	err := b.client.Call(ctx, "permission.request", map[string]any{
		"toolCallId": p.ToolCallID, "toolName": p.ToolName, "risk": "high", "reason": "tool", "path": "f", "preview": "Write f", "timeoutMs": 1000,
	}, &reply)
	b.mu.Lock()
	b.decision, b.cardErr = reply.Decision, err
	b.mu.Unlock()
	if err != nil || reply.Decision == "deny" {
		msg := "the user denied permission"
		return &toolResult{IsError: true, ErrorCode: "TOOL_DENIED", Message: msg, Decision: "deny", Content: []content{{Type: "text", Text: msg}}}, nil
	}
	return &toolResult{OK: true, Content: []content{{Type: "text", Text: "wrote"}}, Decision: reply.Decision}, nil
}

// connect serves a Frontend on in-memory transports.
func connect(t *testing.T, opts *sdk.ClientOptions) (*sdk.ClientSession, *fakeBackend) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := New(log)
	b := &fakeBackend{client: f}
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx, b, Options{Workspace: "/ws", PermissionMode: "ask"}, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return cs, b
}

func TestToolsCarryHintsAndStructuredContent(t *testing.T) {
	var mu sync.Mutex
	var progress []string
	cs, _ := connect(t, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}})
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 || !list.Tools[0].Annotations.ReadOnlyHint || !*list.Tools[1].Annotations.DestructiveHint {
		t.Fatalf("tools: %+v", list.Tools)
	}
	p := &sdk.CallToolParams{Name: "Read", Arguments: map[string]any{}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.StructuredContent.(map[string]any)
	if got["root"] != "workspace" || got["path"] != "f" || got["ok"] != true || got["content"] != nil || got["isError"] != nil {
		t.Errorf("structuredContent: %v", got)
	}
	// The client handles notifications on its own queue: the last one may
	// be handled just after the result is returned.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"a", "bc"}, progress); diff != "" {
		t.Errorf("progress messages (-want +got):\n%s", diff)
	}
}

func TestCardAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *sdk.ElicitResult
		want   string
	}{
		{"allow once", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow-once"}}, "allow-once"},
		{"allow session", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow-session"}}, "allow-session"},
		{"deny", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, "deny"},
		{"decline", &sdk.ElicitResult{Action: "decline"}, "deny"},
		{"cancel", &sdk.ElicitResult{Action: "cancel"}, "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msg string
			var schema any
			cs, b := connect(t, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				msg, schema = r.Params.Message, r.Params.RequestedSchema
				return tc.answer, nil
			}})
			if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Write", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.decision != tc.want || b.cardErr != nil {
				t.Errorf("decision %q err %v, want %q", b.decision, b.cardErr, tc.want)
			}
			if !strings.Contains(msg, "Write on f") || !strings.Contains(msg, "denied") {
				t.Errorf("message: %q", msg)
			}
			if s, _ := json.Marshal(schema); !strings.Contains(string(s), `"allow-session"`) {
				t.Errorf("schema: %s", s)
			}
		})
	}
}

func TestNoElicitationFailsClosedWithAdvice(t *testing.T) {
	cs, b := connect(t, nil)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Write", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || strings.Contains(text, "--permission-mode") || !strings.Contains(text, "fail-closed") {
		t.Errorf("result: %v %q", res.IsError, text)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["message"] != text {
		t.Errorf("structured message %q differs from the text", sc["message"])
	}
	if b.cardErr == nil {
		t.Error("the card was answered although the client cannot elicit")
	}
}

func TestUnmappedRequestsFailClosed(t *testing.T) {
	f := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, m := range []string{"ask.request", "plugin.invoke"} {
		if err := f.Call(t.Context(), m, map[string]any{}, &struct{}{}); err == nil {
			t.Errorf("%s answered over MCP", m)
		}
	}
	if err := f.Notify(t.Context(), "browser.preview", map[string]any{}); err != nil {
		t.Errorf("browser.preview: %v", err)
	}
}
