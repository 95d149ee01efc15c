package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"hostcore/perms/denylist"
)

// Kinds of rule.
const (
	// KindTool allows every call of one tool in one workspace.
	KindTool = "tool"
	// KindCommand allows Bash commands that start with a prefix of words.
	KindCommand = "command"
)

// Rule is a command rule as the matcher reads it.
type Rule struct {
	ID     string
	Prefix []string
}

// Roots are where a redirection of an allowed command may point: the
// session's workspace and scratch directories (canonical, absolute).
type Roots struct {
	Workspace, Scratch string
}

// neverRules are programs no rule is for: no suggestion starts with
// one, a reply naming one is a deny, and a stored rule that starts with
// one matches nothing. They run the command or code their arguments give
// (shells, interpreters, awk, sed, find, xargs, env, sudo, ssh, ...), or
// are shell builtins that evaluate an argument as arithmetic or a
// subscript (test -v 'a[$(id)]', read, printf -v, unset, declare, ...),
// which runs a command hidden in quotes no parser sees. They are compared
// by base name, lower-cased, with a trailing ".exe" and version dropped
// (/usr/bin/python3.12 is python).
var neverRules = setOf(
	// Shells and their launchers.
	"sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "mksh", "pdksh", "yash", "fish", "csh", "tcsh", "elvish", "nu", "xonsh",
	"busybox", "toybox", "pwsh", "powershell", "cmd", "script",
	// Interpreters and package runners.
	"python", "pypy", "ipython", "jython", "node", "nodejs", "deno", "bun", "bunx", "npx", "pnpx", "uvx", "pipx",
	"perl", "ruby", "irb", "jruby", "php", "lua", "luajit", "rscript", "r", "tclsh", "wish", "expect", "osascript",
	"julia", "guile", "racket", "java", "jshell", "groovy", "scala", "kotlin", "swift", "dotnet-script", "gdb", "lldb",
	// Programs whose arguments are code or commands.
	"awk", "gawk", "mawk", "nawk", "sed", "gsed", "find", "gfind", "xargs", "parallel", "env", "vi", "vim", "nvim", "view", "ex",
	"ed", "emacs", "ssh", "rsh", "rsync", "scp", "sftp",
	// Programs that run another program.
	"sudo", "su", "doas", "pkexec", "runuser", "chroot", "unshare", "nsenter", "firejail", "bwrap", "systemd-run",
	"nohup", "timeout", "gtimeout", "nice", "renice", "ionice", "stdbuf", "setsid", "taskset", "chrt", "flock", "watch",
	"time", "strace", "ltrace", "valgrind",
	// Builtins that run code, change what later words mean, or evaluate
	// arithmetic and subscripts.
	"eval", "exec", "command", "builtin", "source", ".", "alias", "unalias", "trap", "test", "[", "[[", "read", "printf",
	"unset", "wait", "mapfile", "readarray", "getopts", "compgen", "complete", "compopt", "declare", "typeset", "local",
	"export", "readonly", "let", "set", "shopt", "hash", "enable", "type", "fc", "history", "bind", "ulimit", "umask",
	"kill", "shift", "exit", "return", "break", "continue", "caller", "disown", "jobs", "fg", "bg", "pushd", "popd", "dirs",
)

