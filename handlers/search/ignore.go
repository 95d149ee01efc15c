package search

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one compiled line of a .gitignore, .ignore or
// .git/info/exclude file. Most real-world lines are a bare name, "*.ext" or
// "prefix*"; those are matched with string operations so the walk does not pay
// for a glob engine on every entry.
type ignoreRule struct {
	kind     ruleKind
	lit      string // exact name, suffix or prefix for the fast kinds
	glob     string // doublestar pattern for ruleGlob
	negate   bool
	dirOnly  bool
	anchored bool // matched against the path relative to the file's directory
}

type ruleKind uint8

const (
	ruleExact ruleKind = iota
	ruleSuffix
	ruleSuffixRange // "*" + glob segment; matched with doublestar on the base name
	rulePrefix
	ruleGlob
)

// ignoreNode holds the rules of one directory. Nodes form a chain to the
// root; the deepest node with a matching rule decides, and inside a node the
// last matching rule wins, which is git's precedence. dir is the node's
// directory as a slash path relative to the top of the chain ("" for the top).
type ignoreNode struct {
	parent      *ignoreNode
	dir         string
	rules       []ignoreRule
	hasAnchored bool
}

// ignored reports whether the entry name inside the directory with
// top-relative path dir is excluded. The joined path is built only when a
// node has anchored rules.
func (n *ignoreNode) ignored(dir, name string, isDir bool) bool {
	var full string
	for ; n != nil; n = n.parent {
		var rel string
		if n.hasAnchored {
			if full == "" {
				full = joinRel(dir, name)
			}
			if n.dir == "" {
				rel = full
			} else {
				rel = full[len(n.dir)+1:]
			}
		}
		for i := len(n.rules) - 1; i >= 0; i-- {
			r := &n.rules[i]
			if r.dirOnly && !isDir {
				continue
			}
			if r.matches(rel, name) {
				return !r.negate
			}
		}
	}
	return false
}

func (r *ignoreRule) matches(rel, name string) bool {
	if r.anchored {
		return doublestar.MatchUnvalidated(r.glob, rel)
	}
	switch r.kind {
	case ruleExact:
		return name == r.lit
	case ruleSuffix:
		return strings.HasSuffix(name, r.lit)
	case rulePrefix:
		return strings.HasPrefix(name, r.lit)
	default:
		return doublestar.MatchUnvalidated(r.glob, name)
	}
}

// parseIgnore compiles gitignore syntax (gitignore(5)): comments, blank lines,
// trailing-space trimming, "!" negation, "\" escapes, a trailing "/" for
// directories only, and a "/" anywhere else anchoring the pattern to the
// file's directory. Lines that do not compile are dropped, as git does.
func parseIgnore(data []byte, node *ignoreNode) {
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := compileIgnoreLine(string(bytes.TrimSuffix(line, []byte("\r")))); ok {
			node.rules = append(node.rules, r)
			if r.anchored {
				node.hasAnchored = true
			}
		}
	}
}

