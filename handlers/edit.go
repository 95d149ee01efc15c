package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"hostcore/sandbox"
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
	case n == 0:
		return c.editFailed(failEditNotFound, failResult(CodeToolFailed,
			"old_string was not found in %s (0 occurrences). The file may have changed: Read it again and retry with text copied exactly from the current content.", c.target.Display))
	case n > 1:
		return c.editFailed(failEditAmbiguous, failResult(CodeToolFailed,
			"old_string occurs %d times in %s; it must occur exactly once. Read the file again and include more surrounding lines to make it unique.", n, c.target.Display))
	}
	var snap *before
	if c.target.Root == sandbox.RootWorkspace {
		snap = &before{existed: true, data: data, reversible: true}
	}
	if _, err := sandbox.WriteAtomic(c.target, updated); err != nil {
		return c.setPath(writeError(c, err))
	}
	r := okResult(fmt.Sprintf("Edited %s: replaced 1 occurrence (%d bytes → %d bytes)", c.target.Display, len(data), len(updated)))
	r.Details = map[string]any{"replacements": 1, "bytes": len(updated)}
	if snap != nil {
		review, err := c.s.recordReview(ctx, c, snap, updated, "edit")
		if err != nil {
			c.s.log.Warn("review snapshot not recorded", "path", c.target.Display, "err", err)
		}
		r.Review = review
	}
	return c.setPath(r)
}

// applyEdit replaces the single occurrence of old with new and returns the
// new content and the number of occurrences found. A file whose lines all
// end in CRLF is matched with LF endings (models send "\n") and written back
// with CRLF; a UTF-8 BOM is kept in front.
func applyEdit(data []byte, old, new string) ([]byte, int) {
	bom := bytes.HasPrefix(data, utf8BOM)
	text := string(bytes.TrimPrefix(data, utf8BOM))
	crlf := strings.Contains(text, "\r\n") && strings.Count(text, "\r\n") == strings.Count(text, "\n")
	if crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		old = strings.ReplaceAll(old, "\r\n", "\n")
		new = strings.ReplaceAll(new, "\r\n", "\n")
	}
	n := strings.Count(text, old)
	if n != 1 {
		return nil, n
	}
	text = strings.Replace(text, old, new, 1)
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	var out []byte
	if bom {
		out = append(out, utf8BOM...)
	}
	return append(out, text...), 1
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
	// Counts live for one prompt: a new prompt starts from nothing, so the
	// map does not grow over a long session.
	if c.p.PromptID != c.rt.failPrompt {
		clear(c.rt.failures)
		c.rt.failPrompt = c.p.PromptID
	}
	k := c.p.PromptID + "\x00" + kind + "\x00" + key
	c.rt.failures[k]++
	return c.rt.failures[k]
}
