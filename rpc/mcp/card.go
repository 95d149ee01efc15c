package mcp

import (
	"strings"

	"hostcore/perms/redact"
)

// cardRaw is the card's raw member (permission.request params): the text
// its preview shows escaped, with real lines.
type cardRaw struct {
	Command string `json:"command"`
	Note    string `json:"note"`
	Path    string `json:"path"`
	Diff    string `json:"diff"`
	Content string `json:"content"`
}

// body is what the elicitation shows under its question: the command, or
// the change as a diff (a Write without one: its content), as real lines,
// so the user reads a diff as a diff; the preview when raw has none of
// them. Each line stays escaped within itself (redact.EscapeText): an
// ANSI sequence or a bidi override in a command must not restyle or
// reorder the form it is approved on.
func (c *cardInfo) body() string {
	r := c.Raw
	switch {
	case r.Command != "":
		text := escapeLines(r.Command)
		if r.Note != "" {
			text = redact.EscapeText(r.Note) + "\n" + text
		}
		return text
	case r.Diff != "":
		return escapeLines(r.Diff)
	case r.Content != "":
		return escapeLines(r.Content)
	}
	return c.Preview
}

// escapeLines escapes each line of s on its own, keeping the newlines
// between them.
func escapeLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = redact.EscapeText(l)
	}
	return strings.Join(lines, "\n")
}
