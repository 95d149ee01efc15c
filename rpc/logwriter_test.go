package rpc

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedWriter blocks every Write until released, then records.
type blockedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	got     bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got.Write(p)
}

func (b *blockedWriter) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got.String()
}

// A stderr nobody reads never holds up a log call: lines past the backlog
// are dropped and counted, the count is said once stderr takes lines
// again, and every line kept arrives whole and in order. (A loaded run
// once had the writer take its first batch only when the backlog was
// full: that write, held, carried a first note, and the lines dropped
// while it was held were noted after "after", which the test had
// wrongly required to be last.)
func TestLogWriterNeverWaitsForStderr(t *testing.T) {
	w := &blockedWriter{release: make(chan struct{})}
	l := NewLogWriter(w)
	line := strings.Repeat("x", 290)
	const n = 20000 // about 6 MB: far past the backlog
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for i := range n {
			l.Write(fmt.Appendf(nil, "%05d %s\n", i, line))
		}
	}()
	select {
	case <-logged:
	case <-time.After(10 * time.Second):
		close(w.release)
		t.Fatal("logging waits for a stderr nobody reads")
	}
	close(w.release)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(w.String(), "dropped"); {
		if time.Now().After(deadline) {
			t.Fatal("no drop note once stderr was read again")
		}
		time.Sleep(time.Millisecond)
	}
	l.Write([]byte("after\n"))
	l.Close(5 * time.Second)
	out := w.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	kept, next, dropped, after := 0, 0, 0, false
	for _, ln := range lines {
		var i int
		if _, err := fmt.Sscanf(ln, "%05d ", &i); err == nil && len(ln) == 6+len(line) {
			if after {
				t.Fatalf("line %d after the line logged once stderr was read again", i)
			}
			if i < next {
				t.Fatalf("line %d after line %d", i, next-1)
			}
			next = i + 1
			kept++
			continue
		}
		if strings.Contains(ln, `"msg":"log lines dropped`) && strings.Contains(ln, `"level":"WARN"`) {
			var d int
			if _, err := fmt.Sscanf(ln[strings.LastIndex(ln, ":")+1:], "%d}", &d); err != nil {
				t.Fatalf("drop note %q: %v", ln, err)
			}
			dropped += d
			continue
		}
		if ln != "after" {
			t.Fatalf("a line that was not written whole: %.80q", ln)
		}
		after = true
	}
	if kept == 0 || kept == n || len(out) > logBacklog+len(line)+1024 {
		t.Fatalf("kept %d of %d lines, %d bytes", kept, n, len(out))
	}
	if dropped != n-kept {
		t.Fatalf("drop notes count %d lines, %d were dropped", dropped, n-kept)
	}
	// A note may follow it: lines dropped while the first note's write
	// was held are said in the next write, the one that carries "after".
	if !after {
		t.Fatalf("the line logged after stderr was read again is missing: ...%q", out[max(0, len(out)-100):])
	}
}

// Close gives up on a stderr that is never read, after the time it is
// given.
func TestLogWriterCloseIsBounded(t *testing.T) {
	w := &blockedWriter{release: make(chan struct{})}
	defer close(w.release)
	l := NewLogWriter(w)
	l.Write([]byte("a line\n"))
	start := time.Now()
	l.Close(100 * time.Millisecond)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close waited %v for a stderr nobody reads", d)
	}
}

