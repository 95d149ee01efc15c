// Package perms is hostcore's permission policy: a pure decision, the
// grants a user gave for a session, and the fail-closed wait for a card.
// It performs no I/O of its own; the card goes out through the small Asker
// interface its caller supplies.
//
// # The decision
//
// Decide maps (operating mode, effective permission mode, tool class,
// path class, grant) to allow, ask or deny, in a fixed order:
//
//  1. The operating mode comes first and wins over every permission mode
//     and grant: plan and goal refuse edits and plugin tools, because a
//     plan must not change the workspace before it is approved.
//  2. An explicit path outside the session's workspace and scratch roots
//     is asked ("outside-path") unless the mode is auto or the session
//     holds the outside grant for the tool.
//  3. Otherwise the tool's class decides: reads and control tools run;
//     edits run under accept-edits and auto, and always in the scratch
//     directory (the agent's own drafts); commands and medium or high
//     plugin tools run only under auto; low plugin tools run.
//
// The policy is written in classes, not tool names, so a new tool only
// picks its class. Refusals that do not depend on the mode (sensitive
// paths, see perms/denylist) come before Decide and hold in every mode.
//
// # Grants
//
// An allow-session answer is remembered in memory, per session, under
// GrantKey: the tool's name, or the tool's name marked as outside for an
// outside-path card. Approving Write inside the workspace therefore never
// approves writing outside it. A restart forgets every grant, and deleting
// a session drops its grants, so a grant never outlives the user's intent.
//
// # Remembered rules
//
// An allow-always answer is kept in the database per workspace
// (allow-always for the tool, allow-always-command for Bash commands that
// start with a prefix of words; perms/rules matches them on the parsed
// command). Request.Remembered lifts only the card the tool itself would
// get: the operating mode's denies come first and an outside-path card
// stands, so a rule is never wider than the tool's own card.
//
// # The wait
//
// Wait sends the card and waits at most the permission timeout. It fails
// closed: anything but one of the card's options (an error reply, a
// reply of another shape, a remembered answer the card did not offer, a
// vanished client, no reply in time) is a deny, and the tool never runs. The Answer says which, so the model is told
// "the user denied" only when the user did. A reply read in time counts
// even when it is acted on later (configuring methods read before it hold
// it back), unless the call was cancelled meanwhile; a card open when
// hostcore stops is denied as withdrawn.
package perms
