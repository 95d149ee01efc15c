package denylist

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// param writes the reading of a parameter expansion to f, and appends the
// words of its operands to the command's words. The value is not known
// (but for HOME, PWD and OLDPWD): it is read as what the text shows.
//
//   - $x and ${x} are $x, which dropVars reads as empty ($x/etc/shadow is
//     /etc/shadow) or, for $HOME, $PWD, $OLDPWD and the process ids, as
//     themselves; $IFS (unquoted) splits the word (cat$IFS/etc/shadow).
//   - ${x:-word}, ${x:=word} and ${x:?word} are word; ${x-word},
//     ${x=word}, ${x?word}, ${x+word}, ${x:+word} are word or empty; a
//     replacement ${x/pattern/word} is word or empty. "Or" is a brace
//     group of the readings, which expandAll expands (${x-/etc}/shadow
//     is read as /shadow and as /etc/shadow). Of an operand of several
//     words the first joins the text before and the last the text after;
//     each is read on its own too.
//   - a substring ${x:1:2} is empty or "/"; any other operator (${x#pat},
//     ${x%pat}, ${x^^}, ${#x}, ${!x}) is empty; their operands' words are
//     read on their own.
//   - ${HOME}, and ${HOME:-word} and the like, are $HOME, HOME being set;
//     ${HOME:+...}, ${HOME%...} and the like are also empty or "/", and
//     what they give worked out from the value (${HOME%me}me/.ssh).
//
// A comma in the text is marked qHidden (see subst).
func (r *reader) param(f *fields, p *syntax.ParamExp, dq bool, depth int) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Short || p.Param != nil && p.Exp == nil && p.Repl == nil && p.Slice == nil && p.Index == nil && !p.Excl && !p.Length && !p.Width && p.Names == 0 {
		if name == "IFS" && !dq {
			f.split() // $IFS splits the word it is in
			return
		}
		if !p.Short && !isPathVar(name) {
			// ${x}: empty, and a word ($'' would be one too)
			f.cur.WriteByte(qMark)
		} else {
			f.cur.WriteString("$" + name)
		}
		f.started = true
		return
	}
	f.started = true
	if p.Index != nil {
		// An array subscript is arithmetic: its substitutions run.
		r.node(p.Index, depth+1)
	}
	kind, op := "other", ""
	var operand *syntax.Word
	switch {
	case p.Excl || p.Length || p.Width || p.Names != 0:
	case p.Exp != nil:
		op, operand = p.Exp.Op.String(), p.Exp.Word
		switch op {
		case ":-", ":=", ":?":
			kind = "word"
		case "-", "=", "?", "+", ":+":
			kind = "or-empty"
		}
	case p.Repl != nil:
		kind, op, operand = "or-empty", "/", p.Repl.With
		if p.Repl.Orig != nil {
			r.word(p.Repl.Orig, depth+1)
		}
	case p.Slice != nil:
		op = ":"
		if p.Slice.Offset != nil {
			r.node(p.Slice.Offset, depth+1)
		}
		if p.Slice.Length != nil {
			r.node(p.Slice.Length, depth+1)
		}
	default:
		kind = "none"
	}
	var alts []string
	switch {
	case isPathVar(name) && (kind == "none" || kind == "word" || op == "-" || op == "=" || op == "?"):
		alts = append(alts, "$"+name) // set: its value
	case isPathVar(name):
		alts = append(alts, "$"+name, qMarkStr, "/") // ${HOME:+}, ${HOME%%/*}, ${HOME::1}
		if v, ok := r.pathValue(p); ok {
			alts = append(alts, quoteAll(v))
		}
	case op == ":":
		// A substring: empty, "/" (${PWD::1}etc/shadow), or more.
		alts = append(alts, qMarkStr, "/")
	case kind != "word":
		alts = append(alts, qMarkStr)
	}
	if operand != nil && depth < maxSubstDepth {
		var of fields
		r.parts(&of, operand.Parts, dq, !dq, depth+1)
		words := of.done()
		if len(words) >= 1 && kind != "other" {
			ends := []string{words[0]}
			if len(words) > 1 {
				ends = append(ends, words[len(words)-1])
			}
			for _, word := range ends {
				if loc := tildeRe.FindStringIndex(word); loc != nil {
					// bash expands a tilde there: ~ and ~user are read
					// as home, the directory stack's as the workspace
					name := strings.TrimSuffix(word[1:loc[1]], "/")
					v := "$HOME"
					if name != "" && dirStackRe.MatchString(name) {
						v = "$PWD"
					}
					word = v + word[1+len(name):]
				}
				alts = append(alts, markGroupChars(word))
			}
			if len(words) > 1 {
				r.words = append(r.words, words...)
			}
		} else {
			r.words = append(r.words, words...)
		}
	} else if operand != nil {
		r.deep = true
	}
	if len(alts) == 0 {
		alts = append(alts, qMarkStr)
	}
	if len(alts) == 1 {
		f.cur.WriteString(alts[0])
	} else {
		f.cur.WriteString("{" + strings.Join(alts, ",") + "}")
	}
	if strings.IndexByte(r.source(p), ',') >= 0 {
		f.cur.WriteByte(qHidden)
	}
}

// pathValue works out an operation on $HOME, $PWD or $OLDPWD from the
// value the check knows (the workspace for the last two). ok is false
// when the operation needs more than that (a substitution, a variable).
func (r *reader) pathValue(p *syntax.ParamExp) (string, bool) {
	if r.home == "" && p.Param.Value == "HOME" || r.workspace == "" && p.Param.Value != "HOME" {
		return "", false
	}
	cfg := &expand.Config{
		Env:     expand.ListEnviron("HOME="+r.home, "PWD="+r.workspace, "OLDPWD="+r.workspace),
		NoUnset: true,
	}
	v, err := expand.Literal(cfg, &syntax.Word{Parts: []syntax.WordPart{p}})
	return v, err == nil
}

// quoteAll marks every brace, comma, dot and dollar of s as quoted.
func quoteAll(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = quoteByte(c)
	}
	return string(b)
}

// markGroupChars marks the braces and commas of an operand as quoted:
// bash does not brace-expand inside ${...}.
func markGroupChars(s string) string {
	if strings.IndexAny(s, "{},") < 0 {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '{' || c == '}' || c == ',' {
			b[i] = quoteByte(c)
		}
	}
	return string(b)
}
