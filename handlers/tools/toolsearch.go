package tools

import (
	"context"
	"fmt"
	"hostcore/perms"
	"sort"
	"strings"
	"unicode"
)

// ToolSearch is the ToolSearch tool.
var ToolSearch = Tool[ToolSearchArgs, ToolSearchDetails]{
	Spec: Spec{Name: "ToolSearch", Class: perms.ClassControl, Risk: perms.RiskLow, Description: toolSearchDescription},
	Run:  runToolSearch,
}

const toolSearchDescription = "Load on-demand tools listed in the # On-demand tools catalog. Give an exact tool name (or several, comma separated) " +
	"or words describing the capability; the matching tools' schemas are returned and become callable on the next turn. Never touches the workspace."

// toolSearchMax bounds the tools one capability query returns.
const toolSearchMax = 5

// ToolSearchArgs are ToolSearch's arguments.
type ToolSearchArgs struct {
	Query string `json:"query"`
}

// ToolSearchDetails are ToolSearch's details.
type ToolSearchDetails struct {
	Query   string     `json:"query"`
	Matches []ToolInfo `json:"matches"`
}

// runToolSearch finds tools among those the session's mode shows: exact
// names first (any visible tool), otherwise capability words matched
// against the deferred tools' names and descriptions. The host does not
// track what is "loaded": activation for the next turn is the sidecar's,
// and it resets per prompt (design section 2.1). Nothing here touches the
// workspace.
func runToolSearch(ctx context.Context, c *Call, a ToolSearchArgs) (Out[ToolSearchDetails], error) {
	visible := c.Host.VisibleTools()
	matches := searchTools(visible, a.Query)
	if len(matches) == 0 {
		var names []string
		for _, t := range visible {
			if t.Deferred {
				names = append(names, t.Name)
			}
		}
		text := fmt.Sprintf("No tool matches %q.", a.Query)
		if len(names) > 0 {
			text += " On-demand tools: " + strings.Join(names, ", ") + "."
		}
		return Out[ToolSearchDetails]{Text: text, Details: ToolSearchDetails{Query: a.Query, Matches: []ToolInfo{}}}, nil
	}
	var b strings.Builder
	names := make([]string, len(matches))
	for i, t := range matches {
		names[i] = t.Name
		fmt.Fprintf(&b, "## %s\n%s\nrisk: %s\ninput schema: %s\n\n", t.Name, t.Description, t.Risk, t.InputSchema)
	}
	text := "Available from the next turn: " + strings.Join(names, ", ") + "\n\n" + strings.TrimRight(b.String(), "\n")
	return Out[ToolSearchDetails]{Text: text, Details: ToolSearchDetails{Query: a.Query, Matches: matches}}, nil
}

// searchTools is ToolSearch's matcher, pure so it can be tested alone.
func searchTools(visible []ToolInfo, query string) []ToolInfo {
	byName := map[string]ToolInfo{}
	byFold := map[string]ToolInfo{}
	for _, t := range visible {
		byName[t.Name] = t
		byFold[strings.ToLower(t.Name)] = t
	}
	// Exact names: "Glob" or "Glob, Grep" (or "select:Glob,Grep").
	parts := strings.FieldsFunc(strings.TrimPrefix(strings.TrimSpace(query), "select:"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	var exact []ToolInfo
	for _, p := range parts {
		t, ok := byName[p]
		if !ok {
			t, ok = byFold[strings.ToLower(p)]
		}
		if !ok {
			exact = nil
			break
		}
		exact = append(exact, t)
	}
	if len(exact) > 0 {
		return dedupe(exact)
	}
	words := searchWords(query)
	if len(words) == 0 {
		return nil
	}
	type scored struct {
		t     ToolInfo
		score int
	}
	var hits []scored
	for _, t := range visible {
		if !t.Deferred {
			continue
		}
		tokens := searchWords(splitCamel(t.Name) + " " + t.Description)
		score := 0
		for _, w := range words {
			for _, tok := range tokens {
				if tok == w || (len(w) >= 3 && strings.HasPrefix(tok, w)) || (len(tok) >= 4 && strings.HasPrefix(w, tok)) {
					score++
					break
				}
			}
		}
		if score > 0 {
			hits = append(hits, scored{t, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	var out []ToolInfo
	for i := 0; i < len(hits) && i < toolSearchMax; i++ {
		out = append(out, hits[i].t)
	}
	return out
}

func dedupe(ts []ToolInfo) []ToolInfo {
	seen := map[string]bool{}
	var out []ToolInfo
	for _, t := range ts {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// searchStop are words too common to say anything about a capability.
var searchStop = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true, "and": true, "or": true,
	"by": true, "with": true, "from": true, "is": true, "it": true, "this": true, "that": true, "tool": true, "tools": true,
	"use": true, "can": true, "be": true, "as": true, "at": true, "my": true, "me": true, "i": true, "want": true, "need": true,
}

func searchWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 2 && !searchStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// splitCamel turns "BrowserPreview" into "Browser Preview" and
// "plugin_x_lint" into "plugin x lint".
func splitCamel(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		if r == '_' || r == '-' {
			b.WriteByte(' ')
		} else {
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}
