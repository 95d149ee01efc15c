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
// a subscript) are never matched.
//
// A rule is safe only if what follows its prefix cannot pick code to run,
// so the matcher is conservative, and a card too many is the price:
//
//   - Programs that run the code or command their arguments give (shells,
//     interpreters, awk, sed, find, xargs, env, sudo, ssh, nohup, …) and
//     builtins that evaluate an argument as arithmetic or a subscript
//     (test -v 'a[$(id)]', read, printf -v, unset, declare, …) never get a
//     rule. They are compared by base name, lower-cased, without .exe or a
//     trailing version, so /bin/bash and python3.12 are caught.
//   - Programs with subcommands (git, npm, go, cargo, docker, tar, …) need
//     the subcommand in the rule: their bare options run code (git -c
//     alias.x='!sh', npm exec, tar -I). make alone may be a rule: its
//     targets are the workspace's Makefile, and its options and variables
//     are refused as below.
//   - A later word that is or may become an option (starts with "-", or
//     expands from a glob, brace, quote or backslash at its start) matches
//     only after a "--" word: npm test --script-shell=sh, rg --pre=CMD and
//     sort --compress-program=PROG choose a program to run. A plain
//     parameter stays allowed: its value comes from hostcore's
//     environment, since a line that assigns one never matches.
//   - A NAME=value word (make's variables) and a word holding "[" with
//     "$(" or a backquote (a subscript some builtin or program evaluates)
//     never match.
//   - A redirection that writes goes to /dev/null or the scratch dir
//     only. Into the workspace it would change files with no Write card,
//     snapshot or review, and two harmless rules would combine into code
//     execution (echo >> .git/config, then git status runs its fsmonitor).
//     A reading redirection may name the workspace or the scratch dir.
//
// The matcher only turns a card into no card. It runs after the policy
// (perms.Decide) has asked for a card for the tool itself: the operating
// mode's denies, the sensitive-path denylist, outside-path cards and the
// unsandboxed call's card all come first and no rule reaches them. The
// handlers offer and apply command rules only when the command runs under
// Landlock (not with sandbox "off", commandSandbox "off" or no Landlock),
// so a command a rule allowed is confined like any other.
package rules
