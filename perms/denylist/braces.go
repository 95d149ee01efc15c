package denylist

import (
	"strconv"
	"strings"
)

// The denylist reads brace expansion the way bash does (braces.c in bash's
// source: brace_expand, brace_gobbler, expand_seqterm), on words whose
// quoted characters the reader has marked: bash expands braces before it
// removes quotes, and a quoted or escaped brace, comma or dot is not
// special. The marks are bytes that valid UTF-8 never holds (a command
// reaches hostcore as JSON, which the protocol layer requires to be valid
// UTF-8); unquote turns them back into what they stand for.
//
// mvdan.cc/sh/v3's expand.Braces is not used: it reads bash's own braces
// differently where it matters here ({x}y,/etc/shadow} is x}y and
// /etc/shadow to bash, one word to it; a comma inside $(...) strips a
// group's braces in bash), and it has no bound on the words it makes.
const (
	qSubst  = '\xf6' // a command substitution's output: empty, or (a second reading) any text
	qDollar = '\xf7' // a quoted '$'
	qOpen   = '\xf8' // a quoted '{'
	qClose  = '\xf9' // a quoted '}'
	qComma  = '\xfa' // a quoted ','
	qDot    = '\xfb' // a quoted '.'
	qMark   = '\xfc' // where a quoted or escaped part, or a substitution, began: bash sees a quote character there
	qHidden = '\xfd' // a substitution held a comma: it stands for nothing, but bash's brace expansion sees the comma

	qMarkStr = "\xfc"
)

// quoteInto writes s to w as quoted text: braces, commas and dots marked.
// A byte $'...' decodes into one of the marks is read as the mark (it names
// no sensitive path either way).
func quoteInto(w *strings.Builder, s string) {
	w.WriteByte(qMark)
	for i := 0; i < len(s); i++ {
		w.WriteByte(quoteByte(s[i]))
	}
}

func quoteByte(c byte) byte {
	switch c {
	case '{':
		return qOpen
	case '}':
		return qClose
	case ',':
		return qComma
	case '.':
		return qDot
	case '$':
		return qDollar
	}
	return c
}

