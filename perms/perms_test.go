package perms

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDecideTable pins the policy of design sections 4a, 4b, 6 and 10:
// every class in every operating mode and permission mode, inside, in
// scratch and outside the roots, with and without a grant.
func TestDecideTable(t *testing.T) {
	type row struct {
		class                Class
		risk                 string
		op, mode             string
		outside, scratch, gr bool
		want                 Outcome
		reason, code         string
	}
	var rows []row
	modes := []string{ModeAsk, ModeAcceptEdits, ModeAuto}
	for _, op := range []string{OpAgent, OpPlan, OpGoal} {
		for _, m := range modes {
			// Reads and control tools: always allowed inside the roots.
			rows = append(rows, row{class: ClassRead, risk: RiskLow, op: op, mode: m, want: Allow})
			rows = append(rows, row{class: ClassControl, risk: RiskLow, op: op, mode: m, want: Allow})
			// Outside-path reads: auto allows, ask and accept-edits confirm.
			if m == ModeAuto {
				rows = append(rows, row{class: ClassRead, risk: RiskLow, op: op, mode: m, outside: true, want: Allow})
			} else {
				rows = append(rows, row{class: ClassRead, risk: RiskLow, op: op, mode: m, outside: true, want: Ask, reason: ReasonOutsidePath})
				rows = append(rows, row{class: ClassRead, risk: RiskLow, op: op, mode: m, outside: true, gr: true, want: Allow})
			}
			// Bash: confirm under ask and accept-edits, auto under auto, in every operating mode.
			if m == ModeAuto {
				rows = append(rows, row{class: ClassExec, risk: RiskHigh, op: op, mode: m, want: Allow})
			} else {
				rows = append(rows, row{class: ClassExec, risk: RiskHigh, op: op, mode: m, want: Ask, reason: ReasonTool})
				rows = append(rows, row{class: ClassExec, risk: RiskHigh, op: op, mode: m, gr: true, want: Allow})
			}
			if op == OpAgent {
				// Write/Edit: confirm under ask only; scratch never asks.
				if m == ModeAsk {
					rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, want: Ask, reason: ReasonTool})
					rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, gr: true, want: Allow})
				} else {
					rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, want: Allow})
				}
				rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, scratch: true, want: Allow})
				if m != ModeAuto {
					rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, outside: true, want: Ask, reason: ReasonOutsidePath})
				}
				// Plugins: medium confirms unless auto; low runs.
				if m == ModeAuto {
					rows = append(rows, row{class: ClassPlugin, risk: RiskMedium, op: op, mode: m, want: Allow})
				} else {
					rows = append(rows, row{class: ClassPlugin, risk: RiskMedium, op: op, mode: m, want: Ask, reason: ReasonTool})
				}
				rows = append(rows, row{class: ClassPlugin, risk: RiskLow, op: op, mode: m, want: Allow})
			} else {
				// Plan and Goal hard-deny Write/Edit and plugins in every
				// permission mode, even with a grant, scratch or auto.
				for _, sc := range []bool{false, true} {
					rows = append(rows, row{class: ClassEdit, risk: RiskHigh, op: op, mode: m, scratch: sc, gr: true, want: Deny, code: CodeDenied})
				}
				rows = append(rows, row{class: ClassPlugin, risk: RiskLow, op: op, mode: m, gr: true, want: Deny, code: CodePluginInPlan})
			}
		}
	}
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/class%d/%s/out=%v/scr=%v/grant=%v", r.op, r.mode, r.class, r.risk, r.outside, r.scratch, r.gr)
		v := Decide(Request{Tool: "T", Class: r.class, Risk: r.risk, OpMode: r.op, PermMode: r.mode, Outside: r.outside, Scratch: r.scratch, Granted: r.gr})
		if v.Outcome != r.want || (r.reason != "" && v.Reason != r.reason) || (r.code != "" && v.Code != r.code) {
			t.Errorf("%s: got %v reason=%q code=%q, want %v reason=%q code=%q", name, v.Outcome, v.Reason, v.Code, r.want, r.reason, r.code)
		}
	}
	if len(rows) < 60 {
		t.Fatalf("table too small: %d rows", len(rows))
	}
}

func TestEffectiveModeResolution(t *testing.T) {
	for _, c := range []struct{ session, global, want string }{
		{ModeAuto, ModeAsk, ModeAuto},
		{ModeInherit, ModeAcceptEdits, ModeAcceptEdits},
		{ModeInherit, "", ModeAsk},
		{"", ModeAuto, ModeAuto},
		{ModeInherit, ModeInherit, ModeAsk},
		{"bogus", "bogus", ModeAsk},
	} {
		if got := Effective(c.session, c.global); got != c.want {
			t.Errorf("Effective(%q, %q) = %q, want %q", c.session, c.global, got, c.want)
		}
	}
}

