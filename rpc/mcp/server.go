// Package mcp serves one hostcore session over the Model Context Protocol
// (stdio transport, official SDK). It is a transport adapter: tools/list and
// tools/call go to a Backend (main wires handlers' frontend door to it),
// and the host→client traffic the backend sends through the Frontend
// (Call, CallWithin, Notify) is mapped onto MCP. It knows nothing of tools
// and imports nothing of hostcore's but rpc and the schema files.
//
// The mapping:
//
//   - tools/list: the session's tools (Backend.FrontendTools) with
//     their JSON Schemas (every enum typed), an outputSchema (the
//     ToolResult of schema/protocol.schema.json, details by tool) and
//     their annotations (read-only, destructive, idempotent, open-world).
//   - the workspace: --workspace, or else the client's first root
//     (roots/list once the client has initialized, again on
//     notifications/roots/list_changed); a call without either is an
//     isError result that says so.
//   - tools/call: Backend.Execute, the path of tools.execute. The
//     result's content becomes MCP text content, everything else (ok,
//     errorCode, message, details, root, path, review, decision, timing)
//     becomes structuredContent, and isError is kept. Arguments hostcore
//     refuses are an isError result too, which the model can correct.
//   - permission.request: an elicitation/create in form mode whose one field
//     "decision" offers allow-once, allow-session and deny, when the client
//     declared the elicitation capability. Declining or cancelling the form
//     is a deny; the permission timeout still runs (fail-closed). A client
//     without elicitation cannot be asked, so the card is denied at once;
//     the log (not the model: design section 6, the model is never told
//     the mode) says which --permission-mode would have let the call run.
//   - tool.output: notifications/progress when the call carried a
//     progressToken (progress counts the output bytes so far, message is the
//     chunk); dropped otherwise.
//   - notifications/cancelled: the SDK cancels the call's context, which
//     ends a card wait or kills the command's process tree.
//   - ask.request and plugin.invoke fail closed (an error reply): asktool and
//     plugin tools are not served over MCP. The other notifications
//     (permission.cancelled, browser.preview, approval.requested,
//     ask.cancelled) have no MCP counterpart and are dropped.
package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"hostcore/rpc"
)

// Backend runs the session's tools.
type Backend interface {
	// EnsureSession binds the session of this frontend and workspace,
	// creating it if need be, and returns its id.
	EnsureSession(ctx context.Context, frontend, workspace, permissionMode string) (string, error)
	FrontendTools(ctx context.Context, sessionID string) ([]Tool, error)
	// Execute runs one call and returns its ToolResult, any value whose
	// JSON is the ToolResult of PROTOCOL (content, isError, errorCode,
	// message, decision and the rest).
	Execute(ctx context.Context, c Call) (any, error)
	// ModeWithoutCard names the permission mode that would have let a
	// call needing a card run without one ("": none).
	ModeWithoutCard(toolName, reason string) string
}

// Tool is a tool as tools/list shows it.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	// ReadOnly tools only read; Destructive ones may change or delete
	// what is there; Idempotent ones have no further effect when called
	// again with the same arguments; OpenWorld ones reach beyond the
	// workspace (a command may use the network).
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Call is one tools/call as the backend runs it.
type Call struct {
	SessionID  string
	TurnID     string
	ToolCallID string
	ToolName   string
	// PromptID: MCP shows no prompt boundaries, so each call is its own
	// prompt (the per-prompt mutation failure count).
	PromptID string
	Args     json.RawMessage
}

// Arrival is a call a Backend registered as its line was read (Arriver).
type Arrival interface {
	// Drop lets go of a registration whose call will never run.
	Drop()
}

// Arriver is implemented by a Backend that registers a call the moment
// its line is read, so that one session's calls keep their arrival order
// whatever order the SDK's goroutines run them in.
type Arriver interface {
	Arrive(c Call) Arrival
	ExecuteArrival(ctx context.Context, a Arrival, args json.RawMessage) (any, error)
	// AbortArrival ends a registered call that will never run as aborted,
	// with its audit row.
	AbortArrival(a Arrival)
}

// Options configure Serve.
type Options struct {
	// Workspace binds every call to this directory; "" takes the client's
	// first root.
	Workspace string
	// ToolsWorkspace, used when Workspace is "", is an empty directory
	// whose session lists the tools before any root is known: the tools of
	// a session do not depend on its directory, and tools/list may come
	// first. No call runs there.
	ToolsWorkspace string
	PermissionMode string
	Version        string
	// DrainTimeout bounds how long Serve waits for running calls once the
	// client has gone or ctx ended (their audit rows still land).
	DrainTimeout time.Duration
}

