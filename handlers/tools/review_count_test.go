package tools

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// diffCounts gives the counts a whole diff gives, for any pair of texts.
func TestDiffCountsMatchWholeDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "ab", "", "a\n", "\n", "b\n", "c\n\n"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	for range 5000 {
		old, new := text(), text()
		if r.IntN(2) == 0 {
			pre, post := text(), text()
			old, new = pre+old+post, pre+new+post
		}
		_, wa, wd, _ := diffHunksMax(old, new, 0)
		if a, d := diffCounts(old, new); a != wa || d != wd {
			t.Fatalf("diffCounts(%q, %q) = +%d -%d, want +%d -%d", old, new, a, d, wa, wd)
		}
	}
}

// A one-line edit in a file of megabytes is counted as one line, at once.
func TestDiffCountsLargeFile(t *testing.T) {
	var b strings.Builder
	for i := range 160000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%30))
		b.WriteString("\n")
	}
	old := b.String()
	new := strings.Replace(old, "line xxxxxxx\n", "LINE\nLINE2\n", 1)
	if a, d := diffCounts(old, new); a != 2 || d != 1 {
		t.Errorf("diffCounts = +%d -%d, want +2 -1", a, d)
	}
}
