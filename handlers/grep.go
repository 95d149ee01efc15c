package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"hostcore/handlers/search"
	"hostcore/sandbox"
)

var grepDescription = fmt.Sprintf("Search file contents with a regular expression (RE2 syntax). path may be a directory tree "+
	"(default: the workspace root) or one file; include filters file names (e.g. \"*.go\"). outputMode: files_with_matches (default), "+
	"count, or content (path:line:text, with context lines). .gitignore is honoured; hidden, binary and symlinked entries are skipped. "+
	"At most %d entries by default (headLimit), matched lines cut at 500 characters, about %d KiB of text in all.",
	search.DefaultGrepHeadLimit, search.DefaultGrepMaxBytes>>10)

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignoreCase"`
	OutputMode string `json:"outputMode"`
	Context    int    `json:"context"`
	HeadLimit  int    `json:"headLimit"`
}

func runGrep(ctx context.Context, c *call) *ToolResult {
	var a grepArgs
	json.Unmarshal(c.args, &a)
	if !c.target.Exists {
		return c.setPath(failResult(CodeToolFailed, "path not found: %s", c.target.Display))
	}
	prefix := displayPrefix(c.target)
	if c.target.Exists && !isDir(c.target) {
		// A file is searched alone; the engine names it by its base name.
		prefix = displayPrefix(parentOf(c.target))
	}
	res, err := search.Grep(ctx, search.GrepOptions{
		Root: c.target.Abs, RootIdent: searchIdent(c.target), Pattern: a.Pattern, Include: a.Include, IgnoreCase: a.IgnoreCase,
		Mode: a.OutputMode, Context: a.Context, HeadLimit: a.HeadLimit, DisplayPrefix: prefix,
	})
	if r := searchError(c, err); r != nil {
		return r
	}
	text := res.Text
	if res.Files == 0 {
		text = "No matches found.\n"
	}
	r := okResult(text)
	r.Details = map[string]any{"files": res.Files, "matches": res.Matches, "truncated": res.Truncated}
	return c.setPath(r)
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