// unquote turns the marks of a word back into the characters they stand
// for.
func unquote(w string) string {
	if !hasMark(w) {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case qMark, qHidden, qSubst:
		case qOpen:
			b.WriteByte('{')
		case qClose:
			b.WriteByte('}')
		case qComma:
			b.WriteByte(',')
		case qDot:
			b.WriteByte('.')
		case qDollar:
			b.WriteByte('$')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hasMark(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= qSubst && w[i] <= qHidden {
			return true
		}
	}
	return false
}

// Bounds on the brace reading of one command. Past them a word is read
// starred (see star), and a word that cannot be read even that way is
// denied as too complex to check: this is a security check, it fails
// closed.
const (
	// maxBraceSteps bounds the expansions (one per group met) of one
	// command: a{1,2}{1,2}... doubles the work each time.
	maxBraceSteps = 1024
	// maxBraceScan bounds the bytes the search for groups reads, and the
	// expansion writes, for one command (the search from each '{' may
	// read to the end of its word; a word may be copied 256 times).
	maxBraceScan = 1 << 20
	// maxBraceWords bounds the words one word expands to.
	maxBraceWords = 256
	// maxBraceExtra bounds the words brace expansion adds to one command.
	maxBraceExtra = 1024
	// maxBraceWord is the longest word whose braces are expanded: twice
	// the longest path.
	maxBraceWord = 8 << 10
	// maxStarWords bounds the patterns star makes of one word.
	maxStarWords = 64
	// maxStarSteps and maxStarScan bound the starred reading of one
	// command, all its words together.
	maxStarSteps = 1 << 16
	maxStarScan  = 4 << 20
	// maxStarExtra bounds the patterns the starred reading adds to one
	// command beyond one per word.
	maxStarExtra = 4096
)

// braceWork is the budget of one command's brace reading.
type braceWork struct {
	steps, scan int
	cut         bool // a bound was reached: words may be missing
}

// braceBudget is what the brace reading may spend; readings given the
// same budget share it.
type braceBudget struct {
	e, st            braceWork // expansion, and the starred reading
	extra, starExtra int       // words the expansion added; patterns the starred reading added beyond one per word
}

func newBraceBudget() *braceBudget {
	return &braceBudget{
		e:  braceWork{steps: maxBraceSteps, scan: maxBraceScan},
		st: braceWork{steps: maxStarSteps, scan: maxStarScan},
	}
}

// expandAll expands the braces of every word as bash would, and splits
// each result at '=', ':' and unquoted ',' as well (--key=~/.ssh/id,
// --files=a,/etc/shadow), returning the words unquoted. A word whose
// expansion the bounds cut short is also read starred; tooComplex is the
// first word that could not be read even so, "" if none.
func (b *braceBudget) expandAll(words []string) (out []string, tooComplex string) {
	for _, w := range words {
		x := []string{w}
		if strings.IndexByte(w, '{') >= 0 {
			b.e.cut = false
			if len(w) <= maxBraceWord && b.extra < maxBraceExtra {
				x = b.e.expand(w)
				b.extra += len(x) - 1
			} else {
				b.e.cut = true
			}
			if b.e.cut {
				var stars []string
				ok := false
				if b.starExtra <= maxStarExtra {
					stars, ok = b.st.star(w, false)
					if b.starExtra += max(len(stars)-1, 0); b.starExtra > maxStarExtra {
						stars, ok = nil, false
					}
				}
				if !ok && tooComplex == "" {
					tooComplex = unquote(w)
				}
				x = append(x, stars...)
			}
		}
		for _, y := range x {
			out = appendPieces(out, dropVars(y))
			if strings.IndexByte(y, qSubst) >= 0 {
				// Read again with every substitution as any text:
				// /home/$(whoami)/.ssh is /home/*/.ssh.
				out = appendPieces(out, dropVars(strings.ReplaceAll(y, string([]byte{qSubst}), "*")))
			}
		}
	}
	return out, tooComplex
}

// dropVars reads the variables of an expanded word ($name; bash expands
// them after braces, so {$HO,x}ME is $HOME): $HOME, $PWD, $OLDPWD (the
// workspace, see pathReadings) and the process ids
// ($BASHPID, $PPID: /proc/$PPID/root is an alias of /) stay as they are,
// any other variable is read as empty, its value not being known
// ($x/etc/shadow is read as /etc/shadow), and so are the positional and
// special parameters ($1, $@; $$ stays: /proc/$$/root). Quoted dollars
// are marks, and stay.
func dropVars(w string) string {
	if strings.IndexByte(w, '$') < 0 {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != '$' || i+1 == len(w) {
			b.WriteByte(w[i])
			continue
		}
		if isDigit(w[i+1]) || strings.IndexByte("@*#?-!", w[i+1]) >= 0 {
			i++ // $1, $@, $#...: empty under bash -lc, or not known
			continue
		}
		if !isNameStart(w[i+1]) {
			b.WriteByte(w[i])
			continue
		}
		j := i + 2
		for j < len(w) && isNameByte(w[j]) {
			j++
		}
		switch w[i+1 : j] {
		case "HOME", "PWD", "OLDPWD", "BASHPID", "PPID":
			b.WriteString(w[i:j])
		}
		i = j - 1
	}
	return b.String()
}

// appendPieces appends w unquoted and, when it holds '=', ':' or an
// unquoted ',', each piece between them (X=a:~/.ssh/id).
func appendPieces(out []string, w string) []string {
	out = append(out, unquote(w))
	if strings.IndexAny(w, "=,:") < 0 {
		return out
	}
	for _, p := range strings.FieldsFunc(w, func(r rune) bool { return r == '=' || r == ',' || r == ':' }) {
		out = append(out, unquote(p))
	}
	return out
}

// expand is bash's brace_expand: the first group that is one (an
// unquoted '{' with a matching '}' and a comma or ".." between) splits
// the word into preamble, alternatives and postamble; the alternatives
// and the postamble are expanded in turn.
func (e *braceWork) expand(w string) []string {
	if e.steps <= 0 {
		e.cut = true
		return []string{w}
	}
	e.steps--
	open, close := e.group(w)
	if open < 0 {
		return []string{w}
	}
	pre, amble, post := w[:open], w[open+1:close], w[close+1:]
	var tack []string
	if strings.IndexByte(amble, ',') < 0 {
		seq, ok := braceSeq(amble, maxBraceWords+1)
		if len(seq) > maxBraceWords {
			seq, e.cut = seq[:maxBraceWords], true
		}
		switch {
		case ok:
			tack = seq
		case post == "" && !hiddenComma(amble):
			return []string{w}
		default:
			tack = []string{w[open : close+1]}
		}
		if hiddenComma(amble) {
			// Bash looks for the group's comma in its raw text, quotes and
			// substitutions included, and splits it at commas of its own
			// level only: a comma hidden that way strips the braces. A
			// quoted comma may have been escaped (which bash skips): both
			// readings.
			tack = append(tack, e.expand(amble)...)
		}
	} else {
		for _, a := range e.alts(amble) {
			tack = append(tack, e.expand(a)...)
			if len(tack) > maxBraceWords {
				tack, e.cut = tack[:maxBraceWords], true
				break
			}
		}
	}
	// The words made are paid for from the scan budget: a long word
	// copied 256 times over is work too.
	out := make([]string, 0, len(tack))
	for _, t := range tack {
		if e.scan -= len(pre) + len(t); e.scan < 0 {
			e.cut = true
			return out
		}
		out = append(out, pre+t)
	}
	if post == "" {
		return out
	}
	rest := e.expand(post)
	var all []string
	for _, o := range out {
		for _, r := range rest {
			if e.scan -= len(o) + len(r); len(all) == maxBraceWords || e.scan < 0 {
				e.cut = true
				return all
			}
			all = append(all, o+r)
		}
	}
	return all
}

// star reads a word without expanding it in full, for when the bounds cut
// its expansion short: a group whose alternatives are all plain (no '/',
// no '.', no nested group, not empty) becomes the glob "*", which
// namesEntry matches against the part of one component it stands for;
// the other alternatives are tried one by one (read starred in turn). So
// /e{tc,x}/shadow is read as /e*/shadow, and /{etc/shadow,x} as
// /etc/shadow and /*. inName says whether w goes on a variable's name
// (see endsInName). ok is false when that makes more than maxStarWords
// patterns or the budget runs out: the word is then too complex to check.
func (e *braceWork) star(w string, inName bool) (patterns []string, ok bool) {
	if e.steps <= 0 {
		return nil, false
	}
	e.steps--
	open, close := e.group(w)
	if e.cut {
		return nil, false
	}
	if open < 0 {
		return []string{w}, true
	}
	pre, amble, post := w[:open], w[open+1:close], w[close+1:]
	var mid []string
	if strings.IndexByte(amble, ',') < 0 {
		if vals, isSeq := braceSeq(amble, maxStarWords+1); isSeq {
			mid = []string{"*"}
			if len(vals) <= maxStarWords && strings.ContainsFunc(strings.Join(vals, ""), func(r rune) bool {
				return !(r < 128 && (isNameByte(byte(r)) || r == '-' || r == '+'))
			}) {
				mid = vals // a letter range across [ \ ] ^ ` makes globs: each value
			}
		} else if post == "" && !hiddenComma(amble) {
			return []string{w}, true
		} else {
			mid = []string{w[open : close+1]}
		}
		if hiddenComma(amble) {
			sub, ok := e.star(amble, endsInName(pre, inName))
			if !ok {
				return nil, false
			}
			mid = append(mid, sub...)
		}
	} else {
		starred := false
		named := endsInName(pre, inName)
		for _, a := range e.alts(amble) {
			// Text that goes on a variable's name ($HO{ME,x}) is not
			// starred: the name is read after braces. An empty
			// alternative is, when a plain character next to the group
			// keeps its component from vanishing or becoming a dot.
			if !named && (plainAlt(a) || emptyAlt(a) && (plainEnd(pre) || plainStart(post))) {
				starred = true
				continue
			}
			sub, ok := e.star(a, named)
			if !ok || len(mid)+len(sub) > maxStarWords {
				return nil, false
			}
			mid = append(mid, sub...)
		}
		if starred {
			mid = append(mid, "*")
		}
	}
	if e.cut {
		return nil, false
	}
	rest := []string{""}
	if post != "" {
		postNamed := false
		for _, m := range mid {
			postNamed = postNamed || endsInName(pre+m, inName)
		}
		if rest, ok = e.star(post, postNamed); !ok {
			return nil, false
		}
	}
	if len(mid)*len(rest) > maxStarWords {
		return nil, false
	}
	for _, m := range mid {
		for _, r := range rest {
			if e.scan -= len(pre) + len(m) + len(r); e.scan < 0 {
				return nil, false
			}
			patterns = append(patterns, pre+m+r)
		}
	}
	return patterns, true
}

// endsInName says whether text ends inside a variable's name ($ and
// name bytes, "*" counting as one): what follows it goes on the name.
// inName says whether the text before it did.
func endsInName(text string, inName bool) bool {
	i := len(text)
	for i > 0 && (isNameByte(text[i-1]) || text[i-1] == '*') {
		i--
	}
	if i == 0 {
		return inName
	}
	return text[i-1] == '$'
}

// plainAlt says whether "*" may stand for the alternative a: it is part
// of one component whatever it is (no '/', no nested group), never empty,
// no dot makes it "." or "..", it names no home directory (~, $HOME), and
// nothing in it splits the word (=, :) or makes a glob ([, ]).
func plainAlt(a string) bool {
	plain := false
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case '/', '.', qDot, '{', '~', '$', '=', ':', '[', ']', qHidden:
			return false
		case qMark:
		default:
			plain = true
		}
	}
	return plain
}

