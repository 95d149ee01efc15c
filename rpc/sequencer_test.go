package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// seqDispatcher: "config" is a configuring (inline) method that holds
// until release is closed; "ask" calls the client; every method records,
// when it is routed, its params' "n".
type seqDispatcher struct {
	s       *Server
	release chan struct{}
	mu      sync.Mutex
	routed  []int
	asks    []context.CancelFunc
	// askWithin is an "ask" call's wait for its reply: askDeadline,
	// unless a test that sends much before the reply sets more.
	askWithin time.Duration
}

// askDeadline bounds an "ask" call's wait for its reply. The reply comes
// right behind the card, but a loaded machine running the race detector
// can hold the read goroutine up for a good part of 300 ms (the full
// queue test saw more); a second leaves room, at about 3 s of sleeps in
// the tests that wait it out.
const askDeadline = time.Second

func (d *seqDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	var p struct{ N int }
	json.Unmarshal(params, &p)
	d.mu.Lock()
	d.routed = append(d.routed, p.N)
	within := d.askWithin
	d.mu.Unlock()
	switch method {
	case "config":
		return func(context.Context) (any, error) { <-d.release; return "configured", nil }, true
	case "quick":
		return func(context.Context) (any, error) { return "quick", nil }, true
	case "cancel-asks":
		return func(context.Context) (any, error) {
			<-d.release
			d.mu.Lock()
			for _, c := range d.asks {
				c()
			}
			d.mu.Unlock()
			return "cancelled", nil
		}, true
	case "ask":
		return func(ctx context.Context) (any, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			d.mu.Lock()
			d.asks = append(d.asks, cancel)
			d.mu.Unlock()
			var reply any
			err := d.s.CallWithin(ctx, within, "card", nil, &reply)
			return map[string]any{"reply": reply, "err": fmt.Sprint(err)}, nil
		}, false
	case "plain":
		return func(context.Context) (any, error) { return "plain", nil }, false
	}
	return nil, false
}

func (d *seqDispatcher) Inline(method string) bool {
	return method == "config" || method == "quick" || method == "cancel-asks"
}

func (d *seqDispatcher) order() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.routed...)
}

func seqServer(t *testing.T) (*seqDispatcher, io.WriteCloser, chan map[string]json.RawMessage) {
	t.Helper()
	// A kernel pipe for input: a test's lines are written whether or not
	// hostcore reads them (an io.Pipe would block the test instead).
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inR.Close() })
	outR, outW := io.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	d := &seqDispatcher{s: s, release: make(chan struct{}), askWithin: askDeadline}
	done := make(chan struct{})
	go func() {
		s.Run(context.Background(), table(d, "config", "quick", "cancel-asks", "ask", "plain"))
		outW.Close()
		close(done)
	}()
	msgs := make(chan map[string]json.RawMessage, 10000)
	go func() {
		dec := json.NewDecoder(outR)
		for {
			var m map[string]json.RawMessage
			if dec.Decode(&m) != nil {
				close(msgs)
				io.Copy(io.Discard, outR)
				return
			}
			msgs <- m
		}
	}()
	t.Cleanup(func() {
		select {
		case <-d.release:
		default:
			close(d.release)
		}
		inW.Close()
		<-done
	})
	return d, inW, msgs
}

func next(t *testing.T, msgs chan map[string]json.RawMessage, within time.Duration) map[string]json.RawMessage {
	t.Helper()
	select {
	case m := <-msgs:
		return m
	case <-time.After(within):
		t.Fatalf("no message within %v", within)
	}
	return nil
}

// resultsOf reads the next n answers: result text by id.
func resultsOf(t *testing.T, msgs chan map[string]json.RawMessage, n int) map[string]string {
	t.Helper()
	answers := map[string]string{}
	for len(answers) < n {
		m := next(t, msgs, 10*time.Second)
		answers[string(m["id"])] = string(m["result"])
	}
	return answers
}

// nothingYet fails if a message has come.
func nothingYet(t *testing.T, msgs chan map[string]json.RawMessage, when string) {
	t.Helper()
	select {
	case m := <-msgs:
		t.Fatalf("answered %s: %v", when, m)
	default:
	}
}

