package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"hostcore/handlers/search"
	"hostcore/perms"
	"hostcore/sandbox"
)

var globDescription = fmt.Sprintf("List files matching a glob pattern (** for any depth, {a,b} alternatives), newest first. "+
	"path is the directory to search (default: the workspace root). .gitignore is honoured; .git, hidden entries and symlinks are skipped. "+
	"At most %d paths are listed unless headLimit says otherwise.", search.DefaultGlobHeadLimit)

// Glob is the Glob tool. A pattern that climbs with ".." or is absolute
// moves its literal directories into the path (splitGlob), so that they
// go through containment and the outside-path rule like any path.
var Glob = Tool[GlobArgs, GlobDetails]{
	Spec: Spec{Name: "Glob", Class: perms.ClassRead, Risk: perms.RiskLow, Description: globDescription, Deferred: true,
		PathArg: "path", PathOptional: true},
	Run:    runGlob,
	Target: func(a GlobArgs) (string, error) { root, _, err := splitGlob(a.Path, a.Pattern); return root, err },
}

// GlobArgs are Glob's arguments.
type GlobArgs struct {
	Pattern   string `json:"pattern"`
	Path      string `json:"path,omitempty"`
	HeadLimit int    `json:"headLimit,omitempty"`
}

// GlobDetails are Glob's details.
type GlobDetails struct {
	Count     int  `json:"count"`
	Returned  int  `json:"returned"`
	Truncated bool `json:"truncated"`
}

// GlobMeta are the characters that make a pattern component a wildcard.
const GlobMeta = "*?[{\\"

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
	for lit < len(segs) && !strings.ContainsAny(segs[lit], GlobMeta) {
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

func runGlob(ctx context.Context, c *Call, a GlobArgs) (Out[GlobDetails], error) {
	var none Out[GlobDetails]
	_, pattern, _ := splitGlob(a.Path, a.Pattern)
	if !c.Target.Exists {
		return none, Fail(CodeToolFailed, "path not found: %s", c.Target.Display)
	}
	if !isDir(c.Target) {
		return none, Fail(CodeInvalidArgument, "%s is not a directory: Glob searches a directory (use Read for a file)", c.Target.Display)
	}
	res, err := search.Glob(ctx, search.GlobOptions{Root: c.Target.Abs, RootIdent: searchIdent(c.Target), Pattern: pattern, HeadLimit: a.HeadLimit})
	if err != nil {
		return none, searchError(err)
	}
	prefix := displayPrefix(c.Target)
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
	return Out[GlobDetails]{Text: b.String(), Details: GlobDetails{Count: res.Count, Returned: len(res.Paths), Truncated: res.Truncated}}, nil
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

// searchError maps an engine error onto a failure.
func searchError(err error) *Failure {
	switch {
	case errors.Is(err, search.ErrRootChanged):
		return Fail(CodeToolDenied, "%v", err)
	case errors.Is(err, search.ErrBadPattern):
		return Fail(CodeInvalidArgument, "invalid arguments: %v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Fail(CodeToolAborted, "search cancelled")
	}
	return Fail(CodeToolFailed, "search failed: %v", err)
}

// searchIdent is the identity the search root must still have when the
// search opens it: the one the resolution (and the approval) saw.
func searchIdent(res sandbox.Resolved) search.Ident {
	if !res.Ident.OfTarget {
		return search.Ident{}
	}
	return search.Ident{Dev: res.Ident.Dev, Ino: res.Ident.Ino}
}
