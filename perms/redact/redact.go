// Package redact hides secrets and shows what text does: it is what the
// audit, the log and a permission card show of a call's arguments. Redact
// hides what looks like a secret anywhere (the audit and the log, which no
// one approves anything from); Card hides only what has a secret's shape,
// never a word that could be something that runs (the card a person
// approves); EscapeText shows control, bidi and ANSI characters escaped, so
// that what a person reads is what runs; PreviewJSON bounds and redacts
// JSON arguments and stays JSON; Canonical gives the arguments' hash input.
package redact

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Preview bounds: the audit keeps a short preview, the card a longer one.
const (
	PreviewMax     = 1024
	CardPreviewMax = 8192
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
		// One shell word: '…', "…" (escapes inside, stopping at '$' and
		// '`', which run), or unquoted up to what ends a word.
		word = `(?:'[^'\n]*'?|"(?:[^"\\\n$` + "`" + `]|\\.)*"?|[^\s"'$` + "`" + `;|&()<>]+)`
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
		regexp.MustCompile(`(\bsshpass\b` + sameCommand + `[ \t]-p[ \t]*)` + word),
		regexp.MustCompile(`(\blogin\b` + sameCommand + `[ \t]-p[ \t]*)` + word),
		regexp.MustCompile(`(\bredis-cli\b` + sameCommand + `[ \t]-a[ \t]*)` + word),
		regexp.MustCompile(`(\bmysql(?:dump|admin)?\b` + sameCommand + `[ \t]-p)` + word),
		// curl's user:password, the whole pair quoted or the password alone.
		regexp.MustCompile(`(\bcurl\b` + sameCommand + `[ \t](?:-u|--user)[ \t=]*'[^':\n]*:)[^'\n]*('?)`),
		regexp.MustCompile(`(\bcurl\b` + sameCommand + `[ \t](?:-u|--user)[ \t=]*"[^":\n$` + "`" + `]*:)(?:[^"\\\n$` + "`" + `]|\\.)*("?)`),
		regexp.MustCompile(`(\bcurl\b` + sameCommand + `[ \t](?:-u|--user)[ \t=]*[^\s:'"]+:)` + word),
		// npm config set //registry/:_authToken (or _auth, _password) VALUE.
		regexp.MustCompile(`(?i)(\b(?:npm|pnpm|yarn)\b` + sameCommand + `[ \t]set[ \t]+[^\s=]*(?:_auth|token|_password)[^\s=]*(?:[ \t]+|=))` + word),
		// openssl's -k and -K keys, and -pass, -passin, -passout pass:VALUE.
		regexp.MustCompile(`(\bopenssl\b` + sameCommand + `[ \t]-[kK][ \t]+)` + word),
		regexp.MustCompile(`(\bopenssl\b` + sameCommand + `[ \t]-pass(?:in|out)?[ \t]+'pass:)[^'\n]*('?)`),
		regexp.MustCompile(`(\bopenssl\b` + sameCommand + `[ \t]-pass(?:in|out)?[ \t]+"pass:)(?:[^"\\\n$` + "`" + `]|\\.)*("?)`),
		regexp.MustCompile(`(\bopenssl\b` + sameCommand + `[ \t]-pass(?:in|out)?[ \t]+pass:)` + word),
		// htpasswd -b FILE USER PASSWORD (-nb USER PASSWORD): its last word,
		// before any redirection.
		regexp.MustCompile(`(\bhtpasswd\b` + sameCommand + `[ \t]-[A-Za-z]*b[A-Za-z]*\b` + sameCommand + `[ \t])` + word + `([ \t]*(?:[0-9]*[<>]&?[ \t]*[^\s;&|<>]*[ \t]*)*(?:$|[\n;&|)]))`),
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
	[]byte("redis-cli"), []byte("openssl"), []byte("_auth"),
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

// Card is Redact for what a file gets, shown on a card: secrets by
// their shape (redactTokens) and the lines of complete key blocks.
func Card(s string) string {
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
