package denylist

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command of a command line, as parsed: what a
// rule about "the command it runs" (a lone git apply, a command prefix
// the user allowed) matches against.
type Command struct {
	// Args are the program and its arguments, quotes removed. A word
	// whose value is known only at run time (a substitution, a variable,
	// a glob, braces, a tilde) is given as written, and Dynamic is set.
	Args []string
	// Env are the assignments before the program (LC_ALL=C), as written.
	Env []string
	// Dynamic says some word's value is known only at run time.
	Dynamic bool
	// Redirected says the command has a redirection (> f, < f, <<EOF).
	Redirected bool
	// Nested says the command runs inside a substitution ($(...),
	// `...`, <(...)) of another word.
	Nested bool
}

// Commands parses a command line and returns its simple commands in the
// order they appear: every command of its lists, pipelines, subshells,
// loops and conditionals, and those inside substitutions. A test
// ([[ ]]), arithmetic command ((( ))) or let is one Command of that
// keyword, Dynamic. A line that does not parse is an error: what it runs
// is not known.
func Commands(command string) ([]Command, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, err
	}
	var out []Command
	var walk func(n syntax.Node, nested bool)
	walk = func(n syntax.Node, nested bool) {
		syntax.Walk(n, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				redirected := len(n.Redirs) > 0
				switch c := n.Cmd.(type) {
				case *syntax.CallExpr:
					if len(c.Args) > 0 || len(c.Assigns) > 0 {
						cmd := Command{Redirected: redirected, Nested: nested}
						for _, a := range c.Assigns {
							cmd.Env = append(cmd.Env, command[a.Pos().Offset():a.End().Offset()])
							cmd.Dynamic = cmd.Dynamic || a.Value != nil && !literal(a.Value)
						}
						for _, w := range c.Args {
							cmd.Args = append(cmd.Args, wordText(command, w))
							cmd.Dynamic = cmd.Dynamic || !literal(w)
						}
						out = append(out, cmd)
					}
				case *syntax.DeclClause:
					cmd := Command{Args: []string{c.Variant.Value}, Redirected: redirected, Nested: nested}
					for _, a := range c.Args {
						cmd.Args = append(cmd.Args, command[a.Pos().Offset():a.End().Offset()])
						cmd.Dynamic = cmd.Dynamic || a.Value != nil && !literal(a.Value)
					}
					out = append(out, cmd)
				case *syntax.TestClause:
					out = append(out, Command{Args: []string{"[["}, Dynamic: true, Redirected: redirected, Nested: nested})
				case *syntax.ArithmCmd:
					out = append(out, Command{Args: []string{"(("}, Dynamic: true, Redirected: redirected, Nested: nested})
				case *syntax.LetClause:
					out = append(out, Command{Args: []string{"let"}, Dynamic: true, Redirected: redirected, Nested: nested})
				}
			case *syntax.CmdSubst:
				for _, s := range n.Stmts {
					walk(s, true)
				}
				return false
			case *syntax.ProcSubst:
				for _, s := range n.Stmts {
					walk(s, true)
				}
				return false
			}
			return true
		})
	}
	walk(f, false)
	return out, nil
}

// literal says whether a word's value is its text with quotes removed:
// no expansion of any kind, no glob, brace or leading tilde.
func literal(w *syntax.Word) bool {
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{") || i == 0 && strings.HasPrefix(p.Value, "~") {
				return false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// wordText returns a word's value when it is literal, else its text as
// written.
func wordText(src string, w *syntax.Word) string {
	if literal(w) {
		if v, err := expand.Literal(&expand.Config{}, w); err == nil {
			return v
		}
	}
	return src[w.Pos().Offset():w.End().Offset()]
}
