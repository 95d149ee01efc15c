package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"hostcore/sandbox"
	"hostcore/store"
)

// editMaxFile bounds the file an Edit loads.
const editMaxFile = 32 << 20

var editDescription = fmt.Sprintf("Replace old_string with new_string in a file. old_string must occur exactly once in the current file: "+
	"include enough surrounding lines to make it unique. If it is missing or ambiguous the edit fails: Read the file again and retry once. "+
	"CRLF line endings and a UTF-8 BOM are preserved. Files up to %d MiB.", editMaxFile>>20)

type editArgs struct {
	Path      string `json:"path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Failure kinds reported in details.mutationFailureKind (design section 4d).
const (
	failEditNotFound  = "edit_not_found"
	failEditAmbiguous = "edit_ambiguous"
	failEditNoFile    = "edit_missing_file"
)

func runEdit(ctx context.Context, c *call) *ToolResult {
	var a editArgs
	json.Unmarshal(c.args, &a)
	if a.OldString == a.NewString {
		return c.setPath(failResult(CodeInvalidArgument, "old_string and new_string are identical: the edit would change nothing"))
	}
	unlock := c.s.lockPath(c.target.Abs)
	defer unlock()

	data, _, err := sandbox.ReadFileLimit(c.target, editMaxFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c.editFailed(failEditNoFile, failResult(CodeToolFailed, "file not found: %s. Use Write to create a file; Read or Glob to find the right path", c.target.Display))
	case errors.Is(err, sandbox.ErrIsDir):
		return c.setPath(failResult(CodeInvalidArgument, "%s is a directory", c.target.Display))
	case errors.Is(err, sandbox.ErrNotRegular):
		return c.setPath(failResult(CodeInvalidArgument, "%s is not a regular file", c.target.Display))
	case errors.Is(err, sandbox.ErrTooLarge):
		return c.setPath(failResult(CodeToolFailed, "%s is larger than %d MiB; edit it with Bash", c.target.Display, editMaxFile>>20))
	case err != nil:
		return c.setPath(failResult(CodeToolFailed, "cannot read %s: %v", c.target.Display, err))
	}

	updated, n := applyEdit(data, a.OldString, a.NewString)
	switch {
	case n == 0 && strings.ContainsRune(a.OldString, utf8.RuneError) && !utf8.Valid(data):
		return c.editFailed(failEditNotFound, failResult(CodeToolFailed,
			"old_string was not found in %s: it holds U+FFFD, which Read shows in place of bytes that are not UTF-8; the file holds those bytes, not U+FFFD. Edit around them, or change those lines with Bash.", c.target.Display))
	case n == 0:
		return c.editFailed(failEditNotFound, failResult(CodeToolFailed,
			"old_string was not found in %s (0 occurrences). The file may have changed: Read it again and retry with text copied exactly from the current content.", c.target.Display))
	case n > 1:
		return c.editFailed(failEditAmbiguous, failResult(CodeToolFailed,
			"old_string occurs %d times in %s; it must occur exactly once. Read the file again and include more surrounding lines to make it unique.", n, c.target.Display))
	}
	var snap *before
	var sn *store.Snapshot
	if c.inWorkspace() {
		snap = beforeOf(data)
		if sn, err = c.s.saveSnapshot(ctx, c, snap, updated); err != nil {
			return c.setPath(failResult(CodeToolFailed, "cannot save the review snapshot of %s, so the edit could not be undone; it was not made: %v", c.target.Display, err))
		}
	}
	_, err = sandbox.WriteAtomic(c.target, updated)
	warning, err := sandbox.Durable(err)
	if err != nil {
		if sn != nil {
			c.s.dropSnapshot(ctx, sn)
		}
		return c.setPath(writeError(c, err))
	}
	r := okResult(fmt.Sprintf("Edited %s: replaced 1 occurrence (%d bytes → %d bytes)", c.target.Display, len(data), len(updated)))
	r.Details = map[string]any{"replacements": 1, "bytes": len(updated)}
	notDurable(r, warning)
	if sn != nil {
		r.Review = reviewOf(sn, snap, updated, "edit")
	}
	return c.setPath(r)
}

// applyEdit replaces the single occurrence of old with new and returns the
// new content and the number of occurrences found. It matches the text as
// Read shows it: without a UTF-8 BOM (kept in front), and with every line's
// "\r\n" ending seen as "\n", whatever the other lines end with; old and
// new are read the same way (models send "\n"). new is written with the
// line ending of the line the match starts on, so a CRLF file stays CRLF
// and an LF file LF. Occurrences are counted as the model sees them: two
// that overlap ("}\n}\n" in "}\n}\n}\n") are two, and the edit fails
// rather than guess.
func applyEdit(data []byte, old, new string) ([]byte, int) {
	bom := bytes.HasPrefix(data, utf8BOM)
	body := string(bytes.TrimPrefix(data, utf8BOM))
	view := body
	hasCRLF := strings.Contains(body, "\r\n")
	if hasCRLF {
		view = strings.ReplaceAll(body, "\r\n", "\n")
	}
	old = strings.ReplaceAll(old, "\r\n", "\n")
	new = strings.ReplaceAll(new, "\r\n", "\n")
	i, n := findOnce(view, old)
	if n != 1 {
		return nil, n
	}
	start, end := i, i+len(old)
	if hasCRLF {
		start, end = bodyOffset(body, start), bodyOffset(body, end)
		if crlfAt(body, start) {
			new = strings.ReplaceAll(new, "\n", "\r\n")
		}
	}
	out := make([]byte, 0, len(data)-len(old)+len(new)+len(utf8BOM))
	if bom {
		out = append(out, utf8BOM...)
	}
	out = append(out, body[:start]...)
	out = append(out, new...)
	return append(out, body[end:]...), 1
}

// findOnce returns where old occurs in text and how many times: the
// non-overlapping count, or 2 when the one occurrence overlaps another.
func findOnce(text, old string) (int, int) {
	n := strings.Count(text, old)
	i := strings.Index(text, old)
	if n == 1 && strings.Contains(text[i+1:], old) {
		n = 2
	}
	return i, n
}

// bodyOffset maps an offset in the view of body (each "\r\n" read as
// "\n") back to body: a view '\n' that was a CRLF starts at its '\r'.
func bodyOffset(body string, k int) int {
	v := 0
	for b := 0; b < len(body); b++ {
		if v == k {
			return b
		}
		if body[b] == '\r' && b+1 < len(body) && body[b+1] == '\n' {
			continue // the '\r' of a CRLF is not in the view
		}
		v++
	}
	return len(body)
}

// crlfAt says whether the line holding offset i ends in "\r\n"; the last
// line, which has no ending, goes by the line before it.
func crlfAt(body string, i int) bool {
	if j := strings.IndexByte(body[i:], '\n'); j >= 0 {
		return j > 0 && body[i+j-1] == '\r'
	}
	j := strings.LastIndexByte(body[:i], '\n')
	return j > 0 && body[j-1] == '\r'
}

// editFailed counts a failed Edit of this path within the prompt; the
// second one terminates the agent's repair loop (design section 4d).
func (c *call) editFailed(kind string, r *ToolResult) *ToolResult {
	attempt := c.countFailure("edit", c.target.Abs)
	r.Details = map[string]any{"mutationFailureKind": kind, "mutationFailureAttempt": attempt}
	if attempt >= 2 {
		r.Terminate = true
		r.Message += " This is the second failed edit of this file in this prompt: stop and report the exact mismatch instead of retrying."
		r.Content[0].Text = r.Message
	}
	return c.setPath(r)
}

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
