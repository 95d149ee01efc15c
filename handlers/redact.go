package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Preview bounds: the audit keeps a short preview, the card a longer one.
const (
	previewMax     = 1024
	cardPreviewMax = 8192
)

// secretPatterns match tokens, keys and passwords. Each match keeps its
// first group (the label) and its second, if any, and loses the rest.
// They are compiled on first use: every process pays package init, and
// reapers (hostcore re-executed per command) never redact anything.
//
// A labelled value (password=…, "api_key": "…", SECRET_KEY = '…') is cut
// whole: a quoted one to its closing quote, spaces and escaped quotes
// included; an unquoted one to the next space, quote, '&', ';' or '}'. The
// label may carry words around it (DB_PASS, SECRET_KEY_BASE,
// x-api-key) and its quotes may be escaped (\"password\":\"…\" in a
// curl command inside JSON).
var secretPatterns = sync.OnceValue(func() []*regexp.Regexp {
	const (
		label = secretLabel
		q     = `(?:\\?["'])?` // an optional quote, perhaps escaped
		// "…" with escapes inside; \"…\" (quotes escaped, as in a shell
		// string), to the next \"; '…'; or one unquoted word. A value
		// stops at '$' and '`' outside single quotes: "$(curl … | sh)" is
		// not a secret but something that runs, and it is shown.
		value = `(?:"(?:[^"\\\n$` + "`" + `]|\\.)*"?|\\"(?:[^"\\\n$` + "`" + `]|\\[^"\n])*(?:\\")?|'[^'\n]*'?|[^\s"'&;|}$` + "`" + `]+)`
		// One shell command: options are looked for up to its end.
		sameCommand = `[^\n;&|]*?`
	)
	return append([]*regexp.Regexp{
		// Key blocks, RSA to PGP; one whose END is in another field (an
		// Edit's old and new strings) loses the key lines before its END.
		regexp.MustCompile(`(-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----)[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----|$)`),
		regexp.MustCompile(`()[A-Za-z0-9+/=\r\n]{16,}(-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----)`),
		regexp.MustCompile(`(?i)(authorization` + q + `\s*[:=]\s*` + q + `)(?:bearer\s+|basic\s+|token\s+)?[^\s"',}\\$` + "`" + `]+`),
		regexp.MustCompile(`(?i)((?:set-)?cookie` + q + `\s*[:=]\s*` + q + `)[^"'\n\\$` + "`" + `;|&]+`),
		regexp.MustCompile(`(?i)(\bbearer[ \t]+)[A-Za-z0-9._~+/=-]{12,}`),
		regexp.MustCompile(`(?i)(\b(?:[a-z0-9]+[_-])*` + label + `(?:[_-][a-z0-9]+)*` + q + `\s*[:=]\s*)` + value),
		// The longer labels glued into a camelCase or run-together name
		// (accessToken, userPassword, PGPASSWORD, _authToken, secretKey):
		// any letters before them, and after them words that start with a
		// capital or a separator (tokenizer is no label).
		regexp.MustCompile(`(\b[A-Za-z0-9_]*(?i:password|passwd|passphrase|token|secret|credentials?)(?:[_-][A-Za-z0-9]+|[A-Z][a-z0-9]*)*` + q + `\s*[:=]\s*)` + value),
		// An AWS secret key standing after its key id, unlabelled.
		regexp.MustCompile(`(\b(?:AKIA|ASIA)[0-9A-Z]{16}["']?[\s:=,;|]+["']?)[A-Za-z0-9/+]{40}([^A-Za-z0-9/+=]|$)`),
		// Options that take the secret as the next word.
		regexp.MustCompile(`(?i)(--(?:[a-z0-9]+-)*` + label + `(?:-[a-z0-9]+)*[ =]\s*)` + value),
		regexp.MustCompile(`(?i)(\b(?:aws_)?secret_access_key\s+)[^\s"'$` + "`" + `;|&]+`),
		regexp.MustCompile(`(\bsshpass[ \t]+-p[ \t]*)[^\s"'$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\blogin\b` + sameCommand + `[ \t]-p[ \t]*)[^\s"'$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\bcurl\b` + sameCommand + `[ \t](?:-u|--user)[ \t]*[^\s:'"]+:)[^\s'"$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\bmysql(?:dump|admin)?\b` + sameCommand + `[ \t]-p)[^\s"'$` + "`" + `;|&()<>]+`),
		// A URL's password, the user's name empty or not (redis://:pw@h).
		regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/;&|()<>$` + "`" + `'"]+(@)`),
	}, tokenPatterns()...)
})

// secretLabel is a word that names a secret.
const secretLabel = `(?:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|encryption[_-]?key|signing[_-]?key|client[_-]?secret|credentials?)`

// tokenShapes are secrets of a known shape: one word each, with a
// distinctive prefix.
var tokenShapes = []string{
	`(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`,
	`github_pat_[A-Za-z0-9_]{20,}`,
	`glpat-[A-Za-z0-9_-]{20,}`,
	`sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}`,
	`(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`,
	`(?:AKIA|ASIA)[0-9A-Z]{16}`,
	`xox[abprs]-[A-Za-z0-9-]{10,}`,
	`AIza[0-9A-Za-z_-]{35}`,
	`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`,
	`hf_[A-Za-z0-9]{30,}`,
	`npm_[A-Za-z0-9]{36}`,
}

// tokenPatterns find the token shapes wherever they are (the audit's and
// the log's redaction): a token starts the text or follows a character
// that cannot be part of a word it would end (ta-sk-, netwo-rk_test_);
// '_' may come before it (X_ghp_…).
func tokenPatterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, shape := range tokenShapes {
		out = append(out, regexp.MustCompile(`(^|[^A-Za-z0-9-])`+shape))
	}
	return out
}

// cardPatterns are the patterns for text a person approves (the card):
// there, what is hidden must never change what the text does, and the
// reviews showed that a redactor that reads labels cannot promise that.
// It took `"password": "'` for the start of a quoted value and hid the
// commands up to the next quote; a blank after `TOKEN=` let it hide the
// next word; a value glued to its label can still be a path, a program
// or a host (`pass=/../../.bashrc`, `X_TOKEN=rm; $X_TOKEN -f x`), and a
// greedy URL password swallowed the real host (`http://ci:x@127.0.0.1/
// @github.com/…` showed github.com).
//
// So a card hides only what has the shape of a secret and nothing else:
// a token with a known prefix (ghp_, sk-, AKIA, a JWT, …) standing as a
// word of its own or glued after '=', ':' or a quote, never after '/' or
// '.' (a file named like a token is a file) and never followed by more of
// a word ('.sh'); a URL's password, which holds no '@', '/' or ':' (they
// would be escaped in a real one); and, outside Bash, the lines of a
// complete private key block (redactKeyBlocks). Passwords under a label
// (password=…, --password …, Authorization: Bearer …) are shown: the
// card is shown to the user whose secret it is, and the audit and the
// log, which nobody approves anything from, keep the broad patterns.
var cardPatterns = sync.OnceValue(func() []*regexp.Regexp {
	const (
		before = `(^|[\s=:"'(,\[{])`
		after  = `($|[\s"',;)\]}&|@])`
	)
	var out []*regexp.Regexp
	for _, shape := range tokenShapes {
		out = append(out, regexp.MustCompile(before+shape+after))
	}
	return append(out, regexp.MustCompile(`(://[^/\s:@]+:)[^@/:\s"'\\;&|()<>$`+"`"+`{}*?\[~]+(@)`))
})

// secretHints are literals every secret pattern needs, lower-cased (for
// the ghp_ family, its "gh"; "key" covers api keys, access keys and private
// key blocks). ASCII text holding none of them cannot match any pattern,
// and it is most of what is redacted: paths, patterns, short commands.
var secretHints = [][]byte{[]byte("key"), []byte("authorization"), []byte("pass"), []byte("pwd"), []byte("secret"), []byte("token"),
	[]byte("cred"), []byte("cookie"), []byte("bearer"), []byte("login"), []byte("curl"), []byte("mysql"),
	[]byte("gh"), []byte("github_pat_"), []byte("glpat-"), []byte("sk-"), []byte("_live_"), []byte("_test_"), []byte("akia"), []byte("asia"),
	[]byte("xox"), []byte("aiza"), []byte("eyj"), []byte("hf_"), []byte("npm_"), []byte("://")}

// mayHoldSecret reports whether Redact must run its patterns on s. Text
// that is not ASCII always must: case-insensitive patterns fold some
// letters to non-ASCII ones (k to the Kelvin sign, s to long s).
func mayHoldSecret(s string) bool {
	// Previews are short: lower-case them on the stack.
	var small [256]byte
	lower := small[:0]
	if len(s) > len(small) {
		lower = make([]byte, 0, len(s))
	}
	lower = lower[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return true
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, h := range secretHints {
		if bytes.Contains(lower, h) {
			return true
		}
	}
	return false
}

// Redact replaces secrets in s with [REDACTED].
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redactAll(s)
}

// redactCard is Redact for what a file gets, shown on a card: secrets by
// their shape (redactTokens) and the lines of complete key blocks.
func redactCard(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redactKeyBlocks(redactTokens(s))
}

// redactTokens hides what has a secret's shape (cardPatterns), never a
// word that could be something else: a file's text may be a script.
func redactTokens(s string) string {
	// Twice: a match takes the character after its token, which the next
	// token, one blank on, needs before it.
	return redactWith(redactWith(s, cardPatterns()), cardPatterns())
}

// redactAll runs every pattern.
func redactAll(s string) string { return redactWith(s, secretPatterns()) }

func redactWith(s string, patterns []*regexp.Regexp) string {
	for _, re := range patterns {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			tail := ""
			if len(sub) > 2 {
				tail = sub[2]
			}
			return sub[1] + "[REDACTED]" + tail
		})
	}
	return s
}

// keyBlock is a complete private key block, its markers at the start of
// their lines, every line between them base64 (an Edit card's diff lines
// may start with ' ', '-' or '+').
var keyBlock = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ +-]?-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----\r?\n((?:[ +-]?[A-Za-z0-9+/=]+\r?\n)+)[ +-]?-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----`)
})

// keyBlockBegin and keyBlockEnd are keyBlock's marker lines (with the line
// break after a BEGIN), for a text cut short (openKeyBlock).
var (
	keyBlockBegin = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ +-]?-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----\r?(\n|$)`)
	})
	keyBlockEnd = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ +-]?-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----`)
	})
)

// redactKeyBlocks hides the key data of complete private key blocks on a
// Write or Edit card line by line, each line [REDACTED] after its diff
// prefix, the markers shown. Anything else in a block (a header, a line
// that is not base64) leaves the block shown whole; a command never loses
// a block's lines (in bash each is a command: PATH=/a/b… is base64 too).
func redactKeyBlocks(s string) string {
	return keyBlock().ReplaceAllStringFunc(s, func(m string) string {
		lines := strings.Split(m, "\n")
		for i := 1; i < len(lines)-1; i++ {
			l := lines[i]
			prefix := ""
			if l != "" && strings.IndexByte(" -+", l[0]) >= 0 && len(lines[0]) > 0 && strings.IndexByte(" -+", lines[0][0]) >= 0 {
				prefix = l[:1]
			}
			cr := ""
			if strings.HasSuffix(l, "\r") {
				cr = "\r"
			}
			lines[i] = prefix + "[REDACTED]" + cr
		}
		return strings.Join(lines, "\n")
	})
}

// escapeText shows control characters, bidi overrides and ANSI escapes
// escaped, so that what a person reads is exactly what runs. Backslashes
// are doubled, so a literal "\t" never reads like an escaped tab.
func escapeText(s string) string { return escape(s, true) }

// escapeJSONText is escapeText for JSON text, whose own escaping already
// keeps backslashes unambiguous.
func escapeJSONText(s string) string { return escape(s, false) }

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
		case !backslash && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (isInvisibleFormat(r) && r <= 0xffff)):
			// JSON text stays JSON: its own escapes only (a review
			// found \x85 and \U000e0041 in the audit's previews).
			fmt.Fprintf(&b, `\u%04x`, r)
		case !backslash && isInvisibleFormat(r):
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isInvisibleFormat(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case isInvisibleFormat(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isInvisibleFormat reports characters that can make text read
// differently from what it is: every format character (bidi controls,
// zero-width characters, the soft hyphen, tag characters), line and
// paragraph separators (U+2028/2029 break lines in many text widgets),
// letters that draw nothing (Hangul fillers) and variation selectors.
func isInvisibleFormat(r rune) bool {
	switch {
	case r < 0xa0:
		return false
	case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x180e:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef, r >= 0x180b && r <= 0x180f:
		return true
	// The combining grapheme joiner and Khmer's invisible vowels draw
	// nothing (./te\u034fst.sh read as ./test.sh); the braille blank and
	// the ideographic space draw as blanks.
	case r == 0x034f, r == 0x17b4, r == 0x17b5, r == 0x2800, r == 0x3000:
		return true
	}
	return false
}

// preview is redacted, escaped and bounded text.
func preview(s string, max int) string { return bound(escapeText(Redact(s)), max) }

// previewJSON is preview for JSON text (the canonical args). Secrets are
// redacted in each decoded string, key or value, where quotes are quotes
// (in the encoded text every '"' is '\"' and the patterns would stop
// short), and a value under a key that names a secret goes whole; then
// the value is encoded again, so that the preview is JSON. (A pass over
// the encoded text as a whole, once here for secrets spanning a key and
// its value, broke it: {"password":[REDACTED]}, and a key block without
// its END ran to the end of the text.)
func previewJSON(s string, max int) string { return previewJSONWith(s, max, Redact, true) }

// previewJSONWith is previewJSON with the given redaction of each string;
// labels: a value under a key that names a secret is hidden whole (the
// audit's rule; a card hides only what has a secret's shape).
func previewJSONWith(s string, max int, redact func(string) string, labels bool) string {
	var r string
	if len(s) <= max+previewSlack && !mayHoldSecret(s) && !tooManyValues(s) && json.Valid([]byte(s)) {
		// ASCII text with no hint of a secret cannot hold one, in its
		// strings or as a whole (the hints hold no character JSON
		// escapes), and nothing in it is long enough to cut: decoding,
		// redacting and encoding it again would give it back as it is
		// (most calls' args: a path, a pattern, a short command).
		r = escapeJSONText(s)
	} else {
		r = escapeJSONText(redactJSON(s, max+previewSlack, redact, labels))
	}
	if len(r) > max && len(s) > len(r) {
		// Long strings were cut before redaction: say how much the whole
		// text had, not what was left of it.
		return boundOf(r, max, len(s))
	}
	return bound(r, max)
}

// previewSlack is how much of a long string value is redacted beyond what
// a preview can show: a secret that starts inside the preview and runs
// past its end must still be whole to be recognised.
const previewSlack = 64 << 10

// redactJSON redacts the strings of JSON text, each cut to keep bytes first
// (the preview shows at most that many): a megabyte of Write content is
// not run through every pattern for a preview of a few hundred bytes.
func redactJSON(s string, keep int, redact func(string) string, labels bool) string {
	// Args that cannot be decoded (too many values) are not shown: their
	// text holds strings still escaped (\u0073k-…), which the patterns
	// cannot see through.
	if tooManyValues(s) {
		return fmt.Sprintf("[%d bytes of arguments, more than %d JSON values: not shown]", len(s), maxArgValues)
	}
	v, err := decodeAny(json.RawMessage(s))
	if err != nil {
		return fmt.Sprintf("[%d bytes of arguments that are not valid JSON: not shown]", len(s))
	}
	// The strings are redacted in the order they appear (an object's
	// members by key, key before value), and a secret whose marker is in
	// the string before is hidden too: the lines of a key block after a
	// string holding its BEGIN up to the one holding its END, and an AWS
	// secret key in the string after its key id (["-----BEGIN …",
	// "MIIE…", "-----END …"] and {"AKIA…": "wJal…"} showed them, a
	// review found).
	inKey, afterID := false, false
	str := func(x string, key bool) string {
		if len(x) > keep {
			x = x[:keep]
		}
		r := redact(x)
		switch {
		case inKey && !keyEnd.MatchString(x):
			r = "[REDACTED]"
		case afterID && awsSecret.MatchString(x):
			r = "[REDACTED]"
		}
		if strings.Contains(x, "-----") {
			inKey = openBlockAfter(x, inKey)
		}
		// A key between an id and its secret ({"id": "AKIA…", "key":
		// "wJal…"}) does not part them.
		id := (strings.Contains(x, "AKIA") || strings.Contains(x, "ASIA")) && awsKeyID.MatchString(x)
		afterID = id || (key && afterID)
		return r
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			return str(x, false)
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := make(map[string]any, len(x))
			for _, k := range keys {
				val := x[k]
				rk := str(k, true)
				// Keys that redact alike stay apart.
				for n, base := 2, rk; ; n++ {
					if _, taken := out[rk]; !taken {
						break
					}
					rk = fmt.Sprintf("%s (%d)", base, n)
				}
				if _, isBool := val.(bool); labels && val != nil && !isBool && secretKey(k) {
					out[rk] = "[REDACTED]"
					walk(val) // for what it says of the strings after it
					continue
				}
				out[rk] = walk(val)
			}
			return out
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return x
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(walk(v)); err != nil {
		return fmt.Sprintf("[%d bytes of arguments: not shown]", len(s))
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// secretKey says whether an object's key names a secret (password,
// api_key, accessToken): the label patterns hide a value given after it.
// A label is short: a longer key is no label (and redacting a megabyte
// key again here doubled the work a review timed at seconds).
func secretKey(k string) bool {
	return len(k) <= 256 && mayHoldSecret(k) && !strings.HasSuffix(redactAll(k+"=v"), "=v")
}

// Markers of secrets that span the strings of JSON args (redactJSON).
var (
	keyMarker = regexp.MustCompile(`-----(BEGIN|END) [A-Z ]*PRIVATE KEY[A-Z ]*-----`)
	keyEnd    = regexp.MustCompile(`-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----`)
	awsKeyID  = regexp.MustCompile(`(?:AKIA|ASIA)[0-9A-Z]{16}["']?[\s:=,;|]*$`)
	awsSecret = regexp.MustCompile(`^\s*[A-Za-z0-9/+]{40}(?:[^A-Za-z0-9/+=]|$)`)
)

