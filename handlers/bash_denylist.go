package handlers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms/denylist"
	"hostcore/perms/redact"
)

// bashPrecheck runs before the permission card: a command the denylist
// refuses, or one whose turn's shell has changed, never shows a card.
func bashPrecheck(ctx context.Context, c *call) *ToolResult {
	var a bashArgs
	decodeInto(c.args, &a)
	if strings.IndexByte(a.Command, 0) >= 0 {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args.command contains a NUL byte, which no shell command can hold")
	}
	if len(a.Command) > maxCommandBytes {
		return failResult(tools.CodeInvalidArgument, "invalid arguments: args.command is %d bytes; the kernel passes at most %d bytes to bash -lc: write the script to a file in $PI_SCRATCH_DIR and run that", len(a.Command), maxCommandBytes)
	}
	list, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(tools.CodeToolFailed, "reading the Bash denylist: %v", err)
	}
	switch d := denylist.CheckCommand(a.Command, c.sess.WorkspaceRoot, userHome(), list); {
	case d.TooComplex:
		return policyDenied("%s is too complex for hostcore's denylist check to read, and the check fails closed: spell the paths out", redact.Bound(redact.EscapeText(d.Word), 200))
	case d.Denied():
		return policyDenied("the command touches %s, a sensitive path outside the workspace; hostcore's policy denies it in every permission mode", redact.EscapeText(d.Word))
	}
	if _, r := c.checkShell(ctx); r != nil {
		return r
	}
	c.s.prefetchShellEnv(ctx)
	return nil
}

// --- denylist (design section 5; the check is perms/denylist) ---

const keyBashDenylist = "bashDenylist"

// sensitiveTarget refuses a file tool's outside path that names an entry
// of the denylist (built-in and the user's), as written or as resolved;
// for Grep, and a Glob whose pattern descends, a directory above an
// entry too (denylist.MatchPath).
func (c *call) sensitiveTarget(ctx context.Context) *ToolResult {
	extra, err := c.s.bashDenylist(ctx)
	if err != nil {
		return failResult(tools.CodeToolFailed, "reading the denylist: %v", err)
	}
	var glob struct {
		Pattern string `json:"pattern"`
	}
	if c.tool.Name == "Glob" {
		decodeInto(c.args, &glob)
	}
	t := denylist.FileTarget{Paths: []string{c.target.Abs, filepath.Clean(c.rawPath())}, Pattern: glob.Pattern, Tree: c.tool.Name == "Grep"}
	if p := denylist.MatchPath(t, userHome(), extra); p != "" {
		return policyDenied("%s is a sensitive path outside the workspace; hostcore's policy denies it to %s in every permission mode", redact.EscapeText(p), c.tool.Name)
	}
	return nil
}

// bashDenylist is the user's extension of the built-in list (settings).
func (s *Server) bashDenylist(ctx context.Context) ([]string, error) {
	v, ok, err := s.store.GetSetting(ctx, keyBashDenylist)
	if err != nil || !ok {
		return []string{}, err
	}
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return []string{}, nil
	}
	return list, nil
}

// parseBashDenylist checks settings.update's bashDenylist (an array of
// paths, each absolute or starting with "~/", replacing the previous
// extension) and returns the value to store: nil (JSON null) clears it.
func parseBashDenylist(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalidParams("invalid params: bashDenylist must be an array of paths or null")
	}
	if err := denylist.CheckEntries(list); err != nil {
		return nil, invalidParams("invalid params: %v", err)
	}
	b, _ := json.Marshal(list)
	v := string(b)
	return &v, nil
}

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}
