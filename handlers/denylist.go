package handlers

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"hostcore/sandbox"
)

// The Bash denylist (design section 5): a command whose text names a
// sensitive path outside the workspace is denied in every mode. The text
// is read several ways, and a path any of them sees is denied:
//
//   - flatly (flatWords): quotes and backslashes removed, operators and
//     = , splitting words; nothing subtler can throw it off;
//   - as bash reads it (shellWords, then expandAll): quotes marked, braces
//     expanded by bash's rules, variables and parameters read as what the
//     text shows; heredoc bodies and comments left out. A word this
//     reading cannot read within its bounds is too complex: the command is
//     denied (the check fails closed);
//   - the same, one line at a time, where too complex is not a denial: a
//     stray quote in a comment or a heredoc body cannot hide the lines
//     after it;
//   - each of these once more with continued lines joined, as bash joins
//     them before it reads words at all ($HO\<newline>ME).
//
// It is a tripwire, not a sandbox (README): a path built at run time
// (d=.ssh; cat ~/$d/id_rsa) is not seen.

// otherHomes are the home directories of any user, "" standing for any
// one component.
var otherHomes = [][]string{{"root"}, {"var", "root"}, {"private", "var", "root"}, {"home", ""}, {"Users", ""}}

// deniedPath returns the word of the command that names a sensitive path
// (or that is too complex to check), "" if none.
func deniedPath(command, workspace, home string, extra []string) string {
	return checkDenylist(command, workspace, home, extra).word
}

// denial is what checkDenylist found: the word that names a sensitive
// path, or (tooComplex) what could not be read within the bounds, said
// as a phrase (denied: the check fails closed).
type denial struct {
	word       string
	tooComplex bool
}

// extglobRe matches bash's extended glob groups, @(a|b) and the like:
// read as "*" when the command turns extglob on.
var extglobRe = regexp.MustCompile(`[@!+*?]\([^()]*\)`)

// globOpts are the shell options a command turns on that change how a
// glob reads; any mention of their names counts.
type globOpts struct {
	dotglob, nocase, globstar bool
	// recursive: the command reads or copies whole trees (grep -r, find,
	// tar, cp -a, rsync, ln): a directory above an entry names it too.
	recursive bool
}

func checkDenylist(command, workspace, home string, extra []string) denial {
	words, tooComplex := readWords(command, home, workspace)
	entries := builtinEntries(home)
	if len(extra) > 0 {
		entries = slices.Clone(entries)
		for _, e := range extra {
			entries = append(entries, entryPaths(e, home)...)
			entries = append(entries, linkedEntry(e, home)...)
		}
	}
	if w := firstDenied(words, entries, workspace, home); w != "" {
		return denial{word: w}
	}
	if tooComplex != "" {
		return denial{word: tooComplex, tooComplex: true}
	}
	return denial{}
}

// builtinEntries returns the component lists of the built-in entries for
// home, made once per home: every Bash call checks against them.
func builtinEntries(home string) [][]string {
	if e, ok := builtinEntriesByHome.Load(home); ok {
		return e.([][]string)
	}
	var entries [][]string
	for _, e := range builtinDenylist {
		entries = append(entries, entryPaths(e, home)...)
		entries = append(entries, linkedEntry(e, home)...)
	}
	builtinEntriesByHome.Store(home, entries)
	return entries
}

// linkedEntry is where an entry of home leads when it is itself a link
// (~/.ssh -> ~/dotfiles/ssh): that directory is as sensitive, and a path
// resolved through the link no longer names the entry as written. None
// when the entry is no link (or does not exist).
func linkedEntry(e, home string) [][]string {
	p := e
	if rest, ok := strings.CutPrefix(e, "~/"); ok {
		p = filepath.Join(home, rest)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || real == filepath.Clean(p) {
		return nil
	}
	return [][]string{components(real)}
}

var builtinEntriesByHome sync.Map

// readingTexts returns the texts a command is read as: itself, with its
// continued lines joined, and with extended glob groups (@(shadow)) read
// as "*" wherever they appear (whether extglob is on cannot be told from
// the text).
func readingTexts(command string) []string {
	texts := []string{command}
	if strings.Contains(command, "\\\n") {
		texts = append(texts, strings.ReplaceAll(command, "\\\n", ""))
	}
	if extglobRe.MatchString(command) {
		// A group with an alternative that starts with a dot matches
		// dotfiles (~/@(.ssh)): it is read as ".*" too.
		dotted := func(g string) string {
			for alt := range strings.SplitSeq(g[2:len(g)-1], "|") {
				if strings.HasPrefix(alt, ".") {
					return ".*"
				}
			}
			return "*"
		}
		for _, t := range texts {
			plain, dot := t, t
			for range maxExtglobDepth { // nested groups, innermost first
				u := extglobRe.ReplaceAllString(plain, "*")
				v := extglobRe.ReplaceAllStringFunc(dot, dotted)
				if u == plain && v == dot {
					break
				}
				plain, dot = u, v
			}
			texts = append(texts, plain)
			if dot != plain {
				texts = append(texts, dot)
			}
		}
	}
	return texts
}

// homeOps returns the command with each ${HOME<op>...} (and ${PWD...},
// ${OLDPWD...}, the workspace) whose operator trims or cuts the value
// (# ## % %% / // /# /% :offset:length) replaced by what it gives:
// ${HOME%me}me/.ssh is /home/me/.ssh.
func homeOps(command, home, workspace string) string {
	var b strings.Builder
	for i := 0; i < len(command); i++ {
		if !strings.HasPrefix(command[i:], "${") {
			b.WriteByte(command[i])
			continue
		}
		end := matching(command, i+1)
		body := strings.TrimSuffix(command[i+2:end], "}")
		name, op, operand := splitParam(body)
		value := map[string]string{"HOME": home, "PWD": workspace, "OLDPWD": workspace}[name]
		if v, ok := homeOp(value, op, unquote(markedText(operand))); ok && value != "" {
			b.WriteString(v)
		} else {
			b.WriteString(command[i:end])
		}
		i = end - 1
	}
	return b.String()
}

// markedText reads an operand as shell text: quotes removed, quoted
// characters marked.
func markedText(s string) string {
	var r shellReader
	r.read(s, maxSubstDepth)
	return strings.Join(r.words, " ")
}

// homeOp works out ${HOME<op>operand} for home, ok false when it cannot.
func homeOp(home, op, operand string) (string, bool) {
	switch op {
	case "#", "##", "%", "%%":
		re, err := regexp.Compile("^" + globRegexp(operand) + "$")
		if err != nil {
			return "", false
		}
		cuts := make([]int, 0, len(home)+1)
		for n := 0; n <= len(home); n++ {
			cuts = append(cuts, n)
		}
		if op == "##" || op == "%%" {
			slices.Reverse(cuts) // the longest match first
		}
		for _, n := range cuts {
			if op[0] == '#' && re.MatchString(home[:n]) {
				return home[n:], true
			}
			if op[0] == '%' && re.MatchString(home[len(home)-n:]) {
				return home[:len(home)-n], true
			}
		}
		return home, true
	case "/", "//", "/#", "/%":
		pat, rep, _ := strings.Cut(operand, "/")
		anchored := globRegexp(pat)
		switch op {
		case "/#":
			anchored, op = "^(?:"+anchored+")", "/"
		case "/%":
			anchored, op = "(?:"+anchored+")$", "/"
		}
		re, err := regexp.Compile(anchored)
		if err != nil || pat == "" {
			return "", false
		}
		if op == "/" {
			if loc := re.FindStringIndex(home); loc != nil {
				return home[:loc[0]] + rep + home[loc[1]:], true
			}
			return home, true
		}
		return re.ReplaceAllLiteralString(home, rep), true
	case ":":
		offs := strings.SplitN(operand, ":", 2)
		off, err := arithInt(offs[0])
		if err != nil {
			return "", false
		}
		if off < 0 {
			off += len(home)
		}
		off = max(0, min(off, len(home)))
		v := home[off:]
		if len(offs) == 2 {
			n, err := arithInt(offs[1])
			if err != nil {
				return "", false
			}
			if n < 0 {
				n += len(v)
			}
			v = v[:max(0, min(n, len(v)))]
		}
		return v, true
	}
	return "", false
}

// arithInt reads an offset of ${x:offset:length} as bash's arithmetic
// does for a plain number: empty is 0, 0x.. hex, 0.. octal; a sum or
// difference of such numbers too.
func arithInt(s string) (int, error) {
	s = strings.ReplaceAll(s, " ", "")
	if s == "" {
		return 0, nil
	}
	total, sign, start := 0, 1, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && (s[i] != '+' && s[i] != '-' || i == start) {
			continue
		}
		part := s[start:i]
		if part != "" && part != "+" && part != "-" {
			n, err := strconv.ParseInt(part, 0, 32)
			if err != nil {
				return 0, err
			}
			total += sign * int(n)
		}
		if i < len(s) {
			sign = 1
			if s[i] == '-' {
				sign = -1
			}
			start = i + 1
		}
	}
	return total, nil
}