// Frontend is one MCP connection. It is the backend's way back to the
// client (Call, CallWithin, Notify); create it first, hand it to the
// backend, then call Serve.
type Frontend struct {
	log   *slog.Logger
	turn  string // the turnId of every call of this connection
	stop  context.Context
	abort context.CancelFunc

	mu       sync.Mutex
	calls    map[string]*callState // by toolCallId
	closed   bool
	inflight sync.WaitGroup

	// ws is the workspace calls run in.
	ws *workspace

	// Set by Serve, for the arrival hooks (Hooks).
	arriver   Arriver
	served    map[string]bool
	arrivals  map[string]Arrival // by toolCallId, until its handler takes it
	byRequest map[string]string  // toolCallId by JSON-RPC request id (idKey)
}

// New returns a Frontend that logs to log.
func New(log *slog.Logger) *Frontend {
	stop, abort := context.WithCancel(context.Background())
	return &Frontend{log: log, turn: newID("mcp_conn_"), stop: stop, abort: abort, calls: map[string]*callState{},
		arrivals: map[string]Arrival{}, byRequest: map[string]string{}, ws: newWorkspace(log)}
}

// callState is what the host→client side needs to know of one tools/call.
type callState struct {
	session  *sdk.ServerSession
	token    any  // progressToken, nil when the client sent none
	canAsk   bool // the client declared elicitation
	mu       sync.Mutex
	progress int64 // output bytes reported so far
	// noCard is set when a card could not be shown (no elicitation).
	noCard *cardInfo
}

type cardInfo struct {
	ToolCallID string  `json:"toolCallId"`
	ToolName   string  `json:"toolName"`
	Risk       string  `json:"risk"`
	Reason     string  `json:"reason"`
	Path       string  `json:"path"`
	Preview    string  `json:"preview"`
	Raw        cardRaw `json:"raw"`
	Delegate   string  `json:"delegate"`
	TimeoutMs  int64   `json:"timeoutMs"`
}

// legacyVersions are the protocol versions served. hostcore's card is a
// wait inside the running call (fail-closed timer, cancellation, the path
// recheck after approval); up to 2025-11-25 that is a server→client
// elicitation/create, while 2026-07-28 forbids such requests and wants the
// call to return and be re-entered (multi round-trip requests). A client
// asking for the newer version is answered with the newest one below it.
func legacyVersions() []string {
	var out []string
	for _, v := range sdk.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

// Serve binds the session and serves MCP on t until the client goes or
// ctx ends; then running calls are cancelled and drained.
func (f *Frontend) Serve(ctx context.Context, b Backend, opts Options, t sdk.Transport) error {
	listDir, where := opts.Workspace, "inside the workspace "+opts.Workspace
	if listDir == "" {
		listDir, where = opts.ToolsWorkspace, "inside the workspace the client's first root names"
	}
	listSession, err := b.EnsureSession(ctx, "mcp", listDir, opts.PermissionMode)
	if err != nil {
		return err
	}
	tools, err := b.FrontendTools(ctx, listSession)
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	outputs, err := outputSchemas(names)
	if err != nil {
		return fmt.Errorf("output schemas: %w", err)
	}
	f.ws.use(b, opts.PermissionMode)
	f.mu.Lock()
	f.arriver, _ = b.(Arriver)
	f.served = map[string]bool{}
	for _, tool := range tools {
		f.served[tool.Name] = true
	}
	if opts.Workspace != "" {
		f.ws.bind(opts.Workspace, listSession)
	}
	f.mu.Unlock()
	srv := sdk.NewServer(&sdk.Implementation{Name: "hostcore", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "hostcore runs these tools " + where +
			" under its permission policy; calls that need the user's approval are asked through elicitation.",
		Logger:                    f.log,
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		SupportedProtocolVersions: legacyVersions(),
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) {
			f.ws.initialized(f.stop, req.Session)
		},
		RootsListChangedHandler: func(_ context.Context, req *sdk.RootsListChangedRequest) {
			go f.ws.refresh(f.stop, req.Session)
		},
	})
	for _, tool := range tools {
		destructive, openWorld := tool.Destructive, tool.OpenWorld
		srv.AddTool(&sdk.Tool{
			Name:         tool.Name,
			Description:  tool.Description,
			InputSchema:  typedEnums(tool.InputSchema),
			OutputSchema: outputs[tool.Name],
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: tool.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: tool.Idempotent, OpenWorldHint: &openWorld},
		}, f.toolHandler(b, tool.Name))
	}
	f.log.Info("mcp session ready", "workspace", opts.Workspace, "permissionMode", opts.PermissionMode, "tools", len(tools))
	// The SDK, told to stop, waits for its running handlers before Run
	// returns: a signal must cancel them first, or a running Bash would
	// hold hostcore until it ended by itself.
	defer context.AfterFunc(ctx, f.close)()
	err = srv.Run(ctx, t)
	f.drain(opts.DrainTimeout)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// drain refuses new calls, cancels the running ones and waits for them.