// needSubcommand are programs whose first argument picks what they do
// (git status, npm test, tar xzf): a rule for one of them names at least
// that word, since the bare program would also allow its commands that
// run code (git -c alias…, npm exec, tar's compress program).
var needSubcommand = setOf(
	"git", "npm", "yarn", "pnpm", "go", "cargo", "rustup", "docker", "podman", "kubectl", "helm", "gh", "tar", "pip", "uv",
	"poetry", "dotnet", "brew", "apt", "apt-get", "systemctl", "terraform", "bazel", "mvn", "gradle", "composer", "gem",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// baseName is how a program is compared with the lists above: its base
// name lower-cased (a case-insensitive file system runs /bin/BASH as
// bash), without ".exe", and, when the name with its trailing version
// (digits, dots, dashes) dropped is in list, that name.
func baseName(program string, list map[string]bool) string {
	b := strings.ToLower(program[strings.LastIndexAny(program, `/\`)+1:])
	b = strings.TrimSuffix(b, ".exe")
	if t := strings.TrimRight(b, "0123456789.-"); t != "" && t != b && list[t] {
		return t
	}
	return b
}

// Wrapper says whether no rule may be for program (see neverRules).
func Wrapper(program string) bool { return neverRules[baseName(program, neverRules)] }

// allowedPrefix says whether a rule may have prefix: not for a program of
// neverRules, and more than the bare program for one of needSubcommand.
func allowedPrefix(prefix []string) bool {
	if len(prefix) == 0 || Wrapper(prefix[0]) {
		return false
	}
	return len(prefix) > 1 || !needSubcommand[baseName(prefix[0], needSubcommand)]
}

// dirChangers change the directory later parts run in, so a relative
// redirection after one no longer names a file under the workspace.
var dirChangers = map[string]bool{"cd": true, "pushd": true, "popd": true}

// Match reports whether every part of line is allowed by some rule, and
// returns the ids of the rules that allowed it, each once, in the order
// the parts use them. A line that does not parse, or has a part of any
// other shape than a simple command in a plain list (see denylist.Part),
// is not matched. A part is allowed by a rule when:
//
//   - it has no assignment before its program (FOO=1 npm test: a variable
//     such as PATH, NODE_OPTIONS or LD_PRELOAD changes what runs);
//   - its first words are literally the rule's words (quotes removed,
//     compared byte for byte, so a look-alike letter is another word);
//   - every later word is inert: globs, braces, a tilde and plain
//     parameters, nothing that runs a command ($(…), `…`, <(…), $((…)));
//   - every redirection duplicates a descriptor, feeds inert text
//     (<<EOF, <<<), or names /dev/null or a literal path without ".."
//     inside the workspace or scratch once its links are followed (a
//     relative one only while no part of the line changes directory).
func Match(line string, rules []Rule, roots Roots) ([]string, bool) {
	parts, err := denylist.Parts(line)
	if err != nil || len(parts) == 0 {
		return nil, false
	}
	moves := false
	for _, p := range parts {
		if len(p.Words) > 0 && dirChangers[p.Words[0].Value] {
			moves = true
		}
	}
	var ids []string
	for _, p := range parts {
		r, ok := matchPart(p, rules, roots, moves)
		if !ok {
			return nil, false
		}
		if !contains(ids, r.ID) {
			ids = append(ids, r.ID)
		}
	}
	return ids, true
}

// matchPart is the first rule that allows one part.
func matchPart(p denylist.Part, rules []Rule, roots Roots, moves bool) (Rule, bool) {
	if p.Shape != "" || p.Env || len(p.Words) == 0 || linkToNeverRule(p.Words[0], roots) {
		return Rule{}, false
	}
	for _, r := range p.Redirs {
		if !redirAllowed(r, roots, moves) {
			return Rule{}, false
		}
	}
	for _, r := range rules {
		if prefixOf(r.Prefix, p.Words) {
			return r, true
		}
	}
	return Rule{}, false
}

// prefixOf says whether prefix allows words.
func prefixOf(prefix []string, words []denylist.Word) bool {
	if !allowedPrefix(prefix) || len(words) < len(prefix) {
		return false
	}
	for i, w := range words[:len(prefix)] {
		if !w.Literal || w.Value != prefix[i] {
			return false
		}
	}
	options := true
	for _, w := range words[len(prefix):] {
		switch {
		case !w.Inert || hidesCode(w.Value) || assignment(w):
			return false
		case options && w.Literal && w.Value == "--":
			options = false
		case options && mayBeOption(w):
			return false
		}
	}
	return true
}

// mayBeOption says whether w may reach the program as an option: it
// starts with "-" (npm test --script-shell=X, rg --pre=CMD), or, for a
// word that expands, it does not start with a plain character or a
// parameter: a glob takes the names of files (a file named --pre=x
// matches *), and a brace, a quote or a backslash may make a "-". Such a
// word is allowed only after a "--" word. A parameter's value comes from
// hostcore's environment: a line that assigns one is never matched.
func mayBeOption(w denylist.Word) bool {
	if w.Literal {
		// A literal word's value keeps a backslash before a character
		// that needs none (\-x runs as -x).
		return strings.HasPrefix(strings.TrimLeft(w.Value, `\`), "-")
	}
	v := strings.TrimPrefix(w.Value, `"`)
	if strings.HasPrefix(v, "$") {
		v = v[1:]
		return v == "" || !(v[0] == '{' || v[0] == '_' || isAlnum(v[0]))
	}
	return v == "" || !(isAlnum(v[0]) || strings.IndexByte("./_,:=%^", v[0]) >= 0)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// hidesCode says whether a word holds what a builtin or a program that
// evaluates subscripts would run ('a[$(id)]'): a "[" with "$(" or a
// backquote, quoted or not.
func hidesCode(v string) bool {
	return strings.Contains(v, "[") && (strings.Contains(v, "$(") || strings.Contains(v, "`"))
}

// assignment says whether w reads as NAME=value: make and others take it
// as a variable of the program (make test 'CC=$(shell id)'), so it needs
// a card whatever follows "--".
func assignment(w denylist.Word) bool {
	name, _, ok := strings.Cut(w.Value, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// writeOps are the redirections that write a file (>&file sends both
// outputs to it). A rule's command writes only to /dev/null, its own
// outputs or the scratch dir: into the workspace it would change files
// with no Write card, snapshot or review (echo x >> .git/config and a git
// rule run what the config says).
var writeOps = setOf(">", ">>", ">|", "<>", "&>", "&>>", ">&")

// linkToNeverRule says whether a program named by a path is a link to
// one no rule may be for (./tool -> /bin/bash): it runs as what it leads
// to. A path that does not resolve is judged by its name alone.
func linkToNeverRule(program denylist.Word, roots Roots) bool {
	p := program.Value
	if !program.Literal || !strings.ContainsAny(p, `/\`) {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(roots.Workspace, p)
	}
	real, err := filepath.EvalSymlinks(p)
	return err == nil && Wrapper(real)
}

// redirAllowed says whether a redirection of an allowed command may stay.
func redirAllowed(r denylist.Redir, roots Roots, moves bool) bool {
	switch {
	case r.Named:
		return false
	case r.FD:
		return true
	case r.Input:
		return r.Target.Inert
	case !r.Target.Literal:
		return false
	}
	p := r.Target.Value
	switch {
	case p == "/dev/null" || p == "/dev/stdout" || p == "/dev/stderr":
		return true
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		// The kernel reads link/.. as the parent of where link leads,
		// not as the directory link is in.
		return false
	case !filepath.IsAbs(p) && (moves || roots.Workspace == ""):
		return false
	case !filepath.IsAbs(p):
		p = filepath.Join(roots.Workspace, p)
	}
	p = resolved(p)
	if writeOps[r.Op] {
		return inside(resolved(roots.Scratch), p)
	}
	return inside(resolved(roots.Workspace), p) || inside(resolved(roots.Scratch), p)
}

// resolved is p with the links of its longest existing part followed, so
// that a link in the workspace that leads out of it (or a file that is
// such a link) is judged where it leads; "" (inside no root) when a part
// exists but does not resolve.
func resolved(p string) string {
	if p == "" {
		return ""
	}
	rest := ""
	for cur := filepath.Clean(p); ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		} else if _, err := os.Lstat(cur); err == nil {
			// There, but it does not resolve: a link that leads nowhere
			// yet (writing to it creates where it leads) or in a loop.
			return ""
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// inside says whether p is root or beneath it, by whole components.
func inside(root, p string) bool {
	if root == "" {
		return false
	}
	root, p = filepath.Clean(root), filepath.Clean(p)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Suggest is the prefix a card offers for a command rule: the program and
// its leading literal words up to the first flag (npm test for
// npm test -- --watch=false). It suggests nothing, and says why in note,
// for a line of several commands (a rule covers one command: the line
// would run again only if each part had a rule of its own), for a part of
// another shape, for an assignment before the program, and for a program
// that runs other commands (bash, env, sudo, xargs, ...: a rule for it
// would allow anything).
func Suggest(line string) (prefix []string, note string) {
	parts, err := denylist.Parts(line)
	switch {
	case err != nil:
		return nil, "no command rule is offered: the command does not parse"
	case len(parts) != 1:
		return nil, fmt.Sprintf("no command rule is offered: the line runs %d commands, and a rule covers one (a line runs without a card only when every part matches a rule)", len(parts))
	}
	p := parts[0]
	switch {
	case p.Shape != "":
		return nil, "no command rule is offered: the command is a " + p.Shape + ", not a simple command"
	case p.Env:
		return nil, "no command rule is offered: an assignment before the program can change what runs"
	case len(p.Words) == 0 || !p.Words[0].Literal:
		return nil, "no command rule is offered: the program's name is known only when the command runs"
	case Wrapper(p.Words[0].Value):
		return nil, fmt.Sprintf("no command rule is offered: %s runs code its arguments give (a command, a script, or a subscript it evaluates), so a rule for it would allow anything", p.Words[0].Value)
	}
	for _, w := range p.Words {
		if !w.Literal || w.Value == "" || strings.HasPrefix(w.Value, "-") && len(prefix) > 0 {
			break
		}
		prefix = append(prefix, w.Value)
	}
	if !allowedPrefix(prefix) {
		return nil, fmt.Sprintf("no command rule is offered: %s without its subcommand also runs code its options give", prefix[0])
	}
	return prefix, ""
}

// Quote is a prefix as the card shows it and a reply gives it: its words
// quoted for bash where they need it, joined by spaces.
func Quote(prefix []string) string {
	out := make([]string, len(prefix))
	for i, w := range prefix {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			q = w
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

// maxReplyPrefix bounds the prefix a reply may name: a suggestion's words
// come from a command of at most 128 KiB, quoted.
const maxReplyPrefix = 1 << 20

// ErrPrefix is wrapped by Shorten's errors.
var ErrPrefix = errors.New("invalid prefix")

// Shorten is the prefix a reply chose: the suggestion when the reply
// names none (""), else the reply's words, which must be the suggestion's
// first words (the user may shorten it, never change or extend it).
func Shorten(suggested []string, reply string) ([]string, error) {
	if len(suggested) == 0 {
		return nil, fmt.Errorf("%w: the card offered no command rule", ErrPrefix)
	}
	if strings.TrimSpace(reply) == "" {
		return suggested, nil
	}
	if len(reply) > maxReplyPrefix {
		return nil, fmt.Errorf("%w: a prefix of %d bytes is longer than any suggestion", ErrPrefix, len(reply))
	}
	parts, err := denylist.Parts(reply)
	if err != nil || len(parts) != 1 || parts[0].Shape != "" || parts[0].Env || len(parts[0].Redirs) > 0 {
		return nil, fmt.Errorf("%w: %q is not a list of words", ErrPrefix, reply)
	}
	words := parts[0].Words
	if len(words) > len(suggested) {
		return nil, fmt.Errorf("%w: %q is longer than the card's suggestion %q", ErrPrefix, reply, Quote(suggested))
	}
	out := make([]string, len(words))
	for i, w := range words {
		if !w.Literal || w.Value != suggested[i] {
			return nil, fmt.Errorf("%w: %q is not the card's suggestion %q or its first words", ErrPrefix, reply, Quote(suggested))
		}
		out[i] = w.Value
	}
	if !allowedPrefix(out) {
		return nil, fmt.Errorf("%w: %q is a program no rule may be for alone", ErrPrefix, reply)
	}
	return out, nil
}
