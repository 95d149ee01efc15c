package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Read far into a file passes the lines before its window a buffer at a
// time: the lines it shows, their numbers and the counts are those of a
// line-by-line reading, across CRLF endings, a line longer than a buffer
// and a last line without '\n'.
func TestFarReadThroughBinary(t *testing.T) {
	_, c, ws, _ := sessionHost(t, "auto", nil)
	var b strings.Builder
	var lines []string
	for i := 1; i <= 60000; i++ {
		l := fmt.Sprintf("line %d", i)
		switch {
		case i == 30000:
			l = strings.Repeat("long", 50000) // 200,000 bytes: longer than a read buffer
		case i%7 == 0:
			l += "\r" // a CRLF ending: Read shows the line without its '\r'
		}
		lines = append(lines, strings.TrimSuffix(l, "\r"))
		b.WriteString(l)
		if i < 60000 {
			b.WriteByte('\n')
		}
	}
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(b.String()), 0o644)
	id := 10
	read := func(args map[string]any) map[string]any {
		id++
		return c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("r", id), "toolName": "Read", "args": args})
	}
	for _, offset := range []int{2, 29999, 30001, 59990} {
		r := read(map[string]any{"path": "big.txt", "offset": offset, "limit": 3})
		var want strings.Builder
		for n := offset; n < min(offset+3, 60001); n++ {
			text := lines[n-1]
			if len(text) > 2000 {
				text = text[:2000] + fmt.Sprintf("… [line cut: %d more characters]", len(text)-2000)
			}
			fmt.Fprintf(&want, "%d\t%s\n", n, text)
		}
		fmt.Fprintf(&want, "[... truncated: showing lines %d-%d of 60000; use offset %d to continue]\n", offset, offset+2, offset+3)
		if r["ok"] != true || toolText(r) != want.String() {
			t.Errorf("offset %d: %v\n%s\nwant\n%s", offset, r["message"], toolText(r), want.String())
		}
	}
	// The last line, without '\n', is shown and counted.
	r := read(map[string]any{"path": "big.txt", "offset": 60000})
	if got := toolText(r); got != "60000\tline 60000\n" {
		t.Errorf("the last line: %q", got)
	}
	r = read(map[string]any{"path": "big.txt", "offset": 60001})
	if r["ok"] != false || !strings.Contains(fmt.Sprint(r["message"]), "offset 60001 is past the end of big.txt (60000 lines)") {
		t.Errorf("past the end: %v", r)
	}

	// A NUL byte in a line passed over is still found, at its line.
	b.Reset()
	b.WriteString(strings.Repeat("text\n", 50000))
	b.WriteString("a\x00b\n")
	b.WriteString(strings.Repeat("text\n", 100))
	os.WriteFile(filepath.Join(ws, "nul.txt"), []byte(b.String()), 0o644)
	r = read(map[string]any{"path": "nul.txt", "offset": 50050})
	if r["ok"] != false || !strings.Contains(fmt.Sprint(r["message"]), "a NUL byte at line 50001") {
		t.Errorf("a NUL byte before the window: %v", r)
	}
}

// An audit.query of thousands of rows (an answer of more than a MiB, which
// is encoded row by row and whose memory is handed back once written)
// holds every row, newest first, in the wire form.
func TestLargeAuditQueryThroughBinary(t *testing.T) {
	h, c, ws, _ := sessionHost(t, "auto", nil)
	os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hello\n"), 0o644)
	const n = 3000
	for batch := 0; batch < n; batch += 100 {
		var lines []string
		for i := batch; i < batch+100; i++ {
			lines = append(lines, execLine(100+i, "s", fmt.Sprint("a", i), "Read", map[string]any{"path": "small.txt"}, nil))
		}
		pipe(t, h, lines...)
		for i := batch; i < batch+100; i++ {
			if r, code := c.answerOf(100 + i); r["ok"] != true {
				t.Fatalf("Read %d: %v %s", i, r, code)
			}
		}
	}
	r := c.call(10, "audit.query", map[string]any{"sessionId": "s", "limit": 10000})
	rows, _ := r["rows"].([]any)
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	seen := map[string]bool{}
	for i, row := range rows {
		m := row.(map[string]any)
		id, _ := m["toolCallId"].(string)
		var k int
		fmt.Sscanf(id, "a%d", &k)
		// Newest first: the calls of a batch run side by side, so the
		// order is known from batch to batch.
		if seen[id] || m["toolName"] != "Read" || m["ok"] != true || i < 100 && k < n-100 || i >= n-100 && k >= 100 {
			t.Fatalf("row %d: %v", i, m)
		}
		seen[id] = true
		for _, k := range []string{"externalPath", "errorCode", "delegate"} {
			if v, ok := m[k]; !ok || v != nil {
				t.Fatalf("row %d: %s = %v, want null", i, k, v)
			}
		}
	}
}

// An Edit of a file too large for its before-image to be kept is made in
// the buffer the file was read into: the file on disk is the file with
// the one change, whether the text grows or shrinks, with a BOM and CRLF
// endings kept; the review record says it cannot be undone.
func TestLargeEditThroughBinary(t *testing.T) {
	_, c, ws, _ := sessionHost(t, "auto", nil)
	var b strings.Builder
	b.Write([]byte{0xEF, 0xBB, 0xBF})
	for i := 1; b.Len() < 17<<20; i++ {
		fmt.Fprintf(&b, "line %d of a file larger than a kept snapshot\r\n", i)
	}
	want := b.String()
	path := filepath.Join(ws, "big.txt")
	os.WriteFile(path, []byte(want), 0o644)
	id := 10
	for _, e := range []struct{ old, new string }{
		{"line 1 of a", "line one\nof a"},               // grows, and its '\n' becomes CRLF
		{"line 200000 of a file larger", "line 200000"}, // shrinks
		{"line 3 of a file", "line 3 of a file"},        // a no-op: refused before the file is read
	} {
		id++
		r := c.call(id, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": fmt.Sprint("e", id), "toolName": "Edit",
			"args": map[string]any{"path": "big.txt", "old_string": e.old, "new_string": e.new}})
		if e.old == e.new {
			if r["ok"] != false {
				t.Errorf("a no-op Edit: %v", r)
			}
			continue
		}
		if r["ok"] != true {
			t.Fatalf("Edit %q: %v", e.old, r["message"])
		}
		if rv, _ := r["review"].(map[string]any); rv == nil || rv["reversible"] != false {
			t.Errorf("review of an Edit of a 17 MiB file: %v", r["review"])
		}
		want = strings.Replace(want, e.old, strings.ReplaceAll(e.new, "\n", "\r\n"), 1)
		got, _ := os.ReadFile(path)
		if string(got) != want {
			t.Fatalf("after the Edit of %q the file differs (%d bytes, want %d)", e.old, len(got), len(want))
		}
	}
}