// globRegexp spells a bash pattern (of ${x#pattern} and the like, where
// * and ? match '/' too) as a regular expression.
func globRegexp(p string) string {
	var b strings.Builder
	closed := true // as in bashGlob
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteByte('.')
		case '[':
			end, class := -1, ""
			if closed {
				end, class = bracket(p, i)
			}
			if end < 0 {
				b.WriteString(`\[`)
				closed = false
				continue
			}
			b.WriteString(class)
			i = end
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return b.String()
}

// maxExtglobDepth bounds the nesting of extended glob groups read.
const maxExtglobDepth = 8

// readWords returns every word the readings of a command see (see the
// top of this file), unquoted, and what the strict reading could not
// read within its bounds, "" if nothing. home and workspace, when known,
// are put for the operations on ${HOME...}, ${PWD...} and ${OLDPWD...}
// that can be worked out (see homeOps).
func readWords(command, home, workspace string) (words []string, tooComplex string) {
	// The relaxed readings, where too complex is no denial, share one
	// budget, and the texts they read are bounded in number and bytes:
	// the command's length and nesting do not multiply the work.
	relaxed := newBraceBudget()
	relaxedBytes := maxRelaxedBytes
	done := map[string]bool{}
	var queue []string
	texts := readingTexts(command)
	if strings.Contains(command, "${HOME") || strings.Contains(command, "PWD") {
		if t := homeOps(command, home, workspace); t != command {
			texts = append(texts, t)
		}
	}
	for _, t := range texts {
		words = append(words, flatWords(strings.ReplaceAll(t, "${HOME}", "$HOME"))...)
		script, bodies := splitHeredocs(t)
		ws, quoted, deep := shellWords(script)
		expanded, complex := newBraceBudget().expandAll(ws)
		words = append(words, expanded...)
		switch {
		case tooComplex != "":
		case deep:
			tooComplex = fmt.Sprintf("a nesting of substitutions and parameter expansions deeper than %d", maxSubstDepth)
		case complex != "":
			tooComplex = "the brace expansion of " + complex
		}
		// Relaxed: the text unsplit (the splitter may have misread a
		// comment or a heredoc), each line alone (a stray quote in a
		// comment or a heredoc body swallows no line after it), heredoc
		// bodies as the shell they may be fed to gets them, the contents
		// of quoted strings and every word holding a blank as commands
		// (bash -c '...', bash -c cat\ /etc/shadow).
		queue = append(queue, t)
		if strings.IndexByte(t, '\n') >= 0 {
			queue = append(queue, strings.Split(t, "\n")...)
		}
		queue = append(append(queue, bodies...), quoted...)
		queue = appendCommandWords(queue, expanded)
	}
	// The relaxed readings take the shortest texts first: a command
	// string is short, and padding that would spend the budget before it
	// is long. Texts found inside those (sh -c "bash -c '...'") are read
	// in the next round.
	count := 0
	for round := 0; len(queue) > 0 && round <= maxSubstDepth; round++ {
		slices.SortStableFunc(queue, func(a, b string) int { return len(a) - len(b) })
		var next []string
		for _, q := range queue {
			if done[q] {
				continue
			}
			if len(q) > relaxedBytes || count == maxRelaxedTexts {
				// Padding spent the bounds before this text: what is not
				// read cannot be let through.
				if tooComplex == "" {
					tooComplex = "more nested or repeated text than the check reads"
				}
				break
			}
			done[q] = true
			relaxedBytes -= len(q)
			count++
			ws, inner, _ := shellWords(q)
			more, _ := relaxed.expandAll(ws)
			words = append(words, more...)
			next = appendCommandWords(append(next, inner...), more)
		}
		queue = next
	}
	if tooComplex == "" && slices.ContainsFunc(queue, func(q string) bool { return !done[q] }) {
		tooComplex = fmt.Sprintf("command strings nested deeper than %d", maxSubstDepth)
	}
	return words, tooComplex
}

// firstDenied returns the first word that names one of the entries
// outside the workspace, "" if none.
func firstDenied(words []string, entries [][]string, workspace, home string) string {
	// Shell options that change how globs read, however spelled
	// (ext''glob, dot{glob,x}, $'dot\x67lob').
	mentioned := strings.Join(words, " ")
	opts := globOpts{
		dotglob:   strings.Contains(mentioned, "dotglob") || strings.Contains(mentioned, "GLOBIGNORE"),
		nocase:    strings.Contains(mentioned, "nocaseglob") || caseInsensitiveFS,
		globstar:  strings.Contains(mentioned, "globstar"),
		recursive: recursiveCommand(words),
	}
	seen := make(map[string]bool, len(words))
	globs := globCache{}
	budget := globLinkBudget // directory entries the command's globs may look at (workspaceLinks)
	for _, w := range words {
		for _, word := range gluedPaths(w) {
			if seen[word] {
				continue
			}
			seen[word] = true
			if d := deniedReading(word, entries, workspace, home, opts, globs, &budget); d {
				return w
			}
		}
	}
	return ""
}