func compileIgnoreLine(s string) (ignoreRule, bool) {
	var r ignoreRule
	if s == "" || s[0] == '#' {
		return r, false
	}
	// Trailing spaces are ignored unless escaped with a backslash.
	for len(s) > 0 && s[len(s)-1] == ' ' && !(len(s) > 1 && s[len(s)-2] == '\\') {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, "\\ ") {
		s = s[:len(s)-2] + " "
	}
	if s[0] == '!' {
		r.negate = true
		s = s[1:]
	} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		r.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	if s == "" {
		return r, false
	}
	if strings.Contains(s, "/") {
		r.anchored = true
		s = strings.TrimPrefix(s, "/")
	}
	// gitignore has no brace alternation; doublestar does, so braces are
	// escaped to stay literal.
	s = escapeBraces(s)
	if r.anchored {
		// "dir/**" matches what is inside dir, not dir itself (git); doublestar
		// would also match dir, which would prune a directory whose children a
		// later "!dir/keep" re-includes.
		if strings.HasSuffix(s, "/**") {
			s = strings.TrimSuffix(s, "/**") + "/*/**"
		}
		if !doublestar.ValidatePattern(s) {
			return r, false
		}
		r.glob = s
		r.kind = ruleGlob
		return r, true
	}
	switch meta := strings.IndexAny(s, `*?[\`); {
	case meta < 0:
		r.kind, r.lit = ruleExact, s
	case s[0] == '*' && !strings.ContainsAny(s[1:], `*?[\`):
		r.kind, r.lit = ruleSuffix, s[1:]
	case s[len(s)-1] == '*' && meta == len(s)-1:
		r.kind, r.lit = rulePrefix, s[:len(s)-1]
	default:
		if !doublestar.ValidatePattern(s) {
			return r, false
		}
		r.kind, r.glob = ruleGlob, s
	}
	return r, true
}

func escapeBraces(s string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if c == '{' || c == '}' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ignoreFileNames are read in this order so that later files take precedence
// inside one directory, as in ripgrep (.rgignore > .ignore > .gitignore).
var ignoreFileNames = [...]string{".gitignore", ".ignore", ".rgignore"}

// maxIgnoreFile bounds how much of one ignore file is read.
const maxIgnoreFile = 1 << 20

// loadIgnoreDir builds the node for directory abs (top-relative dir rel) from
// the ignore files present, or returns parent unchanged when there are none.
// has reports which of ignoreFileNames the directory listing contained, so
// directories without ignore files cost no extra system call.
func loadIgnoreDir(parent *ignoreNode, abs, rel string, has [len(ignoreFileNames)]bool) *ignoreNode {
	var node *ignoreNode
	for i, name := range ignoreFileNames {
		if !has[i] {
			continue
		}
		data, err := readSmallFile(filepath.Join(abs, name))
		if err != nil || len(data) == 0 {
			continue
		}
		if node == nil {
			node = &ignoreNode{parent: parent, dir: rel}
		}
		parseIgnore(data, node)
	}
	if node == nil || len(node.rules) == 0 {
		return parent
	}
	return node
}

// readSmallFile reads at most maxIgnoreFile bytes without following a
// symlink: an ignore file that is a link is not trusted to stay in the root.
func readSmallFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, err
	}
	buf := make([]byte, min(st.Size(), maxIgnoreFile))
	n, _ := f.Read(buf)
	return buf[:n], nil
}

// ancestorIgnores returns the ignore chain that applies above root: when root
// is inside a git work tree (a ".git" in root or an ancestor), the ignore
// files of every directory from the work-tree top down to root's parent plus
// .git/info/exclude, as ripgrep does. prefix is root's path relative to that
// top ("" when root is the top or no work tree encloses it); the walk joins
// it to entry paths for anchored rules. The root's own ignore files are read
// by the walk.
func ancestorIgnores(root string) (chain *ignoreNode, prefix string) {
	top := ""
	for d := root; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	if top == "" {
		return nil, ""
	}
	if data, err := readSmallFile(filepath.Join(top, ".git", "info", "exclude")); err == nil && len(data) > 0 {
		node := &ignoreNode{}
		parseIgnore(data, node)
		if len(node.rules) > 0 {
			chain = node
		}
	}
	if top == root {
		return chain, ""
	}
	rel, err := filepath.Rel(top, root)
	if err != nil {
		return chain, ""
	}
	prefix = filepath.ToSlash(rel)
	dir, relDir := top, ""
	parts := strings.Split(prefix, "/")
	for i, part := range parts {
		var has [len(ignoreFileNames)]bool
		for j, name := range ignoreFileNames {
			_, err := os.Lstat(filepath.Join(dir, name))
			has[j] = err == nil
		}
		chain = loadIgnoreDir(chain, dir, relDir, has)
		dir = filepath.Join(dir, part)
		relDir = strings.Join(parts[:i+1], "/")
	}
	return chain, prefix
}
