package denylist

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxSubstDepth bounds the nesting of command substitutions and
// parameter operands read; deeper is too complex.
const maxSubstDepth = 8

// reader turns the syntax tree of a command into the words it may name:
// every word of its simple commands, assignments, redirections, loops,
// tests and arithmetic, with its quoted characters marked (braces.go)
// for expandAll, which expands braces as bash does and removes the marks.
// A command substitution stands for nothing in its word (~/.ssh$(:)/id is
// ~/.ssh/id) and its own words are read after; a parameter expansion
// stands for what its text shows (see param). Nothing runs and no
// variable is looked up but HOME, PWD and OLDPWD, which the check is
// given.
type reader struct {
	home, workspace string
	src             string   // the text parsed: quoted strings are read from it as written
	words           []string // marked words
	texts           []string // quoted strings and heredoc bodies, to read as commands too (bash -c '...')
	deep            bool     // the nesting went past maxSubstDepth
	cr              bool     // the text's carriage returns are parsed as \x01
}

// newParser returns the parser a check reads its texts with: bash's
// language, comments dropped, and missing closing tokens supplied (an
// unclosed quote or substitution is read as closed at the end, and the
// statements before a syntax error are kept) so that a stray quote
// hides nothing after it.
func newParser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.RecoverErrors(maxRecovered))
}

// maxRecovered bounds the missing tokens the parser supplies in one text.
const maxRecovered = 8

// maxNesting bounds the nesting of parentheses and parameter
// expansions a text may have for the parser to read it: the parser
// recurses once a level, and a command of 128 KiB of "$(" took seconds.
// A text nested deeper is read loosely, and the strict reading of a
// command is then too complex (no real command nests so deep).
const maxNesting = 128

// nesting returns how deep the parentheses and ${ of s nest, quotes
// ignored, stopping once it passes maxNesting.
func nesting(s string) int {
	depth, top, params := 0, 0, 0
	for i := 0; i < len(s) && top <= maxNesting; i++ {
		switch s[i] {
		case '(':
			depth++
		case '{':
			if i > 0 && s[i-1] == '$' {
				depth++
				params++
			}
		case ')':
			depth = max(depth-1, 0)
		case '}':
			if params > 0 {
				params--
				depth = max(depth-1, 0)
			}
		}
		top = max(top, depth)
	}
	return top
}

// parse reads text as a bash script; ok is false when it does not parse
// (what parsed before the error is read) or nests deeper than maxNesting
// (then deep is set too).
func (r *reader) parse(p *syntax.Parser, text string) bool {
	if nesting(text) > maxNesting {
		r.deep = true
		return false
	}
	parsed := text
	if strings.IndexByte(text, '\r') >= 0 {
		// A carriage return is no blank to bash, as it is to the parser:
		// it is read as another byte that is none, and turned back.
		parsed, r.cr = strings.ReplaceAll(text, "\r", "\x01"), true
	}
	f, err := p.Parse(strings.NewReader(parsed), "")
	if f != nil {
		// What parsed before an error is what bash runs before it
		// stops: read it as well.
		r.src = text
		r.node(f, 0)
	}
	return err == nil
}

// node reads the words of a syntax tree. A heredoc body is data to the
// command: it is not read as words (minified JSON would be brace
// expansion too large to read) but as the script the shell it may be fed
// to gets.
func (r *reader) node(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			r.word(n, depth)
			return false
		case *syntax.Redirect:
			if n.Word != nil {
				r.word(n.Word, depth)
			}
			if n.Hdoc != nil {
				r.heredoc(n)
				// An unquoted body's substitutions run when the command
				// starts: their commands are the command's own.
				var f fields
				for _, p := range n.Hdoc.Parts {
					if _, lit := p.(*syntax.Lit); !lit {
						r.parts(&f, []syntax.WordPart{p}, true, false, depth)
					}
				}
			}
			return false
		}
		return true
	})
}

// heredoc queues a heredoc's body as text: an unquoted one as the shell
// hands it on (\$, \` and \\ unescaped, continued lines joined).
func (r *reader) heredoc(rd *syntax.Redirect) {
	body := r.source(rd.Hdoc)
	if i := strings.LastIndexByte(body, '\n'); i >= 0 {
		body = body[:i+1] // the closing delimiter's line is no part of it
	}
	quoted := rd.Word != nil && strings.ContainsAny(r.source(rd.Word), `'"\`)
	if !quoted {
		body = unescapeIn(body, "$`\\\n")
	}
	r.texts = append(r.texts, body)
}

// source returns the text of a node as written.
func (r *reader) source(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(r.src) || start > end {
		return ""
	}
	return r.src[start:end]
}