// countingWriter records each Write it is given.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *countingWriter) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// Lines logged one after another go out together, one write (and one
// wake of the writer) per logBatch rather than one per line; each still
// arrives, in order; and Close writes what waits at once rather than
// after the batch interval. (A line after a quiet spell goes out at
// once: TestLogWriterWritesALoneLineAtOnce.)
func TestLogWriterBatchesLinesAndCloseWritesAtOnce(t *testing.T) {
	w := &countingWriter{}
	l := NewLogWriter(w)
	const n = 20
	start := time.Now()
	for i := range n {
		l.Write(fmt.Appendf(nil, "line %d\n", i))
		time.Sleep(200 * time.Microsecond) // the writer would be idle again by now
	}
	elapsed := time.Since(start)
	for deadline := time.Now().Add(5 * time.Second); strings.Count(strings.Join(w.all(), ""), "\n") < n; {
		if time.Now().After(deadline) {
			t.Fatalf("lines not written: %q", w.all())
		}
		time.Sleep(time.Millisecond)
	}
	if got, most := len(w.all()), int(elapsed/logBatch)+2; got > most {
		t.Fatalf("%d lines logged over %v took %d writes (at most %d batches)", n, elapsed, got, most)
	}
	want := ""
	for i := range n {
		want += fmt.Sprintf("line %d\n", i)
	}
	if got := strings.Join(w.all(), ""); got != want {
		t.Fatalf("lines out of order or lost:\n%q", got)
	}

	l.Close(5 * time.Second)

	// A line logged just before Close is not held for the batch. The
	// batch interval is an hour here: a Close that waited for it would
	// wait out its 5 s, where one that writes at once takes next to
	// nothing (timed against the 10 ms logBatch, a loaded machine could
	// take longer than that to switch to the writer at all).
	w = &countingWriter{}
	l = newLogWriter(w, time.Hour)
	l.Write([]byte("first\n")) // after a quiet spell: written at once
	for deadline := time.Now().Add(5 * time.Second); len(w.all()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("a lone line was held for the batch")
		}
		time.Sleep(time.Millisecond)
	}
	l.Write([]byte("last\n"))
	start = time.Now()
	l.Close(5 * time.Second)
	if d := time.Since(start); d >= 2*time.Second {
		t.Fatalf("Close took %v: it waited for the batch interval", d)
	}
	if all := w.all(); all[len(all)-1] != "last\n" {
		t.Fatalf("the last line before Close was not written: %q", all)
	}
	l.Close(time.Second) // a second Close is harmless
}

// A line that comes after a quiet spell is written at once, not held for
// the lines that might follow (where a kill would lose it); one that comes
// right after it waits for the batch, or for Close. The batch interval is
// an hour here, so that only a line written at once can arrive.
func TestLogWriterWritesALoneLineAtOnce(t *testing.T) {
	w := &countingWriter{}
	l := newLogWriter(w, time.Hour)
	l.Write([]byte("alone\n"))
	for deadline := time.Now().Add(5 * time.Second); len(w.all()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("a lone line was held for the batch")
		}
		time.Sleep(time.Millisecond)
	}
	l.Write([]byte("next\n"))
	time.Sleep(50 * time.Millisecond)
	if all := w.all(); len(all) != 1 {
		t.Fatalf("a line right after the last write was not held for the batch: %q", all)
	}
	l.Close(5 * time.Second)
	if all := w.all(); len(all) != 2 || all[1] != "next\n" {
		t.Fatalf("Close did not write the held line: %q", all)
	}
}

// gatedWriter records each write, and holds the first until open is
// closed (a stderr reader that is slow for a moment).
type gatedWriter struct {
	countingWriter
	entered chan struct{}
	open    chan struct{}
	first   sync.Once
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.first.Do(func() { close(g.entered); <-g.open })
	return g.countingWriter.Write(p)
}

// Lines logged while a write is under way wait for the batch after it
// like any other line within logBatch of a write; before, they found the
// writer free as soon as that write ended and went out at once, a write
// of their own (found by a helper: under load the batch count of
// TestLogWriterBatchesLinesAndCloseWritesAtOnce came out one over).
func TestLogWriterBatchesLinesLoggedDuringAWrite(t *testing.T) {
	w := &gatedWriter{entered: make(chan struct{}), open: make(chan struct{})}
	l := newLogWriter(w, time.Hour)
	l.Write([]byte("first\n")) // after a quiet spell: written at once
	<-w.entered
	l.Write([]byte("second\n"))
	close(w.open)
	time.Sleep(100 * time.Millisecond)
	if got := w.all(); len(got) != 1 {
		t.Fatalf("writes before the batch: %q (want only the first line)", got)
	}
	l.Close(5 * time.Second) // writes what waits at once
	if got := w.all(); len(got) != 2 || got[1] != "second\n" {
		t.Fatalf("writes after Close: %q", got)
	}
}