// askBehind sends an "ask" (id 1), waits for its card, then sends method
// (id 2) and, when reply is set, the card's reply "allow" right after it.
func askBehind(t *testing.T, in io.Writer, msgs chan map[string]json.RawMessage, method string, reply bool) (cardID json.RawMessage) {
	t.Helper()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"ask"}`)
	card := next(t, msgs, 10*time.Second)
	if !strings.Contains(string(card["method"]), "card") {
		t.Fatalf("want the card, got %v", card)
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":2,"method":%q}`+"\n", method)
	if reply {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"result":"allow"}`+"\n", card["id"])
	}
	return card["id"]
}

// A reply to a card read while a configuring method runs is acted on
// once that method has finished (PROTOCOL section 1: configuring methods
// finish before any later line is handled), and it counts although the
// card's deadline passed meanwhile: it was read in time. It used to wait
// unread behind the method, and a card answered in time denied as timed
// out while a session.delete waited 5 s for its calls (a chaos review).
func TestCardReplyBehindAConfiguringMethodCountsAfterIt(t *testing.T) {
	d, in, msgs := seqServer(t)
	askBehind(t, in, msgs, "config", true)
	time.Sleep(2 * askDeadline) // the reply is read; the deadline passes
	nothingYet(t, msgs, "before the configuring method ended")
	close(d.release)
	answers := resultsOf(t, msgs, 2)
	if !strings.Contains(answers["1"], `"reply":"allow"`) || !strings.Contains(answers["1"], `"err":"\u003cnil\u003e"`) {
		t.Fatalf("want the reply acted on after the configuring method, got %v", answers)
	}
}

// A reply behind a configuring method that ends the waiting call (as a
// session.delete ends its session's calls) is dropped: the call sees its
// cancellation, never the reply.
func TestCardReplyBehindACancellingMethodIsDropped(t *testing.T) {
	d, in, msgs := seqServer(t)
	askBehind(t, in, msgs, "cancel-asks", true)
	time.Sleep(100 * time.Millisecond)
	close(d.release)
	answers := resultsOf(t, msgs, 2)
	if !strings.Contains(answers["1"], `"reply":null`) || !strings.Contains(answers["1"], "canceled") {
		t.Fatalf("want the call cancelled and the reply dropped, got %v", answers)
	}
}

// Requests read while a configuring method runs wait for it, and are then
// routed in the order they were read, configuring or not; once the queue
// is empty, requests are handled as they are read again.
func TestRequestsBehindAConfiguringMethodKeepTheirOrder(t *testing.T) {
	d, in, msgs := seqServer(t)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"config","params":{"n":0}}`)
	for i := 1; i <= 20; i++ {
		method := []string{"plain", "quick", "plain", "config"}[i%4]
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"n":%d}}`+"\n", i, method, i)
	}
	// Nothing behind the held config is routed, or answered, meanwhile.
	time.Sleep(100 * time.Millisecond)
	if got := d.order(); len(got) != 1 {
		t.Fatalf("routed while config held: %v", got)
	}
	nothingYet(t, msgs, "while config held")
	close(d.release)
	seen := map[string]bool{}
	for len(seen) < 21 {
		m := next(t, msgs, 10*time.Second)
		seen[string(m["id"])] = true
	}
	got := d.order()
	for i, n := range got {
		if n != i {
			t.Fatalf("routed in the order %v", got)
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":21,"method":"plain","params":{"n":21}}`)
	if m := next(t, msgs, 10*time.Second); string(m["id"]) != "21" {
		t.Fatalf("after the queue emptied: %v", m)
	}
	if d.s.seq.busy.Load() {
		t.Fatal("the sequencer is still busy with nothing queued")
	}
}

// A call whose reply waits behind a configuring method still ends at once
// when it is cancelled, after its reply deadline as before it: a review
// found the wait stopped watching for cancellation once the deadline had
// passed, so a session.delete of the call's own session and the call
// waited on each other for 5 s, and SIGTERM left the call unanswered.
func TestCancelEndsAReplyWaitingBehindAConfiguringMethod(t *testing.T) {
	d, in, msgs := seqServer(t)
	askBehind(t, in, msgs, "config", true)
	time.Sleep(2 * askDeadline) // the reply is read; its deadline passes
	d.mu.Lock()
	for _, c := range d.asks {
		c()
	}
	d.mu.Unlock()
	m := next(t, msgs, 2*time.Second) // config still holds
	if string(m["id"]) != "1" || !strings.Contains(string(m["result"]), "canceled") || !strings.Contains(string(m["result"]), `"reply":null`) {
		t.Fatalf("want the cancelled call answered at once, without the reply: %v", m)
	}
}

// Past the queue's bound, a request that is not a configuring method is
// refused BUSY at once rather than stopping the read goroutine, so a card
// reply behind it is still read (a review: 4,200 requests queued behind
// a slow session.delete made a card answered in time deny as timed out).
func TestAFullQueueRefusesRatherThanStopsReading(t *testing.T) {
	d, in, msgs := seqServer(t)
	// The reply comes behind 4,106 requests, which the read goroutine
	// gets through first: with the race detector on a loaded machine that
	// took from 110 ms to over 300 ms, and a reply read after askDeadline
	// no longer counts. Three seconds leave room for that.
	const within = 3 * time.Second
	d.mu.Lock()
	d.askWithin = within
	d.mu.Unlock()
	cardID := askBehind(t, in, msgs, "config", false)
	carded := time.Now() // the reply deadline began before the card was sent
	const extra = 10
	go func() {
		var b strings.Builder
		for i := range seqMaxRequests + extra {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"p%d","method":"plain"}`+"\n", i)
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":"allow"}`+"\n", cardID)
		io.WriteString(in, b.String())
	}()
	busy := 0
	for busy < extra {
		m := next(t, msgs, 10*time.Second)
		if !strings.Contains(string(m["error"]), "BUSY") {
			t.Fatalf("while the queue is full, want BUSY answers, got %v", m)
		}
		busy++
	}
	// The reply, read, outlives its deadline: only a reply read in time
	// and kept for after the configuring method is still allowed then.
	time.Sleep(time.Until(carded.Add(within + askDeadline)))
	close(d.release)
	for {
		m := next(t, msgs, 10*time.Second)
		if string(m["id"]) == "1" {
			if !strings.Contains(string(m["result"]), `"reply":"allow"`) {
				t.Fatalf("the reply behind a full queue: %v", m)
			}
			return
		}
	}
}