// word appends the readings of w.
func (r *reader) word(w *syntax.Word, depth int) {
	if depth > maxSubstDepth {
		r.deep = true
		return
	}
	var f fields
	r.parts(&f, w.Parts, false, false, depth)
	r.words = append(r.words, f.done()...)
}

// fields collects the fields a word makes: it is split where $IFS (or,
// in an operand, a blank) splits it. A field of substitutions alone is
// none (echo $(date) names no path).
type fields struct {
	out     []string
	cur     strings.Builder
	started bool
}

func (f *fields) split() {
	if f.started {
		f.out = append(f.out, f.cur.String())
	}
	f.cur.Reset()
	f.started = false
}

func (f *fields) done() []string {
	f.split()
	return f.out
}

// parts reads the parts of a word into f. dq says they are inside double
// quotes; blanks says unquoted blanks split fields (a parameter's
// operand, which bash splits after expanding it).
func (r *reader) parts(f *fields, parts []syntax.WordPart, dq, blanks bool, depth int) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			r.lit(f, p.Value, dq, blanks)
		case *syntax.SglQuoted:
			text := p.Value
			if p.Dollar {
				// $'...': the escapes decoded as bash does; a NUL, or
				// \c@, ends it. (A nil Config would be expand's shared
				// one, which it writes to: checks run concurrently.)
				text, _ = expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{p}})
				text, _, _ = strings.Cut(text, `\c`)
			}
			quoteInto(&f.cur, text)
			f.started = true
			r.texts = append(r.texts, text)
		case *syntax.DblQuoted:
			f.cur.WriteByte(qMark)
			f.started = true
			r.parts(f, p.Parts, true, false, depth)
			raw := r.source(p)
			raw = strings.TrimPrefix(raw, "$")
			if len(raw) >= 2 {
				r.texts = append(r.texts, unescapeIn(raw[1:len(raw)-1], "$`\"\\\n"))
			}
		case *syntax.ParamExp:
			r.param(f, p, dq, depth)
		case *syntax.CmdSubst:
			r.subst(f, p)
			for _, s := range p.Stmts {
				r.stmt(s, depth+1)
			}
		case *syntax.ArithmExp:
			// Read as a substitution: the words in it are expanded, and
			// their substitutions run.
			r.subst(f, p)
			r.node(p.X, depth+1)
		case *syntax.ProcSubst:
			r.subst(f, p)
			for _, s := range p.Stmts {
				r.stmt(s, depth+1)
			}
		case *syntax.ExtGlob:
			f.cur.WriteString(p.Op.String() + p.Pattern.Value + ")")
			f.started = true
		default:
			f.cur.WriteString(r.source(p))
			f.started = true
		}
	}
}

func (r *reader) stmt(s *syntax.Stmt, depth int) {
	if depth > maxSubstDepth {
		r.deep = true
		return
	}
	r.node(s, depth)
}

// subst writes the mark of a substitution's output: empty here, any text
// in expandAll's second reading. Bash's brace expansion sees a comma in
// its text, and strips the braces of a group it is in (see
// braceWork.expand): qHidden says so.
func (r *reader) subst(f *fields, n syntax.Node) {
	f.cur.WriteByte(qSubst)
	if strings.IndexByte(r.source(n), ',') >= 0 {
		f.cur.WriteByte(qHidden)
	}
}

// lit reads literal text: a backslash quotes the character after it (in
// double quotes only $ ` " \ and a newline); a backslash-newline joins
// lines.
func (r *reader) lit(f *fields, v string, dq, blanks bool) {
	if !blanks {
		f.started = f.started || v != ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && v[i+1] == '\n':
			i++
		case c == '\\' && i+1 < len(v) && (!dq || strings.IndexByte("$`\"\\", v[i+1]) >= 0):
			i++
			if dq {
				f.cur.WriteByte(quoteByte(v[i]))
			} else {
				quoteInto(&f.cur, v[i:i+1])
			}
			f.started = true
		case dq:
			if c == '\x01' && r.cr {
				c = '\r'
			}
			f.cur.WriteByte(quoteByte(c))
			f.started = true
		case blanks && (c == ' ' || c == '\t' || c == '\n'):
			f.split()
		default:
			if c == '\x01' && r.cr {
				c = '\r'
			}
			f.cur.WriteByte(c)
			f.started = true
		}
	}
}

// unescapeIn removes the backslashes before the characters of set, as
// bash does in double quotes ("$`\"\\\n") and in unquoted heredocs.
func unescapeIn(s, set string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(set, s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || isAlpha(c) }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }
func isPathVar(n string) bool { return n == "HOME" || n == "PWD" || n == "OLDPWD" }