// hiddenComma says whether a group's body holds a comma bash sees but
// does not split at: quoted, escaped, or inside a substitution.
func hiddenComma(amble string) bool {
	return strings.IndexByte(amble, qComma) >= 0 || strings.IndexByte(amble, qHidden) >= 0
}

// emptyAlt says whether an alternative is empty once unquoted.
func emptyAlt(a string) bool {
	for i := 0; i < len(a); i++ {
		if a[i] != qMark && a[i] != qHidden && a[i] != qSubst {
			return false
		}
	}
	return true
}

// plainEnd and plainStart say whether text ends (starts) with a
// character that is part of a component's name and no dot.
func plainEnd(text string) bool {
	for i := len(text) - 1; i >= 0; i-- {
		if c := text[i]; c != qMark && c != qHidden && c != qSubst {
			return isNameByte(c) || c == '-'
		}
	}
	return false
}

func plainStart(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c != qMark && c != qHidden && c != qSubst {
			return isNameByte(c) || c == '-'
		}
	}
	return false
}

// group finds the first brace group of w that bash expands: the first
// '{' (outside ${...}) that has a matching '}' with a comma or ".." at its
// level between them, and returns both indexes, or -1, -1.
func (e *braceWork) group(w string) (open, close int) {
	for i := 0; i < len(w); i++ {
		if i = e.gobble(w, i, '{'); i >= len(w) {
			break
		}
		if j := e.gobble(w, i+1, '}'); j < len(w) {
			return i, j
		}
	}
	return -1, -1
}

