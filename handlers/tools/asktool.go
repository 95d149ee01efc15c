package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"hostcore/perms"
	"strings"
)

// AskAnswerMax bounds one answer as returned to the model; the result as a
// whole is bounded by the schema's 20 questions.
const AskAnswerMax = 8 << 10

var askDescription = fmt.Sprintf("Ask the user one or more questions (at most 20) and wait for the answers. "+
	"Each question has an id, the question text, optional options [{label, description}] and multiSelect. "+
	"Answers come back keyed by id: a string, or a list of strings for multiSelect; an unanswered question comes back empty. "+
	"Answers longer than %d bytes are cut.", AskAnswerMax)

// Ask is the asktool tool.
var Ask = Tool[AskArgs, AskDetails]{
	Spec:     Spec{Name: "asktool", Class: perms.ClassControl, Risk: perms.RiskLow, Description: askDescription},
	Run:      runAsk,
	Precheck: askPrecheck,
}

// AskArgs are asktool's arguments. The questions go to the client as
// they came.
type AskArgs struct {
	Questions json.RawMessage `json:"questions"`
}

// AskDetails are asktool's details: one answer per question, a string or
// (multiSelect) a list of strings.
type AskDetails struct {
	Answers map[string]any `json:"answers"`
	Skipped bool           `json:"skipped"`
}

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
func askPrecheck(ctx context.Context, c *Call, a AskArgs) error {
	var qs []askQuestion
	if err := json.Unmarshal(a.Questions, &qs); err != nil {
		return Fail(CodeInvalidArgument, "invalid arguments: args.questions: %v", err)
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.ID] {
			return Fail(CodeInvalidArgument, "invalid arguments: args.questions: id %q is used twice", q.ID)
		}
		seen[q.ID] = true
	}
	return nil
}

func runAsk(ctx context.Context, c *Call, a AskArgs) (Out[AskDetails], error) {
	var qs []askQuestion
	if err := json.Unmarshal(a.Questions, &qs); err != nil {
		return Out[AskDetails]{}, Fail(CodeInvalidArgument, "invalid arguments: args.questions: %v", err)
	}
	params := map[string]any{"sessionId": c.SessionID, "toolCallId": c.ToolCallID, "questions": a.Questions}
	var reply struct {
		Answers map[string]json.RawMessage `json:"answers"`
	}
	if err := c.Host.Request(ctx, "ask.request", params, &reply); err != nil {
		out := askResult(qs, nil, true)
		if ctx.Err() != nil {
			c.Host.Notify(context.WithoutCancel(ctx), "ask.cancelled", map[string]string{"sessionId": c.SessionID, "toolCallId": c.ToolCallID})
			out.Stopped = true // a cancelled ask ends as skipped (PROTOCOL section 5)
		} else {
			c.Host.Log().Info("ask.request got no answer; questions skipped", "toolCallId", c.ToolCallID, "err", err)
		}
		return out, nil
	}
	return askResult(qs, reply.Answers, false), nil
}

// askResult normalises the answers: exactly one field per question, a
// string or (multiSelect) a list of strings, empty when unanswered or of
// the wrong shape; answers to unknown ids are dropped.
func askResult(qs []askQuestion, raw map[string]json.RawMessage, skipped bool) Out[AskDetails] {
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
	return Out[AskDetails]{Text: strings.TrimRight(b.String(), "\n"), Details: AskDetails{Answers: answers, Skipped: skipped}}
}

// cutAnswer bounds one answer at a UTF-8 boundary.
func cutAnswer(s string) string {
	if len(s) <= AskAnswerMax {
		return s
	}
	return CutAt(s, AskAnswerMax) + "…[cut]"
}

// CutAt cuts s to at most n bytes at a UTF-8 boundary.
func CutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