func (f *Frontend) drain(timeout time.Duration) {
	if timeout <= 0 {
		timeout = 2500 * time.Millisecond
	}
	f.close()
	// Calls read but never given a handler (stdin closed right after
	// them) end as aborted, each with its audit row.
	f.mu.Lock()
	left := make([]Arrival, 0, len(f.arrivals))
	for id, a := range f.arrivals {
		left = append(left, a)
		delete(f.arrivals, id)
	}
	ar := f.arriver
	f.mu.Unlock()
	for _, a := range left {
		if ar != nil {
			ar.AbortArrival(a)
		}
	}
	done := make(chan struct{})
	go func() { f.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		f.log.Warn("calls still running at exit")
	}
}

// close refuses new calls and cancels the running ones.
func (f *Frontend) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.abort()
}

var errClosing = errors.New("hostcore is shutting down")

func (f *Frontend) toolHandler(b Backend, name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// A call registered as its line was read (Hooks) keeps the id and
		// the place it was given then.
		var arrival Arrival
		id, _ := req.Params.Meta[arrivalKey].(string)
		if id != "" {
			arrival = f.takeArrival(id)
		}
		var sessionID string
		if arrival == nil {
			id = newID("mcp_")
			var why string
			if sessionID, why = f.ws.session(ctx); why != "" {
				return refused(why), nil
			}
		}
		st := &callState{session: req.Session, token: req.Params.GetProgressToken()}
		if caps := req.Session.InitializeParams().Capabilities; caps != nil && caps.Elicitation != nil {
			st.canAsk = caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			if arrival != nil {
				f.arriver.AbortArrival(arrival)
			}
			return nil, errClosing
		}
		f.inflight.Add(1)
		f.calls[id] = st
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.calls, id)
			f.mu.Unlock()
			f.inflight.Done()
		}()

		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(f.stop, cancel)()

		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		var res any
		var err error
		if arrival != nil {
			res, err = f.arriver.ExecuteArrival(ctx, arrival, args)
		} else {
			res, err = b.Execute(ctx, Call{SessionID: sessionID, TurnID: f.turn, ToolCallID: id, ToolName: name, Args: args, PromptID: id})
		}
		if err != nil {
			var c rpc.Coded
			if errors.As(err, &c) && c.RPCCode() == rpc.CodeInvalidParams {
				// The model can correct its arguments: a result it
				// reads, not a protocol error its client may hide.
				return refused(err.Error()), nil
			}
			return nil, err
		}
		var noCard func() string
		if st.noCard != nil {
			noCard = func() string { return f.noCardMessage(b, st.noCard) }
		}
		return toResult(res, noCard)
	}
}

// refused is an isError result without structuredContent (there is no
// ToolResult to conform to the output schema): what the model reads.
func refused(why string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: why}}}
}

// arrivalKey is the _meta key the Request hook adds to a tools/call: the
// toolCallId the call was registered under.
const arrivalKey = "hostcore/toolCallId"

// Hooks are the rpc.MessageLines hooks of this frontend. The SDK runs each
// tools/call on a goroutine of its own, so the order in which handlers
// start is not the order the calls were sent; the Request hook registers
// each call as its line is read (Arriver), so one session's
// pipelined mutations apply in arrival order, as in the native mode. A
// call the SDK answers without running a handler (an unknown tool, bad
// params) is dropped when its answer is written.
func (f *Frontend) Hooks() *rpc.LineHooks {
	return &rpc.LineHooks{Request: f.arrive, Answered: f.answered}
}

