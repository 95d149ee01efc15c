package handlers

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppendJSONString: the hand-written escaper (with its eight-byte fast
// path) must produce JSON that decodes back to the input's valid UTF-8.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text of some length\n", "a\"b\\c\x00\x1f\x7f", "é€😀", "\xff\xfe", strings.Repeat("x", 23) + "\"", "\u2028\u2029", "12345678\n12345678"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := appendJSONString(nil, in)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %q: %v", in, out, err)
		}
		want := strings.ToValidUTF8(string(in), "\ufffd")
		if utf8.ValidString(string(in)) && got != want {
			t.Fatalf("%q round-trips to %q", in, got)
		}
		if !utf8.ValidString(string(in)) && strings.ReplaceAll(got, "\ufffd", "") != strings.ReplaceAll(want, "\ufffd", "") {
			t.Fatalf("%q round-trips to %q, want %q", in, got, want)
		}
	})
}

// BenchmarkAppendJSONString: command output, a newline every 32 bytes.
func BenchmarkAppendJSONString(b *testing.B) {
	in := []byte(strings.Repeat("hostcore benchmark line of text\n", 2048))
	b.SetBytes(int64(len(in)))
	var out []byte
	for b.Loop() {
		out = appendJSONString(out[:0], in)
	}
}

// FuzzEscapeRun: appendJSONString with the vector run (escapeRun) writes
// exactly what it writes without.
func FuzzEscapeRun(f *testing.F) {
	for _, s := range []string{
		strings.Repeat("hostcore benchmark line of text\n", 9),
		strings.Repeat("x", 31) + "\"" + strings.Repeat("y\n", 40),
		strings.Repeat("a\tb\\c\x00d\x7fé€😀\xff\u2028\n", 7),
		strings.Repeat("\n", 100), strings.Repeat("z", 33),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		with := appendJSONString([]byte("prefix"), in)
		saved := haveEscapeRun
		haveEscapeRun = false
		without := appendJSONString([]byte("prefix"), in)
		haveEscapeRun = saved
		if string(with) != string(without) {
			t.Fatalf("%q:\nwith the run    %q\nwithout the run %q", in, with, without)
		}
	})
}

// benchEscape escapes 64 KiB of s repeated, with the vector run (AVX2)
// or without: text that is not plain lines must not get slower with it.
func benchEscape(b *testing.B, s string, run bool) {
	in := []byte(strings.Repeat(s, 65536/len(s)))
	saved := haveEscapeRun
	haveEscapeRun = haveEscapeRun && run
	defer func() { haveEscapeRun = saved }()
	b.SetBytes(int64(len(in)))
	var out []byte
	for b.Loop() {
		out = appendJSONString(out[:0], in)
	}
}

func BenchmarkEscapeLines(b *testing.B) { benchEscape(b, "hostcore benchmark line of text\n", true) }
func BenchmarkEscapeLinesScalar(b *testing.B) {
	benchEscape(b, "hostcore benchmark line of text\n", false)
}
func BenchmarkEscapeCJK(b *testing.B) {
	benchEscape(b, "日本語のテキスト出力です。\n", true)
}
func BenchmarkEscapeCJKScalar(b *testing.B) {
	benchEscape(b, "日本語のテキスト出力です。\n", false)
}
func BenchmarkEscapeTabs(b *testing.B)       { benchEscape(b, "a\tb\tc\td\t\"q\"\n", true) }
func BenchmarkEscapeTabsScalar(b *testing.B) { benchEscape(b, "a\tb\tc\td\t\"q\"\n", false) }
func BenchmarkEscapeColour(b *testing.B) {
	benchEscape(b, "\x1b[32mok\x1b[0m  test/pkg/name  0.01s\n", true)
}
func BenchmarkEscapeColourScalar(b *testing.B) {
	benchEscape(b, "\x1b[32mok\x1b[0m  test/pkg/name  0.01s\n", false)
}

// TestEscapeRunMatchesScalar: on text made mostly of plain runs and
// newlines (what the vector run takes whole blocks of), with the odd byte
// it stops at, and with every amount of room left in dst, the escaper
// writes exactly what the byte-by-byte code writes.
func TestEscapeRunMatchesScalar(t *testing.T) {
	if !haveEscapeRun {
		t.Skip("no vector run on this CPU")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "line of text", "\n", "\n\n", "x\ny", "\"", "\\", "\t", "é", "\xff", "\u2028", "\x1b[0m", strings.Repeat("z", 40)}
	weights := []int{30, 30, 25, 5, 5, 1, 1, 1, 1, 1, 1, 1, 5}
	pick := func() string {
		n := rng.IntN(106)
		for i, w := range weights {
			if n < w {
				return pieces[i]
			}
			n -= w
		}
		return "a"
	}
	for range 3000 {
		var b strings.Builder
		for b.Len() < rng.IntN(600) {
			b.WriteString(pick())
		}
		in := []byte(b.String())
		// dst with 0 to 199 bytes of room past a prefix: the run must stop
		// for room as well as for bytes.
		room := rng.IntN(200)
		dst := make([]byte, 3, 3+room)
		copy(dst, "pre")
		with := appendJSONString(dst, in)
		haveEscapeRun = false
		without := appendJSONString([]byte("pre"), in)
		haveEscapeRun = true
		if string(with) != string(without) {
			t.Fatalf("%q (room %d):\nwith the run    %q\nwithout the run %q", in, room, with, without)
		}
	}
}
