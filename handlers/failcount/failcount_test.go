package failcount

import (
	"fmt"
	"testing"
)

// TestCountsPerPrompt: counts are kept per prompt for the last Kept
// prompts: prompts that take turns keep theirs, the one failed least
// recently is forgotten past the bound, and a prompt that keeps failing
// is not forgotten while others fail.
func TestCountsPerPrompt(t *testing.T) {
	var c Counts
	if !c.Empty() {
		t.Fatal("a new Counts is not empty")
	}
	count := func(prompt string) int { return c.Add(prompt, "patch", "") }
	if count("a") != 1 || count("b") != 1 || count("a") != 2 || count("b") != 2 {
		t.Fatal("prompts taking turns lost their counts")
	}
	if c.Add("a", "patch", "x.go") != 1 || c.Add("a", "write", "") != 1 {
		t.Fatal("kinds and keys share a count")
	}
	for i := range Kept {
		count(fmt.Sprint("p", i))
	}
	if len(c.byPrompt) != Kept || len(c.prompts) != Kept {
		t.Fatalf("%d prompts kept, want %d", len(c.byPrompt), Kept)
	}
	if count("a") != 1 {
		t.Fatal("the oldest prompt's counts were not forgotten")
	}
	for i := range 2 * Kept {
		count(fmt.Sprint("q", i))
		if i%4 == 0 && count("a") < 2 {
			t.Fatal("a prompt in use was forgotten")
		}
	}
	if c.Empty() {
		t.Fatal("Empty with counts kept")
	}
}
