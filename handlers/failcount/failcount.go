package failcount

import "slices"

// Kept bounds how many prompts' counts a session keeps.
const Kept = 16

// Counts are a session's failed mutations per prompt (design section
// 4d): each prompt's own count of each kind of failure for each key (a
// path). They are kept for the Kept prompts that failed last, so that
// prompts that take turns in one session each keep theirs and the counts
// do not grow over a long session. The zero Counts is ready; its user
// guards it (the session's lock).
type Counts struct {
	byPrompt map[string]map[string]int // by prompt, then kind and key
	prompts  []string                  // the prompts in byPrompt, least recently failed first
}

// Add counts one failure of kind for key within prompt and returns the
// count so far.
func (c *Counts) Add(prompt, kind, key string) int {
	counts := c.byPrompt[prompt]
	if counts != nil {
		// The prompt in use is the last to be forgotten.
		i := slices.Index(c.prompts, prompt)
		c.prompts = append(slices.Delete(c.prompts, i, i+1), prompt)
	} else {
		if c.byPrompt == nil {
			c.byPrompt = map[string]map[string]int{}
		}
		counts = map[string]int{}
		c.byPrompt[prompt] = counts
		c.prompts = append(c.prompts, prompt)
		if len(c.prompts) > Kept {
			delete(c.byPrompt, c.prompts[0])
			c.prompts = slices.Delete(c.prompts, 0, 1)
		}
	}
	counts[kind+"\x00"+key]++
	return counts[kind+"\x00"+key]
}

// Empty says nothing is counted.
func (c *Counts) Empty() bool { return len(c.byPrompt) == 0 }
