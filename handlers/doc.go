// Package handlers implements hostcore's methods and the tools.execute
// envelope: lifecycle and settings (settings.go), sessions (session.go),
// cancels and queries (calls.go), approvals (approval.go), plugins
// (plugins.go), the frontend door (frontend.go) and the route every tool
// call takes (execute.go). What a method family or a step of the route
// needs of no call lives in a package of its own below: the tools, one
// file a tool (tools); the operating modes and the mode tools (modes);
// the review record and rollback (review); mutation order and file locks
// (order); failure counts (failcount); the shell catalog rules (shells);
// a frontend's rules (frontend); audit.query's answer (auditquery); the
// JSON-RPC error (rpcerr). Policy lives in perms, containment and
// processes in sandbox, persistence in store.
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
//  3. checkCall: the operating-mode matrix and the delegate's rights
//     (modes); the args are decoded once into interface{} values,
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
// broken envelope is a JSON-RPC error (rpcerr).
//
// A tool is a tools.Tool[Args, Details] of one registry (tools.Registry):
// the built-in tools, the mode tools, and those plugins register. Its body
// reaches hostcore only through tools.Host, which the envelope's call
// implements (tools.go).
package handlers