func (f *Frontend) arrive(id json.RawMessage, method string, params json.RawMessage) json.RawMessage {
	if method == "initialize" {
		f.ws.sawInitialize(params)
	}
	if method != "tools/call" {
		return nil
	}
	f.mu.Lock()
	ar, served := f.arriver, f.served
	f.mu.Unlock()
	// A call read while no workspace is bound yet is not registered: its
	// handler waits for the roots and runs it unregistered.
	sessionID := f.ws.current()
	var p map[string]json.RawMessage
	if ar == nil || sessionID == "" || json.Unmarshal(params, &p) != nil {
		return nil
	}
	var name string
	if json.Unmarshal(p["name"], &name) != nil || !served[name] {
		return nil
	}
	meta := map[string]json.RawMessage{}
	if m := p["_meta"]; len(m) > 0 && string(m) != "null" && json.Unmarshal(m, &meta) != nil {
		return nil
	}
	callID := newID("mcp_")
	meta[arrivalKey], _ = json.Marshal(callID)
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	// The args go along only so that a call aborted before its handler
	// starts (AbortArrival) is audited with them.
	a := ar.Arrive(Call{SessionID: sessionID, TurnID: f.turn, ToolCallID: callID, ToolName: name, PromptID: callID, Args: p["arguments"]})
	f.mu.Lock()
	f.arrivals[callID] = a
	f.byRequest[idKey(id)] = callID
	f.mu.Unlock()
	// Its handler starts at once; one that has not within arrivalMax never
	// will (the SDK dropped the call without an answer): the mutations
	// after it must not wait for it. A handler that does start later runs
	// the call unregistered.
	time.AfterFunc(arrivalMax, func() {
		if a := f.takeArrival(callID); a != nil {
			a.Drop()
		}
	})
	return out
}

// arrivalMax bounds how long a registered call waits for its handler.
const arrivalMax = 10 * time.Second

// answered drops the registration of a call whose handler never took it.
func (f *Frontend) answered(id json.RawMessage) {
	f.mu.Lock()
	key := idKey(id)
	callID, ok := f.byRequest[key]
	delete(f.byRequest, key)
	a := f.arrivals[callID]
	delete(f.arrivals, callID)
	f.mu.Unlock()
	if ok && a != nil {
		a.Drop()
	}
}

func (f *Frontend) takeArrival(callID string) Arrival {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.arrivals[callID]
	delete(f.arrivals, callID)
	return a
}

// idKey is a request id as the same text whichever way it was written
// ("\u0061" and "a", 5 and 5.0 are not told apart by the SDK either).
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func (f *Frontend) noCardMessage(b Backend, c *cardInfo) string {
	what := c.ToolName
	if c.Reason == "outside-path" {
		what += " on a path outside the workspace"
	}
	msg := fmt.Sprintf("%s needs the user's permission, and this MCP client cannot ask "+
		"(it did not declare the elicitation capability), so the call was denied without running (fail-closed).", what)
	if m := b.ModeWithoutCard(c.ToolName, c.Reason); m != "" {
		// The way round it is for the person who starts hostcore, not for
		// the model, which could write it into its own client's settings.
		f.log.Warn("a call needing permission was denied: this MCP client cannot ask (no elicitation capability); "+
			"starting hostcore with --permission-mode "+m+" lets such calls run without asking", "tool", c.ToolName, "reason", c.Reason)
	}
	return msg
}

