package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// lineMatcher finds matching lines in a buffer of whole lines. Matchers never
// run per line over the whole input: literals are searched over the buffer
// with bytes.Index (SIMD in the runtime) and a line is delimited only around
// a hit; regular expressions are gated by a required literal when they have
// one, otherwise run over the buffer in multi-line mode.
type lineMatcher interface {
	// next returns the bounds [ls, le) of the first matching line starting at
	// or after from, which must be a line start. le indexes the line's '\n'
	// or is len(data) for an unterminated last line.
	next(data []byte, from int) (ls, le int, ok bool)
	// index returns the offset of the first match inside one line (for the
	// display window of a long line), or -1.
	index(line []byte) int
}

// compileMatcher builds the matcher for a Grep pattern. Patterns are RE2
// (Go regexp); a pattern whose parse tree is a single literal takes the
// literal path whether or not it was written with escapes.
func compileMatcher(pattern string, ignoreCase bool) (lineMatcher, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	tree = tree.Simplify()
	switch tree.Op {
	case syntax.OpEmptyMatch:
		return &litMatcher{}, nil
	case syntax.OpLiteral:
		lit := []byte(string(tree.Rune))
		if bytes.IndexByte(lit, '\n') < 0 {
			if tree.Flags&syntax.FoldCase == 0 {
				return &litMatcher{lit: lit}, nil
			}
			if f, ok := newFoldLit(lit); ok {
				return &foldMatcher{f}, nil
			}
		}
	}
	src := pattern
	if ignoreCase {
		src = "(?i)" + src
	}
	// line runs on one line at a time: without (?m), "^" anchors the whole
	// input, so regexp rejects a line after one position instead of trying
	// every offset. buf runs over many lines and needs (?m).
	line, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	buf, err := regexp.Compile("(?m)" + src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	m := &regexMatcher{line: line, buf: buf}
	if lit, fold, ok := requiredLiteral(tree); ok {
		if !fold {
			m.pre = &litMatcher{lit: lit}
		} else if f, ok := newFoldLit(lit); ok {
			m.pre = &foldMatcher{f}
		}
	}
	return m, nil
}

// lineAround returns the bounds of the line holding offset p; from is a line
// start at or before p.
func lineAround(data []byte, from, p int) (int, int) {
	ls := from + bytes.LastIndexByte(data[from:p], '\n') + 1
	le := bytes.IndexByte(data[p:], '\n')
	if le < 0 {
		return ls, len(data)
	}
	return ls, p + le
}

// litMatcher is a case-sensitive literal without '\n'.
type litMatcher struct{ lit []byte }

func (m *litMatcher) next(data []byte, from int) (int, int, bool) {
	if from >= len(data) {
		return 0, 0, false
	}
	i := bytes.Index(data[from:], m.lit)
	if i < 0 {
		return 0, 0, false
	}
	ls, le := lineAround(data, from, from+i)
	return ls, le, true
}

func (m *litMatcher) index(line []byte) int { return bytes.Index(line, m.lit) }

// foldLit is an ASCII case-insensitive literal. The scan looks for the
// pattern's rarest byte in both cases with two IndexByte cursors (both
// vectorised) and verifies around each candidate.
type foldLit struct {
	pat    []byte // lower-cased
	rare   int    // offset of the rarest byte in pat
	lo, up byte
}

func newFoldLit(lit []byte) (*foldLit, bool) {
	for _, c := range lit {
		// Non-ASCII needs Unicode folding; the regexp path handles it.
		// Known difference: ASCII 'k' and 's' also fold to the Kelvin sign
		// (U+212A) and long s (U+017F) in ripgrep and Go regexp; this ASCII
		// scan does not match those two runes.
		if c >= utf8.RuneSelf || c == '\n' {
			return nil, false
		}
	}
	f := &foldLit{pat: bytes.ToLower(lit)}
	best := 1 << 30
	for i, c := range f.pat {
		fr := byteFreq[c]
		if u := upper(c); u != c {
			fr += byteFreq[u]
		}
		if fr < best {
			best, f.rare = fr, i
		}
	}
	if len(f.pat) > 0 {
		f.lo = f.pat[f.rare]
		f.up = upper(f.lo)
	}
	return f, true
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 32
	}
	return c
}

func (f *foldLit) index(h []byte) int {
	n := len(f.pat)
	if n == 0 {
		return 0
	}
	if len(h) < n {
		return -1
	}
	limit := len(h) - n + f.rare + 1 // candidates for the rare byte lie in [rare, limit)
	i := f.rare
	if f.lo == f.up {
		for i < limit {
			j := bytes.IndexByte(h[i:limit], f.lo)
			if j < 0 {
				return -1
			}
			s := i + j - f.rare
			if equalFold(h[s:s+n], f.pat) {
				return s
			}
			i += j + 1
		}
		return -1
	}
	nlo, nup := -1, -1 // next candidate of each case at or after i; limit = none
	for i < limit {
		if nlo < i {
			if j := bytes.IndexByte(h[i:limit], f.lo); j >= 0 {
				nlo = i + j
			} else {
				nlo = limit
			}
		}
		if nup < i {
			if j := bytes.IndexByte(h[i:limit], f.up); j >= 0 {
				nup = i + j
			} else {
				nup = limit
			}
		}
		q := min(nlo, nup)
		if q >= limit {
			return -1
		}
		s := q - f.rare
		if equalFold(h[s:s+n], f.pat) {
			return s
		}
		i = q + 1
	}
	return -1
}

