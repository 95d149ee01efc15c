package redact

import (
	"strings"
	"unicode/utf8"
)

// CardJSON is PreviewJSON for a card: each string keeps what only has a
// secret's shape hidden (Card), and a value under a key that names a
// secret is shown, since the card goes to the person whose secret it is.
func CardJSON(s string, max int) string { return previewJSONWith(s, max, Card, false) }

// CardBodyMax bounds how much of a Write's content or an Edit's diff is
// redacted and escaped for its card, which shows 8 KiB: redacting all of
// a 10 MB content full of secret hints took 18 s before the card came.
const CardBodyMax = 64 << 10

// CardBody is body redacted for a card (Card), from its first CardBodyMax
// bytes or so, and how many bytes of body it leaves out. The cut never
// splits what a pattern would hide: it falls at the end of a line, else
// before a word; and a key block it leaves open (its END may lie past the
// cut) is shown only up to its BEGIN line.
func CardBody(body string) (string, int) {
	if len(body) <= CardBodyMax {
		return Card(body), 0
	}
	cut := strings.LastIndexByte(body[:CardBodyMax], '\n') + 1
	if cut == 0 {
		cut = strings.LastIndexAny(body[:CardBodyMax], " \t\r\v\f") + 1
	}
	if cut == 0 {
		cut = CardBodyMax // one word of 64 KiB: a token that long is hidden whole
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
	}
	shown := body[:cut]
	if loc := openKeyBlock(shown); loc >= 0 {
		shown = shown[:loc]
	}
	return Card(shown), len(body) - len(shown)
}

// openKeyBlock is where the line after the last private key block's BEGIN
// line starts, if no END line follows it in s; -1 otherwise.
func openKeyBlock(s string) int {
	begins := keyBlockBegin().FindAllStringIndex(s, -1)
	if len(begins) == 0 {
		return -1
	}
	last := begins[len(begins)-1][1]
	if keyBlockEnd().MatchString(s[last:]) {
		return -1
	}
	return last
}