// alts splits a group's body at the commas of its level.
func (e *braceWork) alts(amble string) []string {
	var out []string
	for start := 0; ; {
		i := e.gobble(amble, start, ',')
		out = append(out, amble[start:i])
		if i >= len(amble) {
			return out
		}
		start = i + 1
	}
}

// gobble is bash's brace_gobbler: the index of the first byte of w from i
// on that is satisfy at nesting level 0 (for '}', only once a comma or
// ".." was seen at that level), or len(w). Quoted characters are marks
// and so never match. It spends the scan budget; when that is gone it
// finds nothing and sets cut.
func (e *braceWork) gobble(w string, i int, satisfy byte) int {
	level, commas := 0, 1
	if satisfy == '}' {
		commas = 0
	}
	if e.scan -= len(w) - i; e.scan < 0 {
		e.cut = true
		return len(w)
	}
	for ; i < len(w); i++ {
		c := w[i]
		if c == '$' && i+1 < len(w) && w[i+1] == '{' {
			i++
			level++
			continue
		}
		if c == satisfy && level == 0 && commas > 0 {
			// An opening brace at the start of the text with nothing or
			// a closing brace after it is not one ("{}" and "{").
			if c == '{' && i == 0 && (i+1 == len(w) || w[i+1] == '}') {
				continue
			}
			return i
		}
		switch {
		case c == '{':
			level++
		case c == '}' && level > 0:
			level--
		case satisfy == '}' && level == 0 && c == ',':
			commas++
		case satisfy == '}' && level == 0 && c == '.' && i+1 < len(w) && w[i+1] == '.' && (i+2 == len(w) || w[i+2] != '}'):
			commas++
		}
	}
	return len(w)
}

