package tools

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzApplyEdit checks the Edit matcher against an oracle written from the
// contract rather than from the code:
//   - every file is matched as Read shows it, each "\r\n" as "\n", and so
//     are old and new: n is the number of occurrences there (two that
//     overlap count as two), and the view of the result is the view with
//     the one occurrence replaced;
//   - a file with no '\r' and an old and new without one is matched byte
//     for byte: the result is the file with the one occurrence replaced,
//     nothing else changed;
//   - a file whose every '\n' ends a CRLF is matched and written with LF
//     endings on both sides, then every line ending is CRLF again;
//   - a UTF-8 BOM stays in front;
//   - whenever n != 1 the result is nil and nothing would be written.
func FuzzApplyEdit(f *testing.F) {
	for _, s := range []struct{ data, old, new string }{
		{"alpha\nbeta\ngamma\n", "beta", "BETA"},
		{"alpha\nbeta\nbeta\n", "beta", "x"},
		{"alpha\n", "missing", "x"},
		{"one\r\ntwo\r\nthree\r\n", "one\ntwo", "1\n2\n2b"},
		{"one\r\ntwo\r\n", "one\r\ntwo", "1\r\n2"},
		{"mixed\r\nend\n", "mixed\nend", "x"},
		{"\ufeffbom\r\nline\r\n", "bom", "b\nc"},
		{"\ufeff\ufeffdouble", "\ufeffdouble", "x"},
		{"a\r\r\nb\r\n", "\r", "R"},
		{"x\r\n", "x", "y\r"},
		{"", "a", "b"},
		{"aaaa", "aa", "b"},
		{"abc", "abc", ""},
		{"\xff\xfe\x00bin", "\x00", "z"},
		{"one\r\ntwo\r\nthree\nfour\r\n", "one\ntwo", "1\n2"},
		{"a\nb\r\nc\n", "b\nc", "B\nC"},
		{"}\n}\n}\n", "}\n}\n", "}\n// end\n}\n"},
		{"aaa", "aa", "b"},
	} {
		f.Add([]byte(s.data), s.old, s.new)
	}
	f.Fuzz(func(t *testing.T, data []byte, old, new string) {
		if old == "" {
			return // the schema requires old_string (minLength 1)
		}
		out, n := applyEdit(data, old, new)
		buf := append(make([]byte, 0, len(data)+2*len(new)), data...)
		if got, m := applyEditTo(buf, old, new, true); m != n || !bytes.Equal(got, out) {
			t.Fatalf("in place: %d %q, want %d %q", m, got, n, out)
		}
		if n != 1 {
			if out != nil {
				t.Fatalf("n=%d but a result of %d bytes", n, len(out))
			}
		}
		hasBOM := bytes.HasPrefix(data, utf8BOM)
		body := string(bytes.TrimPrefix(data, utf8BOM))
		if n == 1 && hasBOM && !bytes.HasPrefix(out, utf8BOM) {
			t.Fatalf("BOM lost: %q -> %q", data, out)
		}
		outBody := string(out)
		if hasBOM {
			outBody = strings.TrimPrefix(outBody, string(utf8BOM))
		}
		lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		view, lfOld := lf(body), lf(old)
		if want := occurrences(view, lfOld); n != min(want, 2) && n != strings.Count(view, lfOld) {
			t.Fatalf("n=%d, but %q occurs %d times in %q", n, lfOld, want, view)
		}
		// (A lone '\r', in the file or in new, can pair with a '\n' it
		// comes to stand beside: the text is then not simply spliced.)
		if n == 1 && !strings.Contains(view+lf(new), "\r") {
			i := strings.Index(view, lfOld)
			if exp := view[:i] + lf(new) + view[i+len(lfOld):]; lf(outBody) != exp {
				t.Fatalf("%q with %q->%q gave %q, whose text is not %q", body, old, new, outBody, exp)
			}
		}
		switch {
		case !strings.Contains(body+old+new, "\r"):
			if n == 1 && outBody != strings.Replace(body, old, new, 1) {
				t.Fatalf("%q with %q->%q gave %q", body, old, new, outBody)
			}
		case allCRLF(body):
			crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
			if n != 1 {
				return
			}
			if exp := crlf(strings.Replace(lf(body), lf(old), lf(new), 1)); outBody != exp {
				t.Fatalf("CRLF file %q with %q->%q gave %q, want %q", body, old, new, outBody, exp)
			}
			if !allCRLF(outBody) && strings.Contains(outBody, "\n") {
				t.Fatalf("CRLF file lost its line endings: %q", outBody)
			}
			// What the edit did not touch is byte for byte the same.
			i := strings.Index(lf(body), lf(old))
			if pre := crlf(lf(body)[:i]); !strings.HasPrefix(outBody, pre) || !strings.HasPrefix(body, pre) {
				t.Fatalf("CRLF file: the text before the edit changed: %q -> %q", body, outBody)
			}
		}
	})
}

// occurrences counts where old starts in text, overlapping ones included.
func occurrences(text, old string) int {
	n := 0
	for i := 0; ; i++ {
		j := strings.Index(text[i:], old)
		if j < 0 {
			return n
		}
		n++
		i += j
	}
}

// allCRLF says every '\n' of s ends a CRLF and there is at least one.
func allCRLF(s string) bool {
	return strings.Contains(s, "\r\n") && strings.Count(s, "\r\n") == strings.Count(s, "\n")
}
