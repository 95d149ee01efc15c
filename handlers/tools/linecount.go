package tools

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// Lines that Read does not show are only counted, a whole buffer at a
// time: bytes.Count and bytes.IndexByte scan at memory speed and nothing
// is allocated per line, so a Read far into a file costs about what
// reading the file costs (sed -n 'N,+Mp' does the same work).

// skipLines passes the next n lines of br (the lines before a Read's
// window) without keeping them, and returns how many it passed: fewer
// than n when the input ends first, a last line without '\n' counting as
// one. A NUL byte among them is errNUL, with the number of lines before
// the one that holds it. ctx is checked between buffers.
func skipLines(ctx context.Context, br *bufio.Reader, n int) (int, error) {
	done := 0
	open := false // bytes of a line whose '\n' is still to come were passed
	for done < n {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		block, err := br.Peek(br.Size())
		if len(block) == 0 {
			if err == nil || err == io.EOF {
				if open {
					done++
				}
				return done, nil
			}
			return done, err
		}
		k, found := len(block), bytes.Count(block, newline)
		if found >= n-done {
			// The last line to pass ends in this block: find its '\n'.
			k = 0
			for range n - done {
				k += bytes.IndexByte(block[k:], '\n') + 1
			}
			found = n - done
		}
		if i := bytes.IndexByte(block[:k], 0); i >= 0 {
			return done + bytes.Count(block[:i], newline), errNUL
		}
		done += found
		open = block[k-1] != '\n'
		br.Discard(k)
		if err != nil && err != io.EOF {
			return done, err
		}
	}
	return done, nil
}

var newline = []byte{'\n'}

// countLines counts the lines left in br (a last line without '\n' counts).
func countLines(ctx context.Context, br *bufio.Reader) (int, error) {
	n := 0
	last := byte('\n')
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		block, err := br.Peek(br.Size())
		if len(block) > 0 {
			n += bytes.Count(block, newline)
			last = block[len(block)-1]
			br.Discard(len(block))
		}
		switch {
		case len(block) > 0 && (err == nil || err == io.EOF):
			continue // the end of input is seen by the next Peek, with nothing left
		case err == nil || err == io.EOF:
			if last != '\n' {
				n++
			}
			return n, nil
		}
		return 0, err
	}
}