// deniedReading says whether a path word names one of the entries
// outside the workspace: as written, as resolved (a workspace reached by
// an alias of its path, a link elsewhere), and, for a reading inside the
// workspace, through the links there, a link to another place inside
// followed up to maxLinkHops times.
func deniedReading(word string, entries [][]string, workspace, home string, opts globOpts, globs globCache, budget *int) bool {
	named := func(q string) bool {
		pc := components(q)
		for _, ec := range entries {
			if globs.namesEntry(pc, ec, opts) {
				return true
			}
		}
		return false
	}
	inside := func(q string) bool { return workspace != "" && sandbox.LexicallyInside(workspace, q) }
	queue := pathReadings(word, workspace, home)
	for hop := 0; len(queue) > 0 && hop <= maxLinkHops; hop++ {
		var next []string
		for _, p := range queue {
			switch {
			case p == anyPath:
				return true
			case !inside(p):
				if named(p) {
					return true
				}
				if r := resolvedPath(p); r != p {
					if inside(r) {
						next = append(next, r)
					} else if named(r) {
						return true
					}
				}
			default:
				// Inside as written (/ws/s/id_rsa, $PWD/s/id_rsa,
				// ~+/s/...): a link under the workspace may still lead
				// out, as for a relative word.
				if rel, err := filepath.Rel(workspace, p); err == nil && rel != "." {
					for _, r := range workspaceLinks(rel, workspace, budget) {
						next = append(next, walkPath(r, workspace, home)...)
					}
				}
			}
		}
		queue = next
	}
	return false
}

// maxLinkHops bounds how often deniedReading follows a link that leads
// to another place inside the workspace (a -> d1, d1/b -> ../d2, ...).
const maxLinkHops = 8

// resolvedPath returns p with the links of its longest existing part
// resolved (a link there to what does not exist, yet, reads as where it
// points); p when nothing of it resolves.
func resolvedPath(p string) string {
	q, tail := p, ""
	for {
		if real, err := filepath.EvalSymlinks(q); err == nil {
			return real + tail
		}
		if target, err := os.Readlink(q); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(q), target)
			}
			return filepath.Clean(target + tail)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return p
		}
		tail = "/" + filepath.Base(q) + tail
		q = parent
	}
}

// gluedPaths returns a word and the paths glued to the front of it: a
// short option's value (-o/root/.ssh/x, -C$HOME/.ssh), a file given with @
// (curl -d @$HOME/.aws/credentials), a path after '@', '=' or ':' (curl
// -F file=@/home/me/.netrc). A relative path (src/) is not cut.
func gluedPaths(w string) []string {
	out := []string{w}
	if len(w) < 2 || w[0] == '/' || w[0] == '~' || w[0] == '$' {
		return out
	}
	if w[0] == '@' {
		out = append(out, w[1:])
	}
	if w[0] == '-' && w[1] != '-' && len(w) > 2 {
		out = append(out, w[2:])
	}
	if i := strings.IndexAny(w, "/~$"); i > 0 && strings.IndexByte("@=:", w[i-1]) >= 0 {
		out = append(out, w[i:])
	}
	return out
}

// recursiveCommand says whether a command's words read or copy whole
// trees, or make links (a link to ~ is the whole home under a new name).
func recursiveCommand(words []string) bool {
	copying := false
	for _, w := range words {
		switch w {
		case "find", "tar", "rsync", "zip", "7z", "scp", "ln", "rg", "ag", "ack", "tree", "du",
			"--recursive", "--archive", "--dereference-recursive", "--include", "--files":
			return true
		case "cp":
			copying = true
		}
	}
	for _, w := range words {
		if len(w) < 2 || w[0] != '-' || w[1] == '-' || strings.ContainsFunc(w[1:], func(r rune) bool { return !unicode.IsLetter(r) }) {
			continue
		}
		if strings.ContainsAny(w[1:], "rR") || copying && strings.Contains(w[1:], "a") {
			return true
		}
	}
	return false
}

// maxRelaxedBytes bounds the bytes the relaxed readings of one command
// read, all texts together: four times the longest command.
const maxRelaxedBytes = 4 * maxCommandBytes

// appendCommandWords appends the words that hold a blank: values that may
// be commands (bash -c cat\ /etc/shadow, eval "$x").
func appendCommandWords(texts, words []string) []string {
	for _, w := range words {
		if strings.ContainsAny(w, " \t\n") {
			texts = append(texts, w)
		}
	}
	return texts
}

// maxRelaxedTexts bounds the texts the relaxed readings of a command
// read: its lines and quoted strings, quoted strings inside those (a
// command of 128 KiB has at most 64 Ki lines: all are read).
// maxRelaxedBytes bounds their bytes.
const maxRelaxedTexts = 1 << 17

// caseInsensitiveFS: macOS's disks ignore case by default, so ~/.SSH is
// ~/.ssh there.
var caseInsensitiveFS = goruntime.GOOS == "darwin"

// tildeRe matches the tilde prefixes: ~, ~user, ~+ ($PWD) and ~- ($OLDPWD).
var tildeRe = regexp.MustCompile(`^~(?:[+-]?[0-9]*|[A-Za-z0-9._*?-]*)(?:/|$)`)

// dirStackRe matches the tilde prefixes of the directory stack: ~+, ~-,
// ~N, ~+N, ~-N (the cwd, the cwd before a cd, pushd's entries).
var dirStackRe = regexp.MustCompile(`^[+-]?[0-9]*$`)

// pathReadings returns the absolute, lexically clean paths a word may
// name: a home spelling is the home directory ($HOME anywhere, ~; ~user is that
// user's home as the system says, and as /root, /home/user and
// /Users/user); ~+ and ~- are the workspace (the cwd, and the cwd before
// a cd); a relative word is read against the workspace, so ../../.ssh is
// seen (deniedReading follows the links of a reading inside it); procfs
// aliases are followed (see walkPath). A component that is a glob
// matching ".." (.?, .*: bash before 5.2, macOS's 3.2, matches it) is
// also read as "..".
func pathReadings(word, workspace, home string) []string {
	if strings.Contains(word, "$") {
		word = homeVars.ReplaceAllStringFunc(word, func(v string) string {
			if v == "$HOME" {
				return home
			}
			return workspace // $PWD, $OLDPWD
		})
	}
	var bases []string
	rest := word
	if loc := tildeRe.FindStringIndex(word); loc != nil {
		name := strings.TrimSuffix(word[1:loc[1]], "/")
		rest = word[1+len(name):]
		switch {
		case name == "":
			bases = []string{home}
		case dirStackRe.MatchString(name):
			bases = []string{workspace}
		case strings.ContainsAny(name, "*?["):
			// A glob may stand for any of them (~{+,x} read starred).
			bases = append(userHomes(name, home), workspace)
		default:
			bases = userHomes(name, home)
		}
	} else if strings.HasPrefix(word, "/") {
		bases = []string{""}
	} else if workspace != "" {
		// Relative: in the workspace, where deniedReading follows the
		// links that lead out (a repository may ship one to ~/.ssh).
		bases, rest = []string{workspace}, "/"+word
	}
	var out []string
	for _, b := range bases {
		if b == "" && !strings.HasPrefix(word, "/") && !strings.HasPrefix(rest, "/") {
			continue // an unknown home
		}
		p := b + rest
		out = append(out, walkPath(p, workspace, home)...)
		if strings.Contains(p, "/.") {
			parts := strings.Split(p, "/")
			changed := false
			for i, c := range parts {
				if len(c) > 1 && c[0] == '.' && c != ".." && strings.ContainsAny(c, "*?[") && globMatch(c, "..") {
					parts[i], changed = "..", true
				}
			}
			if changed {
				out = append(out, walkPath(strings.Join(parts, "/"), workspace, home)...)
			}
		}
	}
	return out
}

