package tools

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestReadLineBudget: with a budget, readLine stops inside a line longer
// than it and says so; a line that ends within it is whole.
func TestReadLineBudget(t *testing.T) {
	br := bufio.NewReaderSize(repeatReader('x'), 64<<10)
	line, dropped, err := readLine(t.Context(), br, 10, 1<<20)
	if !errors.Is(err, errLineUnfinished) || string(line) != "xxxxxxxxxx" || dropped < 1<<20-10 || dropped > 1<<20+64<<10 {
		t.Fatalf("endless line: %q %d %v", line, dropped, err)
	}
	br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("y", 100<<10)+"\nnext\n"), 64<<10)
	line, dropped, err = readLine(t.Context(), br, 10, 1<<20)
	if err != nil || string(line) != "yyyyyyyyyy" || dropped != 100<<10-10 {
		t.Fatalf("line within the budget: %q %d %v", line, dropped, err)
	}
	// A line that ends exactly at the budget is whole (a review: one of
	// 64 MiB was called unfinished), with "\n", "\r\n" or the end of input.
	for _, end := range []string{"\nnext\n", "\r\nnext\n", ""} {
		br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("z", 1<<20)+end), 64<<10)
		line, dropped, err = readLine(t.Context(), br, 10, 1<<20)
		if (err != nil && err != io.EOF) || string(line) != "zzzzzzzzzz" || dropped != 1<<20-10 {
			t.Fatalf("line ending %q at the budget: %q %d %v", end, line, dropped, err)
		}
	}
	br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("z", 1<<20)+"\rz\n"), 64<<10)
	if _, dropped, err = readLine(t.Context(), br, 10, 1<<20); !errors.Is(err, errLineUnfinished) || dropped != 1<<20-10 {
		t.Fatalf("a '\\r' that does not end the line at the budget: %d %v", dropped, err)
	}
}

// TestReadLineStopsAtCancel: a line of text without end is read in buffers
// with the context checked between them.
func TestReadLineStopsAtCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	endless := io.MultiReader(strings.NewReader("start"), repeatReader('x'))
	br := bufio.NewReaderSize(endless, 64<<10)
	done := make(chan error, 1)
	go func() { _, _, err := readLine(ctx, br, ReadMaxLineChars, 0); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("readLine = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readLine kept reading an endless line after the context was cancelled")
	}
}

// repeatReader is an endless stream of one byte.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// countingReader counts the reads that reach it.
type countingReader struct {
	data  []byte
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

// TestOnceEOFAsksOnce: Read's buffered reader asks its file again after
// each EOF it hands on; through onceEOF the file is read once past its
// end, however often the buffer asks.
func TestOnceEOFAsksOnce(t *testing.T) {
	c := &countingReader{data: []byte("hello\nworld\n")}
	br := bufio.NewReaderSize(&onceEOF{r: c}, 64<<10)
	br.Peek(8 << 10)
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			lines = append(lines, line)
		}
		if err != nil {
			break
		}
	}
	br.Peek(1)
	if got := strings.Join(lines, ""); got != "hello\nworld\n" || c.reads != 2 {
		t.Errorf("read %q in %d reads of the file; want the file in 2 (its bytes, then its end)", got, c.reads)
	}
}
