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
	"testing"
	"time"
)

// routeRecorder records each method as Route sees it; "card" sends a
// host request and waits for its reply, any other answers "ok".
type routeRecorder struct {
	s      *Server
	routed chan string
}

func (d *routeRecorder) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	d.routed <- method
	return func(ctx context.Context) (any, error) {
		if method == "card" {
			var r any
			return r, d.s.Call(ctx, "permission.request", map[string]any{}, &r)
		}
		return "ok", nil
	}, false
}

func (d *routeRecorder) Inline(string) bool { return false }

// An inline answer larger than what the client has left unread in stdout
// does not hold up the reading of input: what did not fit is written
// behind, the next line is routed while it is, and nothing comes between
// its parts.
func TestInlineAnswerThatDoesNotFitIsWrittenBehind(t *testing.T) {
	s, inW, outR := osPipeServer(t) // stdout non-blocking: Go's poller owns it
	if s.stream.nowaitFd < 0 {
		t.Fatal("a non-blocking pipe is not written without waiting")
	}
	big := strings.Repeat("x", 1<<20) // more than a pipe takes
	d := &bigDispatcher{s: s, big: big, behind: make(chan bool, 16)}
	serveUntilCleanup(t, s, table(d, "big", "small", "inl"), inW, outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"big"}`)
	if <-d.behind {
		t.Fatal("first request: an answer is left behind before any was written")
	}
	// Nobody reads stdout, yet the next line is read and routed.
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"small"}`)
	select {
	case behind := <-d.behind:
		if !behind {
			t.Fatal("the big answer is not left behind, though nobody reads it")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read goroutine is blocked on an answer nobody reads")
	}
	out := bufio.NewReaderSize(outR, 4<<20)
	for id := 1; id <= 2; id++ {
		m := readMsg(t, out)
		want := "small"
		if id == 1 {
			want = big
		}
		var got string
		json.Unmarshal(m["result"], &got)
		if string(m["id"]) != fmt.Sprint(id) || got != want {
			t.Fatalf("answer %d: id %s, %d bytes of result", id, m["id"], len(got))
		}
	}
	for s.stream.behind() != nil {
		time.Sleep(time.Millisecond)
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":3,"method":"small"}`)
	if <-d.behind {
		t.Fatal("an answer is left behind once everything was written")
	}
	readMsg(t, out)
}

// bigDispatcher answers "big" with a long string, inline, and anything
// else with "small" ("inl" inline too), recording for each request
// whether an earlier answer was still left behind when it was routed.
type bigDispatcher struct {
	s      *Server
	big    string
	behind chan bool
}

func (d *bigDispatcher) Route(method string, _ json.RawMessage) (func(context.Context) (any, error), bool) {
	d.behind <- d.s.stream.behind() != nil
	return func(context.Context) (any, error) {
		if method == "big" {
			return d.big, nil
		}
		return "small", nil
	}, method == "big" || method == "inl"
}

func (d *bigDispatcher) Inline(string) bool { return false }

// A client's reply to a card that a request sent is a reply, not another
// request, whatever the ids of the requests around it.
func TestReplyAfterADirectRequest(t *testing.T) {
	s, inW, outR := osPipeServer(t)
	d := &routeRecorder{s: s, routed: make(chan string, 16)}
	serveUntilCleanup(t, s, table(d, "card", "tools.execute"), inW, outR)
	out := bufio.NewReader(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"a\"b","method":"tools.execute","params":{}}`)
	<-d.routed
	if m := readMsg(t, out); string(m["id"]) != `"a\"b"` || string(m["result"]) != `"ok"` {
		t.Fatalf("request: %v", m)
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":7,"method":"card"}`)
	<-d.routed
	card := readMsg(t, out)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":-1.5,"method":"tools.execute"}`)
	<-d.routed
	if m := readMsg(t, out); string(m["id"]) != `-1.5` || string(m["result"]) != `"ok"` {
		t.Fatalf("request with a fractional negative id: %v", m)
	}
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"result":{"decision":"deny"}}`+"\n", card["id"])
	if m := readMsg(t, out); string(m["id"]) != "7" || string(m["result"]) != `{"decision":"deny"}` {
		t.Fatalf("the card's call: %v", m)
	}
	select {
	case m := <-d.routed:
		t.Fatalf("the reply was routed as a request (%s)", m)
	default:
	}
}

// An answer writeLineNow left to a goroutine is written whole before Run
// returns (and the process exits), whether input ended or the server was
// stopped (found by review: the client got 65,536 bytes of it).
func TestRunReturnsOnlyOnceEveryAnswerIsWritten(t *testing.T) {
	for _, ending := range []string{"eof", "cancel"} {
		t.Run(ending, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW, _ := os.Pipe()
			s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
			d := &bigDispatcher{s: s, big: strings.Repeat("x", 1<<20), behind: make(chan bool, 16)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() { s.Run(ctx, table(d, "big", "small", "inl")); close(done) }()
			fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"big"}`)
			<-d.behind
			got := make(chan []byte)
			go func() {
				time.Sleep(100 * time.Millisecond) // the client reads late
				b, _ := io.ReadAll(outR)
				got <- b
			}()
			if ending == "eof" {
				inW.Close()
			} else {
				cancel()
			}
			<-done
			outW.Close() // as the process's exit would
			b := <-got
			if left := s.stream.behind() != nil; left || !strings.HasSuffix(string(b), "}\n") {
				t.Fatalf("Run returned with lines left unwritten (%v); the client got %d bytes", left, len(b))
			}
			inW.Close()
		})
	}
}

