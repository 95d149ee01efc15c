package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
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
		// Options that take the secret as the next word.
		regexp.MustCompile(`(?i)(--(?:[a-z0-9]+-)*` + label + `(?:-[a-z0-9]+)*[ =]\s*)` + value),
		regexp.MustCompile(`(?i)(\b(?:aws_)?secret_access_key\s+)[^\s"'$` + "`" + `;|&]+`),
		regexp.MustCompile(`(\bsshpass[ \t]+-p[ \t]*)[^\s"'$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\blogin\b` + sameCommand + `[ \t]-p[ \t]*)[^\s"'$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\bcurl\b` + sameCommand + `[ \t](?:-u|--user)[ \t]*[^\s:'"]+:)[^\s'"$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(\bmysql(?:dump|admin)?\b` + sameCommand + `[ \t]-p)[^\s"'$` + "`" + `;|&()<>]+`),
		regexp.MustCompile(`(://[^/\s:@]+:)[^@\s/;&|()<>$` + "`" + `'"]+(@)`),
	}, tokenPatterns()...)
})

// secretLabel is a word that names a secret.
const secretLabel = `(?:password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|encryption[_-]?key|signing[_-]?key|client[_-]?secret|credentials?)`

// tokenPatterns are secrets of a known shape, found wherever they are: a
// token starts the text or follows a character that cannot be part of a
// word it would end (ta-sk-, netwo-rk_test_); '_' may come before it
// (X_ghp_…). Each is one word with a distinctive prefix.
func tokenPatterns() []*regexp.Regexp {
	const start = `(^|[^A-Za-z0-9-])`
	return []*regexp.Regexp{
		regexp.MustCompile(start + `(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`),
		regexp.MustCompile(start + `github_pat_[A-Za-z0-9_]{20,}`),
		regexp.MustCompile(start + `glpat-[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(start + `sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}`),
		regexp.MustCompile(start + `(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`),
		regexp.MustCompile(start + `(?:AKIA|ASIA)[0-9A-Z]{16}`),
		regexp.MustCompile(start + `xox[abprs]-[A-Za-z0-9-]{10,}`),
		regexp.MustCompile(start + `AIza[0-9A-Za-z_-]{35}`),
		regexp.MustCompile(start + `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`),
	}
}

// cardPatterns are the patterns for text a person approves (the card):
// there, what is hidden must never change what the text does. The broad
// patterns took `"password": "'` for the start of a quoted value and hid
// the commands up to the next quote, which then ran once the card was
// approved; a blank after `TOKEN=` or `--password` let them hide the next
// word of the command (`TOKEN= rm -rf x`, `--password -o ~/.bashrc`).
//
// On a card a hidden value is one word glued to its label (password=x,
// "password":"x", --password=x, user:pass@, -pPASS), or a double-quoted
// word after a JSON-style quoted label ("password": "x"); the word holds
// nothing that can end a shell word or command or that bash expands (no
// blank, quote, backslash, ; & | ( ) < > $ ` { } * ? [ ~) and does not
// start with '-'. Its quotes stay around [REDACTED]. Secrets a blank
// parts from their label (Authorization: Bearer x, --password x,
// sshpass -p x) are hidden only when they have a known token shape. A
// key block loses only its lines of key data (redactKeyLines). The audit
// and the log, which nobody approves anything from, keep the broad
// patterns.
var cardPatterns = sync.OnceValue(func() []*regexp.Regexp {
	const (
		word  = `[^-\s"'\\&;|}{$` + "`" + `()<>*?\[~][^\s"'\\&;|}{$` + "`" + `()<>*?\[~]*`
		glued = `(?:\\?["'])?` + word + `(?:\\?["'])?`
		named = `(?i)(\b(?:[a-z0-9]+[_-])*` + secretLabel + `(?:[_-][a-z0-9]+)*`
	)
	return append([]*regexp.Regexp{
		regexp.MustCompile(named + `(?:\\?["'])?[:=])` + glued),
		regexp.MustCompile(named + `\\?"[ \t]*:[ \t]*)` + `\\?"` + word + `(?:\\?")?`),
		regexp.MustCompile(`(?i)(--(?:[a-z0-9]+-)*` + secretLabel + `(?:-[a-z0-9]+)*=)` + glued),
		regexp.MustCompile(`(?i)(authorization(?:\\?["'])?[:=])` + glued),
		regexp.MustCompile(`(?i)((?:set-)?cookie(?:\\?["'])?[:=])` + glued),
		regexp.MustCompile(`(\bcurl\b[^\n;&|]*?[ \t](?:-u|--user)[ \t]*[^\s:'"]+:)` + word),
		regexp.MustCompile(`(\bmysql(?:dump|admin)?\b[^\n;&|]*?[ \t]-p)` + word),
		regexp.MustCompile(`(://[^/\s:@]+:)` + word + `(@)`),
	}, tokenPatterns()...)
})

// secretHints are literals every secret pattern needs, lower-cased (for
// the ghp_ family, its "gh"; "key" covers api keys, access keys and private
// key blocks). ASCII text holding none of them cannot match any pattern,
// and it is most of what is redacted: paths, patterns, short commands.
var secretHints = [][]byte{[]byte("key"), []byte("authorization"), []byte("pass"), []byte("pwd"), []byte("secret"), []byte("token"),
	[]byte("cred"), []byte("cookie"), []byte("bearer"), []byte("login"), []byte("curl"), []byte("mysql"),
	[]byte("gh"), []byte("github_pat_"), []byte("glpat-"), []byte("sk-"), []byte("_live_"), []byte("_test_"), []byte("akia"), []byte("asia"),
	[]byte("xox"), []byte("aiza"), []byte("eyj"), []byte("://")}

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

// redactCard is Redact for what a person approves (cardPatterns).
func redactCard(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redactKeyLines(redactWith(s, cardPatterns(), true))
}

// redactAll runs every pattern.
func redactAll(s string) string { return redactWith(s, secretPatterns(), false) }

func redactWith(s string, patterns []*regexp.Regexp, keepQuotes bool) string {
	for _, re := range patterns {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			tail := ""
			if len(sub) > 2 {
				tail = sub[2]
			}
			open, close := "", ""
			if keepQuotes {
				// A value's quotes stay, so the card shows where its
				// string ends and the command goes on.
				val := m[len(sub[1]) : len(m)-len(tail)]
				body := strings.TrimLeft(val, `\"'`)
				open = val[:len(val)-len(body)]
				close = body[len(strings.TrimRight(body, `\"'`)):]
			}
			return sub[1] + open + "[REDACTED]" + close + tail
		})
	}
	return s
}

// keyMarker finds the lines of a private key block (or the part of one
// before its END, when the BEGIN is in another field).
var keyMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-----(BEGIN|END) [A-Z ]*PRIVATE KEY[A-Z ]*-----`)
})

// keyLine is one line of key data: 60 or more base64 characters (PEM
// lines have 64, OpenSSH's 70), with nothing else on the line.
var keyLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9+/=]{60,}$`)
})

