package handlers

import (
	"fmt"
	"math"
	"strings"

	"hostcore/perms"
)

// builtinDefs lists the built-in tools. Each tool's schema is
// handlers/schemas/<Name>.json.
func builtinDefs() []*toolDef {
	return append([]*toolDef{
		{Name: "Read", Class: perms.ClassRead, Risk: perms.RiskLow, Description: readDescription,
			PathArg: "path", run: runRead},
		{Name: "Glob", Class: perms.ClassRead, Risk: perms.RiskLow, Description: globDescription, Deferred: true,
			PathArg: "path", PathOptional: true, targetOf: globTarget, run: runGlob},
		{Name: "Grep", Class: perms.ClassRead, Risk: perms.RiskLow, Description: grepDescription, Deferred: true,
			PathArg: "path", PathOptional: true, run: runGrep},
		{Name: "Write", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: writeDescription,
			PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}, run: runWrite, preview: writePreview},
		{Name: "Edit", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: editDescription,
			PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}, run: runEdit, preview: editPreview},
		{Name: "Bash", Class: perms.ClassExec, Risk: perms.RiskHigh, Description: bashDescription, NeedsWorkspace: true, precheck: bashPrecheck, run: runBash, preview: bashPreview},
	}, controlDefs()...)
}

func writePreview(c *call) (string, string) {
	var a writeArgs
	decodeInto(c.args, &a)
	return "Write " + c.target.Display, a.Content
}

// editPreview shows the change as a unified diff of old_string to
// new_string: every line starts with ' ', '-' or '+', so no text inside
// them can pass for a header, and lines both strings share are shown only
// around a change. (Listing the whole old text and then the new let an
// old_string padded past the card's 8 KiB push every new line off it.)
// editCardDiffMax bounds the strings an Edit card diffs.
const editCardDiffMax = 4 << 20

func editPreview(c *call) (string, string) {
	var a editArgs
	decodeInto(c.args, &a)
	head := "Edit " + c.target.Display
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
