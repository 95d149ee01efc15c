package denylist

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// otherHomes are the home directories of any user, "" standing for any
// one component.
var otherHomes = [][]string{{"root"}, {"var", "root"}, {"private", "var", "root"}, {"home", ""}, {"Users", ""}}

// builtinEntries returns the component lists of the built-in entries for
// home, made once per home: every Bash call checks against them.
func builtinEntries(home string) [][]string {
	if e, ok := builtinEntriesByHome.Load(home); ok {
		return e.([][]string)
	}
	var entries [][]string
	for _, e := range Builtin {
		entries = append(entries, entryPaths(e, home)...)
		entries = append(entries, linkedEntry(e, home)...)
	}
	builtinEntriesByHome.Store(home, entries)
	return entries
}

// linkedEntry is where an entry of home leads when it is itself a link
// (~/.ssh -> ~/dotfiles/ssh): that directory is as sensitive, and a path
// resolved through the link no longer names the entry as written. None
// when the entry is no link (or does not exist).
func linkedEntry(e, home string) [][]string {
	p := e
	if rest, ok := strings.CutPrefix(e, "~/"); ok {
		p = filepath.Join(home, rest)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || real == filepath.Clean(p) {
		return nil
	}
	return [][]string{components(real)}
}

var builtinEntriesByHome sync.Map

// entryPaths expands a denylist entry into the component lists it stands
// for: an absolute entry is itself (and, under /etc or /var, the same
// under /private, where macOS keeps them); a "~/" entry lies under home
// and under every user's home directory.
func entryPaths(e, home string) [][]string {
	rest, ok := strings.CutPrefix(e, "~/")
	if !ok {
		c := components(path.Clean(e))
		if len(c) > 0 && (c[0] == "etc" || c[0] == "var") {
			return [][]string{c, append([]string{"private"}, c...)}
		}
		return [][]string{c}
	}
	rc := components(path.Clean("/" + rest))
	var out [][]string
	if home != "" && home != "/" {
		out = append(out, append(components(path.Clean(home)), rc...))
	}
	for _, h := range otherHomes {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	for _, h := range serviceHomes() {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	return out
}

// serviceHomes are the home directories /etc/passwd gives that exist and
// that otherHomes does not cover (/var/lib/postgresql, /var/www): ~/
// means any user's home, service accounts' too.
var serviceHomes = sync.OnceValue(func() [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, dir := range passwdHomes() {
		dir = path.Clean(dir)
		c := components(dir)
		if seen[dir] || len(c) < 2 || c[0] == "home" || c[0] == "Users" || c[0] == "root" || c[0] == "proc" || c[0] == "dev" {
			continue
		}
		seen[dir] = true
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, "/"), strings.Join(b, "/")) })
	return out
})

func components(p string) []string {
	if p = strings.Trim(p, "/"); p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
