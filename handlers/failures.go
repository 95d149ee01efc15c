package handlers

// countFailure increments and returns the failure count of kind for key
// within the call's prompt (failcount.Counts).
func (c *call) countFailure(kind, key string) int {
	c.rt.mu.Lock()
	defer c.rt.mu.Unlock()
	return c.rt.failures.Add(c.p.PromptID, kind, key)
}
