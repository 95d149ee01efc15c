package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"hostcore/handlers/search"
	"hostcore/sandbox"
)

var globDescription = fmt.Sprintf("List files matching a glob pattern (** for any depth, {a,b} alternatives), newest first. "+
	"path is the directory to search (default: the workspace root). .gitignore is honoured; .git, hidden entries and symlinks are skipped. "+
	"At most %d paths are listed unless headLimit says otherwise.", search.DefaultGlobHeadLimit)

type globArgs struct {
	Pattern   string `json:"pattern"`
	Path      string `json:"path"`
	HeadLimit int    `json:"headLimit"`
}

const globMeta = "*?[{\\"

// splitGlob moves a pattern's leading literal directories into the search
// root when they climb with ".." or are absolute, so that such a pattern is
// an explicit path like any other and goes through containment and the
// outside-path rule. A ".." after the first wildcard is refused.
func splitGlob(dir, pattern string) (root, rest string, err error) {
	if dir == "" {
		dir = "."
	}
	segs := strings.Split(pattern, "/")
	lit := 0
	for lit < len(segs) && !strings.ContainsAny(segs[lit], globMeta) {
		lit++
	}
	for _, s := range segs[lit:] {
		if s == ".." {
			return "", "", errors.New("'..' may only appear before the first wildcard of a pattern")
		}
	}
	prefix := strings.Join(segs[:lit], "/")
	climbs := strings.HasPrefix(pattern, "/")
	for _, s := range segs[:lit] {
		climbs = climbs || s == ".."
	}
	if !climbs {
		return dir, pattern, nil
	}
	if lit == len(segs) { // fully literal: search its directory for its name
		prefix, segs, lit = path.Dir(pattern), []string{path.Base(pattern)}, 0
	}
	if strings.HasPrefix(pattern, "/") {
		root = prefix
		if root == "" {
			root = "/"
		}
	} else {
		root = path.Join(filepath.ToSlash(dir), prefix)
	}
	return root, strings.Join(segs[lit:], "/"), nil
}

func globTarget(args json.RawMessage) (string, error) {
	var a globArgs
	json.Unmarshal(args, &a)
	root, _, err := splitGlob(a.Path, a.Pattern)
	return root, err
}

func runGlob(ctx context.Context, c *call) *ToolResult {
	var a globArgs
	json.Unmarshal(c.args, &a)
	_, pattern, _ := splitGlob(a.Path, a.Pattern)
	if !c.target.Exists {
		return c.setPath(failResult(CodeToolFailed, "path not found: %s", c.target.Display))
	}
	if !isDir(c.target) {
		return c.setPath(failResult(CodeInvalidArgument, "%s is not a directory: Glob searches a directory (use Read for a file)", c.target.Display))
	}
	res, err := search.Glob(ctx, search.GlobOptions{Root: c.target.Abs, RootIdent: searchIdent(c.target), Pattern: pattern, HeadLimit: a.HeadLimit})
	if r := searchError(c, err); r != nil {
		return r
	}
	prefix := displayPrefix(c.target)
	var b strings.Builder
	for _, p := range res.Paths {
		b.WriteString(search.DisplayName(prefix + p))
		b.WriteByte('\n')
	}
	if res.Count == 0 {
		b.WriteString("No files matched.\n")
	}
	if res.Truncated {
		fmt.Fprintf(&b, "[... %d of %d matches shown, newest first; narrow the pattern or raise headLimit]\n", len(res.Paths), res.Count)
	}
	r := okResult(b.String())
	r.Details = map[string]any{"count": res.Count, "returned": len(res.Paths), "truncated": res.Truncated}
	return c.setPath(r)
}

// displayPrefix is what goes before a root-relative match: nothing for the
// workspace root, the workspace-relative directory inside it, the absolute
// directory for scratch and external roots (design section 4a).
func displayPrefix(res sandbox.Resolved) string {
	if res.Root == sandbox.RootWorkspace {
		if res.Display == "." || res.Display == "" {
			return ""
		}
		return res.Display + "/"
	}
	return strings.TrimSuffix(res.Abs, "/") + "/"
}

// searchError maps an engine error onto a result.
func searchError(c *call, err error) *ToolResult {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, search.ErrRootChanged):
		return c.setPath(failResult(CodeToolDenied, "%v", err))
	case errors.Is(err, search.ErrBadPattern):
		return c.setPath(failResult(CodeInvalidArgument, "invalid arguments: %v", err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return c.setPath(failResult(CodeToolAborted, "search cancelled"))
	}
	return c.setPath(failResult(CodeToolFailed, "search failed: %v", err))
}

// searchIdent is the identity the search root must still have when the
// search opens it: the one the resolution (and the approval) saw.
func searchIdent(res sandbox.Resolved) search.Ident {
	if !res.Ident.OfTarget {
		return search.Ident{}
	}
	return search.Ident{Dev: res.Ident.Dev, Ino: res.Ident.Ino}
}