// redactKeyLines hides the key data of private key blocks on a card line
// by line: each line of key data becomes [REDACTED], and every other line
// (the markers, headers, anything that is not key data) stays as it is,
// so no command inside or around a block can be hidden. A last, shorter
// line of key data is shown (at most 59 characters of the key's end).
func redactKeyLines(s string) string {
	marks := keyMarker().FindAllStringSubmatchIndex(s, -1)
	if len(marks) == 0 {
		return s
	}
	var b strings.Builder
	prev := 0
	region := func(from, to int) {
		lines := strings.Split(s[from:to], "\n")
		for i, l := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			body := strings.TrimSuffix(l, "\r")
			// A line of an Edit card's diff keeps its ' ', '-' or '+'.
			prefix := ""
			if body != "" && strings.IndexByte(" -+", body[0]) >= 0 && keyLine().MatchString(body[1:]) {
				prefix, body = body[:1], body[1:]
			}
			if keyLine().MatchString(body) {
				b.WriteString(prefix + "[REDACTED]" + l[len(prefix)+len(body):])
				continue
			}
			b.WriteString(l)
		}
	}
	inBlock := false
	for _, m := range marks {
		begin := s[m[2]:m[3]] == "BEGIN"
		if inBlock || !begin {
			// The lines since the BEGIN (or, for an END without one, since
			// the start) are key data.
			region(prev, m[0])
		} else {
			b.WriteString(s[prev:m[0]])
		}
		b.WriteString(s[m[0]:m[1]])
		prev, inBlock = m[1], begin
	}
	if inBlock {
		region(prev, len(s))
	} else {
		b.WriteString(s[prev:])
	}
	return b.String()
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
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return false
}

// preview is redacted, escaped and bounded text.
func preview(s string, max int) string { return bound(escapeText(Redact(s)), max) }

// cardText is preview for a card (redactCard).
func cardText(s string, max int) string { return bound(escapeText(redactCard(s)), max) }

// previewJSON is preview for JSON text (the canonical args). Secrets are
// redacted in each decoded string value, where quotes are quotes (in the
// encoded text every '"' is '\"' and the patterns would stop short); then
// the value is encoded again.
func previewJSON(s string, max int) string { return previewJSONWith(s, max, Redact) }

// previewJSONWith is previewJSON with the given redaction.
func previewJSONWith(s string, max int, redact func(string) string) string {
	r := escapeJSONText(redactJSON(s, max+previewSlack, redact))
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
func redactJSON(s string, keep int, redact func(string) string) string {
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
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if len(x) > keep {
				x = x[:keep]
			}
			return redact(x)
		case map[string]any:
			for k, val := range x {
				x[k] = walk(val)
			}
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
		return redact(s)
	}
	// A secret can also sit in a key, or span the whole encoded value.
	return redact(string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