// workspaceLinks returns where a workspace-relative word leads through
// the links under the workspace, none when that is where it reads: the
// word with its links resolved (resolvedPath), and, when a component is a
// glob (?/id_rsa, */.ssh/x, [s]/id_rsa), each link the glob can name on
// the way, followed by the rest of the word (an adversarial review: a
// glob was not expanded through the link it matched). The globs of one
// command look at budget directory entries in all: past that a link is
// missed, as the words a command builds at run time are (the list is a
// tripwire), and no directory is read.
func workspaceLinks(word, workspace string, budget *int) []string {
	var out []string
	lexical := filepath.Join(workspace, word)
	if r := resolvedPath(lexical); r != lexical {
		out = append(out, r)
	}
	if !strings.ContainsAny(word, "*?[") {
		return out
	}
	parts := strings.Split(word, "/")
	var walk func(dir string, i int)
	walk = func(dir string, i int) {
		for i < len(parts) && (parts[i] == "" || parts[i] == ".") {
			i++
		}
		if i >= len(parts) || parts[i] == ".." {
			return // ".." is read lexically (pathReadings)
		}
		rest := strings.Join(parts[i+1:], "/")
		names := []string{parts[i]}
		if strings.ContainsAny(parts[i], "*?[") {
			if *budget <= 0 {
				return
			}
			// Never blocking: a directory swapped for a FIFO after its
			// Lstat below would hold os.Open, and the call, for good.
			f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return
			}
			ents, _ := f.ReadDir(*budget)
			f.Close()
			*budget -= len(ents)
			names = names[:0]
			for _, e := range ents {
				// Hidden names too: a shell option (dotglob) may be
				// set where this cannot see it.
				if globMatch(parts[i], e.Name()) {
					names = append(names, e.Name())
				}
			}
		}
		for _, name := range names {
			next := filepath.Join(dir, name)
			fi, err := os.Lstat(next)
			switch {
			case err != nil:
			case fi.Mode()&os.ModeSymlink != 0:
				out = append(out, strings.TrimSuffix(resolvedPath(next)+"/"+rest, "/"))
			case fi.IsDir():
				walk(next, i+1)
			}
		}
	}
	walk(workspace, 0)
	return out
}

// globLinkBudget bounds the directory entries workspaceLinks looks at for
// one command.
const globLinkBudget = 4096

// homeVars matches $HOME, $PWD and $OLDPWD anywhere in a word
// (/$HOME/.ssh is //home/me/.ssh).
var homeVars = regexp.MustCompile(`\$(?:HOME|PWD|OLDPWD)\b`)

// userHomes returns the home directories ~user may be: the current
// user's (a glob may stand for any name), the one the system gives, and
// the usual places.
func userHomes(name, home string) []string {
	homes := []string{home, "/home/" + name, "/Users/" + name}
	if name == "root" || strings.ContainsAny(name, "*?[") {
		homes = append(homes, "/root", "/var/root")
	}
	if !strings.ContainsAny(name, "*?[") {
		if dir := lookupHome(name); dir != "" {
			homes = append(homes, dir)
		}
	}
	return homes
}

// lookupHome returns a user's home directory as /etc/passwd gives it, ""
// if unknown. The file is read once: a lookup per name (os/user) cost
// 100 µs, and a command may hold thousands of ~names. (macOS keeps its
// users elsewhere; /Users/name stands for them.)
func lookupHome(name string) string {
	return passwdHomes()[name]
}

var passwdHomes = sync.OnceValue(func() map[string]string {
	homes := map[string]string{}
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return homes
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 6 && f[0] != "" {
			homes[f[0]] = f[5]
		}
	}
	return homes
})

// anyPath is the reading of a path too ambiguous to walk (more than four
// globs that may be procfs aliases): it names every entry.
const anyPath = "/\x00any"

// walkPath cleans an absolute path lexically, following procfs aliases
// as it goes, and returns what it may name: /proc/<process>/root (or
// .../task/<id>/root) is "/", and .../cwd is the command's working
// directory, the workspace, for the command's own processes (self,
// thread-self, $$, $BASHPID) and the home directory for any other
// (hostcore's own cwd, often ~, is not known here); /dev/fd is
// /proc/self/fd. A process left empty (${$} read as nothing:
// /proc//root) counts. Following them as it walks, a ".." after one
// climbs from where it points, a "." or ".." before it does not hide it,
// and aliases of aliases are followed too. The components may be globs
// (/proc/*/roo[t]); a glob that only may be an alias (/*/*) is read both
// ways.
func walkPath(p, workspace, home string) []string {
	var out []string
	forks := 4
	var walk func(st, comps []string, proc bool)
	walk = func(st, comps []string, proc bool) { // proc: st[0] is /proc
		for k, c := range comps {
			switch c {
			case "", ".":
				continue
			case "..":
				if len(st) > 0 {
					st = st[:len(st)-1]
				}
				continue
			}
			st = append(st, c)
			n := len(st)
			if n == 1 {
				proc = globMatch(c, "proc")
			}
			if n == 2 && st[0] == "dev" && st[1] == "fd" {
				st, proc = append(st[:0], "proc", "self", "fd"), true
				continue
			}
			// Where an alias may stand: /proc/<p>/X (n 3),
			// /proc/<p>/task/<t>/X (n 5), and both with <p> left empty
			// (n 2 and 4).
			emptyProc := n == 2 || n == 4 && globMatch(st[1], "task")
			if !proc || !(emptyProc || n == 3 || n == 5 && globMatch(st[2], "task")) {
				continue
			}
			root, cwd := globMatch(c, "root"), globMatch(c, "cwd")
			if !root && !cwd {
				continue
			}
			if st[0] != "proc" || c != "root" && c != "cwd" {
				// Only may be an alias: read it as written too. Past
				// the forks the path is read as anything (see anyPath).
				if forks == 0 {
					out = append(out, anyPath)
					return
				}
				forks--
				walk(slices.Clone(st), comps[k+1:], proc)
			}
			if root {
				st, proc = st[:0], false
				continue
			}
			base := home
			if emptyProc {
				base = workspace
			} else {
				switch st[1] {
				case "self", "thread-self", "$$", "$BASHPID":
					base = workspace
				}
			}
			st = append(st[:0], components(base)...)
			proc = len(st) > 0 && st[0] == "proc"
		}
		out = append(out, "/"+strings.Join(st, "/"))
	}
	walk(nil, strings.Split(p, "/"), false)
	return out
}

