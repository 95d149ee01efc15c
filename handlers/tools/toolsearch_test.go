package tools

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestSearchTools(t *testing.T) {
	visible := []ToolInfo{
		{Name: "Read", Description: "Read a file."},
		{Name: "BrowserPreview", Description: "Open a file in the user's Browser panel.", Deferred: true},
		{Name: "Glob", Description: "List files matching a glob pattern.", Deferred: true},
		{Name: "Grep", Description: "Search file contents with a regular expression.", Deferred: true},
		{Name: "plugin_acme_lint", Description: "Lint source code.", Deferred: true},
	}
	names := func(ts []ToolInfo) []string {
		out := []string{}
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	for query, want := range map[string][]string{
		"Glob":                    {"Glob"},
		"grep":                    {"Grep"},
		"select:Glob,Grep,Glob":   {"Glob", "Grep"},
		"Read":                    {"Read"},
		"search contents":         {"Grep"},
		"list files by pattern":   {"Glob", "BrowserPreview", "Grep"},
		"preview in the browser":  {"BrowserPreview"},
		"linting":                 {"plugin_acme_lint"},
		"Glob teleport":           {"Glob"},
		"read":                    {"Read"},
		"   ":                     {},
		"the a of":                {},
		"Write":                   {},
		"open a file in a panel?": {"BrowserPreview", "Glob", "Grep"},
	} {
		if diff := gocmp.Diff(want, names(searchTools(visible, query))); diff != "" {
			t.Errorf("%q (-want +got):\n%s", query, diff)
		}
	}
}
