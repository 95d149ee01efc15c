package handlers

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"hostcore/perms"
	"hostcore/perms/redact"
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
		"timeoutMs":  s.cfg.PermissionTimeout.Milliseconds(),
	}
	offer := c.offer(reason) // permrules.go
	offer.addTo(card)
	if raw := c.cardRaw(); raw != nil {
		card["raw"] = raw
	}
	if c.hasTarget {
		// The file, as it is named: a name shaped like a token is a
		// name (see cardPreview).
		if c.target.Root == sandbox.RootWorkspace {
			card["path"] = redact.EscapeText(c.target.Display)
		} else {
			card["path"] = redact.EscapeText(c.target.Abs)
		}
	}
	if c.p.Delegate != "" {
		card["delegate"] = redact.EscapeText(c.p.Delegate)
	}
	if reason == perms.ReasonOutsidePath && c.hasTarget {
		card["grantScope"] = redact.EscapeText(c.grantScope())
	}
	var prefix string
	prefixOK := true
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
		prefix, prefixOK = replyPrefix(reply)
		s.log.Debug("permission card ended", "toolCallId", c.p.ToolCallID, "decision", decision, "err", err, "ctxErr", ctx.Err())
		if err == nil && !slices.Contains(offer.options, decision) {
			s.log.Warn("permission reply is not one of the card's options; the call is denied", "toolCallId", c.p.ToolCallID, "reply", replyText(reply))
		}
		return decision, err
	})
	ans := perms.Wait(ctx, asker, s.cfg.PermissionTimeout, offer.options...)
	if ans.Decision == perms.AllowAlwaysCommand {
		ans.Prefix = prefix
		if !prefixOK {
			ans.Decision, ans.Why = perms.DenyAnswer, "the allow-always-command answer's prefix is not a string"
		}
	}
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
	head, body, ok := c.tool.Preview(c.toolCall(), c.typed)
	if !ok {
		return redact.CardJSON(string(c.canonicalArgs()), redact.CardPreviewMax)
	}
	if c.tool.Name == "Bash" {
		// Whole, however long (it is at most maxCommandBytes, and
		// escaping at most quadruples it): text padded past a cut would
		// otherwise hide what runs.
		return redact.Bound(redact.EscapeText(head), 4*maxCommandBytes+64)
	}
	shown, left := redact.CardBody(body)
	text := redact.EscapeText(head) + redact.EscapeText("\n"+shown)
	return redact.BoundOf(text, redact.CardPreviewMax, len(text)+left)
}

// replyText is a card reply as the log shows it: bounded, escaped.
func replyText(reply map[string]json.RawMessage) string {
	b, _ := json.Marshal(reply)
	return redact.Bound(redact.EscapeText(string(b)), 200)
}
