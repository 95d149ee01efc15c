package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// askAnswerMax bounds one answer as returned to the model; the result as a
// whole is bounded by the schema's 20 questions.
const askAnswerMax = 8 << 10

var askDescription = fmt.Sprintf("Ask the user one or more questions (at most 20) and wait for the answers. "+
	"Each question has an id, the question text, optional options [{label, description}] and multiSelect. "+
	"Answers come back keyed by id: a string, or a list of strings for multiSelect; an unanswered question comes back empty. "+
	"Answers longer than %d bytes are cut.", askAnswerMax)

type askQuestion struct {
	ID          string `json:"id"`
	Question    string `json:"question"`
	MultiSelect bool   `json:"multiSelect"`
}

// runAsk sends ask.request and waits for the answers with no deadline of
// its own (design section 3: asktool is the interactive exception): only
// the call's context ends the wait, that is tools.cancel, turn.cancel,
// session.delete or shutdown. A cancelled ask resolves as skipped, with
// ok:true and every answer empty, and the client is told by ask.cancelled
// so it can take the questions down. An error reply or a client that has
// gone (stdin closed) also resolves as skipped, without ask.cancelled:
// that client is not waiting for it.
// askPrecheck refuses questions that share an id before the call's id is
// reserved.
func askPrecheck(ctx context.Context, c *call) *ToolResult {
	var a struct {
		Questions []askQuestion `json:"questions"`
	}
	json.Unmarshal(c.args, &a)
	seen := map[string]bool{}
	for _, q := range a.Questions {
		if seen[q.ID] {
			return failResult(CodeInvalidArgument, "invalid arguments: args.questions: id %q is used twice", q.ID)
		}
		seen[q.ID] = true
	}
	return nil
}

func runAsk(ctx context.Context, c *call) *ToolResult {
	var a struct {
		Questions json.RawMessage `json:"questions"`
	}
	json.Unmarshal(c.args, &a)
	var qs []askQuestion
	json.Unmarshal(a.Questions, &qs)
	params := map[string]any{"sessionId": c.sess.ID, "toolCallId": c.p.ToolCallID, "questions": a.Questions}
	var reply struct {
		Answers map[string]json.RawMessage `json:"answers"`
	}
	if err := c.s.client.Call(ctx, "ask.request", params, &reply); err != nil {
		r := askResult(qs, nil, true)
		if ctx.Err() != nil {
			c.s.client.Notify(context.WithoutCancel(ctx), "ask.cancelled", map[string]string{"sessionId": c.sess.ID, "toolCallId": c.p.ToolCallID})
			r.stopped = true // a cancelled ask ends as skipped (PROTOCOL section 5)
		} else {
			c.s.log.Info("ask.request got no answer; questions skipped", "toolCallId", c.p.ToolCallID, "err", err)
		}
		return r
	}
	return askResult(qs, reply.Answers, false)
}

// askResult normalises the answers: exactly one field per question, a
// string or (multiSelect) a list of strings, empty when unanswered or of
// the wrong shape; answers to unknown ids are dropped.
func askResult(qs []askQuestion, raw map[string]json.RawMessage, skipped bool) *ToolResult {
	answers := map[string]any{}
	var b strings.Builder
	if skipped {
		b.WriteString("The user skipped these questions (the question was cancelled); no answers were given.\n")
	}
	for _, q := range qs {
		var one string
		var many []string
		v := raw[q.ID]
		if q.MultiSelect {
			many = []string{}
			if json.Unmarshal(v, &many) != nil || many == nil {
				many = []string{}
				if json.Unmarshal(v, &one) == nil && one != "" {
					many = []string{one}
				}
			}
			for i := range many {
				many[i] = cutAnswer(many[i])
			}
			answers[q.ID] = many
		} else {
			if json.Unmarshal(v, &one) != nil {
				one = ""
				if json.Unmarshal(v, &many) == nil {
					one = strings.Join(many, ", ")
				}
			}
			one = cutAnswer(one)
			answers[q.ID] = one
		}
		if skipped {
			continue
		}
		shown := one
		if q.MultiSelect {
			shown = strings.Join(many, ", ")
		}
		if shown == "" {
			shown = "(no answer)"
		}
		fmt.Fprintf(&b, "Q [%s]: %s\nA: %s\n", q.ID, q.Question, shown)
	}
	r := okResult(strings.TrimRight(b.String(), "\n"))
	r.Details = map[string]any{"answers": answers, "skipped": skipped}
	return r
}

// cutAnswer bounds one answer at a UTF-8 boundary.
func cutAnswer(s string) string {
	if len(s) <= askAnswerMax {
		return s
	}
	return cutAt(s, askAnswerMax) + "…[cut]"
}
