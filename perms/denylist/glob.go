package denylist

import (
	"path"
	"strings"
)

// globCache keeps what one check learned of its glob patterns: a long
// pattern multiplied by brace expansion is met against every entry.
type globCache map[string]compiledGlob

type compiledGlob struct {
	pattern        string // path.Match's spelling
	minLen         int    // the fewest bytes a name it matches has
	prefix, suffix string // literal text every name it matches starts and ends with
}

func (g globCache) compile(p string) compiledGlob {
	if c, ok := g[p]; ok {
		return c
	}
	c := compiledGlob{pattern: bashGlob(p)}
	for i := 0; i < len(c.pattern); i++ {
		switch c.pattern[i] {
		case '*':
		case '\\':
			i++
			c.minLen++
		case '[':
			j := i + 1
			for j < len(c.pattern) && c.pattern[j] != ']' {
				if c.pattern[j] == '\\' {
					j++
				}
				j++
			}
			i = j
			c.minLen++
		default:
			c.minLen++
		}
	}
	if !strings.Contains(c.pattern, "\\") {
		first := strings.IndexAny(c.pattern, "*?[")
		last := strings.LastIndexAny(c.pattern, "*?]")
		if first >= 0 && last >= first {
			c.prefix, c.suffix = c.pattern[:first], c.pattern[last+1:]
		}
	}
	g[p] = c
	return c
}

// match matches name against a bash glob pattern (see globMatch).
func (g globCache) match(pattern, name string) bool {
	if !strings.ContainsAny(pattern, "*?[\\") {
		return pattern == name
	}
	c := g.compile(pattern)
	if c.minLen > len(name) || !strings.HasPrefix(name, c.prefix) || !strings.HasSuffix(name, c.suffix) {
		return false
	}
	ok, err := path.Match(c.pattern, name)
	return ok || err != nil
}

// namesEntry says whether the path pc names the entry ec or something
// inside it: each of ec's components is matched by pc's, read as a glob
// pattern the way the shell reads it (a leading dot is matched only by a
// pattern that starts with one, unless dotglob is on; case is ignored
// under nocaseglob and on macOS; under globstar a ** component matches
// any number of components). A parent of the entry does not name it:
// ls ~ is not sensitive.
func (g globCache) namesEntry(pc, ec []string, o globOpts) bool {
	if o.globstar {
		for i, c := range pc {
			if c != "**" {
				continue
			}
			// ** matches any number of components, none included.
			if i >= len(ec) {
				break // after the entry: inside it
			}
			if !g.namesEntry(pc[:i], ec[:i], globOpts{dotglob: o.dotglob, nocase: o.nocase}) {
				return false
			}
			for k := i; k <= len(ec); k++ {
				if k == len(ec) || g.namesEntry(pc[i+1:], ec[k:], o) {
					return true
				}
			}
			return false
		}
	}
	if len(pc) < len(ec) {
		if !o.recursive {
			return false // ls ~ lists names; it reads no entry
		}
		ec = ec[:len(pc)] // a directory above the entry: the tree holds it
	}
	for i, want := range ec {
		got := pc[i]
		if got == want || want == "" {
			continue
		}
		if o.nocase {
			got, want = strings.ToLower(got), strings.ToLower(want)
		}
		if !o.dotglob && strings.HasPrefix(want, ".") && !strings.HasPrefix(got, ".") {
			return false
		}
		if !g.match(got, want) {
			return false
		}
	}
	return true
}

// globMatch matches name against a bash glob pattern. path.Match reads
// a different syntax; bashGlob converts [!...], [[:class:]] and a leading
// ']' in a bracket. A pattern it still cannot read matches (the check
// fails closed).
func globMatch(pattern, name string) bool {
	return globCache{}.match(pattern, name)
}

// bashGlob rewrites a bash glob in path.Match's syntax.
func bashGlob(p string) string {
	var b strings.Builder
	closed := true // once a '[' has no closing ']', none after it has
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case c == '[':
			end, class := -1, ""
			if closed {
				end, class = bracket(p, i)
			}
			if end < 0 {
				b.WriteString(`\[`) // no closing ']': a literal '['
				closed = false
				continue
			}
			b.WriteString(class)
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bracket reads the bracket expression of a bash glob that opens at
// p[open], returning the index of its closing ']' (-1 if none) and its
// path.Match spelling.
func bracket(p string, open int) (int, string) {
	var b strings.Builder
	unclosed := map[byte]bool{}
	b.WriteByte('[')
	j := open + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		b.WriteByte('^')
		j++
	}
	if j < len(p) && p[j] == ']' {
		b.WriteString(`\]`)
		j++
	}
	for ; j < len(p); j++ {
		switch {
		case p[j] == ']':
			b.WriteByte(']')
			return j, b.String()
		case p[j] == '\\' && j+1 < len(p):
			b.WriteString(p[j : j+2])
			j++
		case p[j] == '[' && j+1 < len(p) && strings.IndexByte(":=.", p[j+1]) >= 0 && !unclosed[p[j+1]]:
			kind := p[j+1]
			k := strings.Index(p[j+2:], string(kind)+"]")
			if k < 0 {
				unclosed[kind] = true // none after this one either
			}
			if k >= 0 {
				if inner := p[j+2 : j+2+k]; kind == ':' {
					b.WriteString(posixClass(inner))
				} else {
					// [=c=] (equivalence class) and [.c.] (collating
					// symbol) stand for c.
					for _, r := range inner {
						if strings.ContainsRune(`\]^-[`, r) {
							b.WriteByte('\\')
						}
						b.WriteRune(r)
					}
				}
				j += k + 3
				continue
			}
			b.WriteString(`\[`)
		default:
			b.WriteByte(p[j])
		}
	}
	return -1, ""
}

// posixClass spells a [:class:] as path.Match ranges; an unknown class
// stands for any character.
func posixClass(name string) string {
	switch name {
	case "alpha":
		return "a-zA-Z"
	case "digit":
		return "0-9"
	case "alnum":
		return "a-zA-Z0-9"
	case "lower":
		return "a-z"
	case "upper":
		return "A-Z"
	case "xdigit":
		return "0-9a-fA-F"
	case "word":
		return "a-zA-Z0-9_"
	case "space", "blank":
		return " \t\n\r\f\v"
	case "cntrl":
		return "\x00-\x1f\x7f"
	case "print":
		return " -~"
	case "graph":
		return "!-~"
	case "punct":
		return `!-/:-@\[-` + "`{-~"
	}
	return "\x00-\U0010FFFF"
}
