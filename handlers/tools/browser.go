package tools

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"hostcore/perms"
	"hostcore/perms/redact"
	"hostcore/sandbox"
)

const browserPreviewDescription = "Open a file of the workspace in the user's Browser panel (for example an HTML page the agent built). " +
	"The path is workspace-relative; files outside the workspace, including the scratch directory, cannot be previewed."

// BrowserPreview is the BrowserPreview tool.
var BrowserPreview = Tool[BrowserPreviewArgs, BrowserPreviewDetails]{
	Spec: Spec{Name: "BrowserPreview", Class: perms.ClassRead, Risk: perms.RiskLow, Description: browserPreviewDescription,
		Deferred: true, DeferredInEveryMode: true, NeedsWorkspace: true},
	Run: runBrowserPreview,
}

// BrowserPreviewArgs are BrowserPreview's arguments.
type BrowserPreviewArgs struct {
	Path string `json:"path"`
}

// BrowserPreviewDetails are BrowserPreview's details.
type BrowserPreviewDetails struct {
	AbsPath string `json:"absPath"`
}

// runBrowserPreview opens a workspace file in the client's Browser panel.
//
// The tool has no PathArg on purpose: the envelope would treat an outside
// path as an outside-path permission request, but BrowserPreview is
// workspace-only in v1 (design section 4b), so anything else is refused
// here, in every permission mode, without a card. The root comes from the
// originating session's stored binding, never from another session.
func runBrowserPreview(ctx context.Context, c *Call, a BrowserPreviewArgs) (Out[BrowserPreviewDetails], error) {
	var none Out[BrowserPreviewDetails]
	if filepath.IsAbs(a.Path) {
		return none, PolicyDenied("BrowserPreview takes a workspace-relative path; %s is absolute", redact.EscapeText(a.Path))
	}
	if NamesDirectory(a.Path) {
		// As for Read: "index.html/" names a directory, and the system
		// would open the file anyway.
		return none, Fail(CodeInvalidArgument, "invalid arguments: args.path %s ends in a slash or a dot component, which names a directory; BrowserPreview opens a file", redact.EscapeText(a.Path))
	}
	res, err := sandbox.Roots{Workspace: c.Workspace}.Resolve(a.Path)
	switch {
	case errors.Is(err, sandbox.ErrNoWorkspace):
		return none, Fail(CodeNoWorkspace, "BrowserPreview needs a project: this session has no workspace")
	case errors.Is(err, sandbox.ErrInvalidPath):
		return none, Fail(CodeInvalidArgument, "invalid arguments: args.path: %v", err)
	case err != nil:
		return none, Fail(CodeToolFailed, "cannot resolve path %s: %v", redact.EscapeText(a.Path), err)
	}
	if res.Root != sandbox.RootWorkspace {
		return none, PolicyDenied("%s is outside the workspace; BrowserPreview only opens files inside it", redact.EscapeText(a.Path))
	}
	c.Target, c.HasTarget = res, true
	f, _, err := sandbox.OpenRegular(res)
	switch {
	case errors.Is(err, sandbox.ErrIsDir):
		return none, Fail(CodeInvalidArgument, "%s is a directory; BrowserPreview opens a file", redact.EscapeText(res.Display))
	case errors.Is(err, sandbox.ErrNotRegular):
		return none, Fail(CodeInvalidArgument, "%s is not a regular file", redact.EscapeText(res.Display))
	case errors.Is(err, fs.ErrNotExist):
		return none, Fail(CodeToolFailed, "file not found: %s", redact.EscapeText(res.Display))
	case errors.Is(err, sandbox.ErrChanged):
		return none, Fail(CodeToolDenied, "%s changed while it was checked; it was not opened", redact.EscapeText(res.Display))
	case err != nil:
		return none, Fail(CodeToolFailed, "cannot open %s: %v", redact.EscapeText(res.Display), err)
	}
	f.Close()
	c.Host.Notify(context.WithoutCancel(ctx), "browser.preview", map[string]string{
		"sessionId": c.SessionID, "path": res.Display, "absPath": res.Abs,
	})
	return Out[BrowserPreviewDetails]{Text: "Opened " + res.Display + " in the Browser panel.", Details: BrowserPreviewDetails{AbsPath: res.Abs}}, nil
}

// NamesDirectory says p ends in a way that only a directory can: a slash,
// or a slash and "." or "..".
func NamesDirectory(p string) bool {
	return strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") || p == "." || p == ".."
}
