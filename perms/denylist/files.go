package denylist

import (
	"path/filepath"
	"slices"
	"strings"
)

// FileTarget is what a file tool is about to touch outside the
// workspace.
type FileTarget struct {
	// Paths are the target as resolved and as written; relative ones
	// are skipped.
	Paths []string
	// Pattern is a Glob's pattern, "" for the other tools.
	Pattern string
	// Tree says the tool walks the whole tree below its path (Grep).
	Tree bool
}

// MatchPath returns the path of t that names an entry of the denylist
// (built-in and extra, the user's), as written or as resolved (a link
// to ~/.ssh is ~/.ssh; a home that is itself a link counts by both its
// names), "" if none. A tool that walks whole trees, as Grep and a Glob
// whose pattern descends do (a Glob of ~ with pattern .ss?/* lists the
// names in ~/.ssh), may not start above an entry either (the home
// directory); a Read, Write or Edit names one file, a Glob like *.txt
// one directory. Names compare without case where the file system does
// (macOS).
func MatchPath(t FileTarget, home string, extra []string) string {
	homes := []string{home}
	if real, err := filepath.EvalSymlinks(home); err == nil && real != home {
		homes = append(homes, real)
	}
	var entries [][]string
	for _, h := range homes {
		entries = append(entries, builtinEntries(h)...)
		for _, e := range extra {
			entries = append(entries, entryPaths(e, h)...)
			entries = append(entries, linkedEntry(e, h)...)
		}
	}
	opts := globOpts{recursive: t.Tree || globDescends(t.Pattern), nocase: caseInsensitiveFS}
	globs := globCache{}
	paths := slices.Clone(t.Paths)
	if lit := globLiteralDirs(t.Pattern); lit != "" {
		// The directories a pattern names before its first wildcard are
		// listed as surely as its path: .ssh/* from the home directory
		// lists ~/.ssh, and .ssh/id_rsa names the key. They count as
		// part of the path, as written and as resolved.
		for _, p := range t.Paths {
			if filepath.IsAbs(p) {
				q := filepath.Join(p, lit)
				paths = append(paths, q)
				if r := resolvedPath(q); r != q {
					paths = append(paths, r)
				}
			}
		}
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		pc := components(p)
		for _, ec := range entries {
			if globs.namesEntry(pc, ec, opts) {
				return p
			}
		}
	}
	return ""
}

// globMeta are the characters that make a Glob pattern's component a
// wildcard.
const globMeta = "*?[{\\"

// globDescends reports whether a Glob pattern reaches below the directory
// it starts from: its part from the first component holding a wildcard
// on has a '/' or a '**'. /etc/*.conf lists one directory; .ss?/* and
// **/id_* walk into others.
func globDescends(pattern string) bool {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, "*?[{") {
			return i < len(parts)-1 || strings.Contains(p, "**")
		}
	}
	return false
}

// globLiteralDirs returns a Glob pattern's components before its first
// wildcard (all of them for a pattern without one), "" for none: .ssh/*
// gives .ssh, .ssh/id_rsa gives .ssh/id_rsa, *.txt gives "".
func globLiteralDirs(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.ContainsAny(p, globMeta) {
			return strings.Join(parts[:i], "/")
		}
	}
	return pattern
}
