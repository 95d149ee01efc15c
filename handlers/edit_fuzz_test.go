package handlers

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzApplyEdit checks the Edit matcher against an oracle written from the
// contract rather than from the code:
//   - a file with no '\r' is matched byte for byte: n is the number of
//     occurrences and the result is the file with the one occurrence
//     replaced, nothing else changed;
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
	} {
		f.Add([]byte(s.data), s.old, s.new)
	}
	f.Fuzz(func(t *testing.T, data []byte, old, new string) {
		if old == "" {
			return // the schema requires old_string (minLength 1)
		}
		out, n := applyEdit(data, old, new)
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
		switch {
		case !strings.Contains(body, "\r"):
			want := strings.Count(body, old)
			if n != want {
				t.Fatalf("n=%d, want %d occurrences of %q in %q", n, want, old, body)
			}
			if n == 1 && outBody != strings.Replace(body, old, new, 1) {
				t.Fatalf("%q with %q->%q gave %q", body, old, new, outBody)
			}
		case allCRLF(body):
			lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
			crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
			want := strings.Count(lf(body), lf(old))
			if n != want {
				t.Fatalf("CRLF file: n=%d, want %d occurrences of %q in %q", n, want, lf(old), lf(body))
			}
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

// allCRLF says every '\n' of s ends a CRLF and there is at least one.
func allCRLF(s string) bool {
	return strings.Contains(s, "\r\n") && strings.Count(s, "\r\n") == strings.Count(s, "\n")
}