// entryPaths expands a denylist entry into the component lists it stands
// for: an absolute entry is itself (and, under /etc or /var, the same
// under /private, where macOS keeps them); a "~/" entry lies under home
// and under every user's home directory.
func entryPaths(e, home string) [][]string {
	rest, ok := strings.CutPrefix(e, "~/")
	if !ok {
		c := components(path.Clean(e))
		if len(c) > 0 && (c[0] == "etc" || c[0] == "var") {
			return [][]string{c, append([]string{"private"}, c...)}
		}
		return [][]string{c}
	}
	rc := components(path.Clean("/" + rest))
	var out [][]string
	if home != "" && home != "/" {
		out = append(out, append(components(path.Clean(home)), rc...))
	}
	for _, h := range otherHomes {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	for _, h := range serviceHomes() {
		out = append(out, append(append([]string(nil), h...), rc...))
	}
	return out
}

// serviceHomes are the home directories /etc/passwd gives that exist and
// that otherHomes does not cover (/var/lib/postgresql, /var/www): ~/
// means any user's home, service accounts' too.
var serviceHomes = sync.OnceValue(func() [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, dir := range passwdHomes() {
		dir = path.Clean(dir)
		c := components(dir)
		if seen[dir] || len(c) < 2 || c[0] == "home" || c[0] == "Users" || c[0] == "root" || c[0] == "proc" || c[0] == "dev" {
			continue
		}
		seen[dir] = true
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, "/"), strings.Join(b, "/")) })
	return out
})

func components(p string) []string {
	if p = strings.Trim(p, "/"); p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// globCache keeps what one check learned of its glob patterns: a long
// pattern multiplied by brace expansion is met against every entry.
type globCache map[string]compiledGlob

type compiledGlob struct {
	pattern        string // path.Match's spelling
	minLen         int    // the fewest bytes a name it matches has
	prefix, suffix string // literal text every name it matches starts and ends with
}

func (g globCache) compile(p string) compiledGlob {
	if c, ok := g[p]; ok {
		return c
	}
	c := compiledGlob{pattern: bashGlob(p)}
	for i := 0; i < len(c.pattern); i++ {
		switch c.pattern[i] {
		case '*':
		case '\\':
			i++
			c.minLen++
		case '[':
			j := i + 1
			for j < len(c.pattern) && c.pattern[j] != ']' {
				if c.pattern[j] == '\\' {
					j++
				}
				j++
			}
			i = j
			c.minLen++
		default:
			c.minLen++
		}
	}
	if !strings.Contains(c.pattern, "\\") {
		first := strings.IndexAny(c.pattern, "*?[")
		last := strings.LastIndexAny(c.pattern, "*?]")
		if first >= 0 && last >= first {
			c.prefix, c.suffix = c.pattern[:first], c.pattern[last+1:]
		}
	}
	g[p] = c
	return c
}

// match matches name against a bash glob pattern (see globMatch).
func (g globCache) match(pattern, name string) bool {
	if !strings.ContainsAny(pattern, "*?[\\") {
		return pattern == name
	}
	c := g.compile(pattern)
	if c.minLen > len(name) || !strings.HasPrefix(name, c.prefix) || !strings.HasSuffix(name, c.suffix) {
		return false
	}
	ok, err := path.Match(c.pattern, name)
	return ok || err != nil
}

// namesEntry says whether the path pc names the entry ec or something
// inside it: each of ec's components is matched by pc's, read as a glob
// pattern the way the shell reads it (a leading dot is matched only by a
// pattern that starts with one, unless dotglob is on; case is ignored
// under nocaseglob and on macOS; under globstar a ** component matches
// any number of components). A parent of the entry does not name it:
// ls ~ is not sensitive.
func (g globCache) namesEntry(pc, ec []string, o globOpts) bool {
	if o.globstar {
		for i, c := range pc {
			if c != "**" {
				continue
			}
			// ** matches any number of components, none included.
			if i >= len(ec) {
				break // after the entry: inside it
			}
			if !g.namesEntry(pc[:i], ec[:i], globOpts{dotglob: o.dotglob, nocase: o.nocase}) {
				return false
			}
			for k := i; k <= len(ec); k++ {
				if k == len(ec) || g.namesEntry(pc[i+1:], ec[k:], o) {
					return true
				}
			}
			return false
		}
	}
	if len(pc) < len(ec) {
		if !o.recursive {
			return false // ls ~ lists names; it reads no entry
		}
		ec = ec[:len(pc)] // a directory above the entry: the tree holds it
	}
	for i, want := range ec {
		got := pc[i]
		if got == want || want == "" {
			continue
		}
		if o.nocase {
			got, want = strings.ToLower(got), strings.ToLower(want)
		}
		if !o.dotglob && strings.HasPrefix(want, ".") && !strings.HasPrefix(got, ".") {
			return false
		}
		if !g.match(got, want) {
			return false
		}
	}
	return true
}

// globMatch matches name against a bash glob pattern. path.Match reads
// a different syntax; bashGlob converts [!...], [[:class:]] and a leading
// ']' in a bracket. A pattern it still cannot read matches (the check
// fails closed).
func globMatch(pattern, name string) bool {
	return globCache{}.match(pattern, name)
}

// bashGlob rewrites a bash glob in path.Match's syntax.
func bashGlob(p string) string {
	var b strings.Builder
	closed := true // once a '[' has no closing ']', none after it has
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case c == '[':
			end, class := -1, ""
			if closed {
				end, class = bracket(p, i)
			}
			if end < 0 {
				b.WriteString(`\[`) // no closing ']': a literal '['
				closed = false
				continue
			}
			b.WriteString(class)
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bracket reads the bracket expression of a bash glob that opens at
// p[open], returning the index of its closing ']' (-1 if none) and its
// path.Match spelling.
func bracket(p string, open int) (int, string) {
	var b strings.Builder
	unclosed := map[byte]bool{}
	b.WriteByte('[')
	j := open + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		b.WriteByte('^')
		j++
	}
	if j < len(p) && p[j] == ']' {
		b.WriteString(`\]`)
		j++
	}
	for ; j < len(p); j++ {
		switch {
		case p[j] == ']':
			b.WriteByte(']')
			return j, b.String()
		case p[j] == '\\' && j+1 < len(p):
			b.WriteString(p[j : j+2])
			j++
		case p[j] == '[' && j+1 < len(p) && strings.IndexByte(":=.", p[j+1]) >= 0 && !unclosed[p[j+1]]:
			kind := p[j+1]
			k := strings.Index(p[j+2:], string(kind)+"]")
			if k < 0 {
				unclosed[kind] = true // none after this one either
			}
			if k >= 0 {
				if inner := p[j+2 : j+2+k]; kind == ':' {
					b.WriteString(posixClass(inner))
				} else {
					// [=c=] (equivalence class) and [.c.] (collating
					// symbol) stand for c.
					for _, r := range inner {
						if strings.ContainsRune(`\]^-[`, r) {
							b.WriteByte('\\')
						}
						b.WriteRune(r)
					}
				}
				j += k + 3
				continue
			}
			b.WriteString(`\[`)
		default:
			b.WriteByte(p[j])
		}
	}
	return -1, ""
}

// posixClass spells a [:class:] as path.Match ranges; an unknown class
// stands for any character.
func posixClass(name string) string {
	switch name {
	case "alpha":
		return "a-zA-Z"
	case "digit":
		return "0-9"
	case "alnum":
		return "a-zA-Z0-9"
	case "lower":
		return "a-z"
	case "upper":
		return "A-Z"
	case "xdigit":
		return "0-9a-fA-F"
	case "word":
		return "a-zA-Z0-9_"
	case "space", "blank":
		return " \t\n\r\f\v"
	case "cntrl":
		return "\x00-\x1f\x7f"
	case "print":
		return " -~"
	case "graph":
		return "!-~"
	case "punct":
		return `!-/:-@\[-` + "`{-~"
	}
	return "\x00-\U0010FFFF"
}

// flatWords splits a command into words the simple way: quotes and
// backslashes group and are removed, and whitespace and the operators
// ; & | ( ) < > as well as = , and ` separate (so --key=~/.ssh/id yields
// ~/.ssh/id). deniedPath reads a command both this way and with
// shellWords: the latter's reading of substitutions and braces can be
// thrown off by quotes inside them, and no spelling this one catches may
// get through.
func flatWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case strings.IndexByte(" \t\n;&|()<>=,`", ch) >= 0:
			flush()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words
}

