package handlers

import (
	"fmt"
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

func writePreview(c *call) string {
	var a writeArgs
	decodeInto(c.args, &a)
	return "Write " + c.target.Display + "\n" + a.Content
}

// editPreview shows the change as a unified diff of old_string to
// new_string: every line starts with ' ', '-' or '+', so no text inside
// them can pass for a header, and lines both strings share are shown only
// around a change. (Listing the whole old text and then the new let an
// old_string padded past the card's 8 KiB push every new line off it.)
func editPreview(c *call) string {
	var a editArgs
	decodeInto(c.args, &a)
	var b strings.Builder
	b.WriteString("Edit " + c.target.Display + "\n--- old\n+++ new")
	hunks, _, _, _ := diffHunks(a.OldString, a.NewString)
	if len(hunks) == 0 {
		b.WriteString("\n(no change)")
	}
	for _, h := range hunks {
		fmt.Fprintf(&b, "\n@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString("\n" + l)
		}
	}
	return b.String()
}
