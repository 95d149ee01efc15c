package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"hostcore/handlers/search"
	"hostcore/perms"
	"hostcore/sandbox"
)

var grepDescription = fmt.Sprintf("Search file contents with a regular expression (RE2 syntax). path may be a directory tree "+
	"(default: the workspace root) or one file; include filters file names (e.g. \"*.go\"). outputMode: files_with_matches (default), "+
	"count, or content (path:line:text, with context lines). .gitignore is honoured; hidden, binary and symlinked entries are skipped. "+
	"At most %d entries by default (headLimit), matched lines cut at 500 characters, about %d KiB of text in all.",
	search.DefaultGrepHeadLimit, search.DefaultGrepMaxBytes>>10)

// Grep is the Grep tool.
var Grep = Tool[GrepArgs, GrepDetails]{
	Spec: Spec{Name: "Grep", Class: perms.ClassRead, Risk: perms.RiskLow, Description: grepDescription, Deferred: true,
		PathArg: "path", PathOptional: true},
	Run: runGrep,
}

// GrepDetails are Grep's details.
type GrepDetails struct {
	Files     int  `json:"files"`
	Matches   int  `json:"matches"`
	Truncated bool `json:"truncated"`
}

// GrepArgs are Grep's arguments.
type GrepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignoreCase"`
	OutputMode string `json:"outputMode"`
	Context    int    `json:"context"`
	HeadLimit  int    `json:"headLimit"`
}

func runGrep(ctx context.Context, c *Call, a GrepArgs) (Out[GrepDetails], error) {
	var none Out[GrepDetails]
	if !c.Target.Exists {
		return none, Fail(CodeToolFailed, "path not found: %s", c.Target.Display)
	}
	prefix := displayPrefix(c.Target)
	if c.Target.Exists && !isDir(c.Target) {
		// A file is searched alone; the engine names it by its base name.
		prefix = displayPrefix(parentOf(c.Target))
	}
	res, err := search.Grep(ctx, search.GrepOptions{
		Root: c.Target.Abs, RootIdent: searchIdent(c.Target), Pattern: a.Pattern, Include: a.Include, IgnoreCase: a.IgnoreCase,
		Mode: a.OutputMode, Context: a.Context, HeadLimit: a.HeadLimit, DisplayPrefix: prefix,
	})
	if err != nil {
		return none, searchError(err)
	}
	text := res.Text
	if res.Files == 0 {
		text = "No matches found.\n"
	}
	return Out[GrepDetails]{Text: text, Details: GrepDetails{Files: res.Files, Matches: res.Matches, Truncated: res.Truncated}}, nil
}

func isDir(res sandbox.Resolved) bool {
	fi, err := sandbox.Stat(res)
	return err == nil && fi.IsDir()
}

// parentOf is the resolved parent directory of a resolved file, for
// display only.
func parentOf(res sandbox.Resolved) sandbox.Resolved {
	p := res
	p.Abs = filepath.Dir(res.Abs)
	if res.Root == sandbox.RootWorkspace {
		p.Display = filepath.ToSlash(filepath.Dir(filepath.FromSlash(res.Display)))
	}
	return p
}
