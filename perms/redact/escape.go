package redact

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// EscapeText shows control characters, bidi overrides and ANSI escapes
// escaped, so that what a person reads is exactly what runs. Backslashes
// are doubled, so a literal "\t" never reads like an escaped tab.
func EscapeText(s string) string { return escape(s, true) }

// EscapeJSONText is EscapeText for JSON text, whose own escaping already
// keeps backslashes unambiguous.
func EscapeJSONText(s string) string { return escape(s, false) }

func escape(s string, backslash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && !backslash:
			b.WriteString(`\ufffd`) // JSON has no escape for a byte
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			// Escaped too, so that a literal backslash-n never reads like
			// an escaped newline.
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case !backslash && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (IsInvisibleFormat(r) && r <= 0xffff)):
			// JSON text stays JSON: its own escapes only (a review
			// found \x85 and \U000e0041 in the audit's previews).
			fmt.Fprintf(&b, `\u%04x`, r)
		case !backslash && IsInvisibleFormat(r):
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case IsInvisibleFormat(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case IsInvisibleFormat(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsInvisibleFormat reports characters that can make text read
// differently from what it is: every format character (bidi controls,
// zero-width characters, the soft hyphen, tag characters), line and
// paragraph separators (U+2028/2029 break lines in many text widgets),
// space separators other than the space itself (git<U+2003>status reads
// as two words and runs as one), letters that draw nothing (Hangul
// fillers) and variation selectors.
func IsInvisibleFormat(r rune) bool {
	switch {
	case r < 0xa0:
		return false
	case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs):
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x180e:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, r >= 0x180b && r <= 0x180f:
		return true
	// The combining grapheme joiner and Khmer's invisible vowels draw
	// nothing (./te\u034fst.sh read as ./test.sh); the braille blank draws
	// as a blank.
	case r == 0x034f, r == 0x17b4, r == 0x17b5, r == 0x2800:
		return true
	}
	return false
}

// Bound cuts s to max bytes, saying how many are not shown.
func Bound(s string, max int) string { return BoundOf(s, max, len(s)) }

// BoundOf cuts s to max bytes and says how many of total are not shown.
func BoundOf(s string, max, total int) string {
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… [%d bytes more]", total-cut)
	}
	return s
}
