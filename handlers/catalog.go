package handlers

import (
	"fmt"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// catalogMax bounds the "# On-demand tools" text (design section 2.1).
const catalogMax = 4096

// visibleTools is what a session's mode allows (design section 10), with
// the deferred ones marked and listed in the bounded catalog.
func (s *Server) visibleTools(sess store.Session, delegate string) ([]tools.ToolInfo, string) {
	var rights map[string]bool
	if delegate != "" {
		rights = map[string]bool{}
		for _, d := range subagentsOf(sess) {
			if d.Name == delegate {
				for _, t := range d.Tools {
					rights[t] = true
				}
			}
		}
	}
	out := []tools.ToolInfo{}
	var deferred []string
	for _, t := range s.tools.All() {
		if !s.toolVisible(t, sess) || (rights != nil && !rights[t.Name]) {
			continue
		}
		// checkDelegate refuses a delegate's Bash outside agent mode.
		if delegate != "" && sess.Mode != perms.OpAgent && t.Class == perms.ClassExec {
			continue
		}
		// A delegate cannot call ToolSearch, so nothing is deferred for it.
		d := t.Deferred && (sess.Mode == perms.OpAgent || t.DeferredInEveryMode) && delegate == ""
		out = append(out, tools.ToolInfo{Name: t.Name, Description: t.Description, Risk: t.Risk, InputSchema: t.SchemaJSON, Deferred: d})
		if d {
			deferred = append(deferred, fmt.Sprintf("- %s: %s", t.Name, firstSentence(t.Description)))
		}
		if d && t.Name == "Skill" { // the skills, by name and description
			for _, sk := range s.tools.Skills() {
				deferred = append(deferred, fmt.Sprintf("  - skill %s: %s", sk.Name, firstSentence(sk.Description)))
			}
		}
	}
	catalog := ""
	if len(deferred) > 0 {
		var b strings.Builder
		b.WriteString("# On-demand tools\nCall ToolSearch with a tool name or capability to load one of these for the next turn.\n")
		for i, line := range deferred {
			if b.Len()+len(line)+1 > catalogMax {
				fmt.Fprintf(&b, "(+%d more: search with ToolSearch)\n", len(deferred)-i)
				break
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		catalog = b.String()
	}
	return out, catalog
}

// toolVisible applies the mode matrix and per-session conditions.
func (s *Server) toolVisible(t *tools.Def, sess store.Session) bool {
	if !t.AvailableIn(sess.Mode) {
		return false
	}
	if sess.Mode != perms.OpAgent && (t.Class == perms.ClassEdit || t.Class == perms.ClassPlugin) {
		return false
	}
	if t.Name == "Task" && len(subagentsOf(sess)) == 0 || t.Name == "Skill" && len(s.tools.Skills()) == 0 {
		return false
	}
	// What a Temporary session can only answer NO_WORKSPACE is not offered.
	if t.NeedsWorkspace && sess.WorkspaceRoot == "" {
		return false
	}
	return true
}

// firstSentence is a catalog line's description: its first sentence, on
// one line (a plugin's description must not add lines or headings of its
// own to the catalog), cut at a character boundary.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if len(s) > 160 {
		return tools.CutAt(s, 160) + "…"
	}
	return s
}

func subagentsOf(sess store.Session) []tools.Subagent {
	var defs []tools.Subagent
	decodeInto([]byte(sess.Subagents), &defs)
	return defs
}
