package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// stopDispatcher: "stop" cancels the server's context inline, as the
// shutdown method does; "tool" runs while stopping (Finishing) and holds
// the drain open until released; "config" counts its runs.
type stopDispatcher struct {
	stop    context.CancelFunc
	release chan struct{}
	configs atomic.Int32
}

func (d *stopDispatcher) Route(method string, _ json.RawMessage) (func(context.Context) (any, error), bool) {
	switch method {
	case "stop":
		return func(context.Context) (any, error) { d.stop(); return "stopped", nil }, true
	case "tool":
		return func(context.Context) (any, error) { <-d.release; return "aborted", nil }, false
	case "config":
		return func(context.Context) (any, error) { d.configs.Add(1); return "set", nil }, true
	}
	return nil, false
}

func (d *stopDispatcher) Inline(method string) bool { return method == "stop" || method == "config" }

func (d *stopDispatcher) RunsWhileStopping(method string) bool { return method != "config" }

// Once stopping, a configuring request read later is refused with
// SHUTTING_DOWN and does not run (it failed against its cancelled
// context with SESSION_LOOKUP_FAILED "interrupted", or applied a change
// after the shutdown had been answered); a tool call still runs.
func TestRequestsReadWhileStoppingAreRefused(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, _ := os.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	d := &stopDispatcher{stop: cancel, release: make(chan struct{})}
	done := make(chan struct{})
	go func() { s.Run(ctx, table(d, "stop", "tool", "config")); outW.Close(); close(done) }()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fmt.Fprint(inW, `{"jsonrpc":"2.0","id":1,"method":"tool"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"stop"}`+"\n"+
		`{"jsonrpc":"2.0","id":3,"method":"config"}`+"\n"+
		`{"jsonrpc":"2.0","id":4,"method":"nope"}`+"\n")
	// The tool call holds the drain open until the last line is answered.
	var out string
	for l := range lines {
		out += l + "\n"
		if strings.Contains(l, `"id":4`) {
			close(d.release)
		}
	}
	<-done
	inW.Close()
	for _, want := range []string{
		`"id":1,"result":"aborted"`,
		`"id":2,"result":"stopped"`,
		`"id":3,"error":{"code":-32000,"message":"hostcore is shutting down: the request was not run","data":{"errorCode":"SHUTTING_DOWN"}}`,
		`"id":4,"error":{"code":-32601`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	if n := d.configs.Load(); n != 0 {
		t.Fatalf("a configuring request ran %d times after the stop", n)
	}
}

// Once the drain is over (the store closes next), a request read is
// refused without running: it answered -32603 "database is closed" and
// left no audit row.
func TestRequestsReadAfterTheDrainAreRefused(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, _ := os.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.wg.Close() // as the drain leaves it
	d := &stopDispatcher{stop: func() {}, release: make(chan struct{})}
	close(d.release)
	done := make(chan struct{})
	go func() { s.Run(context.Background(), table(d, "stop", "tool", "config")); outW.Close(); close(done) }()
	fmt.Fprint(inW, `{"jsonrpc":"2.0","id":1,"method":"config"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tool"}`+"\n")
	inW.Close()
	<-done
	b, _ := io.ReadAll(outR)
	for _, id := range []string{"1", "2"} {
		if !strings.Contains(string(b), `"id":`+id+`,"error":{"code":-32000,"message":"hostcore is shutting down`) {
			t.Errorf("request %s not refused:\n%s", id, b)
		}
	}
	if d.configs.Load() != 0 {
		t.Fatal("a request read after the drain ran")
	}
}
