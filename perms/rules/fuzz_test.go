package rules

import (
	"slices"
	"testing"

	"hostcore/perms/denylist"
)

// FuzzMatch checks Match against the denylist's other reading of a line
// (denylist.Commands, which also walks into substitutions): whatever
// Match allows runs no command inside another, no command with an
// assignment before it, and only commands that start with a rule's words.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{
		"npm test", "npm test -- --watch=false", "npm test && rm -rf x", "npm test | sh", "npm test $(rm)",
		"npm test `rm`", "FOO=1 npm test", "bash -c 'npm test'", "npm test <<EOF\n$(rm)\nEOF", "npm te\\\nst",
		"go vet ./... ; npm test > out", "npm test <(rm)", "{ npm test; }", "npm test & rm", "npm $'test'",
	} {
		f.Add(s)
	}
	rules := []Rule{{ID: "r1", Prefix: []string{"npm", "test"}}, {ID: "r2", Prefix: []string{"go", "vet"}}}
	f.Fuzz(func(t *testing.T, line string) {
		if _, ok := Match(line, rules, Roots{Workspace: "/ws"}); !ok {
			return
		}
		cmds, err := denylist.Commands(line)
		if err != nil {
			t.Fatalf("Match allowed %q, which does not parse: %v", line, err)
		}
		for _, c := range cmds {
			allowed := slices.ContainsFunc(rules, func(r Rule) bool {
				return len(c.Args) >= len(r.Prefix) && slices.Equal(c.Args[:len(r.Prefix)], r.Prefix)
			})
			if c.Nested || len(c.Env) > 0 || !allowed {
				t.Fatalf("Match allowed %q, which runs %+v", line, c)
			}
		}
	})
}
