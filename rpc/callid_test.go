package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuf is a log sink read while the server writes it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHostCallIDsCannotBeGuessed: a host request's id is a string of at
// least 128 random bits. Replies with guessed ids (the small numbers, the
// same as strings, a wrong string of the right shape) resolve nothing and
// are logged at WARN, each with its id; the client's own reply, even with
// its id spelled with escapes, resolves the call.
func TestHostCallIDsCannotBeGuessed(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := &lockedBuf{}
	s := NewServer(inR, outW, slog.New(slog.NewJSONHandler(logs, nil)))
	done := make(chan struct{})
	go func() { s.Run(context.Background(), table(&errDispatcher{s: s}, "ask")); outW.Close(); close(done) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
	})
	out := bufio.NewReader(outR)

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"A","method":"ask"}`)
	card := readMsg(t, out)
	var id string
	if err := json.Unmarshal(card["id"], &id); err != nil {
		t.Fatalf("host request id %s is not a string", card["id"])
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(id)
	if err != nil || len(raw)*8 < 128 {
		t.Fatalf("host request id %q: want at least 128 bits of base32 (%v)", id, err)
	}

	guesses := []string{`"` + strings.Repeat("A", len(id)) + `"`, `-1`, `1.5`, `{}`}
	for i := 0; i <= 20; i++ {
		guesses = append(guesses, fmt.Sprint(i), fmt.Sprintf(`"%d"`, i))
	}
	for _, g := range guesses {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"result":"forged"}`+"\n", g)
	}
	// The real reply, its first character escaped.
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":"\u%04x%s","result":"yes"}`+"\n", id[0], id[1:])
	ans := readMsg(t, out)
	if string(ans["id"]) != `"A"` || !strings.Contains(string(ans["result"]), `"reply":"yes"`) {
		t.Fatalf("answer %s %s, want the client's own reply", ans["id"], ans["result"])
	}
	for _, g := range guesses {
		if g == `{}` {
			continue // no usable id: logged without one that reads back
		}
		want, _ := json.Marshal(g)
		if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), `"id":`+string(want)) {
			t.Errorf("stray reply with id %s not logged at WARN:\n%s", g, logs.String())
		}
	}
}

// TestStrayReplyIDLoggedBounded: a stray reply's id is logged cut short.
func TestStrayReplyIDLoggedBounded(t *testing.T) {
	long := `"` + strings.Repeat("é", 100) + `"`
	got := boundedID([]byte(long))
	if len(got) > maxLoggedID+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Fatalf("boundedID: %q", got)
	}
	if got := boundedID([]byte(`"short"`)); got != `"short"` {
		t.Fatalf("boundedID of a short id: %q", got)
	}
}