// maxSubstDepth bounds the nesting of command substitutions and
// parameter operands read; deeper is too complex.
const maxSubstDepth = 8

// shellWords splits a command into words roughly as the shell does:
// whitespace and the operators ; & | ( ) < > and ` separate; quotes and
// backslashes group, and their text is marked as quoted (see quoteInto)
// for expandAll, which reads braces as bash does and removes the marks;
// $'...' has its escapes decoded; a backslash-newline joins lines. A
// command substitution, $(...) or `...`, stands for nothing in its word
// (~/.ssh$(:)/id is ~/.ssh/id) and its own words are added after; a
// parameter expansion ${...} stands for what its text shows (see param).
// quoted are the contents of its quoted strings; deep says the nesting
// went past maxSubstDepth.
func shellWords(s string) (words, quoted []string, deep bool) {
	var r shellReader
	r.read(s, 0)
	return r.words, r.quoted, r.deep
}

type shellReader struct {
	words  []string
	quoted []string // the contents of quoted strings, to read as commands too (bash -c '...')
	deep   bool
}

// read appends the words of s, then those its parameter operands and
// substitutions hold, and returns how many of the first kind.
func (r *shellReader) read(s string, depth int) (top int) {
	if depth > maxSubstDepth {
		r.deep = true
		return 0
	}
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			r.words = append(r.words, w.String())
			top++
			inWord = false
		}
		w.Reset()
	}
	var inner, extra []string // substitutions, split after; words of operands
	// A substitution stands for nothing here. Bash's brace expansion sees
	// a comma in it, and strips the braces of a group it is in (see
	// braceWork.expand): qHidden says so.
	subst := func(text string) {
		w.WriteByte(qSubst)
		if strings.IndexByte(text, ',') >= 0 {
			w.WriteByte(qHidden)
		}
		inner = append(inner, text)
	}
	// expansion reads the substitution or parameter expansion at s[i],
	// if one starts there, the same way in double quotes and out, and
	// returns the index of its last byte.
	expansion := func(i int) (last int, ok bool) {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '(':
			end := matching(s, i+1)
			subst(s[i+2 : max(i+2, end-1)])
			return end - 1, true
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			end := matching(s, i+1)
			extra = r.param(&w, s[i:end], depth, extra)
			return end - 1, true
		case s[i] == '`':
			end := backquoteEnd(s, i+1)
			subst(unescapeIn(s[i+1:end], "$`\\"))
			return end, true
		}
		return i, false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i++ // a line continuation: nothing
		case ch == '\\' && i+1 < len(s):
			i++
			quoteInto(&w, s[i:i+1])
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := ansiCEnd(s, i+2)
			text := ansiC(s[i+2 : j])
			quoteInto(&w, text)
			r.quoted = append(r.quoted, text)
			i = j
			inWord = true
		case ch == '$' && i+1 < len(s) && s[i+1] == '"':
			// $"..." is a translated string: the same as "...".
		case ch == '$' && strings.HasPrefix(s[i:], "${IFS"):
			end := matching(s, i+1)
			if n, _, _ := splitParam(strings.TrimSuffix(s[i+2:end], "}")); n == "IFS" {
				flush() // ${IFS} splits, like $IFS
				i = end - 1
				continue
			}
			i, _ = expansion(i)
			inWord = true
		case ch == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{') || ch == '`':
			param := ch == '$' && s[i+1] == '{' // a substitution alone makes no word
			i, _ = expansion(i)
			inWord = inWord || param
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			quoteInto(&w, s[i+1:i+1+j])
			r.quoted = append(r.quoted, s[i+1:i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			w.WriteByte(qMark)
			start := i + 1
			for i++; i < len(s) && s[i] != '"'; i++ {
				escaped := false
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == '\n' {
						continue
					}
					escaped = true
				}
				if !escaped {
					// Expansions happen inside double quotes too.
					var ok bool
					if i, ok = expansion(i); ok {
						continue
					}
				}
				switch {
				case escaped:
					w.WriteByte(quoteByte(s[i]))
				case s[i] == '$':
					w.WriteByte('$') // $name is expanded in double quotes
				default:
					w.WriteByte(quoteByte(s[i]))
				}
			}
			r.quoted = append(r.quoted, unescapeIn(s[start:min(i, len(s))], "$`\"\\\n"))
			inWord = true
		case strings.IndexByte(" \t\n;&|()<>", ch) >= 0:
			flush()
		case ch == '$' && strings.HasPrefix(s[i:], "$IFS") && (i+4 == len(s) || !isNameByte(s[i+4])):
			// $IFS splits the word it is in: cat$IFS/etc/shadow runs
			// cat on /etc/shadow.
			flush()
			i += 3
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	r.words = append(r.words, extra...)
	for _, c := range inner {
		r.read(c, depth+1)
	}
	return top
}

