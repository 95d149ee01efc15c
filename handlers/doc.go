// Package handlers implements hostcore's methods: lifecycle and settings
// (settings.go), sessions (session.go), cancels and queries (calls.go),
// review.rollback (review.go), approvals and the mode tools (approval.go,
// control.go), plugins (plugins.go) and the tools.execute envelope. The
// tools themselves live in handlers/tools, one file a tool; policy lives in
// perms (redaction in perms/redact), containment and processes in sandbox,
// persistence in store.
//
// # The envelope
//
// Every tool call takes one route, in this order:
//
//  1. On the read goroutine (ticket.go): the params are decoded once, the
//     call is registered in its session's running calls and, for a
//     Write or Edit, takes its place in the session's mutation order. No
//     store is read there: the session and the permission mode in force
//     are looked up by the call's own goroutine, and a configuring method
//     first completes the lookups of the calls read before it, so a call
//     is judged as things stood when its line was read.
//  2. execute.go: the identifiers are checked; an id that ran before is
//     refused.
//  3. decideAndRun: the operating-mode matrix and the delegate's rights
//     (modes.go); the args are decoded once into interface{} values,
//     validated once against the tool's compiled schema, and decoded
//     once into the tool's argument struct; the explicit path is resolved
//     against the roots by sandbox (target.go) and checked against the
//     denylist; Bash's command is read by the denylist (bash_denylist.go)
//     and the turn's shell is checked; then the tool's own precheck.
//  4. perms decides: allow, deny, or ask with a card (permission.go) whose
//     text is redacted and escaped by perms/redact.
//  5. After every wait, right before the body: the mutation order and
//     slot, the path resolved again when a card was open, the mode gate,
//     the call id reserved for a call with effects.
//  6. The tool's body runs (runBody), typed in and typed out; a panic is
//     a TOOL_FAILED result.
//  7. audit.go: one audit row is committed, then the answer is written;
//     the timing line is logged after it (ToolResult.AfterReply).
//
// A failure the model should see is a result (ok:false, an errorCode); a
// broken envelope is a JSON-RPC error (errors.go).
//
// # Typed tools
//
// A tool is a tools.Tool[Args, Details]: its Spec (policy class, risk,
// explicit path, modes), its JSON Schema embedded from
// handlers/tools/schemas (every parameter described, compiled once at
// start-up: a schema that does not compile stops the program), and a body
// func(ctx, *tools.Call, Args) (tools.Out[Details], error). One registry
// (tools.Registry) holds the built-in tools and those plugins register.
// The mode tools are the session's state machine and are declared here,
// beside the session methods, as typed tools of the same registry; a
// plugin's tool (tools.Plugin) is a Tool[json.RawMessage, json.RawMessage]
// whose body asks the client. A body reaches hostcore only through tools.Host, which the
// envelope's call implements.
package handlers