// toResult maps a ToolResult onto MCP: content as text, the rest of the
// envelope as structuredContent. noCard, when set, says why a call was
// denied because this client cannot be shown a card: that replaces the
// denial's message and content.
func toResult(res any, noCard func() string) (*sdk.CallToolResult, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var env struct {
		IsError   bool   `json:"isError"`
		ErrorCode string `json:"errorCode"`
		Decision  string `json:"decision"`
		Content   []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	var structured map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &structured); err != nil {
		return nil, err
	}
	out := &sdk.CallToolResult{IsError: env.IsError, Content: []sdk.Content{}}
	if noCard != nil && env.ErrorCode == "TOOL_DENIED" && env.Decision == "deny" {
		msg := noCard()
		structured["message"] = msg
		out.Content = append(out.Content, &sdk.TextContent{Text: msg})
	} else {
		for _, c := range env.Content {
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	delete(structured, "content")
	delete(structured, "isError")
	out.StructuredContent = structured
	return out, nil
}

func (f *Frontend) lookup(toolCallID string) *callState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[toolCallID]
}

// errNoElicitation fails a card closed for a client that cannot be asked.
var errNoElicitation error = noElicitation{}

// noElicitation is the answer to a card this client cannot be shown. Its
// NotSent makes the call's audit row say no card was shown (prompted:
// false), as for a card that could not be sent at stdin EOF.
type noElicitation struct{}

func (noElicitation) Error() string {
	return "the MCP client did not declare elicitation: permission cannot be asked"
}
func (noElicitation) NotSent() bool { return true }

// errNotServed answers host→client requests that have no MCP mapping.
var errNotServed = errors.New("not available over MCP")

// Call sends a host→client request: a permission card becomes an
// elicitation; anything else fails closed.
func (f *Frontend) Call(ctx context.Context, method string, params, result any) error {
	switch method {
	case "permission.request":
		var card cardInfo
		if err := remarshal(params, &card); err != nil {
			return err
		}
		st := f.lookup(card.ToolCallID)
		if st == nil {
			return fmt.Errorf("permission.request for unknown call %q", card.ToolCallID)
		}
		if !st.canAsk {
			st.mu.Lock()
			st.noCard = &card
			st.mu.Unlock()
			return errNoElicitation
		}
		decision, err := f.elicit(ctx, st.session, &card)
		if err != nil {
			return err
		}
		return remarshal(map[string]string{"decision": decision}, result)
	default:
		f.log.Info("host→client request has no MCP mapping; failing closed", "method", method)
		return fmt.Errorf("%s: %w", method, errNotServed)
	}
}

// Decisions offered on the elicitation form (perms' answers).
const (
	allowOnce    = "allow-once"
	allowSession = "allow-session"
	deny         = "deny"
)

// cardSchema is the form: one required field, a titled single-select.
var cardSchema = json.RawMessage(`{"type":"object","properties":{"decision":{"type":"string","title":"Decision",` +
	`"description":"Allow this call once, allow this tool for the rest of the session, or deny it.",` +
	`"oneOf":[{"const":"allow-once","title":"Allow once"},{"const":"allow-session","title":"Allow for this session"},{"const":"deny","title":"Deny"}]}},` +
	`"required":["decision"]}`)

// elicit shows the card as a form. Anything but an accepted form naming
// one of the three decisions is a deny.
func (f *Frontend) elicit(ctx context.Context, ss *sdk.ServerSession, c *cardInfo) (string, error) {
	msg := fmt.Sprintf("hostcore: allow %s (risk %s)?", c.ToolName, c.Risk)
	if c.Path != "" {
		msg = fmt.Sprintf("hostcore: allow %s on %s (risk %s)?", c.ToolName, c.Path, c.Risk)
	}
	if c.Reason == "outside-path" {
		msg += " The path is outside the workspace."
	}
	if c.Delegate != "" {
		msg += " Requested by subagent " + c.Delegate + "."
	}
	if body := c.body(); body != "" {
		msg += "\n\n" + body
	}
	if c.TimeoutMs > 0 {
		msg += fmt.Sprintf("\n\nWithout an answer within %s the call is denied.", time.Duration(c.TimeoutMs)*time.Millisecond)
	}
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: msg, RequestedSchema: cardSchema})
	if err != nil {
		return "", err
	}
	if res.Action != "accept" {
		return deny, nil
	}
	switch d, _ := res.Content["decision"].(string); d {
	case allowOnce, allowSession, deny:
		return d, nil
	}
	return deny, nil
}

// CallWithin is Call with the reply due within d (0: no bound). A reply
// is acted on as it comes here: there is nothing to wait behind.
func (f *Frontend) CallWithin(ctx context.Context, d time.Duration, method string, params, result any) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return f.Call(ctx, method, params, result)
}

// Notify sends a host→client notification: tool.output becomes progress;
// the others are dropped.
func (f *Frontend) Notify(ctx context.Context, method string, params any) error {
	if method != "tool.output" {
		f.log.Debug("host→client notification has no MCP mapping; dropped", "method", method)
		return nil
	}
	var o struct {
		ToolCallID string `json:"toolCallId"`
		Stream     string `json:"stream"`
		Seq        int64  `json:"seq"`
		Data       string `json:"data"`
	}
	if err := remarshal(params, &o); err != nil {
		return err
	}
	st := f.lookup(o.ToolCallID)
	if st == nil || st.token == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock() // keeps the chunks of one call in order
	st.progress += int64(len(o.Data))
	return st.session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		ProgressToken: st.token,
		Progress:      float64(st.progress),
		Message:       o.Data,
		Meta:          sdk.Meta{"hostcore/stream": o.Stream, "hostcore/seq": o.Seq},
	})
}

func remarshal(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
