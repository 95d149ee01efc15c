package handlers

import (
	"cmp"
	"path"
	"regexp"
	"strings"

	"hostcore/sandbox"
)

// homeParam matches ${HOME} and its expansions with operators
// (${HOME%/}, ${HOME:-x}): each is taken for the home directory.
var homeParam = regexp.MustCompile(`\$\{HOME(?:[^A-Za-z0-9_}"'\\][^}"'\\]*)?\}`)

// homeRe matches the spellings of a home directory at the start of a word:
// $HOME (${HOME} is rewritten to it first), ~ and ~user (the user name
// may be a glob: a word read starred spells ~{root,x} ~*).
var homeRe = regexp.MustCompile(`^(?:\$HOME\b|~[A-Za-z0-9._*?-]*)`)

// otherHomes are the home directories of any user, "" standing for any
// one component.
var otherHomes = [][]string{{"root"}, {"var", "root"}, {"home", ""}, {"Users", ""}}

// deniedPath returns the first word of the command that names a sensitive
// path outside the workspace, "" if none. Words are split the way the shell
// splits them, quotes and backslashes removed, so ~/".ssh", /etc/sh\adow
// and "$HOME/Library/Application Support/..." are seen; relative words
// with ".." are resolved against the workspace (the cwd), so ../../.ssh is
// seen too; glob words are matched component by component as the shell
// would, so ~/.ss? is seen and ~/* is not.
var multiSlash = regexp.MustCompile(`/{2,}`)

// procAlias matches /proc/<process>/root and .../cwd, which spell another
// path through procfs (found in review: /proc/self/root/home/u/.ssh/id_rsa
// walked past the list). The process is any component: a pid, self,
// thread-self, $$, a glob.
var procAlias = regexp.MustCompile(`^/proc/[^/]+(?:/task/[^/]+)?/(root|cwd)(/.*)?$`)

// unproc rewrites a procfs alias to the path it names: root is "/", and
// cwd is the command's working directory, the workspace.
func unproc(p, workspace string) string {
	m := procAlias.FindStringSubmatch(p)
	if m == nil {
		return p
	}
	if m[1] == "cwd" {
		if workspace == "" {
			return p
		}
		return path.Clean(workspace + "/" + m[2])
	}
	return path.Clean("/" + m[2])
}

// deniedPath returns the word of the command that names a sensitive path
// (or that is too complex to check), "" if none.
func deniedPath(command, workspace, home string, extra []string) string {
	return checkDenylist(command, workspace, home, extra).word
}

// denial is what checkDenylist found: the word that names a sensitive
// path, or one whose braces are too complex to read within the bounds
// (denied: the check fails closed).
type denial struct {
	word       string
	tooComplex bool
}

func checkDenylist(command, workspace, home string, extra []string) denial {
	text := homeParam.ReplaceAllString(command, "$$HOME")
	var entries [][]string
	for _, list := range [][]string{builtinDenylist, extra} {
		for _, e := range list {
			entries = append(entries, entryPaths(e, home)...)
		}
	}
	// The flat reading sees the command as it did before shellWords
	// existed (only ${HOME} rewritten), so that nothing it caught gets
	// through: a rewrite of ${HOME...} that met a quote could swallow
	// the rest of the command.
	expanded, tooComplex := expandAll(shellWords(text))
	words := append(flatWords(strings.ReplaceAll(command, "${HOME}", "$HOME")), expanded...)
	if strings.Contains(command, "\\\n") {
		// Bash joins continued lines before it reads words at all, even
		// inside a name ($HO\<newline>ME): the command is read joined too.
		joined := strings.ReplaceAll(command, "\\\n", "")
		more, complex2 := expandAll(shellWords(homeParam.ReplaceAllString(joined, "$$HOME")))
		words = append(append(words, flatWords(strings.ReplaceAll(joined, "${HOME}", "$HOME"))...), more...)
		tooComplex = cmp.Or(tooComplex, complex2)
	}
	for _, word := range words {
		p := word
		if loc := homeRe.FindStringIndex(p); loc != nil && (len(p) == loc[1] || p[loc[1]] == '/') {
			if home == "" {
				continue
			}
			p = home + p[loc[1]:]
		} else if !strings.HasPrefix(p, "/") {
			if workspace == "" || !strings.Contains(p, "..") {
				continue // a relative path without .. stays in the workspace
			}
			p = workspace + "/" + p
		}
		// The procfs alias is rewritten before cleaning: cwd and root are
		// links, so a ".." after them climbs from where they point.
		p = path.Clean(unproc(multiSlash.ReplaceAllString(p, "/"), workspace))
		if workspace != "" && sandbox.LexicallyInside(workspace, p) {
			continue
		}
		pc := components(p)
		for _, ec := range entries {
			if namesEntry(pc, ec) {
				return denial{word: word}
			}
		}
	}
	if tooComplex != "" {
		return denial{word: tooComplex, tooComplex: true}
	}
	return denial{}
}

