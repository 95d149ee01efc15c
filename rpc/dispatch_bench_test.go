package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
)

// benchResult is shaped like a small Read's ToolResult.
type benchResult struct {
	ToolCallID string `json:"toolCallId"`
	OK         bool   `json:"ok"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Decision string `json:"decision"`
}

// benchInput is n tools.execute requests of a small Read, one a line.
func benchInput(n int) []byte {
	line := `{"jsonrpc":"2.0","id":%d,"method":"tools.execute","params":{"sessionId":"sess_0123456789abcdef01234567","turnId":"turn-1","toolCallId":"call-%d","toolName":"Read","args":{"path":"src/main.go","offset":0,"limit":2000}}}` + "\n"
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, line, i+1, i)
	}
	return b
}

func benchRun(ctx context.Context, params json.RawMessage) (any, error) {
	r := &benchResult{ToolCallID: "call", OK: true, Decision: "auto-allow"}
	r.Content = append(r.Content, struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", "     1\tpackage main\n     2\t\n     3\tfunc main() {}\n"})
	return r, nil
}

// BenchmarkDispatch: what one small request costs from its line to its
// answer (framing, the method table, the encoding of the answer), run
// inline as a quick Read is.
func BenchmarkDispatch(b *testing.B) {
	in := benchInput(b.N)
	b.ResetTimer()
	s := NewServer(bytes.NewReader(in), io.Discard, slog.New(slog.DiscardHandler))
	s.Run(context.Background(), Methods{"tools.execute": {Prepare: func(p json.RawMessage) (Run, bool) {
		return func(ctx context.Context) (any, error) { return benchRun(ctx, p) }, true
	}}})
}
