package tools

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// naiveSkip is skipLines one byte at a time: the lines passed and what is
// left of the input.
func naiveSkip(s string, n int) (int, string) {
	done, open := 0, false
	for i := 0; i < len(s); i++ {
		if done == n {
			return done, s[i:]
		}
		if s[i] == '\n' {
			done++
			open = false
		} else {
			open = true
		}
	}
	if open && done < n {
		done++
	}
	return done, ""
}

// The inputs cut lines at every place a 16-byte buffer can end: CRLF
// endings split between two buffers, a last line without '\n', a '\n'
// as a buffer's last byte, lines longer than a buffer.
var lineInputs = []string{
	"",
	"\n",
	"a",
	"a\n",
	"a\nb",
	"a\r\nb\r\n",
	"a\r\nb\r\nc",
	"0123456789abcde\n0123456789abcde\n",    // each '\n' is a 16-byte buffer's last byte
	"0123456789abcdef\n0123456789abcdef\n",  // each '\n' starts a buffer
	"0123456789abcd\r\n0123456789abcd\r\nx", // CRLF ending at the buffer's end
	strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 50),            // a line longer than a buffer, no final newline
	strings.Repeat("x", 100) + "\r\n" + strings.Repeat("y", 47) + "\r\n", // the same with CRLF
	strings.Repeat("a\n", 40),
	strings.Repeat("\n", 33),
}

func TestSkipLines(t *testing.T) {
	for _, size := range []int{16, 17, 64, 64 << 10} {
		for _, in := range lineInputs {
			for n := 0; n <= strings.Count(in, "\n")+2; n++ {
				br := bufio.NewReaderSize(strings.NewReader(in), size)
				got, err := skipLines(context.Background(), br, n)
				if err != nil {
					t.Fatalf("size %d, %q, n %d: %v", size, in, n, err)
				}
				rest, _ := io.ReadAll(br)
				want, wantRest := naiveSkip(in, n)
				if got != want || string(rest) != wantRest {
					t.Errorf("size %d, %q, n %d: passed %d lines leaving %q, want %d leaving %q", size, in, n, got, rest, want, wantRest)
				}
			}
		}
	}
}

func TestCountLines(t *testing.T) {
	for _, size := range []int{16, 17, 64 << 10} {
		for _, in := range lineInputs {
			br := bufio.NewReaderSize(strings.NewReader(in), size)
			got, err := countLines(context.Background(), br)
			want, _ := naiveSkip(in, len(in)+1)
			if err != nil || got != want {
				t.Errorf("size %d, %q: %d lines, %v; want %d", size, in, got, err, want)
			}
		}
	}
}

// A NUL byte among the lines passed makes the file binary; the lines
// before the one that holds it are counted, wherever the buffer ends.
func TestSkipLinesNUL(t *testing.T) {
	in := strings.Repeat("line\n", 10) + "bad\x00line\n" + strings.Repeat("line\n", 10)
	for _, size := range []int{16, 17, 64 << 10} {
		br := bufio.NewReaderSize(strings.NewReader(in), size)
		got, err := skipLines(context.Background(), br, 15)
		if !errors.Is(err, errNUL) || got != 10 {
			t.Errorf("size %d: %d, %v; want 10 lines before errNUL", size, got, err)
		}
		// A NUL after the lines passed is not theirs.
		br = bufio.NewReaderSize(strings.NewReader(in), size)
		if got, err := skipLines(context.Background(), br, 10); err != nil || got != 10 {
			t.Errorf("size %d: %d, %v; want 10 lines", size, got, err)
		}
	}
}

func TestSkipLinesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	br := bufio.NewReaderSize(strings.NewReader(strings.Repeat("a\n", 100)), 16)
	if _, err := skipLines(ctx, br, 50); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
