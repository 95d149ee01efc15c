package handlers

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"hostcore/handlers/tools"
	"hostcore/perms/redact"
	"hostcore/sandbox"
)

// cardRawDiffMax bounds the texts a card's raw diff is computed from: a
// diff of megabytes is not read on a card, and computing it delays the
// card.
const cardRawDiffMax = 4 << 20

// cardRaw is the card's raw member: what the preview shows escaped, as a
// client renders it itself. The command is the one that runs, byte for
// byte, and note is what the preview says before it (that it runs
// unconfined); the path is the canonical absolute target; the diff and the
// content are real lines, redacted like the preview's body and cut like
// it at redact.CardBodyMax with a marker line saying how much is left.
// Nil when there is nothing to carry.
func (c *call) cardRaw() map[string]string {
	raw := map[string]string{}
	if c.hasTarget {
		raw["path"] = c.target.Abs
	}
	switch a := c.typed.(type) {
	case *tools.BashArgs:
		raw["command"] = a.Command
		if note := c.bashCardNote(*a) + a.BackgroundNote(); note != "" {
			raw["note"] = strings.TrimSpace(note)
		}
	case *tools.EditArgs:
		if len(a.OldString)+len(a.NewString) <= cardRawDiffMax {
			raw["diff"] = cardRawText(udiff.Unified(c.target.Abs, c.target.Abs, a.OldString, a.NewString))
		}
	case *tools.WriteArgs:
		raw["content"] = cardRawText(a.Content)
		if old, ok := c.cardOldContent(len(a.Content)); ok {
			raw["diff"] = cardRawText(udiff.Unified(c.target.Abs, c.target.Abs, old, a.Content))
		}
	}
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// cardOldContent is the file a Write replaces ("" when it does not exist
// yet), when it is small enough to diff against n bytes of new content.
func (c *call) cardOldContent(n int) (string, bool) {
	if !c.hasTarget || n > cardRawDiffMax {
		return "", false
	}
	data, _, err := sandbox.ReadFileLimit(c.target, int64(cardRawDiffMax-n))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", true
	case err != nil:
		return "", false
	}
	return string(data), true
}

// cardRawText is s redacted for a card with its lines kept real, cut at
// redact.CardBodyMax on a line of its own that says how much is left.
func cardRawText(s string) string {
	shown, left := redact.CardBody(s)
	if left > 0 {
		if shown != "" && shown[len(shown)-1] != '\n' {
			shown += "\n"
		}
		shown += fmt.Sprintf("[… %d bytes more not shown]\n", left)
	}
	return shown
}
