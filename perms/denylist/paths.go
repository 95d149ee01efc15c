package denylist

import (
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
)

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
	lk := &links{budget: globLinkBudget}
	for _, w := range words {
		for _, word := range gluedPaths(w) {
			if seen[word] {
				continue
			}
			seen[word] = true
			if d := deniedReading(word, entries, workspace, home, opts, globs, lk); d {
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
func deniedReading(word string, entries [][]string, workspace, home string, opts globOpts, globs globCache, lk *links) bool {
	named := func(q string) bool {
		pc := components(q)
		for _, ec := range entries {
			if globs.namesEntry(pc, ec, opts) {
				return true
			}
		}
		return false
	}
	in := func(q string) bool { return workspace != "" && inside(workspace, q) }
	queue := pathReadings(word, workspace, home)
	for hop := 0; len(queue) > 0 && hop <= maxLinkHops; hop++ {
		var next []string
		for _, p := range queue {
			switch {
			case p == anyPath:
				return true
			case !in(p):
				if named(p) {
					return true
				}
				if r := resolvedPath(p); r != p {
					if in(r) {
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
					for _, r := range workspaceLinks(rel, workspace, lk) {
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
	if len(p) >= maxPathBytes {
		return p // the kernel refuses it (ENAMETOOLONG): it reaches no file
	}
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

// inside says whether the absolute path p, cleaned lexically, is root or
// lies under it (the check needs no disk access: the readings it meets
// are resolved already).
func inside(root, p string) bool {
	if root == "" || !filepath.IsAbs(root) || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	root, p = filepath.Clean(root), filepath.Clean(p)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// maxPathBytes is PATH_MAX on Linux (macOS's is smaller): no path this
// long opens, so none is resolved (doing so walked every parent of a
// word of 40,000 components).
const maxPathBytes = 4096

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
// the way, followed by the rest of the word. The globs of one
// command look at budget directory entries in all: past that a link is
// missed, as the words a command builds at run time are (the list is a
// tripwire), and no directory is read.
func workspaceLinks(word, workspace string, lk *links) []string {
	var out []string
	lexical := filepath.Join(workspace, word)
	if !lk.linkFree(workspace, word) {
		if r := resolvedPath(lexical); r != lexical {
			out = append(out, r)
		}
	}
	budget := &lk.budget
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
			f, err := openDir(dir)
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

// links is what one check learned of the workspace's files: whether the
// workspace is its own canonical path, which paths under it exist and
// which are links, and the directory entries its globs may still list.
type links struct {
	budget    int
	wsChecked bool
	wsReal    bool
	modes     map[string]os.FileMode // Lstat's mode; modeMissing for none
}

const modeMissing = os.ModeIrregular | os.ModeDevice // no Lstat gives both

// linkFree says whether the workspace-relative word reaches no link: the
// workspace is its canonical path, and each component of the word, from
// the workspace down, is no link, up to the first that does not exist
// (nothing below it does) or is no directory. Then the word resolves to
// itself, and resolvedPath's walk up every parent is spared: that walk
// cost most of a command's check.
func (lk *links) linkFree(workspace, word string) bool {
	if !lk.wsChecked {
		lk.wsChecked = true
		real, err := filepath.EvalSymlinks(workspace)
		lk.wsReal = err == nil && real == filepath.Clean(workspace)
	}
	if !lk.wsReal {
		return false
	}
	if lk.modes == nil {
		lk.modes = map[string]os.FileMode{}
	}
	p := filepath.Clean(workspace)
	for c := range strings.SplitSeq(filepath.ToSlash(filepath.Clean(word)), "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return false // read lexically elsewhere; not walked here
		}
		p = filepath.Join(p, c)
		m, ok := lk.modes[p]
		if !ok {
			m = modeMissing
			if fi, err := os.Lstat(p); err == nil {
				m = fi.Mode()
			}
			lk.modes[p] = m
		}
		switch {
		case m == modeMissing:
			return true
		case m&os.ModeSymlink != 0:
			return false
		case !m.IsDir():
			return true
		}
	}
	return true
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

// globOpts are the shell options a command turns on that change how a
// glob reads; any mention of their names counts.
type globOpts struct {
	dotglob, nocase, globstar bool
	// recursive: the command reads or copies whole trees (grep -r, find,
	// tar, cp -a, rsync, ln): a directory above an entry names it too.
	recursive bool
}
