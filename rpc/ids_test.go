package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
