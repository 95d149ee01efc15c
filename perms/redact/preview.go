package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Preview is redacted, escaped and bounded text.
func Preview(s string, max int) string { return Bound(EscapeText(Redact(s)), max) }

// PreviewJSON is Preview for JSON text (the canonical args). Secrets are
// redacted in each decoded string, key or value, where quotes are quotes
// (in the encoded text every '"' is '\"' and the patterns would stop
// short), and a value under a key that names a secret goes whole; then
// the value is encoded again, so that the preview is JSON. (A pass over
// the encoded text as a whole, once here for secrets spanning a key and
// its value, broke it: {"password":[REDACTED]}, and a key block without
// its END ran to the end of the text.)
func PreviewJSON(s string, max int) string { return previewJSONWith(s, max, Redact, true) }

// previewJSONWith is previewJSON with the given redaction of each string;
// labels: a value under a key that names a secret is hidden whole (the
// audit's rule; a card hides only what has a secret's shape).
func previewJSONWith(s string, max int, redact func(string) string, labels bool) string {
	var r string
	if len(s) <= max+previewSlack && !mayHoldSecret(s) && !TooManyValues(s) && json.Valid([]byte(s)) {
		// ASCII text with no hint of a secret cannot hold one, in its
		// strings or as a whole (the hints hold no character JSON
		// escapes), and nothing in it is long enough to cut: decoding,
		// redacting and encoding it again would give it back as it is
		// (most calls' args: a path, a pattern, a short command).
		r = EscapeJSONText(s)
	} else {
		r = EscapeJSONText(redactJSON(s, max+previewSlack, redact, labels))
	}
	if len(r) > max && len(s) > len(r) {
		// Long strings were cut before redaction: say how much the whole
		// text had, not what was left of it.
		return BoundOf(r, max, len(s))
	}
	return Bound(r, max)
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
	if TooManyValues(s) {
		return fmt.Sprintf("[%d bytes of arguments, more than %d JSON values: not shown]", len(s), MaxValues)
	}
	v, err := Decode([]byte(s))
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
