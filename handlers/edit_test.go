package handlers

import (
	"fmt"
	"testing"
)

// Failure counts are kept per prompt for the last failPromptsKept prompts:
// prompts that take turns keep theirs, and the oldest is forgotten past
// the bound.
func TestFailureCountsPerPrompt(t *testing.T) {
	rt := &runtime{failures: map[string]map[string]int{}}
	count := func(prompt string) int {
		c := &call{rt: rt, p: ExecuteParams{PromptID: prompt}}
		return c.countFailure("patch", "")
	}
	if count("a") != 1 || count("b") != 1 || count("a") != 2 || count("b") != 2 {
		t.Fatal("prompts taking turns lost their counts")
	}
	for i := range failPromptsKept {
		count(fmt.Sprint("p", i))
	}
	if len(rt.failures) != failPromptsKept || len(rt.failPrompts) != failPromptsKept {
		t.Fatalf("%d prompts kept, want %d", len(rt.failures), failPromptsKept)
	}
	if count("a") != 1 {
		t.Fatal("the oldest prompt's counts were not forgotten")
	}
	// A prompt that keeps failing is not forgotten while others fail (a
	// review: eviction went by first failure).
	for i := range 2 * failPromptsKept {
		count(fmt.Sprint("q", i))
		if i%4 == 0 && count("a") < 2 {
			t.Fatal("a prompt in use was forgotten")
		}
	}
}