func TestGrantsAreScopedToSessionAndKey(t *testing.T) {
	var g Grants
	g.Add("s1", GrantKey("Write", ReasonTool))
	if !g.Has("s1", "Write") || g.Has("s2", "Write") || g.Has("s1", "Edit") {
		t.Fatal("grant leaked across sessions or tools")
	}
	if g.Has("s1", GrantKey("Write", ReasonOutsidePath)) {
		t.Fatal("an in-workspace grant must not approve outside paths")
	}
	g.Forget("s1")
	if g.Has("s1", "Write") {
		t.Fatal("Forget kept a grant")
	}
}

// TestWaitSaysWhyNobodyDenied: a deny that nobody gave says what happened
// instead (a review: every one of them said "the user denied"), bounded;
// the user's deny, a timeout and a cancel say nothing here.
func TestWaitSaysWhyNobodyDenied(t *testing.T) {
	answer := func(s string, err error) Asker {
		return AskerFunc(func(context.Context, time.Duration) (string, error) { return s, err })
	}
	for _, c := range []struct {
		name       string
		a          Asker
		why        string
		closed     bool
		maxWhyText int
	}{
		{"user deny", answer(DenyAnswer, nil), "", false, 0},
		{"no decision", answer("", nil), "carried no decision", false, 200},
		{"not a decision", answer("maybe", nil), `"maybe", is not allow-once`, false, 200},
		{"a long one", answer(strings.Repeat("é", 5000), nil), "…", false, 400},
		{"error reply", answer("", errors.New("client error")), `("client error")`, false, 200},
		{"error reply with control characters", answer("", errors.New("a\nb\x1b[31m\u202e")), `("a\nb\x1b[31m\u202e")`, false, 200},
		{"input closed", answer("", closedErr{}), "input closed before it answered", true, 200},
		{"never sent", answer("", notSentErr{}), "was never shown", false, 200},
	} {
		got := Wait(context.Background(), c.a, time.Second)
		if !strings.Contains(got.Why, c.why) || (c.why == "") != (got.Why == "") || len(got.Why) > c.maxWhyText+120 {
			t.Errorf("%s: Why %q, want it to hold %q", c.name, got.Why, c.why)
		}
		if got.InputClosed != c.closed {
			t.Errorf("%s: InputClosed = %v", c.name, got.InputClosed)
		}
	}
}

type closedErr struct{}

func (closedErr) Error() string     { return "client cannot answer: input closed" }
func (closedErr) InputClosed() bool { return true }

type notSentErr struct{ closedErr }

func (notSentErr) NotSent() bool { return true }

// TestWaitFailsClosed: only the three decisions count; errors, garbage and
// silence are denials, distinguishing the timer from a cancellation.
func TestWaitFailsClosed(t *testing.T) {
	answer := func(s string, err error) Asker {
		return AskerFunc(func(context.Context, time.Duration) (string, error) { return s, err })
	}
	block := AskerFunc(func(ctx context.Context, d time.Duration) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(d):
			return "", fmt.Errorf("no reply: %w", context.DeadlineExceeded)
		}
	})
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	for _, c := range []struct {
		name string
		a    Asker
		ctx  func() context.Context
		want string
	}{
		{"allow-once", answer(AllowOnce, nil), context.Background, AllowOnce},
		{"allow-session", answer(AllowSession, nil), context.Background, AllowSession},
		{"deny", answer(DenyAnswer, nil), context.Background, DenyAnswer},
		{"garbage", answer("sure", nil), context.Background, DenyAnswer},
		{"empty", answer("", nil), context.Background, DenyAnswer},
		{"error reply", answer(AllowOnce, errors.New("client error")), context.Background, DenyAnswer},
		{"silence", block, context.Background, "timeout"},
		{"cancelled", block, cancelled, "cancelled"},
		// An allow that counts only once the call was cancelled (read
		// behind a session.delete that ended it) does not allow; a deny
		// stands whatever ended the wait.
		{"allow after a cancel", answer(AllowOnce, nil), cancelled, "cancelled"},
		{"deny after a cancel", answer(DenyAnswer, nil), cancelled, DenyAnswer},
		// hostcore stopping (shutdown, a signal, the client gone): nobody
		// will answer, which PROTOCOL section 1 resolves as a deny.
		{"stopping", answer(AllowOnce, nil), func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(stoppingCause{})
			child, done := context.WithCancel(ctx) // as a call's context derives
			_ = done
			return child
		}, DenyAnswer},
	} {
		got := Wait(c.ctx(), c.a, 50*time.Millisecond)
		if got.Decision != c.want {
			t.Errorf("%s: decision %q, want %q", c.name, got.Decision, c.want)
		}
		if got.Withdrawn != (c.name == "stopping") {
			t.Errorf("%s: Withdrawn = %v", c.name, got.Withdrawn)
		}
		if got.Allowed() != (c.want == AllowOnce || c.want == AllowSession) {
			t.Errorf("%s: Allowed() = %v", c.name, got.Allowed())
		}
	}
}

type stoppingCause struct{}

func (stoppingCause) Error() string  { return "stopping" }
func (stoppingCause) Stopping() bool { return true }
