package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"
)

// quietDispatcher records Quiet as Route sees it; "plain" runs inline,
// "card" sends a host request and waits for its reply, "hold" runs on a
// worker until released.
type quietDispatcher struct {
	s       *Server
	quiet   chan bool
	release chan struct{}
}

func (d *quietDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	d.quiet <- d.s.Quiet()
	return func(ctx context.Context) (any, error) {
		switch method {
		case "card":
			var r any
			return r, d.s.Call(ctx, "permission.request", map[string]any{}, &r)
		case "hold":
			<-d.release
		}
		return "ok", nil
	}, method == "plain"
}

func (d *quietDispatcher) Inline(string) bool { return false }

// Quiet holds only when nothing is under way: not while a host request
// waits for its reply (a card: a request run inline then could hold up
// the line that answers it), not while a request runs on a worker, not
// while a line waits in the buffer; and Room shrinks while our output
// lies unread.
func TestQuiet(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	d := &quietDispatcher{s: s, quiet: make(chan bool, 16), release: make(chan struct{})}
	done := make(chan struct{})
	go func() { s.Run(context.Background(), d); outW.Close(); close(done) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	out := bufio.NewReader(outR)
	// settle waits for a worker that has written its answer to be done.
	settle := func() {
		for s.running.Load() != 0 {
			time.Sleep(time.Millisecond)
		}
	}
	expect := func(what string, want bool) {
		t.Helper()
		if got := <-d.quiet; got != want {
			t.Fatalf("%s: Quiet() = %v, want %v", what, got, want)
		}
	}

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"plain"}`)
	expect("nothing under way", true)
	readMsg(t, out)

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"card"}`)
	expect("before the card", true)
	card := readMsg(t, out)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":3,"method":"plain"}`)
	expect("a card waits for its reply", false)
	readMsg(t, out)
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", card["id"])
	readMsg(t, out) // the card's call answers
	settle()

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":4,"method":"hold"}`)
	expect("before the hold", true)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":5,"method":"plain"}`)
	expect("a request runs on a worker", false)
	readMsg(t, out)
	close(d.release)
	readMsg(t, out)
	settle()

	fmt.Fprint(inW, `{"jsonrpc":"2.0","id":6,"method":"plain"}`+"\n"+`{"jsonrpc":"2.0","id":7,"method":"plain"}`+"\n")
	expect("a second line waits in the buffer", false)
	expect("the last line", true)
	readMsg(t, out)
	readMsg(t, out)

	// Answers nobody has read yet leave less room.
	empty := s.Room()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":8,"method":"plain"}`)
	expect("before", true)
	time.Sleep(50 * time.Millisecond) // the answer to 8 is in the pipe, unread
	if got := s.Room(); got >= empty {
		t.Fatalf("room %d with an answer unread, %d before", got, empty)
	}
}
