package handlers

import (
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

// editPreview shows old_string and new_string as diff lines: every line of
// the old text starts with "-" and every line of the new with "+", so no
// text inside them can pass for the line where one ends and the other
// begins.
func editPreview(c *call) string {
	var a editArgs
	decodeInto(c.args, &a)
	return "Edit " + c.target.Display + "\n--- old\n" + prefixLines(a.OldString, "-") + "\n+++ new\n" + prefixLines(a.NewString, "+")
}

func prefixLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