// param writes the reading of a parameter expansion ${...} (text) to w
// and returns extra with the words to read on their own added. The value
// is not known: it is read as what the text shows.
//
//   - ${x} is empty (${x}/etc/shadow is /etc/shadow); ${HOME} is $HOME,
//     and so is ${HOME:-word} and the like, HOME being set; ${HOME:+...}
//     and ${HOME%...} and the like are also empty, "/" or the operand.
//   - ${x:-word}, ${x:=word} and ${x:?word} are word; ${x-word},
//     ${x=word}, ${x?word}, ${x+word}, ${x:+word} are word or empty; a
//     replacement ${x/pattern/word} is word or empty. "Or" is a brace
//     group of the readings, which expandAll expands (${x-/etc}/shadow
//     is read as /shadow and as /etc/shadow). An operand of more than one
//     word is not part of the word; its words are read on their own.
//   - a substring ${x:1:2} is empty or "/"; any other operator (${x#pat},
//     ${x%pat}, ${x^^}, ${#x}, ${!x}) is empty; their operands' words are
//     read on their own.
//
// A comma in the text is marked qHidden (see read's subst).
func (r *shellReader) param(w *strings.Builder, text string, depth int, extra []string) []string {
	body := strings.TrimSuffix(text[min(2, len(text)):], "}")
	name, op, operand := splitParam(body)
	if sub := body[len(name):]; strings.HasPrefix(sub, "[") {
		// An array subscript is arithmetic: its substitutions run.
		if j := strings.LastIndexByte(sub, ']'); j > 0 {
			inner := shellReader{}
			inner.read(sub[1:j], depth+1)
			r.deep = r.deep || inner.deep
			extra = append(extra, inner.words...)
			r.quoted = append(r.quoted, inner.quoted...)
		}
	}
	kind := "other"
	switch op {
	case "":
		kind = "none"
	case ":-", ":=", ":?":
		kind = "word"
	case "-", "=", "?", "+", ":+":
		kind = "or-empty"
	case "/", "//", "/#", "/%":
		kind = "or-empty"
		operand = replacement(operand)
	}
	var alts []string
	switch {
	case isPathVar(name) && (kind == "none" || kind == "word" || op == "-" || op == "=" || op == "?"):
		alts = append(alts, "$"+name) // set: its value
	case isPathVar(name):
		alts = append(alts, "$"+name, qMarkStr, "/") // ${HOME:+}, ${HOME%%/*}, ${HOME::1}
	case op == ":":
		// A substring: empty, "/" (${PWD::1}etc/shadow), or more.
		alts = append(alts, qMarkStr, "/")
	case kind != "word":
		alts = append(alts, qMarkStr)
	}
	if operand != "" {
		sub := shellReader{}
		top := sub.read(operand, depth+1)
		r.deep = r.deep || sub.deep
		r.quoted = append(r.quoted, sub.quoted...)
		if top >= 1 && kind != "other" && kind != "none" {
			// Of several words, the first joins the text before and the
			// last the text after (${x:-a b}c is a and bc): both are read
			// in the word, every one on its own too.
			ends := []string{sub.words[0]}
			if top > 1 {
				ends = append(ends, sub.words[top-1])
			}
			for _, word := range ends {
				if loc := tildeRe.FindStringIndex(word); loc != nil {
					// bash expands a tilde there: ~ and ~user are read
					// as home, the directory stack's as the workspace
					name := strings.TrimSuffix(word[1:loc[1]], "/")
					v := "$HOME"
					if name != "" && dirStackRe.MatchString(name) {
						v = "$PWD"
					}
					word = v + word[1+len(name):]
				}
				alts = append(alts, markGroupChars(word))
			}
			if top > 1 {
				extra = append(extra, sub.words...)
			} else {
				extra = append(extra, sub.words[1:]...)
			}
		} else {
			extra = append(extra, sub.words...)
		}
	}
	if len(alts) == 0 {
		alts = append(alts, qMarkStr)
	}
	if len(alts) == 1 {
		w.WriteString(alts[0])
	} else {
		w.WriteString("{" + strings.Join(alts, ",") + "}")
	}
	if strings.IndexByte(body, ',') >= 0 {
		w.WriteByte(qHidden)
	}
	return extra
}

// markGroupChars marks the braces and commas of an operand as quoted:
// bash does not brace-expand inside ${...}.
func markGroupChars(s string) string {
	if strings.IndexAny(s, "{},") < 0 {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '{' || c == '}' || c == ',' {
			b[i] = quoteByte(c)
		}
	}
	return string(b)
}

// paramOps are the operators of ${name<op>operand}, longest first.
var paramOps = []string{":-", ":=", ":?", ":+", "//", "/#", "/%", "##", "%%", "^^", ",,", "-", "=", "?", "+", "/", "#", "%", "^", ",", "@", ":"}

// splitParam splits the body of ${...} into the parameter's name, the
// operator and its operand. ${#x} and ${!x} (length, indirection) have
// the operator "#" or "!" and x for operand.
func splitParam(body string) (name, op, operand string) {
	if len(body) > 1 && (body[0] == '#' || body[0] == '!') && (isNameByte(body[1]) || strings.IndexByte("@*#?$!-", body[1]) >= 0 && (len(body) == 2 || body[1] == '@' || body[1] == '*')) {
		return "", body[:1], body[1:] // ${#x}, ${!x}, ${!prefix@}; not ${!:-x} ($!)
	}
	i := 0
	switch {
	case i < len(body) && isNameStart(body[i]):
		for i < len(body) && isNameByte(body[i]) {
			i++
		}
	case i < len(body) && isDigit(body[i]):
		for i < len(body) && isDigit(body[i]) {
			i++
		}
	case i < len(body) && strings.IndexByte("@*#?$!-", body[i]) >= 0:
		i++
	}
	name = body[:i]
	if i < len(body) && body[i] == '[' {
		if j := strings.IndexByte(body[i:], ']'); j >= 0 {
			i += j + 1
		}
	}
	rest := body[i:]
	for _, o := range paramOps {
		if strings.HasPrefix(rest, o) {
			return name, o, rest[len(o):]
		}
	}
	if rest != "" {
		return name, "?unknown", rest
	}
	return name, "", ""
}

