package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
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
		s.Run(context.Background(), table(d, "hold", "relieve", "ask", "params"))
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
// wrote them, byte for byte.
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

// sizedDispatcher answers "big" with a string of size bytes, counting the
// answers it has made.
type sizedDispatcher struct {
	size int
	made atomic.Int64
}

func (d *sizedDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	return func(context.Context) (any, error) {
		d.made.Add(1)
		return strings.Repeat("x", d.size), nil
	}, false
}

func (d *sizedDispatcher) Inline(string) bool { return false }

// TestCallsWaitForRoomWhileAnswersAreUnread: a client that sends requests
// without reading the answers had every admitted call hold its finished
// answer (an adversarial review: 1,000 Reads of megabyte answers, 3.3 GB).
// Once the client is behind (an answer waits to be written), at most
// behindCalls more calls run until it reads; then every admitted call
// runs and is answered, in full.
func TestCallsWaitForRoomWhileAnswersAreUnread(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	const budget, size, calls = 8 << 20, 2 << 20, 100
	s.SetBudget(budget)
	d := &sizedDispatcher{size: size}
	done := make(chan struct{})
	go func() {
		s.Run(context.Background(), table(d, "big"))
		outW.Close()
		close(done)
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	// The first answer, bigger than backedUp, waits: nothing reads it.
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":0,"method":"big"}`+"\n")
	waitFor("the first answer to wait", func() bool {
		s.stream.wamu.Lock()
		defer s.stream.wamu.Unlock()
		return s.stream.waiting > backedUp
	})
	go func() {
		for i := 1; i < calls; i++ {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"big"}`+"\n", i)
		}
	}()
	// At most behindCalls more run, fewer once their answers fill the
	// budget's worth; the rest wait (without the wait all 100 ran).
	last, steady := int64(-1), 0
	for deadline := time.Now().Add(10 * time.Second); steady < 6 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n := d.made.Load(); n == last {
			steady++
		} else {
			last, steady = n, 0
		}
	}
	if last > 1+behindCalls {
		t.Fatalf("%d answers of %d bytes made while none was read; want at most %d", last, size, 1+behindCalls)
	}
	r := bufio.NewReaderSize(outR, 1<<16)
	for i := range calls {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if !strings.Contains(line, `"result":"xxx`) || len(line) < size {
			t.Fatalf("answer %d: %.100s (%d bytes)", i, line, len(line))
		}
	}
	if n := d.made.Load(); n != calls {
		t.Fatalf("%d calls ran, want %d", n, calls)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	<-done
}
