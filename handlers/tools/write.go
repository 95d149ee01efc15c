package tools

import (
	"context"
	"errors"
	"fmt"

	"hostcore/perms"
	"hostcore/sandbox"
	"hostcore/store"
)

var writeDescription = "Create or overwrite a file in the workspace (or an absolute path in the session scratch directory) with the given content. " +
	"Parent directories are created. The file is replaced atomically and keeps its permission bits. Prefer Edit for changing part of a file."

// Write is the Write tool.
var Write = Tool[WriteArgs, WriteDetails]{
	Spec: Spec{Name: "Write", Class: perms.ClassEdit, Risk: perms.RiskHigh, Description: writeDescription,
		PathArg: "path", Mutation: true, NeedsWorkspace: true, Modes: []string{perms.OpAgent}},
	Run:     runWrite,
	Preview: func(c *Call, a WriteArgs) (string, string) { return "Write " + c.Target.Display, a.Content },
}

// WriteArgs are Write's arguments.
type WriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// WriteDetails are Write's details.
type WriteDetails struct {
	Bytes   int  `json:"bytes"`
	Created bool `json:"created"`
	// Warning says the change was made but may not survive a power loss
	// (notDurable).
	Warning string `json:"warning,omitempty"`
}

func runWrite(ctx context.Context, c *Call, a WriteArgs) (Out[WriteDetails], error) {
	var none Out[WriteDetails]
	unlock := c.Host.LockPath(c.Target.Abs)
	defer unlock()
	snap, err := captureBefore(c)
	switch {
	case errors.Is(err, sandbox.ErrIsDir), errors.Is(err, sandbox.ErrNotRegular), errors.Is(err, sandbox.ErrChanged):
		// What is at the path cannot be written over: say so, as the
		// write itself would.
		return none, writeError(c, err)
	case err != nil:
		return none, Fail(CodeToolFailed, "cannot snapshot %s before writing: %v", c.Target.Display, err)
	}
	var sn *store.Snapshot
	if snap != nil {
		if sn, err = c.Host.SaveSnapshot(ctx, snap, []byte(a.Content)); err != nil {
			return none, Fail(CodeToolFailed, "cannot save the review snapshot of %s, so the write could not be undone; it was not written: %v", c.Target.Display, err)
		}
	}
	created, err := sandbox.WriteAtomic(c.Target, []byte(a.Content))
	warning, err := sandbox.Durable(err)
	if err != nil {
		if sn != nil {
			c.Host.DropSnapshot(ctx, sn)
		}
		return none, writeError(c, err)
	}
	verb := "Updated"
	if created {
		verb = "Created"
	}
	out := Out[WriteDetails]{
		Text:    fmt.Sprintf("%s %s (%d bytes)", verb, c.Target.Display, len(a.Content)) + NotDurable(warning),
		Details: WriteDetails{Bytes: len(a.Content), Created: created, Warning: warning},
	}
	if sn != nil {
		out.Review = reviewOf(sn, snap, []byte(a.Content), "write")
	}
	return out, nil
}

// NotDurable is what a mutation's text adds when its change was made but
// its directory could not be synced (sandbox.NotDurableError): the change
// stands, with its review record, and may not survive a power loss. The
// details say it too.
func NotDurable(warning string) string {
	if warning == "" {
		return ""
	}
	return "\nWarning: " + warning
}

// writeError maps a sandbox error for a mutation onto a failure.
func writeError(c *Call, err error) *Failure {
	switch {
	case errors.Is(err, sandbox.ErrIsDir):
		return Fail(CodeInvalidArgument, "%s is a directory", c.Target.Display)
	case errors.Is(err, sandbox.ErrNotRegular):
		return Fail(CodeInvalidArgument, "%s is not a regular file (FIFO, socket, device or link); it was not written", c.Target.Display)
	case errors.Is(err, sandbox.ErrChanged):
		return Fail(CodeToolDenied, "%s changed while the call was checked; it was not written", c.Target.Display)
	}
	return Fail(CodeToolFailed, "cannot write %s: %v", c.Target.Display, err)
}
