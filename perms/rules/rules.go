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

// wrappers are programs whose arguments are another command or code to
// run: a rule for one of them would allow anything, so no suggestion
// starts with one and no rule that does matches.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true, "csh": true, "tcsh": true, "busybox": true,
	"env": true, "sudo": true, "su": true, "doas": true, "pkexec": true, "runuser": true, "chroot": true, "unshare": true, "nsenter": true,
	"eval": true, "exec": true, "command": true, "builtin": true, "source": true, ".": true, "alias": true, "trap": true,
	"nohup": true, "timeout": true, "nice": true, "ionice": true, "stdbuf": true, "setsid": true, "taskset": true, "chrt": true,
	"flock": true, "xargs": true, "parallel": true, "watch": true, "time": true, "strace": true, "ltrace": true, "script": true,
}

// dirChangers change the directory later parts run in, so a relative
// redirection after one no longer names a file under the workspace.
var dirChangers = map[string]bool{"cd": true, "pushd": true, "popd": true}

// Wrapper says whether a program runs the command or code its arguments
// give (bash, env, sudo, xargs, ...).
func Wrapper(program string) bool { return wrappers[program] }

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
	if p.Shape != "" || p.Env || len(p.Words) == 0 {
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
	if len(prefix) == 0 || wrappers[prefix[0]] || len(words) < len(prefix) {
		return false
	}
	for i, w := range words {
		if i < len(prefix) {
			if !w.Literal || w.Value != prefix[i] {
				return false
			}
		} else if !w.Inert {
			return false
		}
	}
	return true
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
	case wrappers[p.Words[0].Value]:
		return nil, fmt.Sprintf("no command rule is offered: %s runs the command or code it is given, so a rule for it would allow anything", p.Words[0].Value)
	}
	for _, w := range p.Words {
		if !w.Literal || w.Value == "" || strings.HasPrefix(w.Value, "-") && len(prefix) > 0 {
			break
		}
		prefix = append(prefix, w.Value)
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
	return out, nil
}
