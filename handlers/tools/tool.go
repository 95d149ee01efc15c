package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"hostcore/perms"
)

// Spec is what the envelope needs to know of a tool before it runs it:
// its policy class and risk, where its explicit path is, and where it may
// run.
type Spec struct {
	Name        string
	Class       perms.Class
	Risk        string
	Description string
	// Deferred tools are loaded on demand in Agent mode (design section 2.1).
	Deferred bool
	// DeferredInEveryMode tools are loaded on demand in Plan and Goal too:
	// section 2.1 limits only Glob and Grep's deferral to Agent.
	DeferredInEveryMode bool
	// PathArg names the argument that is an explicit path subject to
	// containment and the outside-path rule ("" for none). PathOptional
	// says an absent path means the workspace root.
	PathArg      string
	PathOptional bool
	// Mutation tools are serialised per session in arrival order.
	Mutation bool
	// NeedsWorkspace tools answer NO_WORKSPACE in a Temporary session.
	NeedsWorkspace bool
	// Modes lists the operating modes the tool is available in; nil = all.
	Modes []string
	// AloneInBatch tools must be the only call of their assistant batch.
	AloneInBatch bool
	// PluginID and PluginTool name a plugin's tool.
	PluginID, PluginTool string
}

// Tool is one tool, typed: A is its arguments, decoded from JSON its
// schema has accepted, D its details on success.
type Tool[A, D any] struct {
	Spec
	// Run is the body. A failure the model should see is a *Failure (or
	// ErrAborted); any other error is TOOL_FAILED with its text.
	Run func(ctx context.Context, c *Call, a A) (Out[D], error)
	// Precheck, if set, runs after the argument and path checks and before
	// the permission decision: a refusal there never shows a card.
	Precheck func(ctx context.Context, c *Call, a A) error
	// Preview is the card's text: head (the command, or the tool and the
	// path) shown as it is, body (what a file gets) with its secrets
	// hidden. nil: the card shows the redacted args.
	Preview func(c *Call, a A) (head, body string)
	// Target computes the explicit path when it is not just the PathArg
	// (Glob folds a climbing pattern prefix into it).
	Target func(a A) (string, error)
}

// Out is what a body answers on success: the text the model reads and
// the tool's details.
type Out[D any] struct {
	Text    string
	Details D
	// Content, when set, is what the model reads instead of Text, block
	// by block (a plugin's reply).
	Content []Content
	// Review is the review record of a workspace mutation.
	Review *ReviewChange
	// Terminate asks the agent's loop to stop (design section 4d).
	Terminate bool
	// Stopped: the call ended early because it was cancelled, in the way
	// its tool defines (an asktool resolved as skipped).
	Stopped bool
}

// Content is one block of what the model is shown.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Failure is a failure the model is shown: an errorCode, a message, and
// optionally text and details of its own.
type Failure struct {
	Code    string
	Message string
	// Text is what the model reads when it says more than Message;
	// Content, when set, what it reads block by block.
	Text    string
	Content []Content
	Details any
	// Terminate asks the agent's loop to stop (design section 4d).
	Terminate bool
	// Policy: a containment refusal made inside a body, audited as a
	// policy denial like the envelope's own.
	Policy bool
}

func (f *Failure) Error() string { return f.Message }

// Fail is a Failure with a formatted message.
func Fail(code, format string, a ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, a...)}
}

// PolicyDenied is a containment refusal made inside a tool body.
func PolicyDenied(format string, a ...any) *Failure {
	f := Fail(CodeToolDenied, format, a...)
	f.Policy = true
	return f
}

// ErrAborted ends a body that saw its context end: the envelope answers
// TOOL_ABORTED with the cause.
var ErrAborted = errors.New("aborted")

// Answer is Out with its details' type erased, as the envelope handles it.
type Answer struct {
	Text      string
	Content   []Content
	Details   any
	Review    *ReviewChange
	Terminate bool
	Stopped   bool
}

// Def is a Tool with its types erased: the registry's entry and what the
// envelope calls. Build one with Tool.Def.
type Def struct {
	Spec
	// Schema validates the args; SchemaJSON is what tools.list shows.
	Schema     *jsonschema.Schema
	SchemaJSON json.RawMessage

	decode   func(raw json.RawMessage) (any, error)
	run      func(ctx context.Context, c *Call, a any) (Answer, error)
	precheck func(ctx context.Context, c *Call, a any) error
	preview  func(c *Call, a any) (string, string)
	target   func(a any) (string, error)
}

// Def erases t's types. The schema is attached by the registry.
func (t Tool[A, D]) Def() *Def {
	d := &Def{Spec: t.Spec}
	d.decode = func(raw json.RawMessage) (any, error) {
		a := new(A)
		if err := json.Unmarshal(raw, a); err != nil {
			return nil, err
		}
		return a, nil
	}
	d.run = func(ctx context.Context, c *Call, a any) (Answer, error) {
		out, err := t.Run(ctx, c, *a.(*A))
		return Answer{Text: out.Text, Content: out.Content, Details: details(out.Details), Review: out.Review, Terminate: out.Terminate, Stopped: out.Stopped}, err
	}
	if t.Precheck != nil {
		d.precheck = func(ctx context.Context, c *Call, a any) error { return t.Precheck(ctx, c, *a.(*A)) }
	}
	if t.Preview != nil {
		d.preview = func(c *Call, a any) (string, string) { return t.Preview(c, *a.(*A)) }
	}
	if t.Target != nil {
		d.target = func(a any) (string, error) { return t.Target(*a.(*A)) }
	}
	return d
}

// details is a body's details as the result carries them: a plugin's
// absent details are absent, not null.
func details(d any) any {
	if raw, ok := d.(json.RawMessage); ok && len(raw) == 0 {
		return nil
	}
	return d
}

// Decode decodes args the schema has accepted into the tool's argument
// struct, once; the envelope hands the value to the tool's functions.
func (d *Def) Decode(raw json.RawMessage) (any, error) { return d.decode(raw) }

// Run runs the body with args Decode returned.
func (d *Def) Run(ctx context.Context, c *Call, args any) (Answer, error) {
	return d.run(ctx, c, args)
}

// Precheck runs the tool's precheck, if it has one.
func (d *Def) Precheck(ctx context.Context, c *Call, args any) error {
	if d.precheck == nil {
		return nil
	}
	return d.precheck(ctx, c, args)
}

// Preview is the tool's card text; ok is false when it has none.
func (d *Def) Preview(c *Call, args any) (head, body string, ok bool) {
	if d.preview == nil || args == nil {
		return "", "", false
	}
	head, body = d.preview(c, args)
	return head, body, true
}

// Target computes the explicit path; ok is false when the tool has no
// computation of its own and the PathArg is the path.
func (d *Def) Target(args any) (p string, ok bool, err error) {
	if d.target == nil {
		return "", false, nil
	}
	p, err = d.target(args)
	return p, true, err
}

// AvailableIn says whether the tool is offered in the operating mode.
func (d *Def) AvailableIn(mode string) bool {
	if d.Modes == nil {
		return true
	}
	for _, m := range d.Modes {
		if m == mode {
			return true
		}
	}
	return false
}
