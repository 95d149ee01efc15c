package handlers

import "slices"

// countFailure increments and returns the failure count of kind for key
// within the call's prompt.
func (c *call) countFailure(kind, key string) int {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	counts := c.rt.failures[c.p.PromptID]
	if counts != nil {
		// The prompt in use is the last to be forgotten.
		i := slices.Index(c.rt.failPrompts, c.p.PromptID)
		c.rt.failPrompts = append(slices.Delete(c.rt.failPrompts, i, i+1), c.p.PromptID)
	} else {
		// Counts are kept for the failPromptsKept prompts that failed
		// last, so that prompts that take turns in one session each
		// keep theirs (a review: the counts were cleared whenever the
		// prompt changed) and the map does not grow over a long session.
		counts = map[string]int{}
		c.rt.failures[c.p.PromptID] = counts
		c.rt.failPrompts = append(c.rt.failPrompts, c.p.PromptID)
		if len(c.rt.failPrompts) > failPromptsKept {
			delete(c.rt.failures, c.rt.failPrompts[0])
			c.rt.failPrompts = slices.Delete(c.rt.failPrompts, 0, 1)
		}
	}
	counts[kind+"\x00"+key]++
	return counts[kind+"\x00"+key]
}

// failPromptsKept bounds how many prompts' failure counts a session keeps.
const failPromptsKept = 16
