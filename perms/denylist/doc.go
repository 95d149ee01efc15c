// Package denylist decides whether a shell command or a file tool's path
// names a sensitive path outside the workspace: ~/.ssh, ~/.aws, browser
// profiles, keychains, /etc/shadow and the like (Builtin), and the
// user's own entries. Such a command is denied in every permission mode,
// before any card.
//
// It is a tripwire against an agent wandering into credentials, not the
// security boundary: a path built at run time (d=.ssh; cat ~/$d/id_rsa)
// is not seen. Within that, it reads the text wider than bash would,
// never narrower.
//
// # How a command is read
//
// CheckCommand reads the command several ways; a path any of them sees is
// denied:
//
//   - flatly (flatWords): quotes and backslashes removed, blanks,
//     operators, = and , splitting words. Nothing subtler can throw it off.
//   - as bash reads it: parsed by mvdan.cc/sh/v3/syntax, every word of the
//     tree (arguments, assignments, redirections, loop items, case
//     patterns, arithmetic, substitutions' own commands) rendered with its
//     quoted characters marked, then brace-expanded by bash's rules
//     (braces.go). $'...' is decoded by expand; a variable is read as
//     empty, a parameter's operand as a value it may take, a substitution
//     as empty and as any text; $HOME, $PWD and $OLDPWD are home and the
//     workspace, and operations on them (${HOME%/*}) are worked out by
//     expand. Nothing is run and no other variable is looked up.
//     Heredoc bodies and comments are not words of the command.
//   - relaxed: heredoc bodies, the contents of quoted strings and every
//     word holding a blank are read again as commands (bash -c '...',
//     eval, sh <<EOF), up to maxSubstDepth rounds deep. A text the parser
//     rejects is read for what parsed before the error, loosely (loose),
//     and line by line: a line the parser rejects may be one bash runs.
//     The parser supplies missing closing tokens, so a stray quote hides
//     nothing after it.
//   - each of these once more with continued lines joined, and with
//     extended glob groups (@(shadow)) read as "*".
//
// A word names an entry when, read as a path (a tilde or $HOME is the
// home directory, ~user any home, a relative word lies in the
// workspace), it is the entry or lies under it, matched as a glob the way
// the shell would (dotglob, nocaseglob, globstar and extglob counted when
// the command mentions them; without case on macOS). procfs aliases
// (/proc/self/root, /dev/fd) are followed, and so are links: a workspace
// link to ~/.ssh, an entry that is itself a link, and globs that name a
// link. A command that reads whole trees (grep -r, find, tar, cp -a, ln)
// may not name a directory above an entry either.
//
// # Bounds
//
// The check fails closed: a command it cannot read within its bounds is
// denied as too complex. The bounds are brace expansion's work and words
// (maxBraceSteps and the rest), the nesting of substitutions and operands
// (maxSubstDepth), the nesting of parentheses the parser is given
// (maxNesting), the bytes and texts the relaxed readings read
// (maxRelaxedBytes, maxRelaxedTexts), and the directory entries globs
// may list (globLinkBudget). Past the brace budget a word is read
// starred (a group of plain alternatives as "*") before it is called too
// complex, so ordinary commands with many braces pass.
//
// The same entries guard the file tools (MatchPath): a Read, Write or
// Edit of an outside path, a Grep or a descending Glob above one.
package denylist
