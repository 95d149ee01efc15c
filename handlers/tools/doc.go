// Package tools holds hostcore's built-in tools, one file a tool: its
// argument struct, its details struct, its schema (schemas/<Name>.json,
// embedded beside it), its policy class and risk, and its body. The
// envelope (package handlers) validates a call's args against the compiled
// schema, decodes them once into the argument struct, decides, resolves
// the explicit path, and only then runs the body with a Call that carries
// the resolved target and a Host for what a body needs of hostcore (file
// locks, review snapshots, the client). A body answers Out[Details] on
// success and a *Failure (an errorCode and a message the model is shown)
// or ErrAborted otherwise.
//
// The layout follows modelcontextprotocol/go-sdk's typed AddTool[In, Out]
// (validate the raw JSON, unmarshal into a typed struct, call a typed
// handler) and charmbracelet/crush's one tool a file.
package tools