// braceSeq is bash's expand_seqterm: the values of a sequence body
// ("a..e", "1..10..3", "01..10"), at most limit of them; ok is false when
// the body is not a sequence.
func braceSeq(body string, limit int) (values []string, ok bool) {
	lhs, rhs, found := strings.Cut(body, "..")
	if !found || lhs == "" || rhs == "" {
		return nil, false
	}
	const (
		bad = iota
		integer
		char
	)
	lt := bad
	lv, err := strconv.ParseInt(strings.Trim(lhs, " \t\n"), 10, 64)
	if err == nil {
		lt = integer
	} else if len(lhs) == 1 && isAlpha(lhs[0]) {
		lt, lv = char, int64(lhs[0])
	}
	rt, rest := bad, ""
	var rv int64
	switch {
	case isDigit(rhs[0]) || (len(rhs) > 1 && (rhs[0] == '+' || rhs[0] == '-') && isDigit(rhs[1])):
		n := 1
		for n < len(rhs) && isDigit(rhs[n]) {
			n++
		}
		if v, err := strconv.ParseInt(rhs[:n], 10, 64); err == nil {
			rt, rv, rest = integer, v, rhs[n:]
			rhs = rhs[:n]
		}
	case isAlpha(rhs[0]):
		rt, rv, rest, rhs = char, int64(rhs[0]), rhs[1:], rhs[:1]
	}
	incr := int64(1)
	if rest != "" {
		step, ok := strings.CutPrefix(rest, "..")
		v, err := strconv.ParseInt(strings.TrimLeft(step, " \t\n"), 10, 64)
		if !ok || step == "" || err != nil {
			rt = bad
		}
		incr = v
	}
	if lt == bad || lt != rt {
		return nil, false
	}
	if incr == 0 {
		incr = 1
	}
	if incr < 0 {
		incr = -incr
	}
	if lv > rv {
		incr = -incr
	}
	width := 0
	if lt == integer {
		for _, s := range []string{lhs, rhs} {
			if len(s) > 1 && s[0] == '0' || len(s) > 2 && s[0] == '-' && s[1] == '0' {
				width = max(width, len(lhs), len(rhs))
			}
		}
	}
	for n := lv; len(values) < limit; {
		if lt == char {
			values = append(values, string([]byte{byte(n)}))
		} else {
			values = append(values, zeroPadded(n, width))
		}
		next := n + incr
		if incr > 0 && (next < n || next > rv) || incr < 0 && (next > n || next < rv) {
			break
		}
		n = next
	}
	return values, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// zeroPadded formats n in at least width characters, zeros after the
// sign, as bash pads a sequence's values ({01..10}, {-05..5}); the
// starred reading formats many, and fmt costs twice as much.
func zeroPadded(n int64, width int) string {
	v := strconv.FormatInt(n, 10)
	if len(v) >= width {
		return v
	}
	zeros := strings.Repeat("0", width-len(v))
	if v[0] == '-' {
		return "-" + zeros + v[1:]
	}
	return zeros + v
}
