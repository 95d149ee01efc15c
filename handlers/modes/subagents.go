package modes

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"hostcore/handlers/tools"
	"hostcore/perms/redact"
)

// delegateTools are the only tools a subagent definition may grant
// (design section 10.2).
var delegateTools = []string{"Read", "Glob", "Grep", "BrowserPreview", "Bash", "Edit", "Write"}

// Bounds of session.configure {subagents}: each dropped tool name gives a
// warning naming its subagent, so without them a line of a megabyte
// asked for gigabytes of warnings.
const (
	maxSubagents     = 64
	maxSubagentName  = 128
	maxSubagentTools = 64
)

// ParseSubagents validates session.configure's subagent definitions:
// tools drawn only from delegateTools; none declared means Read, Glob,
// Grep; "*" means all seven; unknown names are dropped with a warning. A
// name holding a rune unreadable reports is refused: the name is on every
// card its delegate asks with. The error says what is wrong with raw.
func ParseSubagents(raw json.RawMessage, unreadable func(rune) bool) ([]tools.Subagent, []string, error) {
	var in []struct {
		Name  string          `json:"name"`
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, nil, errors.New("subagents must be an array of {name, tools?}")
	}
	if len(in) > maxSubagents {
		return nil, nil, fmt.Errorf("%d subagents; at most %d", len(in), maxSubagents)
	}
	seen := map[string]bool{}
	out := []tools.Subagent{}
	warnings := []string{}
	for i, d := range in {
		switch {
		case d.Name == "":
			return nil, nil, fmt.Errorf("subagents[%d].name is required", i)
		case len(d.Name) > maxSubagentName:
			return nil, nil, fmt.Errorf("subagents[%d].name is longer than %d bytes", i, maxSubagentName)
		case strings.IndexFunc(d.Name, unreadable) >= 0:
			return nil, nil, fmt.Errorf("subagents[%d].name holds a control or invisible character", i)
		case seen[d.Name]:
			return nil, nil, fmt.Errorf("subagent %q is defined twice", d.Name)
		}
		seen[d.Name] = true
		def := tools.Subagent{Name: d.Name}
		switch {
		case len(d.Tools) == 0 || string(d.Tools) == "null" || isEmptyArray(d.Tools):
			// An empty list declares none too (design section 10.2).
			def.Tools = []string{"Read", "Glob", "Grep"}
		case string(d.Tools) == `"*"`:
			def.Tools = slices.Clone(delegateTools)
		default:
			var names []string
			if err := json.Unmarshal(d.Tools, &names); err != nil {
				return nil, nil, fmt.Errorf(`subagents[%d].tools must be an array of tool names or "*"`, i)
			}
			if len(names) > maxSubagentTools {
				return nil, nil, fmt.Errorf("subagents[%d].tools has %d names; at most %d", i, len(names), maxSubagentTools)
			}
			def.Tools = []string{}
			dropped := map[string]bool{}
			for _, n := range names {
				switch {
				case slices.Contains(delegateTools, n):
					if !slices.Contains(def.Tools, n) {
						def.Tools = append(def.Tools, n)
					}
				case !dropped[n]:
					dropped[n] = true
					warnings = append(warnings, fmt.Sprintf("subagent %q: tool %q cannot be assigned to a delegate and was dropped", d.Name, redact.Bound(n, 128)))
				}
			}
		}
		out = append(out, def)
	}
	return out, warnings, nil
}

// isEmptyArray reports JSON text that is [] (blanks allowed).
func isEmptyArray(raw json.RawMessage) bool {
	var v []json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil && len(v) == 0
}
