package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The review record of an edit to a file too large for hunks (4.5 MB)
// still has its true counts: the Review panel shows them.
func TestReviewOfALargeFileCountsItsLines(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	var b strings.Builder
	for b.Len() < 4500000 {
		b.WriteString("a line of a large file\n")
	}
	body := b.String()
	os.WriteFile(filepath.Join(ws, "big.txt"), []byte(body+"MARK\n"+body), 0o644)
	r := c.call(2, "tools.execute", edit("s", "e1", "big.txt", "MARK\n", "ONE\nTWO\n"))
	review, _ := r["review"].(map[string]any)
	if r["ok"] != true || review["additions"] != 2.0 || review["deletions"] != 1.0 || review["truncated"] != true {
		t.Errorf("Edit of a 4.5 MB file: review %v, want additions 2, deletions 1, truncated", review)
	}
	r = c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write",
		"args": map[string]any{"path": "big.txt", "content": body + "ONE\nTWO\nTHREE\n"}})
	review, _ = r["review"].(map[string]any)
	if r["ok"] != true || review["additions"] != 1.0 || review["deletions"] != float64(strings.Count(body, "\n")) {
		t.Errorf("Write over a 4.5 MB file: review +%v -%v, want +1 -%d", review["additions"], review["deletions"], strings.Count(body, "\n"))
	}
}
