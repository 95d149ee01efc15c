package perms

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Grants remembers allow-session answers per session and key. Grants live
// in memory for the life of the process: they are scoped to the session
// and never inherited by another session. An outside-path grant is scoped
// to a directory as well (AddIn, HasIn): the card named one place, and
// the answer covers that directory and what lies beneath it, not every
// file outside the roots.
type Grants struct {
	mu   sync.Mutex
	m    map[string]map[string]bool
	dirs map[string]map[string][]string // session → key → directories
}

// Has reports whether session holds a grant for key.
func (g *Grants) Has(session, key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[session][key]
}

// Add records a grant.
func (g *Grants) Add(session, key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]map[string]bool{}
	}
	if g.m[session] == nil {
		g.m[session] = map[string]bool{}
	}
	g.m[session][key] = true
}

// AddIn records a grant for key that covers dir (a canonical absolute
// path) and everything beneath it.
func (g *Grants) AddIn(session, key, dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dirs == nil {
		g.dirs = map[string]map[string][]string{}
	}
	if g.dirs[session] == nil {
		g.dirs[session] = map[string][]string{}
	}
	g.dirs[session][key] = append(g.dirs[session][key], filepath.Clean(dir))
}

// HasIn reports whether session holds a grant for key whose directory
// holds p (a canonical absolute path), compared by whole components: a
// grant for /a/b does not cover /a/bc.
func (g *Grants) HasIn(session, key, p string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p = filepath.Clean(p)
	for _, dir := range g.dirs[session][key] {
		if p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Forget drops every grant of a session.
func (g *Grants) Forget(session string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.m, session)
	delete(g.dirs, session)
}

// Card decisions. AllowAlways and AllowAlwaysCommand are remembered
// approvals (perms/rules): every call of the tool in the workspace, or
// the Bash commands that start with the card's prefix; a card offers them
// only where a rule may apply.
const (
	AllowOnce          = "allow-once"
	AllowSession       = "allow-session"
	AllowAlways        = "allow-always"
	AllowAlwaysCommand = "allow-always-command"
	DenyAnswer         = "deny"
)

// Options are the decisions every card offers.
var Options = []string{AllowOnce, AllowSession, DenyAnswer}

// Asker sends a permission card and returns the client's decision string.
// The reply is due within d: past it, an error wrapping
// context.DeadlineExceeded. It also returns an error if the client
// answered with an error, vanished, or ctx ended (a reply that came in
// time may be acted on later, but never after ctx ended).
type Asker interface {
	AskPermission(ctx context.Context, d time.Duration) (string, error)
}

// AskerFunc adapts a function to Asker.
type AskerFunc func(ctx context.Context, d time.Duration) (string, error)

// AskPermission calls f.
func (f AskerFunc) AskPermission(ctx context.Context, d time.Duration) (string, error) {
	return f(ctx, d)
}

// Answer is the outcome of waiting on a card.
type Answer struct {
	Decision string // allow-once | allow-session | allow-always | allow-always-command | deny | timeout | cancelled
	Wait     time.Duration
	// Unseen: the card never reached the client (its input had closed):
	// the call is denied, but no one was asked.
	Unseen bool
	// Withdrawn: hostcore stopped while the card was open (shutdown, a
	// signal, the client gone): nobody will answer it, which PROTOCOL
	// section 1 resolves as a deny; the card is to be withdrawn.
	Withdrawn bool
	// Why says, for a deny that nobody gave (no reply could come, an error
	// reply, a reply that is none of the card's options), what happened
	// instead; it is empty for the user's deny, a timeout and a cancel.
	Why string
	// InputClosed: the card was sent and the client's input then closed
	// (stdin EOF) before a reply; the client may still read, and the card
	// is to be withdrawn.
	InputClosed bool
	// Prefix is what an allow-always-command reply named (its caller
	// reads the reply): "" takes the card's suggestion.
	Prefix string
}

// inputClosed is implemented by the error a call to the client ends with
// when the client's input closed (rpc.ErrNoClient).
type inputClosed interface{ InputClosed() bool }

// Stopping is implemented by the cause a call's context is cancelled
// with when hostcore stops: a card open then is denied, not cancelled.
type Stopping interface{ Stopping() bool }

// stopped says whether ctx ended because hostcore is stopping.
func stopped(ctx context.Context) bool {
	var st Stopping
	return errors.As(context.Cause(ctx), &st) && st.Stopping()
}

// Allowed reports whether the answer lets the call run.
func (a Answer) Allowed() bool {
	return a.Decision == AllowOnce || a.Decision == AllowSession || a.Decision == AllowAlways || a.Decision == AllowAlwaysCommand
}

// Wait sends the card and waits at most timeout for its reply. It fails
// closed: a reply that is not one of the card's options (Options unless
// options are given), an error reply,
// a vanished client or no reply in time is a deny ("timeout" when the
// timer fired, "cancelled" when ctx ended first, a deny Withdrawn when
// ctx ended because hostcore is stopping). A reply read in time counts
// even if it is acted on after timeout (the Asker holds it behind
// configuring methods read before it), unless ctx ended meanwhile.
func Wait(ctx context.Context, a Asker, timeout time.Duration, options ...string) Answer {
	if len(options) == 0 {
		options = Options
	}
	start := time.Now()
	got, err := a.AskPermission(ctx, timeout)
	ans := Answer{Wait: time.Since(start)}
	var ns interface{ NotSent() bool }
	ans.Unseen = errors.As(err, &ns) && ns.NotSent()
	switch {
	case ctx.Err() != nil && stopped(ctx):
		// First: a reply read as hostcore stops (the client's allow-once
		// right after its shutdown, in one write) comes after the wait
		// ended, and is dropped (a review: 7 in 280 such races were
		// answered and audited as allowed).
		ans.Decision, ans.Withdrawn = DenyAnswer, true
	case err == nil && got == DenyAnswer:
		// The user's deny stands, whatever ended the wait meanwhile.
		ans.Decision = got
	case ctx.Err() != nil:
		// Before an allow: a reply read behind a configuring method is
		// acted on only after it (rpc.Server.Call), and a session.delete
		// there ended this call before the reply counted.
		ans.Decision = "cancelled"
	case err == nil && got != DenyAnswer && slices.Contains(options, got):
		ans.Decision = got
	case errors.Is(err, context.DeadlineExceeded):
		ans.Decision = "timeout"
	default:
		ans.Decision = DenyAnswer
		var ic inputClosed
		ans.InputClosed = !ans.Unseen && errors.As(err, &ic) && ic.InputClosed()
		ans.Why = whyNoDecision(got, err, ans.Unseen, ans.InputClosed, options)
	}
	return ans
}

// whyNoDecision describes a deny that nobody gave.
func whyNoDecision(got string, err error, unseen, closed bool, options []string) string {
	switch {
	case unseen && err != nil:
		return fmt.Sprintf("the permission request was never shown (%s), so no answer could come", clip(err.Error()))
	case unseen:
		return "the permission request was never shown, so no answer could come"
	case closed:
		return "the client's input closed before it answered the permission request"
	case err != nil:
		// Quoted: an error reply's message is the client's text, and
		// control characters must not reach the model or a terminal raw.
		return fmt.Sprintf("no decision came back for the permission request (%q)", clip(err.Error()))
	case got == "":
		return "the client's reply to the permission request carried no decision"
	}
	return fmt.Sprintf("the client's reply to the permission request, %q, is not %s or %s", clip(got), strings.Join(options[:len(options)-1], ", "), options[len(options)-1])
}

// clip bounds text the client chose (an error reply's message, a decision
// that is none) before it goes into the call's result.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
