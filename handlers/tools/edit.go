package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"unicode/utf8"

	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/store"
)

// editMaxFile bounds the file an Edit loads.
const editMaxFile = 32 << 20

var editDescription = fmt.Sprintf("Replace old_string with new_string in a file. old_string must occur exactly once in the current file: "+
	"include enough surrounding lines to make it unique. If it is missing or ambiguous the edit fails: Read the file again and retry once. "+
	"CRLF line endings and a UTF-8 BOM are preserved. Files up to %d MiB.", editMaxFile>>20)

// Edit is the Edit tool.
var Edit = Tool[EditArgs, EditDetails]{
	Spec: Spec{Name: "Edit", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: editDescription,
		PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}},
	Run:     runEdit,
	Preview: editPreview,
}

// EditArgs are Edit's arguments.
type EditArgs struct {
	Path      string `json:"path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// EditDetails are Edit's details.
type EditDetails struct {
	Replacements int    `json:"replacements"`
	Bytes        int    `json:"bytes"`
	Warning      string `json:"warning,omitempty"` // see notDurable
}

// MutationFailure is the details of a failed mutation (design section
// 4d): its kind and how many of that kind the prompt has had.
type MutationFailure struct {
	Kind    string `json:"mutationFailureKind,omitempty"`
	Attempt int    `json:"mutationFailureAttempt,omitempty"`
}

// MutationFailed says what the details say of a failed mutation (the
// timing log line names it).
func (m MutationFailure) MutationFailed() (string, int) { return m.Kind, m.Attempt }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Failure kinds reported in details.mutationFailureKind (design section 4d).
const (
	failEditNotFound  = "edit_not_found"
	failEditAmbiguous = "edit_ambiguous"
	failEditNoFile    = "edit_missing_file"
)

func runEdit(ctx context.Context, c *Call, a EditArgs) (Out[EditDetails], error) {
	var none Out[EditDetails]
	if a.OldString == a.NewString {
		return none, Fail(CodeInvalidArgument, "old_string and new_string are identical: the edit would change nothing")
	}
	unlock := c.Host.LockPath(c.Target.Abs)
	defer unlock()

	// The buffer has room for new_string (twice over: its line endings
	// may become CRLF), so that a file whose before-image is not kept can
	// be edited where it was read (see applyEditTo).
	data, _, err := sandbox.ReadFileRoom(c.Target, editMaxFile, 2*int64(len(a.NewString)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return none, editFailed(c, failEditNoFile, Fail(CodeToolFailed, "file not found: %s. Use Write to create a file; Read or Glob to find the right path", c.Target.Display))
	case errors.Is(err, sandbox.ErrIsDir):
		return none, Fail(CodeInvalidArgument, "%s is a directory", c.Target.Display)
	case errors.Is(err, sandbox.ErrNotRegular):
		return none, Fail(CodeInvalidArgument, "%s is not a regular file", c.Target.Display)
	case errors.Is(err, sandbox.ErrTooLarge):
		return none, Fail(CodeToolFailed, "%s is larger than %d MiB; edit it with Bash", c.Target.Display, editMaxFile>>20)
	case err != nil:
		return none, Fail(CodeToolFailed, "cannot read %s: %v", c.Target.Display, err)
	}

	// The file as read is needed after the edit only as the snapshot's
	// before-image, kept for a workspace file up to ReviewMaxSnapshot.
	keep := c.InWorkspace() && len(data) <= ReviewMaxSnapshot
	size := len(data)
	updated, n := applyEditTo(data, a.OldString, a.NewString, !keep)
	switch {
	case n == 0 && strings.ContainsRune(a.OldString, utf8.RuneError) && !utf8.Valid(data):
		return none, editFailed(c, failEditNotFound, Fail(CodeToolFailed,
			"old_string was not found in %s: it holds U+FFFD, which Read shows in place of bytes that are not UTF-8; the file holds those bytes, not U+FFFD. Edit around them, or change those lines with Bash.", c.Target.Display))
	case n == 0:
		return none, editFailed(c, failEditNotFound, Fail(CodeToolFailed,
			"old_string was not found in %s (0 occurrences). The file may have changed: Read it again and retry with text copied exactly from the current content.", c.Target.Display))
	case n > 1:
		return none, editFailed(c, failEditAmbiguous, Fail(CodeToolFailed,
			"old_string occurs %d times in %s; it must occur exactly once. Read the file again and include more surrounding lines to make it unique.", n, c.Target.Display))
	}
	var snap *Before
	var sn *store.Snapshot
	if c.InWorkspace() {
		snap = beforeOf(c, data[:size:size])
		if sn, err = c.Host.SaveSnapshot(ctx, snap, updated); err != nil {
			return none, Fail(CodeToolFailed, "cannot save the review snapshot of %s, so the edit could not be undone; it was not made: %v", c.Target.Display, err)
		}
	}
	_, err = sandbox.WriteAtomic(c.Target, updated)
	warning, err := sandbox.Durable(err)
	if err != nil {
		if sn != nil {
			c.Host.DropSnapshot(ctx, sn)
		}
		return none, writeError(c, err)
	}
	out := Out[EditDetails]{
		Text:    fmt.Sprintf("Edited %s: replaced 1 occurrence (%d bytes → %d bytes)", c.Target.Display, size, len(updated)) + NotDurable(warning),
		Details: EditDetails{Replacements: 1, Bytes: len(updated), Warning: warning},
	}
	if sn != nil {
		out.Review = reviewOf(sn, snap, updated, "edit")
	}
	return out, nil
}

// applyEditTo replaces the single occurrence of old with new and returns the
// new content and the number of occurrences found. It matches the text as
// Read shows it: without a UTF-8 BOM (kept in front), and with every line's
// "\r\n" ending seen as "\n", whatever the other lines end with; old and
// new are read the same way (models send "\n"). new is written with the
// line ending of the line the match starts on, so a CRLF file stays CRLF
// and an LF file LF. Occurrences are counted as the model sees them: two
// that overlap ("}\n}\n" in "}\n}\n}\n") are two, and the edit fails
// rather than guess.
//
// data is searched where it lies, and the result is allocated once at its
// final size: an Edit holds the file twice, as read and as written (a
// file with CRLF endings once more, as the model sees it).
//
// With inPlace, and room for the result in data's capacity, the result is
// made in data itself (its bytes are then no longer the file as read), so
// that an Edit whose before-image is not kept holds the file once.
func applyEditTo(data []byte, old, new string, inPlace bool) ([]byte, int) {
	bom := bytes.HasPrefix(data, utf8BOM)
	body := bytes.TrimPrefix(data, utf8BOM)
	view := body
	hasCRLF := bytes.Contains(body, crlf)
	if hasCRLF {
		view = bytes.ReplaceAll(body, crlf, lf)
	}
	old = strings.ReplaceAll(old, "\r\n", "\n")
	new = strings.ReplaceAll(new, "\r\n", "\n")
	i, n := findOnce(view, []byte(old))
	if n != 1 {
		return nil, n
	}
	start, end := i, i+len(old)
	if hasCRLF {
		view = nil // only body is read from here on
		start, end = bodyOffset(body, start), bodyOffset(body, end)
		if crlfAt(body, start) {
			new = strings.ReplaceAll(new, "\n", "\r\n")
		}
	}
	size := len(body) - (end - start) + len(new)
	if bom {
		size += len(utf8BOM)
	}
	if inPlace && size <= cap(data) {
		// What follows the match moves to its place after new (copy is
		// memmove: the two ranges may overlap), then new goes in.
		skip := len(data) - len(body) // the BOM's bytes
		out := data[:size]
		copy(out[skip+start+len(new):], data[skip+end:])
		copy(out[skip+start:], new)
		return out, 1
	}
	out := make([]byte, 0, size)
	if bom {
		out = append(out, utf8BOM...)
	}
	out = append(out, body[:start]...)
	out = append(out, new...)
	return append(out, body[end:]...), 1
}

var crlf, lf = []byte("\r\n"), []byte("\n")

// findOnce returns where old occurs in text and how many times: the
// non-overlapping count, or 2 when the one occurrence overlaps another.
func findOnce(text, old []byte) (int, int) {
	n := bytes.Count(text, old)
	i := bytes.Index(text, old)
	if n == 1 && bytes.Contains(text[i+1:], old) {
		n = 2
	}
	return i, n
}

// bodyOffset maps an offset in the view of body (each "\r\n" read as
// "\n") back to body: a view '\n' that was a CRLF starts at its '\r'.
func bodyOffset(body []byte, k int) int {
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
func crlfAt(body []byte, i int) bool {
	if j := bytes.IndexByte(body[i:], '\n'); j >= 0 {
		return j > 0 && body[i+j-1] == '\r'
	}
	j := bytes.LastIndexByte(body[:i], '\n')
	return j > 0 && body[j-1] == '\r'
}

// editFailed counts a failed Edit of this path within the prompt; the
// second one terminates the agent's repair loop (design section 4d).
func editFailed(c *Call, kind string, f *Failure) *Failure {
	attempt := c.Host.CountFailure("edit", c.Target.Abs)
	f.Details = MutationFailure{Kind: kind, Attempt: attempt}
	if attempt >= 2 {
		f.Terminate = true
		f.Message += " This is the second failed edit of this file in this prompt: stop and report the exact mismatch instead of retrying."
	}
	return f
}

// editPreview shows the change as a unified diff of old_string to
// new_string: every line starts with ' ', '-' or '+', so no text inside
// them can pass for a header, and lines both strings share are shown only
// around a change. (Listing the whole old text and then the new let an
// old_string padded past the card's 8 KiB push every new line off it.)
// editCardDiffMax bounds the strings an Edit card diffs.
const editCardDiffMax = 4 << 20

func editPreview(c *Call, a EditArgs) (string, string) {
	head := "Edit " + c.Target.Display
	var b strings.Builder
	b.WriteString("--- old\n+++ new")
	if len(a.OldString)+len(a.NewString) > editCardDiffMax {
		fmt.Fprintf(&b, "\n(%d bytes replaced by %d bytes: too large to show as a diff)", len(a.OldString), len(a.NewString))
		return head, b.String()
	}
	// Every line of the diff, however many: the card's byte bound cuts it,
	// saying how much is left. (The review record's line cap, 2000 short
	// lines, stopped under that bound without a word, and a change after
	// 2000 padding lines was not on the card.)
	hunks, _, _, _ := diffHunksMax(a.OldString, a.NewString, math.MaxInt)
	if len(hunks) == 0 {
		b.WriteString("\n(no change)")
	}
	for _, h := range hunks {
		fmt.Fprintf(&b, "\n@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString("\n" + l)
		}
	}
	return head, b.String()
}
