package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"hostcore/perms/redact"
	"hostcore/sandbox"
)

const browserPreviewDescription = "Open a file of the workspace in the user's Browser panel (for example an HTML page the agent built). " +
	"The path is workspace-relative; files outside the workspace, including the scratch directory, cannot be previewed."

// runBrowserPreview opens a workspace file in the client's Browser panel.
//
// The tool has no PathArg on purpose: the envelope would treat an outside
// path as an outside-path permission request, but BrowserPreview is
// workspace-only in v1 (design section 4b), so anything else is refused
// here, in every permission mode, without a card. The root comes from the
// originating session's stored binding, never from another session.
func runBrowserPreview(ctx context.Context, c *call) *ToolResult {
	var a struct {
		Path string `json:"path"`
	}
	json.Unmarshal(c.args, &a)
	if filepath.IsAbs(a.Path) {
		return policyDenied("BrowserPreview takes a workspace-relative path; %s is absolute", redact.EscapeText(a.Path))
	}
	if namesDirectory(a.Path) {
		// As for Read: "index.html/" names a directory, and the system
		// would open the file anyway.
		return failResult(CodeInvalidArgument, "invalid arguments: args.path %s ends in a slash or a dot component, which names a directory; BrowserPreview opens a file", redact.EscapeText(a.Path))
	}
	res, err := sandbox.Roots{Workspace: c.sess.WorkspaceRoot}.Resolve(a.Path)
	switch {
	case errors.Is(err, sandbox.ErrNoWorkspace):
		return failResult(CodeNoWorkspace, "BrowserPreview needs a project: this session has no workspace")
	case errors.Is(err, sandbox.ErrInvalidPath):
		return failResult(CodeInvalidArgument, "invalid arguments: args.path: %v", err)
	case err != nil:
		return failResult(CodeToolFailed, "cannot resolve path %s: %v", redact.EscapeText(a.Path), err)
	}
	if res.Root != sandbox.RootWorkspace {
		return policyDenied("%s is outside the workspace; BrowserPreview only opens files inside it", redact.EscapeText(a.Path))
	}
	c.target, c.hasTarget = res, true
	f, _, err := sandbox.OpenRegular(res)
	switch {
	case errors.Is(err, sandbox.ErrIsDir):
		return c.setPath(failResult(CodeInvalidArgument, "%s is a directory; BrowserPreview opens a file", redact.EscapeText(res.Display)))
	case errors.Is(err, sandbox.ErrNotRegular):
		return c.setPath(failResult(CodeInvalidArgument, "%s is not a regular file", redact.EscapeText(res.Display)))
	case errors.Is(err, fs.ErrNotExist):
		return c.setPath(failResult(CodeToolFailed, "file not found: %s", redact.EscapeText(res.Display)))
	case errors.Is(err, sandbox.ErrChanged):
		return c.setPath(failResult(CodeToolDenied, "%s changed while it was checked; it was not opened", redact.EscapeText(res.Display)))
	case err != nil:
		return c.setPath(failResult(CodeToolFailed, "cannot open %s: %v", redact.EscapeText(res.Display), err))
	}
	f.Close()
	c.s.client.Notify(context.WithoutCancel(ctx), "browser.preview", map[string]string{
		"sessionId": c.sess.ID, "path": res.Display, "absPath": res.Abs,
	})
	r := okResult("Opened " + res.Display + " in the Browser panel.")
	r.Details = map[string]any{"absPath": res.Abs}
	return c.setPath(r)
}

// policyDenied is a containment refusal made inside a tool body: audited
// as a policy denial like the envelope's own, not as an allowed call that
// failed.
func policyDenied(format string, a ...any) *ToolResult {
	r := failResult(CodeToolDenied, format, a...)
	r.Decision = decPolicy
	return r
}
