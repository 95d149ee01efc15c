package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// gate is params whose encoding waits: it holds a Call between taking its
// id and sending it.
type gate struct{ entered, release chan struct{} }

func (g gate) MarshalJSON() ([]byte, error) {
	close(g.entered)
	<-g.release
	return []byte(`"slow"`), nil
}

type gateDispatcher struct {
	s *Server
	g gate
}

func (d *gateDispatcher) Route(method string, params json.RawMessage) (func(context.Context) (any, error), bool) {
	return func(ctx context.Context) (any, error) {
		var p any = "small"
		if method == "slow" {
			p = d.g
		}
		var reply any
		if err := d.s.Call(ctx, "card", p, &reply); err != nil {
			return nil, err
		}
		return reply, nil
	}, false
}

// TestHostCallIDsAreUnique: the first Call picks id 0, which jsonrpc2
// takes for "unset" and replaces with its own counter; when another Call is
// sent before it, both cards go out with the same id and one of the two
// waits is never answered.
func TestHostCallIDsAreUnique(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	d := &gateDispatcher{s: s, g: gate{make(chan struct{}), make(chan struct{})}}
	done := make(chan struct{})
	go func() { s.Run(context.Background(), d); outW.Close(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-d.g.release:
		default:
			close(d.g.release)
		}
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	out := bufio.NewReader(outR)

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"A","method":"slow"}`) // takes host id 0
	<-d.g.entered
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"B","method":"fast"}`) // takes host id 1, sent first
	b := readMsg(t, out)
	close(d.g.release)
	a := readMsg(t, out)
	if string(a["id"]) == string(b["id"]) {
		t.Fatalf("two host requests went out with the same id %s", a["id"])
	}
}

func (d *gateDispatcher) Inline(string) bool { return false }

// TestNumberIDsEchoedAsSent: JSON-RPC 2.0 allows any number as an id;
// jsonrpc2 carries only 0..2^64-1. A negative, fractional, exponent or
// larger id is answered with the id exactly as the client wrote it, and a
// string id that could be taken for the alias used inside is refused.
func TestNumberIDsEchoedAsSent(t *testing.T) {
	for _, id := range []string{`-1`, `-0`, `1.5`, `1e3`, `1E+2`, `-9223372036854775809`, `18446744073709551616`, `0.0`} {
		for _, method := range []string{"echo", "missing"} {
			line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`
			out, _ := serve(t, []byte(line))
			if len(out) != 1 {
				t.Fatalf("%s: %d answers: %q", line, len(out), out)
			}
			m := checkOutputLine(t, out[0])
			if string(m.ID) != id {
				t.Errorf("%s: answered with id %s, want %s: %s", line, m.ID, id, out[0])
			}
			if (method == "echo") != (m.Error == nil) {
				t.Errorf("%s: %s", line, out[0])
			}
		}
	}
	for _, id := range []string{`"\u0000#5"`, `"\u0000#}"`, `"\u0000\u0023"`} {
		out, ran := serve(t, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"echo"}`))
		if ran != 0 || len(out) != 1 || !strings.Contains(out[0], `"id":null`) || !strings.Contains(out[0], "-32600") {
			t.Errorf("string id %s: ran %d, answered %q; want a -32600 with id null", id, ran, out)
		}
	}
	// A string id that merely holds a NUL is an ordinary id.
	if out, _ := serve(t, []byte(`{"jsonrpc":"2.0","id":"\u0000","method":"echo"}`)); len(out) != 1 || string(checkOutputLine(t, out[0]).ID) != `"\u0000"` {
		t.Errorf("string id \\u0000: %q", out)
	}
}

// errDispatcher's one method sends a card and answers what its Call
// returned.
type errDispatcher struct{ s *Server }

func (d *errDispatcher) Route(string, json.RawMessage) (func(context.Context) (any, error), bool) {
	return func(ctx context.Context) (any, error) {
		var reply any
		err := d.s.Call(ctx, "card", "x", &reply)
		return map[string]any{"err": fmt.Sprint(err), "noClient": errors.Is(err, ErrNoClient)}, nil
	}, false
}

func (d *errDispatcher) Inline(string) bool { return false }

// TestErrorReplyBeforeEOFStaysAnError: a card answered with an error reply
// right before the client closes its input ends with that error, not with
// ErrNoClient (a review: the deny then said the input had closed before
// any answer).
func TestErrorReplyBeforeEOFStaysAnError(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { s.Run(context.Background(), &errDispatcher{s: s}); outW.Close(); close(done) }()
	t.Cleanup(func() { inW.Close(); go io.Copy(io.Discard, outR); <-done })
	out := bufio.NewReader(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"ask"}`)
	card := readMsg(t, out)
	fmt.Fprintf(inW, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-1,\"message\":\"nope\"}}\n", card["id"])
	inW.Close()
	res := readMsg(t, out)
	var got struct {
		Err      string
		NoClient bool
	}
	json.Unmarshal(res["result"], &got)
	if got.NoClient || !strings.Contains(got.Err, "nope") {
		t.Fatalf("Call ended with %+v, want the error reply", got)
	}
}