// equalFold reports whether a equals the lower-case ASCII pattern lower,
// ignoring ASCII case.
func equalFold(a, lower []byte) bool {
	for i, c := range a {
		if 'A' <= c && c <= 'Z' {
			c += 32
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

type foldMatcher struct{ f *foldLit }

func (m *foldMatcher) next(data []byte, from int) (int, int, bool) {
	if from >= len(data) {
		return 0, 0, false
	}
	i := m.f.index(data[from:])
	if i < 0 {
		return 0, 0, false
	}
	ls, le := lineAround(data, from, from+i)
	return ls, le, true
}

func (m *foldMatcher) index(line []byte) int { return m.f.index(line) }

// regexMatcher runs a Go regexp compiled in multi-line mode. With a required
// literal (pre) only the lines holding it are given to the regexp. Without
// one the regexp runs over the whole buffer; a match that crosses a newline
// (possible with classes such as \s) is re-checked on its first line alone,
// because matches are per line as in ripgrep.
type regexMatcher struct {
	line, buf *regexp.Regexp
	pre       lineMatcher
}

func (m *regexMatcher) next(data []byte, from int) (int, int, bool) {
	for from < len(data) {
		if m.pre != nil {
			ls, le, ok := m.pre.next(data, from)
			if !ok {
				return 0, 0, false
			}
			if m.line.Match(data[ls:le]) {
				return ls, le, true
			}
			from = le + 1
			continue
		}
		loc := m.buf.FindIndex(data[from:])
		if loc == nil {
			return 0, 0, false
		}
		s, e := from+loc[0], from+loc[1]
		if s >= len(data) && (len(data) == 0 || data[len(data)-1] == '\n') {
			return 0, 0, false // empty match after the final newline: no line there
		}
		ls, le := lineAround(data, from, s)
		if e <= le || m.line.Match(data[ls:le]) {
			return ls, le, true
		}
		from = le + 1
	}
	return 0, 0, false
}

func (m *regexMatcher) index(line []byte) int {
	if loc := m.line.FindIndex(line); loc != nil {
		return loc[0]
	}
	return -1
}

// requiredLiteral returns a literal that every match must contain, the
// rarest one by byteFreq when there are several, and whether it folds case.
func requiredLiteral(re *syntax.Regexp) (lit []byte, fold bool, ok bool) {
	best := -1
	var visit func(re *syntax.Regexp)
	consider := func(r *syntax.Regexp) {
		b := []byte(string(r.Rune))
		if len(b) == 0 || bytes.IndexByte(b, '\n') >= 0 {
			return
		}
		f := r.Flags&syntax.FoldCase != 0
		if s := literalScore(b, f); s > best {
			best, lit, fold, ok = s, b, f, true
		}
	}
	visit = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			consider(r)
		case syntax.OpConcat:
			for _, s := range r.Sub {
				visit(s)
			}
		case syntax.OpCapture, syntax.OpPlus:
			visit(r.Sub[0])
		case syntax.OpRepeat:
			if r.Min >= 1 {
				visit(r.Sub[0])
			}
		}
	}
	visit(re)
	return lit, fold, ok
}

// literalScore ranks a prefilter literal: the rarer its rarest byte and the
// longer it is, the fewer false candidates it yields.
func literalScore(b []byte, fold bool) int {
	rarest := 1 << 20
	for _, c := range b {
		fr := byteFreq[c]
		if fold {
			if 'a' <= c && c <= 'z' {
				fr += byteFreq[c-32]
			} else if 'A' <= c && c <= 'Z' {
				fr += byteFreq[c+32]
			}
		}
		rarest = min(rarest, fr)
	}
	return (1000-min(rarest, 999))*64 + min(len(b), 63)
}

// byteFreq approximates how common each byte is in source code and text
// (per ten thousand); unlisted bytes count as rare.
var byteFreq = func() [256]int {
	var t [256]int
	for i := range t {
		t[i] = 1
	}
	common := map[byte]int{
		' ': 1500, '\n': 300, '\t': 300, 'e': 700, 't': 550, 'r': 450, 'n': 420,
		'i': 420, 'a': 420, 'o': 400, 's': 380, 'c': 240, 'l': 260, 'd': 220,
		'u': 180, 'p': 150, 'm': 140, 'f': 150, 'h': 140, 'g': 110, 'b': 90,
		'y': 70, 'v': 70, 'w': 60, 'k': 40, 'x': 40, 'j': 10, 'q': 10, 'z': 10,
		'.': 150, ',': 120, '(': 130, ')': 130, '"': 90, '=': 80, ';': 40,
		'/': 90, '*': 40, '_': 60, '-': 50, ':': 60, '{': 40, '}': 40,
		'[': 30, ']': 30, '<': 20, '>': 30, '\'': 20, '&': 15, '|': 10,
		'+': 15, '!': 10, '#': 10, '%': 8, '$': 5, '\\': 10, '@': 5,
		'0': 80, '1': 60, '2': 40, '3': 30, '4': 25, '5': 25, '6': 20,
		'7': 15, '8': 15, '9': 15, '\r': 5,
	}
	for c, f := range common {
		t[c] = f
	}
	for c := byte('A'); c <= 'Z'; c++ {
		t[c] = max(t[c+32]/5, 3)
	}
	return t
}()