// entryPaths expands a denylist entry into the component lists it stands
// for: an absolute entry is itself; a "~/" entry lies under home and under
// every user's home directory.
func entryPaths(e, home string) [][]string {
	rest, ok := strings.CutPrefix(e, "~/")
	if !ok {
		return [][]string{components(path.Clean(e))}
	}
	rc := components(path.Clean("/" + rest))
	var out [][]string
	if home != "" && home != "/" {
		out = append(out, append(components(path.Clean(home)), rc...))
	}
	for _, h := range otherHomes {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	return out
}

func components(p string) []string {
	if p = strings.Trim(p, "/"); p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// namesEntry says whether the path pc names the entry ec or something
// inside it: each of ec's components is matched by pc's, read as a glob
// pattern the way the shell reads it (a leading dot is matched only by a
// pattern that starts with one). A parent of the entry does not name it:
// ls ~ is not sensitive.
func namesEntry(pc, ec []string) bool {
	if len(pc) < len(ec) {
		return false
	}
	for i, want := range ec {
		got := pc[i]
		if got == want || want == "" {
			continue
		}
		if strings.HasPrefix(want, ".") && !strings.HasPrefix(got, ".") {
			return false
		}
		if ok, err := path.Match(got, want); err != nil || !ok {
			return false
		}
	}
	return true
}

// shellWords splits a command into words roughly as the shell does:
// whitespace and the operators ; & | ( ) < > and ` separate; quotes and
// backslashes group, and their text is marked as quoted (see quoteInto)
// for expandAll, which reads braces as bash does and removes the marks;
// $'...' has its escapes decoded; a backslash-newline joins lines. A
// command substitution, $(...) or `...`, stands for nothing in its word
// (~/.ssh$(:)/id is ~/.ssh/id) and its own words are added after; ${...}
// is kept whole.
func shellWords(s string) []string {
	return appendShellWords(nil, s, 0)
}

// flatWords splits a command into words the simple way: quotes and
// backslashes group and are removed, and whitespace and the operators
// ; & | ( ) < > as well as = , and ` separate (so --key=~/.ssh/id yields
// ~/.ssh/id). deniedPath reads a command both this way and with
// shellWords: the latter's reading of substitutions and braces can be
// thrown off by quotes inside them, and no spelling this one catches may
// get through.
func flatWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case strings.IndexByte(" \t\n\r;&|()<>=,`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words
}

// maxSubstDepth bounds the nesting of command substitutions read.
const maxSubstDepth = 8

func appendShellWords(words []string, s string, depth int) []string {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			inWord = false
		}
		w.Reset()
	}
	var inner []string // command substitutions, split after the word
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++ // a line continuation: nothing
		case ch == '\\' && i+1 < len(s):
			i++
			quoteInto(&w, s[i:i+1])
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := i + 2
			for j < len(s) && s[j] != '\'' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			quoteInto(&w, ansiC(s[i+2:min(j, len(s))]))
			i = j
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '"':
			// $"..." is a translated string: the same as "...".
		case ch == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			end := matching(s, i+1)
			if s[i+1] == '{' {
				if op, ok := writeParam(&w, s[i:end], depth); !ok {
					inner = append(inner, op)
				}
				inWord = true
			} else {
				// What it prints is not known: for brace expansion it
				// is quoted text (bash passes it through unexpanded).
				w.WriteByte(qMark)
				inner = append(inner, s[i+2:max(i+2, end-1)])
			}
			i = end - 1
		case ch == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteByte(qMark)
			inner = append(inner, s[i+1:i+1+j])
			i += j + 1
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			quoteInto(&w, s[i+1:i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			w.WriteByte(qMark)
			for i++; i < len(s) && s[i] != '"'; i++ {
				escaped := false
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == '\n' {
						continue
					}
					escaped = true
				}
				// Substitutions run inside double quotes too: their
				// commands are read like the others.
				if s[i] == '$' && i+1 < len(s) && s[i+1] == '(' {
					end := matching(s, i+1)
					inner = append(inner, s[i+2:max(i+2, end-1)])
					i = end - 1
					continue
				}
				if s[i] == '$' && i+1 < len(s) && s[i+1] == '{' {
					end := matching(s, i+1)
					if op, ok := writeParam(&w, s[i:end], depth); !ok {
						inner = append(inner, op)
					}
					i = end - 1
					continue
				}
				if s[i] == '`' {
					j := strings.IndexByte(s[i+1:], '`')
					if j < 0 {
						j = len(s) - i - 1
					}
					inner = append(inner, s[i+1:i+1+j])
					i += j
					continue
				}
				if s[i] == '$' && !escaped {
					w.WriteByte('$') // $name is expanded in double quotes too
					continue
				}
				w.WriteByte(quoteByte(s[i]))
			}
			inWord = true
		case strings.IndexByte(" \t\n\r;&|()<>`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	if depth < maxSubstDepth {
		for _, c := range inner {
			words = appendShellWords(words, c, depth+1)
		}
	}
	return words
}

// paramWord matches the parameter expansions whose operand is a word the
// value may be: ${x:-word}, ${x-word}, ${x:=word}, ${x:+word}, ${x:?word}.
var paramWord = regexp.MustCompile(`(?s)^\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(:?[-=+?])(.*)\}$`)

// writeParam writes the reading of a parameter expansion ${...} to a
// word. Its value is not known; it is read as what the text shows. With
// an operand word: ${x:-word}, ${x:=word} and ${x:?word} are word (or a
// value that is not empty, not known); ${x-word}, ${x=word}, ${x?word},
// ${x+word} and ${x:+word} are word or empty: a brace group of the two,
// which expandAll expands (${x-/etc}/shadow is read as /shadow and as
// /etc/shadow). Without one it is empty (${x}/etc/shadow is
// /etc/shadow). An operand of several words is returned with ok false,
// for the caller to read as words of its own. ${HOME...} never gets here
// (deniedPath rewrote it to $HOME).
func writeParam(w *strings.Builder, text string, depth int) (operand string, ok bool) {
	m := paramWord.FindStringSubmatch(text)
	if m == nil {
		w.WriteByte(qMark)
		return "", true
	}
	words := appendShellWords(nil, m[2], maxSubstDepth) // its substitutions are read elsewhere
	if len(words) != 1 || depth >= maxSubstDepth {
		w.WriteByte(qMark)
		return m[2], false
	}
	orEmpty := m[1] != ":-" && m[1] != ":=" && m[1] != ":?"
	if orEmpty {
		w.WriteByte('{')
		w.WriteByte(qMark)
		w.WriteByte(',')
	} else {
		w.WriteByte(qMark)
	}
	// The operand is not brace-expanded (bash skips ${...}).
	for i := 0; i < len(words[0]); i++ {
		switch c := words[0][i]; c {
		case '{', '}', ',':
			w.WriteByte(quoteByte(c))
		default:
			w.WriteByte(c)
		}
	}
	if orEmpty {
		w.WriteByte('}')
	}
	return "", true
}

func isNameStart(c byte) bool { return c == '_' || isAlpha(c) }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

// matching returns the index just past the bracket that closes the one
// at s[open] ('(' or '{'), or len(s).
func matching(s string, open int) int {
	o := s[open]
	c := byte(')')
	if o == '{' {
		c = '}'
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case o:
			depth++
		case c:
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// ansiC decodes the body of $'...': the escapes a path could be spelled
// with (\\, \', \xHH, octal \NNN); other escapes keep their letter.
func ansiC(b string) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out.WriteByte(b[i])
			continue
		}
		i++
		switch c := b[i]; {
		case c == 'x':
			n, k := 0, 0
			for ; k < 2 && i+1 < len(b) && isHex(b[i+1]); k++ {
				i++
				n = n*16 + hexVal(b[i])
			}
			out.WriteByte(byte(n))
		case c >= '0' && c <= '7':
			n := int(c - '0')
			for k := 1; k < 3 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				n = n*8 + int(b[i]-'0')
			}
			out.WriteByte(byte(n))
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

func isHex(c byte) bool { return hexVal(c) >= 0 }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