// openBlockAfter says whether a key block is still open after s, open
// saying whether one was before it: its last marker is a BEGIN, or it
// has none and one was.
func openBlockAfter(s string, open bool) bool {
	for _, m := range keyMarker.FindAllStringSubmatch(s, -1) {
		open = m[1] == "BEGIN"
	}
	return open
}

func bound(s string, max int) string { return boundOf(s, max, len(s)) }

// boundOf cuts s to max bytes and says how many of total are not shown.
func boundOf(s string, max, total int) string {
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… [%d bytes more]", total-cut)
	}
	return s
}

// canonicalJSON re-encodes a JSON value with sorted keys and exact numbers,
// so that equal args hash equal.
func canonicalJSON(raw json.RawMessage) []byte {
	if tooManyValues(raw) {
		return raw // refused unread; its hash is that of the text as sent
	}
	v, err := decodeAny(raw)
	if err != nil {
		return raw
	}
	return canonicalValue(v, raw)
}

// canonicalValue is canonicalJSON for a value decodeAny produced from raw.
func canonicalValue(v any, raw json.RawMessage) []byte {
	if out, ok := appendCanonical(nil, v); ok {
		return out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// appendCanonical writes what a json.Encoder without HTML escaping writes
// for a value decodeAny produced (objects with their keys sorted, numbers
// as written), without reflection: every call's args are hashed this way.
// false: a value of another kind, left to the Encoder.
func appendCanonical(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return appendJSONText(dst, v), true
	case json.Number:
		if !isJSONNumber(string(v)) {
			return nil, false
		}
		return append(dst, v...), true
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendCanonical(dst, x); !ok {
				return nil, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendJSONText(dst, k), ':')
			var ok bool
			if dst, ok = appendCanonical(dst, v[k]); !ok {
				return nil, false
			}
		}
		return append(dst, '}'), true
	}
	return nil, false
}

// isJSONNumber says whether s is a number as JSON writes one (what the
// Encoder checks a json.Number against).
func isJSONNumber(s string) bool {
	return s != "" && json.Valid([]byte(s)) && (s[0] == '-' || s[0] >= '0' && s[0] <= '9')
}
