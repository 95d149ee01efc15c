package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"hostcore/perms"
	"hostcore/sandbox"
)

// askPermission sends the card (design section 7) and waits, failing closed.
func (s *Server) askPermission(ctx context.Context, c *call, reason string) perms.Answer {
	card := map[string]any{
		"sessionId":  c.sess.ID,
		"turnId":     c.p.TurnID,
		"toolCallId": c.p.ToolCallID,
		"toolName":   c.tool.Name,
		"risk":       c.tool.Risk,
		"reason":     reason,
		"preview":    c.cardPreview(),
		"options":    []string{perms.AllowOnce, perms.AllowSession, perms.DenyAnswer},
		"timeoutMs":  s.cfg.PermissionTimeout.Milliseconds(),
	}
	if c.hasTarget {
		// The file, as it is named: a name shaped like a token is a
		// name (see cardPreview).
		if c.target.Root == sandbox.RootWorkspace {
			card["path"] = escapeText(c.target.Display)
		} else {
			card["path"] = escapeText(c.target.Abs)
		}
	}
	if c.p.Delegate != "" {
		card["delegate"] = escapeText(c.p.Delegate)
	}
	asker := perms.AskerFunc(func(ctx context.Context, within time.Duration) (string, error) {
		// The reply's member is read by its exact name: Go would also take
		// "Decision" or "DECISION", and of {"decision":"deny",
		// "DECISION":"allow-once"} the last, where a JavaScript client
		// reads deny.
		var reply map[string]json.RawMessage
		s.log.Debug("permission card sent", "toolCallId", c.p.ToolCallID)
		err := s.client.CallWithin(ctx, within, "permission.request", card, &reply)
		var decision string
		json.Unmarshal(reply["decision"], &decision)
		s.log.Debug("permission card ended", "toolCallId", c.p.ToolCallID, "decision", decision, "err", err, "ctxErr", ctx.Err())
		if err == nil && decision != perms.AllowOnce && decision != perms.AllowSession && decision != perms.DenyAnswer {
			s.log.Warn("permission reply is not one of the three decisions; the call is denied", "toolCallId", c.p.ToolCallID, "reply", replyText(reply))
		}
		return decision, err
	})
	ans := perms.Wait(ctx, asker, s.cfg.PermissionTimeout)
	if ans.Decision == "timeout" || ans.Decision == "cancelled" || ans.Withdrawn || ans.InputClosed {
		// The client closes the card. One withdrawn as hostcore stops, or
		// left unanswered when the client's input closed (a client that
		// closes its end of stdin may still read), is denied, and says
		// "cancelled": nobody answered it.
		reason := ans.Decision
		if ans.Withdrawn || ans.InputClosed {
			reason = "cancelled"
		}
		s.client.Notify(context.WithoutCancel(ctx), "permission.cancelled", map[string]string{
			"sessionId": c.sess.ID, "toolCallId": c.p.ToolCallID, "reason": reason,
		})
	}
	return ans
}

// cardPreview is what the user reads on the card: the tool's own preview,
// or the redacted args, with control characters escaped.
//
// A command and a path are shown as they are, secrets included: whatever
// a card hides can be the name of what runs. A review ran a script named
// sk-aaaa… (a token's shape) with "bash [REDACTED]" on the card, and two
// such files read alike; the card goes to the person whose secrets they
// are. What a Write or an Edit puts in a file loses its secrets
// (redactCard): it runs, if ever, under a card of its own.
func (c *call) cardPreview() string {
	if c.tool.preview == nil {
		return previewJSONWith(string(c.canonicalArgs()), cardPreviewMax, redactCard, false)
	}
	head, body := c.tool.preview(c)
	if c.tool.Name == "Bash" {
		// Whole, however long (it is at most maxCommandBytes, and
		// escaping at most quadruples it): text padded past a cut would
		// otherwise hide what runs.
		return bound(escapeText(head), 4*maxCommandBytes+64)
	}
	shown, left := cardBody(body)
	text := escapeText(head) + escapeText("\n"+shown)
	return boundOf(text, cardPreviewMax, len(text)+left)
}

// cardBodyMax bounds how much of a Write's content or an Edit's diff is
// redacted and escaped for its card, which shows 8 KiB: redacting all of
// a 10 MB content full of secret hints took 18 s before the card came.
const cardBodyMax = 64 << 10

// cardBody is body redacted for a card (redactCard), from its first
// cardBodyMax bytes or so, and how many bytes of body it leaves out. The
// cut never splits what a pattern would hide: it falls at the end of a
// line, else before a word; and a key block it leaves open (its END may
// lie past the cut) is shown only up to its BEGIN line.
func cardBody(body string) (string, int) {
	if len(body) <= cardBodyMax {
		return redactCard(body), 0
	}
	cut := strings.LastIndexByte(body[:cardBodyMax], '\n') + 1
	if cut == 0 {
		cut = strings.LastIndexAny(body[:cardBodyMax], " \t\r\v\f") + 1
	}
	if cut == 0 {
		cut = cardBodyMax // one word of 64 KiB: a token that long is hidden whole
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
	}
	shown := body[:cut]
	if loc := openKeyBlock(shown); loc >= 0 {
		shown = shown[:loc]
	}
	return redactCard(shown), len(body) - len(shown)
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

// replyText is a card reply as the log shows it: bounded, escaped.
func replyText(reply map[string]json.RawMessage) string {
	b, _ := json.Marshal(reply)
	return bound(escapeText(string(b)), 200)
}
