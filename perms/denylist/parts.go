package denylist

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Part is one command of a line as a command rule reads it (perms/rules):
// Commands lists what a line runs, Parts says how each piece is put
// together, so that a rule can refuse every shape it does not know to be
// harmless.
type Part struct {
	// Words are the program and its arguments.
	Words []Word
	// Env says assignments come before the program (FOO=1 npm test), or
	// the part is nothing but assignments.
	Env bool
	// Redirs are the part's redirections, in order.
	Redirs []Redir
	// Shape is "" for a simple command in a plain list: joined to the
	// others only by newlines, ';', '&&', '||', '|' or '|&'. Otherwise it
	// names what the part is ("subshell", "if", "function", "background",
	// "negated", "declaration", ...), and Words may be empty: what such a
	// part runs is not a program and its arguments.
	Shape string
}

// Word is one word of a part.
type Word struct {
	// Value is the word with quotes removed when Literal; otherwise its
	// text as written.
	Value string
	// Literal says the word's value is its text with quotes removed: no
	// expansion of any kind, no glob, brace or leading tilde.
	Literal bool
	// Inert says expanding the word runs no code: it holds only literal
	// text, globs, braces, a tilde and plain parameters ($NAME, ${NAME},
	// ${#NAME}). A substitution, an arithmetic expansion (bash evaluates
	// a variable's value in it as an expression, and that can run a
	// substitution), a subscript or an operator on a parameter is not.
	Inert bool
}

// Redir is one redirection.
type Redir struct {
	// Op is the operator as written: ">", ">>", "<", "<>", ">&", "<&",
	// ">|", "<<", "<<-", "<<<", "&>", "&>>".
	Op string
	// Target is the file, the descriptor duplicated, or for a here-document
	// or here-string the text given as input.
	Target Word
	// FD says it duplicates or closes a descriptor (2>&1, >&-): no file.
	FD bool
	// Input says Target is text fed to the command (<<, <<-, <<<), not a
	// file.
	Input bool
	// Named says the descriptor is named by a variable ({fd}>f), which
	// assigns it.
	Named bool
}

// Parts parses a command line and returns its parts in the order they
// run. A line that does not parse is an error: what it runs is not known.
func Parts(line string) ([]Part, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	var out []Part
	for _, st := range f.Stmts {
		out = appendParts(out, line, st)
	}
	return out, nil
}

// appendParts adds the parts of one statement.
func appendParts(out []Part, line string, st *syntax.Stmt) []Part {
	shape := ""
	switch {
	case st.Background, st.Disown:
		shape = "background"
	case st.Coprocess:
		shape = "coprocess"
	case st.Negated:
		shape = "negated"
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && shape == "" && len(st.Redirs) == 0 {
		// a && b, a || b, a | b, a |& b: each side is a part of its own.
		return appendParts(appendParts(out, line, b.X), line, b.Y)
	}
	p := Part{Shape: shape}
	for _, r := range st.Redirs {
		p.Redirs = append(p.Redirs, redirOf(line, r))
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		p.Env = len(c.Assigns) > 0
		for _, w := range c.Args {
			p.Words = append(p.Words, wordOf(line, w))
		}
		if len(c.Args) == 0 && p.Shape == "" {
			p.Shape = "assignment"
		}
	case nil:
		if p.Shape == "" {
			p.Shape = "redirection"
		}
	default:
		if p.Shape == "" {
			p.Shape = shapeOf(c)
		}
	}
	return append(out, p)
}

// shapeOf names a command that is not a simple one.
func shapeOf(c syntax.Command) string {
	switch c.(type) {
	case *syntax.BinaryCmd:
		return "redirected list"
	case *syntax.Subshell:
		return "subshell"
	case *syntax.Block:
		return "group"
	case *syntax.IfClause:
		return "if"
	case *syntax.WhileClause:
		return "while"
	case *syntax.ForClause:
		return "for"
	case *syntax.CaseClause:
		return "case"
	case *syntax.FuncDecl:
		return "function"
	case *syntax.ArithmCmd:
		return "arithmetic"
	case *syntax.TestClause:
		return "test"
	case *syntax.DeclClause:
		return "declaration"
	case *syntax.LetClause:
		return "let"
	case *syntax.TimeClause:
		return "time"
	case *syntax.CoprocClause:
		return "coprocess"
	}
	return "compound"
}

// wordOf reads one word.
func wordOf(line string, w *syntax.Word) Word {
	if w == nil {
		return Word{}
	}
	out := Word{Value: line[w.Pos().Offset():w.End().Offset()], Literal: literal(w), Inert: inert(w)}
	if out.Literal {
		if v, err := expand.Literal(&expand.Config{}, w); err == nil {
			out.Value = v
		} else {
			out.Literal = false
		}
	}
	return out
}

// redirOf reads one redirection.
func redirOf(line string, r *syntax.Redirect) Redir {
	out := Redir{Op: r.Op.String(), Target: wordOf(line, r.Word)}
	if r.N != nil {
		out.Named = strings.Trim(r.N.Value, "0123456789") != ""
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		out.Input, out.Target = true, wordOf(line, r.Hdoc)
		if r.Hdoc == nil {
			out.Target = Word{Literal: true, Inert: true}
		}
	case syntax.WordHdoc:
		out.Input = true
	case syntax.DplIn, syntax.DplOut:
		t := out.Target
		out.FD = t.Literal && t.Value != "" && strings.Trim(t.Value, "0123456789") == "" || t.Literal && t.Value == "-"
	}
	return out
}

// inert says expanding w runs no code (see Word.Inert).
func inert(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if !inertPart(p) {
			return false
		}
	}
	return true
}

func inertPart(p syntax.WordPart) bool {
	switch p := p.(type) {
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob, *syntax.BraceExp:
		return true
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if !inertPart(q) {
				return false
			}
		}
		return true
	case *syntax.ParamExp:
		// ${#NAME} is a length: inert like $NAME.
		return p.Param != nil && p.Flags == nil && !p.Excl && !p.Width && !p.IsSet &&
			p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset &&
			p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
			p.Repl == nil && p.Names == 0 && p.Exp == nil
	}
	return false
}
