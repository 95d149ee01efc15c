package handlers

import (
	"encoding/json"
	"errors"
	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/sandbox"
	"path/filepath"
)

// plainlyOutside says whether the call names an absolute path outside
// the workspace and scratch: a call refused before its path is resolved
// (by the mode matrix, or for want of a workspace) still has it
// classified (design section 9: externalPath whenever an explicit path
// is present).
func (c *call) plainlyOutside() bool {
	p := c.rawPath()
	return c.tool.PathArg != "" && filepath.IsAbs(p) && !sandbox.NamedInside(c.roots.Workspace, c.roots.Scratch, p) && !sandbox.NamedInside(c.roots.Scratch, c.roots.Workspace, p)
}

// rawPath is the explicit path argument as given.
func (c *call) rawPath() string {
	if m, ok := c.decoded.(map[string]any); ok {
		p, _ := m[c.tool.PathArg].(string)
		return p
	}
	var m map[string]json.RawMessage
	json.Unmarshal(c.args, &m)
	var p string
	json.Unmarshal(m[c.tool.PathArg], &p)
	return p
}

// resolveTarget classifies the explicit path argument (design section 4).
func (c *call) resolveTarget() *ToolResult {
	p := c.rawPath()
	if q, ok, err := c.tool.Target(c.typed); err != nil {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: %v", err)
	} else if ok {
		p = q
	}
	if p == "" {
		if !c.tool.PathOptional {
			return failResult(tools.CodeInvalidArgument, "invalid arguments: args.%s is required", c.tool.PathArg)
		}
		if c.sess.WorkspaceRoot == "" {
			return failResult(tools.CodeNoWorkspace, "%s needs a project: this session has no workspace; give an absolute path inside the scratch directory", c.tool.Name)
		}
		p = "."
	}
	res, err := c.roots.Resolve(p)
	switch {
	case errors.Is(err, sandbox.ErrNoWorkspace):
		return failResult(tools.CodeNoWorkspace, "this session has no workspace: a relative path has nothing to resolve against")
	case errors.Is(err, sandbox.ErrInvalidPath):
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args.%s: %v", c.tool.PathArg, err)
	case err != nil:
		return failResult(tools.CodeToolFailed, "cannot resolve path %s: %v", redact.EscapeText(p), err)
	}
	if !c.tool.PathOptional && tools.NamesDirectory(p) {
		// "a.txt/" or "a.txt/." names a directory (POSIX refuses it with
		// ENOTDIR); resolution drops the slash, and Write would create
		// "newdir/" as a file. Only a real directory goes on, for the
		// tool's own message.
		if fi, err := sandbox.Stat(res); err != nil || !fi.IsDir() {
			return failResult(tools.CodeInvalidArgument, "invalid arguments: args.%s ends in a slash, which names a directory, and %s is not one; %s works on files", c.tool.PathArg, res.Display, c.tool.Name)
		}
	}
	c.target, c.hasTarget = res, true
	return nil
}

// setPath sets the file-tool fields root and path of a result.
func (c *call) setPath(r *ToolResult) *ToolResult {
	if c.hasTarget {
		r.Root = c.target.Root
		r.Path = c.target.Display
	}
	return r
}
