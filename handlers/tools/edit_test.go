package tools

import "testing"

// Edit matches the text Read shows, so what the model copies from a Read
// is found, and a match it cannot tell from another is refused.
func TestApplyEditAsReadShowsIt(t *testing.T) {
	for _, c := range []struct {
		data, old, new, want string
		n                    int
	}{
		// Mixed endings: Read shows every line without its '\r'.
		{"one\r\ntwo\r\nthree\nfour\r\n", "one\ntwo", "1\n2", "1\r\n2\r\nthree\nfour\r\n", 1},
		{"one\r\ntwo\r\nthree\nfour\r\n", "three\nfour", "3", "one\r\ntwo\r\n3\r\n", 1},
		{"a\nb\r\nc\n", "a\nb", "A\nB", "A\nB\r\nc\n", 1},
		// An LF file gets LF, whatever the model sends.
		{"a\nb\n", "a\r\nb", "x\r\ny", "x\ny\n", 1},
		// Overlapping occurrences are two.
		{"}\n}\n}\n", "}\n}\n", "}\n// end\n}\n", "", 2},
		{"aaa", "aa", "b", "", 2},
		{"aaaa", "aa", "b", "", 2},
		{"abab", "aba", "x", "xb", 1},
	} {
		out, n := applyEdit([]byte(c.data), c.old, c.new)
		if n != c.n || (n == 1 && string(out) != c.want) {
			t.Errorf("%q: %q -> %q gave %d %q, want %d %q", c.data, c.old, c.new, n, out, c.n, c.want)
		}
		// Made in the buffer read (an Edit that keeps no before-image),
		// the result is the same.
		buf := append(make([]byte, 0, len(c.data)+2*len(c.new)), c.data...)
		if out, n := applyEditTo(buf, c.old, c.new, true); n != c.n || (n == 1 && string(out) != c.want) {
			t.Errorf("in place: %q: %q -> %q gave %d %q, want %d %q", c.data, c.old, c.new, n, out, c.n, c.want)
		}
	}
}

// applyEdit is applyEditTo into a new buffer, as Edit applies an edit
// whose before-image is kept.
func applyEdit(data []byte, old, new string) ([]byte, int) {
	return applyEditTo(data, old, new, false)
}
