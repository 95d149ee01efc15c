package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"hostcore/sandbox"
	"hostcore/store"
)

var writeDescription = "Create or overwrite a file in the workspace (or an absolute path in the session scratch directory) with the given content. " +
	"Parent directories are created. The file is replaced atomically and keeps its permission bits. Prefer Edit for changing part of a file."

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func runWrite(ctx context.Context, c *call) *ToolResult {
	var a writeArgs
	json.Unmarshal(c.args, &a)
	unlock := c.s.lockPath(c.target.Abs)
	defer unlock()
	snap, err := c.s.captureBefore(ctx, c)
	switch {
	case errors.Is(err, sandbox.ErrIsDir), errors.Is(err, sandbox.ErrNotRegular), errors.Is(err, sandbox.ErrChanged):
		// What is at the path cannot be written over: say so, as the
		// write itself would.
		return c.setPath(writeError(c, err))
	case err != nil:
		return c.setPath(failResult(CodeToolFailed, "cannot snapshot %s before writing: %v", c.target.Display, err))
	}
	var sn *store.Snapshot
	if snap != nil {
		if sn, err = c.s.saveSnapshot(ctx, c, snap, []byte(a.Content)); err != nil {
			return c.setPath(failResult(CodeToolFailed, "cannot save the review snapshot of %s, so the write could not be undone; it was not written: %v", c.target.Display, err))
		}
	}
	created, err := sandbox.WriteAtomic(c.target, []byte(a.Content))
	warning, err := sandbox.Durable(err)
	if err != nil {
		if sn != nil {
			c.s.dropSnapshot(ctx, sn)
		}
		return c.setPath(writeError(c, err))
	}
	verb := "Updated"
	if created {
		verb = "Created"
	}
	r := okResult(fmt.Sprintf("%s %s (%d bytes)", verb, c.target.Display, len(a.Content)))
	r.Details = map[string]any{"bytes": len(a.Content), "created": created}
	notDurable(r, warning)
	if sn != nil {
		r.Review = reviewOf(sn, snap, []byte(a.Content), "write")
	}
	return c.setPath(r)
}

// notDurable adds to a mutation's result the warning that its change was
// made but its directory could not be synced (sandbox.NotDurableError):
// the change stands, with its review record, and may not survive a
// power loss.
func notDurable(r *ToolResult, warning string) {
	if warning == "" {
		return
	}
	r.Content[0].Text += "\nWarning: " + warning
	if d, ok := r.Details.(map[string]any); ok {
		d["warning"] = warning
	}
}

// writeError maps a sandbox error for a mutation onto a result.
func writeError(c *call, err error) *ToolResult {
	switch {
	case errors.Is(err, sandbox.ErrIsDir):
		return failResult(CodeInvalidArgument, "%s is a directory", c.target.Display)
	case errors.Is(err, sandbox.ErrNotRegular):
		return failResult(CodeInvalidArgument, "%s is not a regular file (FIFO, socket, device or link); it was not written", c.target.Display)
	case errors.Is(err, sandbox.ErrChanged):
		return failResult(CodeToolDenied, "%s changed while the call was checked; it was not written", c.target.Display)
	}
	return failResult(CodeToolFailed, "cannot write %s: %v", c.target.Display, err)
}
