package rpc

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// BenchmarkReadLongLine reads one 15 MiB line, the size of a large Write:
// what the line reader costs before any JSON is looked at.
func BenchmarkReadLongLine(b *testing.B) {
	line := append(bytes.Repeat([]byte("x"), 15<<20), '\n')
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s := newLineStream(bytes.NewReader(line), io.Discard, slog.New(slog.DiscardHandler))
		if got, err := s.nextLine(); err != nil || len(got) != len(line)-1 {
			b.Fatal(len(got), err)
		}
	}
}

// A line read in many bufio pieces comes back whole and in order, at the
// sizes around the cap, the doubling capacity never going past it.
func TestLongLinesReadWhole(t *testing.T) {
	for _, n := range []int{64<<10 - 1, 64 << 10, 64<<10 + 1, 3<<20 + 7, MaxLine - 1, MaxLine} {
		line := make([]byte, n)
		for i := range line {
			line[i] = 'a' + byte(i%26)
		}
		in := append(append(append([]byte{}, line...), "\r\n"...), "next\n"...)
		s := newLineStream(bytes.NewReader(in), io.Discard, slog.New(slog.DiscardHandler))
		got, err := s.nextLine()
		if err != nil || !bytes.Equal(got, line) {
			t.Fatalf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
		if cap(got) > MaxLine+2 {
			t.Fatalf("%d bytes: capacity %d, over the cap", n, cap(got))
		}
		if next, err := s.nextLine(); err != nil || string(next) != "next" {
			t.Fatalf("%d bytes: the following line is %q, %v", n, next, err)
		}
	}
	s := newLineStream(bytes.NewReader(append(bytes.Repeat([]byte("x"), MaxLine+1), "\nnext\n"...)), io.Discard, slog.New(slog.DiscardHandler))
	if _, err := s.nextLine(); err != errLineTooLong {
		t.Fatalf("a line of MaxLine+1 bytes: %v, want errLineTooLong", err)
	}
	if next, err := s.nextLine(); err != nil || string(next) != "next" {
		t.Fatalf("after a long line: %q, %v", next, err)
	}
}

// ttyReader reads like a terminal: its reads return its pieces in turn (a
// piece longer than a read in several), and an empty piece is an end of
// input (Ctrl-D) that holds for that read only. reads counts the pieces
// begun.
type ttyReader struct {
	pieces []string
	reads  int
	rest   string
}

func (r *ttyReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		if r.reads == len(r.pieces) {
			return 0, io.EOF
		}
		r.rest = r.pieces[r.reads]
		r.reads++
		if r.rest == "" {
			return 0, io.EOF
		}
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// The first end of input ends the input, as for cat: a terminal's Ctrl-D
// holds for one read only, and hostcore read on after it, so a person at
// a terminal needed a third Ctrl-D to end a last line without a newline.
func TestEndOfInputHolds(t *testing.T) {
	for _, pieces := range [][]string{
		{"first\n", "last", "", "more\n"}, // Ctrl-D twice after a line with no newline
		{"first\n", "last\n", "", "more\n"},
		{"first\n", "last\n", ""},
		{"first\n", "last\n", strings.Repeat("x", MaxLine+10), "", "more\n"}, // a last line too long
	} {
		r := &ttyReader{pieces: pieces}
		s := newLineStream(r, io.Discard, slog.New(slog.DiscardHandler))
		var got []string
		for {
			line, err := s.nextLine()
			if err == io.EOF {
				break
			}
			if err == errLineTooLong {
				line = []byte("(too long)")
			} else if err != nil {
				t.Fatalf("%.40q: %v", pieces, err)
			}
			got = append(got, string(line))
		}
		if len(got) < 2 || got[0] != "first" || got[1] != "last" || len(got) > 3 || len(got) == 3 && got[2] != "(too long)" {
			t.Fatalf("%.40q: lines %.40q", pieces, got)
		}
		if _, err := s.nextLine(); err != io.EOF || r.reads != len(got)+1 {
			t.Fatalf("%.40q: after the end: %v, %d pieces read (want EOF after %d)", pieces, err, r.reads, len(got)+1)
		}
	}
}
