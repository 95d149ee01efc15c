package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// holdDispatcher holds every "hold" request until release is closed; "ask"
// calls the client and answers with its reply.
type holdDispatcher struct {
	s       *Server
	release chan struct{}
	params  chan json.RawMessage
}

func (d *holdDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	switch method {
	case "hold", "relieve":
		return func(ctx context.Context) (any, error) {
			<-d.release
			return "held", nil
		}, false
	case "ask":
		return func(ctx context.Context) (any, error) {
			var reply any
			err := d.s.Call(ctx, "card", nil, &reply)
			return map[string]any{"reply": reply, "err": fmt.Sprint(err)}, nil
		}, false
	case "params":
		return func(context.Context) (any, error) {
			d.params <- params
			return "ok", nil
		}, false
	}
	return nil, false
}

// pipeServer runs a Server on pipes: write lines to in, read them from out.
func pipeServer(t *testing.T, budget int64) (*holdDispatcher, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if budget > 0 {
		s.SetBudget(budget)
	}
	d := &holdDispatcher{s: s, release: make(chan struct{}), params: make(chan json.RawMessage, 1)}
	done := make(chan struct{})
	go func() {
		s.Run(context.Background(), d)
		outW.Close()
		close(done)
	}()
	t.Cleanup(func() {
		select {
		case <-d.release:
		default:
			close(d.release)
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	return d, inW, bufio.NewReader(outR)
}

func readMsg(t *testing.T, r *bufio.Reader) map[string]json.RawMessage {
	t.Helper()
	type res struct {
		line []byte
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := r.ReadBytes('\n')
		ch <- res{l, err}
	}()
	select {
	case x := <-ch:
		if x.err != nil {
			t.Fatalf("reading output: %v", x.err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(x.line, &m); err != nil {
			t.Fatalf("output line %q: %v", x.line, err)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no output line within 10s")
	}
	return nil
}

// TestBudgetRefusesWhatDoesNotFit: requests beyond the in-flight budget
// are answered BUSY at once, while the admitted ones keep running, and
// replies to host requests still get through (the reader never waits).
func TestBudgetRefusesWhatDoesNotFit(t *testing.T) {
	d, in, out := pipeServer(t, 3*requestWeight)
	for i := range 3 {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"hold"}`+"\n", i)
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":"over","method":"hold"}`+"\n")
	m := readMsg(t, out)
	if string(m["id"]) != `"over"` || !strings.Contains(string(m["error"]), `"code":-32000`) || !strings.Contains(string(m["error"]), `"BUSY"`) {
		t.Fatalf("want BUSY for the fourth request, got %v", m)
	}
	close(d.release)
	for range 3 {
		if m := readMsg(t, out); string(m["result"]) != `"held"` {
			t.Fatalf("admitted request: %v", m)
		}
	}
	// With the budget free again, a request that calls the client gets
	// its reply through.
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":"a","method":"ask"}`+"\n")
	card := readMsg(t, out)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"result":"yes"}`+"\n", card["id"])
	if m := readMsg(t, out); !strings.Contains(string(m["result"]), `"reply":"yes"`) {
		t.Fatalf("ask: %v", m)
	}
}

// TestBudgetWeighsParams: one request with large params takes the budget
// of many small ones.
func TestBudgetWeighsParams(t *testing.T) {
	_, in, out := pipeServer(t, 4*requestWeight)
	big := strings.Repeat("x", 3*requestWeight)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"hold","params":{"pad":%q}}`+"\n", big)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":2,"method":"hold"}`+"\n")
	if m := readMsg(t, out); string(m["id"]) != "2" || !strings.Contains(string(m["error"]), "BUSY") {
		t.Fatalf("want BUSY for the request after a large one, got %v", m)
	}
}

// TestParamsReachTheHandlerAsSent: params go to the handler as the client
// wrote them (jsonrpc2 is handed a stand-in, see prepare).
func TestParamsReachTheHandlerAsSent(t *testing.T) {
	d, in, out := pipeServer(t, 0)
	const params = `{"b": [1, 2.50, "\u00e9"], "a": {"n": null}}`
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"params","params":%s}`+"\n", params)
	if got := <-d.params; string(got) != params {
		t.Fatalf("handler got %s, want %s", got, params)
	}
	readMsg(t, out)
}

// TestMalformedReplyEndsTheWait: a reply to a host request is never
// answered, and one that is malformed ends the wait as an error at once.
func TestMalformedReplyEndsTheWait(t *testing.T) {
	for _, reply := range []string{
		`{"id":%s,"result":"yes"}`,                                              // no jsonrpc
		`{"jsonrpc":"2.0","id":%s,"error":"nope"}`,                              // error not an object
		`{"jsonrpc":"2.0","id":%s}`,                                             // neither result nor error
		`{"jsonrpc":"2.0","id":%s,"result":1,"error":{"code":1,"message":"x"}}`, // both
	} {
		_, in, out := pipeServer(t, 0)
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"method":"ask"}`+"\n", "7")
		card := readMsg(t, out)
		fmt.Fprintf(in, reply+"\n", card["id"])
		m := readMsg(t, out)
		if string(m["id"]) != "7" || !strings.Contains(string(m["result"]), "malformed reply") {
			t.Fatalf("reply %s: want request 7 answered with the wait failed, got %v", reply, m)
		}
	}
}

func (d *holdDispatcher) Inline(string) bool { return false }

func (d *holdDispatcher) Relieves(m string) bool { return m == "relieve" }

// TestReliefRunsWithTheBudgetFull: requests that free the budget (cancels)
// are admitted when it is full, under a budget of their own, unless their
// params are large: those weigh like any other request.
func TestReliefRunsWithTheBudgetFull(t *testing.T) {
	d, in, out := pipeServer(t, 2*requestWeight)
	for i := range 2 {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"hold"}`+"\n", i)
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":"big","method":"relieve","params":{"pad":%q}}`+"\n", strings.Repeat("x", 2*reliefParamsMax))
	if m := readMsg(t, out); string(m["id"]) != `"big"` || !strings.Contains(string(m["error"]), "BUSY") {
		t.Fatalf("a relieving request with large params over a full budget: %v", m)
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":"small","method":"relieve","params":{}}`+"\n")
	close(d.release)
	seen := map[string]bool{}
	for range 3 {
		m := readMsg(t, out)
		if m["error"] != nil {
			t.Fatalf("after release: %v", m)
		}
		seen[string(m["id"])] = true
	}
	if !seen[`"small"`] {
		t.Fatalf("the small relieving request was not admitted: %v", seen)
	}
}
