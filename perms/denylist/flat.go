package denylist

import (
	"regexp"
	"strings"
)

// extglobRe matches bash's extended glob groups, @(a|b) and the like:
// read as "*" when the command turns extglob on.
var extglobRe = regexp.MustCompile(`[@!+*?]\([^()]*\)`)

// readingTexts returns the texts a command is read as: itself, with its
// continued lines joined, and with extended glob groups (@(shadow)) read
// as "*" wherever they appear (whether extglob is on cannot be told from
// the text).
func readingTexts(command string) []string {
	texts := []string{command}
	if strings.Contains(command, "\\\n") {
		texts = append(texts, strings.ReplaceAll(command, "\\\n", ""))
	}
	if extglobRe.MatchString(command) {
		// A group with an alternative that starts with a dot matches
		// dotfiles (~/@(.ssh)): it is read as ".*" too.
		dotted := func(g string) string {
			for alt := range strings.SplitSeq(g[2:len(g)-1], "|") {
				if strings.HasPrefix(alt, ".") {
					return ".*"
				}
			}
			return "*"
		}
		for _, t := range texts {
			plain, dot := t, t
			for range maxExtglobDepth { // nested groups, innermost first
				u := extglobRe.ReplaceAllString(plain, "*")
				v := extglobRe.ReplaceAllStringFunc(dot, dotted)
				if u == plain && v == dot {
					break
				}
				plain, dot = u, v
			}
			texts = append(texts, plain)
			if dot != plain {
				texts = append(texts, dot)
			}
		}
	}
	return texts
}

// maxExtglobDepth bounds the nesting of extended glob groups read.
const maxExtglobDepth = 8

// flatWords splits a command into words the simple way: quotes and
// backslashes group and are removed, and whitespace and the operators
// ; & | ( ) < > as well as = , and ` separate (so --key=~/.ssh/id yields
// ~/.ssh/id). CheckCommand reads a command both this way and with the
// parser: no spelling this one catches may get through a reading that
// the parser's may miss (a text that does not parse).
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
		case strings.IndexByte(" \t\n;&|()<>=,`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words
}