// A request read as the server stops is answered before Run returns, even
// one refused while Route still ran (found by review: Run returned 300 ms
// before the -32601 answer of a request whose Route took that long).
func TestRunWaitsForARequestStillBeingRouted(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, _ := os.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	routing := make(chan struct{})
	d := slowRoute{routing: routing}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, table(d, "nope")); close(done) }()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"nope"}`)
	<-routing
	cancel()
	<-done
	outW.Close()
	b, _ := io.ReadAll(outR)
	if !strings.Contains(string(b), `"id":1,"error":{"code":-32601`) {
		t.Fatalf("Run returned before the answer was written: %q", b)
	}
	inW.Close()
}

// slowRoute routes nothing, slowly.
type slowRoute struct{ routing chan struct{} }

func (d slowRoute) Route(string, json.RawMessage) (func(context.Context) (any, error), bool) {
	close(d.routing)
	time.Sleep(300 * time.Millisecond)
	return nil, false
}

func (slowRoute) Inline(string) bool { return false }

// osPipeServer is a Server reading a pipe the test writes and writing an
// OS pipe (non-blocking, as PollableOutput makes stdout) the test reads.
func osPipeServer(t *testing.T) (*Server, *io.PipeWriter, *os.File) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil))), inW, outR
}

// serveUntilCleanup runs s with d until the test ends: input is then
// closed and what is left of the output drained.
func serveUntilCleanup(t *testing.T, s *Server, d Methods, inW *io.PipeWriter, outR *os.File) {
	done := make(chan struct{})
	go func() { s.Run(context.Background(), d); s.stream.w.(*os.File).Close(); close(done) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
}

// An inline answer that finds an earlier one still being finished is left
// behind it too, in order, rather than blocking the read goroutine: a
// client writing a long request before it reads can finish writing it
// (found by review: a Read's large answer, then settings.get, then a 3 MB
// Write, nothing read, and hostcore stopped reading).
func TestInlineAnswerBehindAnotherDoesNotStopInput(t *testing.T) {
	s, inW, outR := osPipeServer(t)
	d := &bigDispatcher{s: s, big: strings.Repeat("x", 1<<20), behind: make(chan bool, 16)}
	serveUntilCleanup(t, s, table(d, "big", "small", "inl"), inW, outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"big"}`)
	<-d.behind
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"inl"}`)
	<-d.behind
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":3,"method":"small"}`)
	select {
	case <-d.behind:
	case <-time.After(10 * time.Second):
		t.Fatal("the read goroutine is blocked writing an answer behind another nobody reads")
	}
	// The worker's answer to 3 waits for the answer to 2, left behind
	// before 3 was read: answers of the read goroutine keep their place.
	out := bufio.NewReaderSize(outR, 4<<20)
	for id := 1; id <= 3; id++ {
		if m := readMsg(t, out); string(m["id"]) != fmt.Sprint(id) {
			t.Fatalf("answer %d: id %s", id, m["id"])
		}
	}
}