// replacement returns the replacement of a ${x/pattern/replacement}
// operand: what follows the pattern's first '/' not quoted or escaped.
func replacement(operand string) string {
	for i := 0; i < len(operand); i++ {
		switch operand[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(operand[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		case '"':
			i = doubleEnd(operand, i+1)
		case '/':
			return operand[i+1:]
		}
	}
	return ""
}

// unescapeIn removes the backslashes before the characters of set, as
// bash does in double quotes ("$`\"\\\n") and in backquotes ("$`\\").
func unescapeIn(s, set string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(set, s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isNameStart(c byte) bool { return c == '_' || isAlpha(c) }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

// matching returns the index just past the bracket that closes the one
// at s[open] ('(' or '{'), or len(s). Quoted and escaped brackets do not
// count (${x#'}'} ends at its last brace), nor do those of a substitution
// or parameter expansion inside ($(: ${x:-)}), ${x:-$(: })}); in a
// command substitution a comment runs to the end of its line, and the
// ')' of a case pattern ($(case x in x) ;; esac)) closes nothing.
func matching(s string, open int) int {
	o := s[open]
	c := byte(')')
	if o == '{' {
		c = '}'
	}
	depth, cases := 0, 0
	for i := open; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\':
			i++
		case ch == '$' && i > open && i+1 < len(s) && s[i+1] == '\'':
			i = ansiCEnd(s, i+2)
		case ch == '$' && i > open && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			i = matching(s, i+1) - 1
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return len(s)
			}
			i += j + 1
		case ch == '`':
			i = backquoteEnd(s, i+1)
		case ch == '"':
			i = doubleEnd(s, i+1)
		case o == '(' && ch == '#' && (i == 0 || strings.IndexByte(" \t\n;&|(", s[i-1]) >= 0):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				return len(s)
			}
		case o == '(' && keywordAt(s, i, "case"):
			cases++
			i += 3
		case o == '(' && keywordAt(s, i, "esac"):
			cases = max(cases-1, 0)
			i += 3
		case ch == o:
			depth++
		case ch == c:
			if o == '(' && cases > 0 && depth == 1 {
				continue // a case pattern's
			}
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// keywordAt says whether the word kw stands alone at s[i].
func keywordAt(s string, i int, kw string) bool {
	if !strings.HasPrefix(s[i:], kw) || i > 0 && strings.IndexByte(" \t\n;&|(", s[i-1]) < 0 {
		return false
	}
	j := i + len(kw)
	return j == len(s) || strings.IndexByte(" \t\n;&|)", s[j]) >= 0
}

// backquoteEnd returns the index of the backquote that ends a `...`
// whose body starts at s[i] (an escaped one does not), or len(s).
func backquoteEnd(s string, i int) int {
	for ; i < len(s) && s[i] != '`'; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return min(i, len(s))
}

// doubleEnd returns the index of the quote that ends a "..." whose body
// starts at s[i] (substitutions inside may hold quotes), or len(s).
func doubleEnd(s string, i int) int {
	for ; i < len(s) && s[i] != '"'; i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '`':
			i = backquoteEnd(s, i+1)
		case s[i] == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			i = matching(s, i+1) - 1
		}
	}
	return min(i, len(s))
}

// ansiCEnd returns the index of the quote that ends a $'...' string whose
// body starts at s[i], or len(s).
func ansiCEnd(s string, i int) int {
	for ; i < len(s) && s[i] != '\''; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return min(i, len(s))
}

// splitHeredocs returns the command with its heredoc bodies and comments
// taken out, and the bodies (an unquoted one as bash hands it on). Bash reads neither as words of the command
// (a body is data, read as such only when fed to a shell: the line by
// line reading covers that), and minified JSON written through a heredoc
// would otherwise be brace expansion too large to read.
func splitHeredocs(s string) (main string, bodies []string) {
	if !strings.Contains(s, "<<") && !strings.Contains(s, "#") {
		return s, nil
	}
	var b strings.Builder
	type doc struct {
		delim        string
		tabs, quoted bool
	}
	var pending []doc
	// boundary says whether s[i] starts a word: only there does '#'
	// start a comment (not after an escaped blank, a\ #, nor after a
	// substitution, $(x)#).
	boundary := true
	for i := 0; i < len(s); i++ {
		ch := s[i]
		atStart := boundary
		boundary = strings.IndexByte(" \t\n;&|()<>", ch) >= 0
		switch {
		case ch == '\\' && i+1 < len(s):
			b.WriteString(s[i : i+2])
			i++
		case ch == '$' && i+1 < len(s) && s[i+1] == '\'':
			end := min(ansiCEnd(s, i+2)+1, len(s))
			b.WriteString(s[i:end])
			i = end - 1
		case ch == '$' && i+1 < len(s) && s[i+1] == '[', ch == '(' && i+1 < len(s) && s[i+1] == '(':
			// $[...] and ((...)) are arithmetic: a << in them is a shift.
			end := len(s)
			if ch == '$' {
				if k := strings.IndexByte(s[i:], ']'); k >= 0 {
					end = i + k + 1
				}
			} else {
				end = matching(s, i)
			}
			b.WriteString(s[i:end])
			i = end - 1
		case ch == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '('):
			// Whole: a '#' in it is no comment, a '<<' no heredoc.
			end := matching(s, i+1)
			b.WriteString(s[i:end])
			i = end - 1
		case ch == '\'':
			end := len(s)
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				end = i + j + 2
			}
			b.WriteString(s[i:end])
			i = end - 1
		case ch == '"' || ch == '`':
			// Whole, like the substitutions: a '#' or '<<' in it is text.
			end := doubleEnd(s, i+1)
			if ch == '`' {
				end = backquoteEnd(s, i+1)
			}
			end = min(end+1, len(s))
			b.WriteString(s[i:end])
			i = end - 1
		case ch == '#' && atStart:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			i += j - 1
		case ch == '<' && strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<"):
			k := i + 2
			tabs := k < len(s) && s[k] == '-'
			if tabs {
				k++
			}
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			var delim strings.Builder
			quoted := false
			for k < len(s) && strings.IndexByte(" \t\n;&|()<>", s[k]) < 0 {
				if strings.IndexByte(`'"\`, s[k]) >= 0 {
					quoted = true
				}
				switch s[k] {
				case '\'', '"':
					q := s[k]
					for k++; k < len(s) && s[k] != q; k++ {
						delim.WriteByte(s[k])
					}
				case '\\':
					if k+1 < len(s) {
						k++
						delim.WriteByte(s[k])
					}
				default:
					delim.WriteByte(s[k])
				}
				k++
			}
			b.WriteString(s[i:min(k, len(s))])
			if delim.Len() > 0 {
				pending = append(pending, doc{delim.String(), tabs, quoted})
			}
			i = k - 1
		case ch == '\n' && len(pending) > 0:
			b.WriteByte('\n')
			i++
			for _, d := range pending {
				var body strings.Builder
				for i < len(s) {
					end := strings.IndexByte(s[i:], '\n')
					if end < 0 {
						end = len(s) - i
					}
					line := s[i : i+end]
					i += end + 1
					probe := line
					if d.tabs {
						probe = strings.TrimLeft(line, "\t")
					}
					if probe == d.delim {
						break
					}
					body.WriteString(line)
					body.WriteByte('\n')
				}
				if d.quoted {
					bodies = append(bodies, body.String())
				} else {
					// What the shell it is fed to gets: \$, \` and \\
					// unescaped, continued lines joined.
					bodies = append(bodies, unescapeIn(body.String(), "$`\\\n"))
				}
			}
			pending = nil
			i-- // the loop steps past the last newline taken
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), bodies
}

// ansiC decodes the body of $'...': the escapes a path could be spelled
// with (\\, \', \xHH, octal \NNN, \uHHHH, \UHHHHHHHH, \cX and the letter
// escapes); other escapes keep their letter.
func ansiC(b string) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out.WriteByte(b[i])
			continue
		}
		i++
		switch c := b[i]; {
		case c == 'x' || c == 'u' || c == 'U':
			digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, k := 0, 0
			for ; k < digits && i+1 < len(b) && isHex(b[i+1]); k++ {
				i++
				n = n*16 + hexVal(b[i])
			}
			switch {
			case k == 0:
				out.WriteByte('\\')
				out.WriteByte(c)
			case c == 'x':
				out.WriteByte(byte(n))
			case n <= utf8.MaxRune:
				out.WriteRune(rune(n))
			}
		case c >= '0' && c <= '7':
			n := int(c - '0')
			for k := 1; k < 3 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				n = n*8 + int(b[i]-'0')
			}
			out.WriteByte(byte(n))
		case c == 'c' && i+1 < len(b):
			i++
			out.WriteByte(b[i] & 0x1f)
		default:
			if e := strings.IndexByte("abefnrtvE", c); e >= 0 {
				out.WriteByte("\a\b\x1b\f\n\r\t\v\x1b"[e])
			} else {
				out.WriteByte(c)
			}
		}
	}
	// Bash ends the string at a NUL it decodes ($'/etc/shadow\0x' is
	// /etc/shadow).
	r := out.String()
	if n := strings.IndexByte(r, 0); n >= 0 {
		r = r[:n]
	}
	return r
}

func isHex(c byte) bool { return hexVal(c) >= 0 }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isPathVar(n string) bool { return n == "HOME" || n == "PWD" || n == "OLDPWD" }
