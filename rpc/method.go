package rpc

import (
	"context"
	"encoding/json"
)

// Kind says how a method is ordered against the others and what it
// weighs against the in-flight budget.
type Kind int

const (
	// Ordinary methods run concurrently on workers, each weighed against
	// the in-flight budget; their answers may come out of order.
	Ordinary Kind = iota
	// Configuring methods finish before any request read after them
	// starts: they run on the sequencer, one at a time, answered before
	// the next request is routed. They are not weighed against the
	// budget, so that shutdown is never refused.
	Configuring
	// Cancel methods free the budget rather than use it: they are weighed
	// against a small budget of their own (reliefBudget), so that a
	// budget filled by calls waiting on cards can still be cancelled. One
	// with params over reliefParamsMax weighs like an Ordinary one.
	Cancel
)

// Run answers one request.
type Run func(ctx context.Context) (any, error)

// Method is one entry of the method table: everything the dispatcher
// needs to know of a method, declared in one place.
type Method struct {
	Kind Kind
	// Run answers a request with its params.
	Run func(ctx context.Context, params json.RawMessage) (any, error)
	// Prepare, when set, runs first, in arrival order (on the read
	// goroutine, or on the sequencer for a request queued behind a
	// configuring method), so it may take the request's place in an
	// order; it must not block. It returns the run that answers the
	// request (nil: Run with the params; nil and no Run: method not
	// found) and quick: answer it at once on the read goroutine (an
	// answer that costs nothing to make, such as the refusal of params
	// that are not an object).
	Prepare func(params json.RawMessage) (run Run, quick bool)
	// WhileStopping: the method still runs once the server is stopping
	// (its context cancelled: shutdown, a signal, the client gone), as a
	// tool call that answers as aborted and is audited. Any other is then
	// refused with SHUTTING_DOWN. An unknown method is still answered
	// -32601.
	WhileStopping bool
}

// Methods is the method table, by method name.
type Methods map[string]Method

// route returns what answers a request for m with params, and whether it
// is answered on the goroutine that routes it; nil: method not found.
func (m Method) route(params json.RawMessage) (run Run, inline bool) {
	var quick bool
	if m.Prepare != nil {
		run, quick = m.Prepare(params)
	}
	if run == nil && m.Run != nil {
		body := m.Run
		run = func(ctx context.Context) (any, error) { return body(ctx, params) }
	}
	return run, m.Kind == Configuring || quick
}

// AfterReplier is a result with work left for once it has been written
// (or could not be): closing what the call used, off the client's wait.
type AfterReplier interface {
	AfterReply()
}
