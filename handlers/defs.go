package handlers

import "hostcore/perms"

// builtinDefs lists the built-in tools. Each tool's schema is
// handlers/schemas/<Name>.json.
func builtinDefs() []*toolDef {
	return []*toolDef{
		{Name: "Read", Class: perms.ClassRead, Risk: perms.RiskLow, Description: readDescription,
			PathArg: "path", run: runRead},
		{Name: "Write", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: writeDescription,
			PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}, run: runWrite, preview: writePreview},
	}
}

func writePreview(c *call) string {
	var a writeArgs
	decodeInto(c.args, &a)
	return "Write " + c.target.Display + "\n" + a.Content
}
