// Package rules is the matching of remembered approvals: the
// allow-always-command answer to a Bash card remembers a prefix of words
// (npm test), and a later command runs without a card when the parsed
// command, not its text, starts with it.
//
// Claude Code's prefix rules matched text and were bypassed by chaining
// (npm test && curl …). Here a line is parsed with the shell parser the
// denylist uses (mvdan.cc/sh, perms/denylist.Parts), and every part of it
// must be allowed by some rule: chaining, pipes and newlines join parts
// that are each judged; a subshell, a group, a loop, a conditional, a
// function, a command in the background, an assignment before the program
// (PATH=… npm test) and a word that runs code ($(…), `…`, <(…), $((…)),
// a subscript) are never matched, nor is a redirection to a file outside
// the workspace and scratch. A wrapper that runs what its arguments say
// (bash -c, env, sudo, xargs, command, exec, …) never gets a rule, so
// bash -c 'npm test; rm …' needs a card however the rules read.
//
// The matcher only turns a card into no card. It runs after the policy
// (perms.Decide) has asked for a card for the tool itself: the operating
// mode's denies, the sensitive-path denylist, outside-path cards and the
// unsandboxed call's card all come first and no rule reaches them, and
// the command sandbox confines an allowed command as it confines any.
package rules
