package landlock

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// access is what a rule grants beneath its path, independent of the
// kernel's bits (see rights in landlock_linux.go).
type access uint8

const (
	accRead  access = 1 << iota // read files, list dirs, execute
	accWrite                    // write, truncate, create, remove, rename; not device nodes
	accList                     // list dirs only
	accIoctl                    // ioctl on devices (terminals)
)

func (a access) String() string {
	var parts []string
	for _, n := range []struct {
		a    access
		name string
	}{{accRead, "read"}, {accWrite, "write"}, {accList, "list"}, {accIoctl, "ioctl"}} {
		if a&n.a != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "+")
}

// rule grants access to a path and everything beneath it.
type rule struct {
	Path   string
	Access access
	Dir    bool
}

// plan is the set of rules a policy comes to on the disk as it is now,
// and what had to be left closed (see maxDirEntries).
type plan struct {
	Rules []rule
	Notes []string
	// Watch is every path the plan was read from (see watch): while none
	// of them has changed, the plan is what makePlan would make again.
	Watch map[string]watchKind
}

// watchKind is what of a watched path a change would change the plan.
type watchKind uint8

const (
	// watchIdent: which file it is (device, inode, type, mode, owner),
	// or that it is missing. A root or a denied path: what is written
	// inside a root changes nothing of the plan.
	watchIdent watchKind = iota + 1
	// watchEntries: that, and its entries (its modification time): a
	// directory above a root or a denied path, or one the plan listed.
	watchEntries
)

// watch records that the plan read path: the path itself (kind), and
// the entries of every directory above it, where a link, a rename or a
// new directory would change what the path leads to.
func (pl *planner) watch(path string, kind watchKind) {
	path = filepath.Clean(path)
	if pl.plan.Watch[path] < kind {
		pl.plan.Watch[path] = kind
	}
	for d := filepath.Dir(path); pl.plan.Watch[d] < watchEntries; d = filepath.Dir(d) {
		pl.plan.Watch[d] = watchEntries
		if d == "/" || d == "." {
			break
		}
	}
}

// Bounds on the enumeration of a directory above a denied path (see
// planner.grant). Each entry costs a rule, and each rule an open and a
// system call when the command starts; a home with tens of thousands of
// entries would cost more than the command. Past a bound the directory's
// entries are left closed (fail closed, with a note saying so): only the
// roots granted by name (the workspace, the cache) stay open beneath it.
const (
	maxDirEntries = 2048
	maxRules      = 4096
)

// devices are the device files every command may use, whatever its
// mode: /dev is otherwise closed (a block device would hand root the
// whole disk, denied paths included). /dev/tty is the command's
// controlling terminal, if any. /dev/pts is not opened: the user's other
// terminals are there, and a command that could open one could type into
// it (TIOCSTI) or write on it; a command's own terminal is granted by
// name (Policy.Terminal). No new pseudo-terminal can be made inside
// (/dev/ptmx), for the same reason.
var devices = []rule{
	{Path: "/dev", Access: accList, Dir: true},
	{Path: "/dev/null", Access: accRead | accWrite},
	{Path: "/dev/zero", Access: accRead | accWrite},
	{Path: "/dev/full", Access: accRead | accWrite},
	{Path: "/dev/random", Access: accRead | accWrite},
	{Path: "/dev/urandom", Access: accRead | accWrite},
	{Path: "/dev/tty", Access: accRead | accWrite | accIoctl},
}

// planner builds a plan.
type planner struct {
	index map[string]int // rule by path
	plan  plan
}

// makePlan resolves the policy against the disk. Landlock only allows:
// a rule on a directory opens everything beneath it, and nothing can
// close a subtree again. So a grant whose tree holds a denied path is not
// made on that tree: it is made on each entry of it except the denied
// one, recursively down to the denied path (grant). The rules name real
// paths (symbolic links resolved), as the kernel checks them.
func makePlan(p Policy) (plan, error) {
	if err := p.validate(); err != nil {
		return plan{}, err
	}
	pl := &planner{index: make(map[string]int), plan: plan{Watch: make(map[string]watchKind)}}
	deny := pl.resolveDeny(p.Deny, p.Home)
	denied := newFence(deny)
	// Reads: the whole disk but /dev and the denied paths.
	pl.root("/", accRead, newFence(append([]string{"/dev"}, deny...)))
	for _, d := range devices {
		pl.root(d.Path, d.Access, denied)
	}
	if p.Terminal != "" {
		pl.root(p.Terminal, accRead|accWrite|accIoctl, denied)
	}
	if p.ListAll {
		pl.root("/", accList, newFence(nil))
	}
	for _, w := range p.writable() {
		pl.root(w, accRead|accWrite, denied)
	}
	return pl.plan, nil
}

// fence is a set of excluded paths, with every directory above one of
// them: a grant on a directory of above must be carved (see grant). Of
// those, held are the directories above an excluded path that exists;
// the others lie above paths not made yet only, and may still be listed.
type fence struct {
	excluded, above, held map[string]bool
}

func newFence(paths []string) fence {
	f := fence{excluded: make(map[string]bool), above: make(map[string]bool), held: make(map[string]bool)}
	for _, p := range paths {
		f.excluded[p] = true
		_, err := os.Lstat(p)
		for d := filepath.Dir(p); !f.above[d] || err == nil && !f.held[d]; d = filepath.Dir(d) {
			f.above[d] = true
			if err == nil {
				f.held[d] = true
			}
			if d == "/" || d == "." {
				break
			}
		}
	}
	return f
}

// resolveDeny expands "~/" against home (by the name given and by its
// real path) and adds each path's real path: the kernel checks the file
// a command reaches, whatever the spelling. A path that does not exist
// yet stays denied: a login run while a command runs may create it, and
// the directories above it are carved like those above an existing one,
// so what appears there later is closed to that command. A path the file
// permissions close to this user for good (closedByOwner: the path, or
// the nearest existing directory above a missing one) is left out.
func (pl *planner) resolveDeny(deny []string, home string) []string {
	homes := []string{}
	if home != "" {
		homes = append(homes, filepath.Clean(home))
		pl.watch(home, watchIdent)
		if real, err := filepath.EvalSymlinks(home); err == nil && real != homes[0] {
			homes = append(homes, real)
			pl.watch(real, watchIdent)
		}
	}
	var out []string
	add := func(p string) {
		pl.watch(p, watchIdent)
		real, reached, fi, err := realPath(p)
		if err == nil && closedByOwner(reached, fi) {
			return
		}
		out = append(out, p) // when realPath fails, by the name given: fail closed
		if err == nil && real != p {
			out = append(out, real)
			pl.watch(real, watchIdent)
		}
	}
	for _, d := range deny {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			for _, h := range homes {
				add(filepath.Join(h, rest))
			}
		} else if filepath.IsAbs(d) {
			add(filepath.Clean(d))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxLinks bounds the symbolic links realPath follows, as the kernel
// does (ELOOP).
const maxLinks = 40

// realPath is the real path p leads to, and the nearest existing path
// on the way (reached, real) with its info. A path that exists is its
// own reached. One that does not is named beneath the real path of its
// nearest existing ancestor, or, through a dangling symbolic link, at the
// link's target: a file made later appears there.
func realPath(p string) (real, reached string, fi os.FileInfo, err error) {
	rest := ""
	for links := 0; ; {
		if fi, err := os.Stat(p); err == nil {
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				return "", "", nil, err
			}
			return filepath.Join(r, rest), r, fi, nil
		}
		if target, err := os.Readlink(p); err == nil {
			if links++; links > maxLinks {
				return "", "", nil, fmt.Errorf("%s: too many links", p)
			}
			if !filepath.IsAbs(target) {
				dir, err := filepath.EvalSymlinks(filepath.Dir(p))
				if err != nil {
					return "", "", nil, err
				}
				target = filepath.Join(dir, target)
			}
			p = filepath.Clean(target)
			continue
		}
		if p == "/" || p == "." {
			return "", "", nil, fmt.Errorf("%s: no existing ancestor", p)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = filepath.Dir(p)
	}
}

// root grants acc on path, a root of the policy, except beneath the
// paths in excl. A root that does not exist is left out.
func (pl *planner) root(path string, acc access, excl fence) {
	pl.watch(path, watchIdent)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	pl.watch(real, watchIdent)
	fi, err := os.Stat(real)
	if err != nil {
		return
	}
	pl.grant(real, fi.IsDir(), acc, excl)
}

// grant grants acc on path, or, when a path of excl lies beneath it, on
// each of its entries but the excluded ones (recursively). Symbolic links
// among the entries get no rule: the kernel checks what they point to.
// Entries that are neither files nor directories (sockets, fifos) get
// none either.
func (pl *planner) grant(path string, isDir bool, acc access, excl fence) {
	if !isDir || !excl.above[path] {
		pl.add(rule{Path: path, Access: acc, Dir: isDir})
		return
	}
	pl.watch(path, watchEntries)
	if acc&accRead != 0 && !excl.held[path] {
		// Above denied paths not made yet only: its listing shows names,
		// and at most the names inside one made later, never a file.
		pl.add(rule{Path: path, Access: accList, Dir: true})
	}
	entries, err := readDirBounded(path, maxDirEntries)
	if err != nil {
		pl.plan.Notes = append(pl.plan.Notes, fmt.Sprintf("%s: %v: its entries are closed", path, err))
		return
	}
	if len(pl.plan.Rules)+len(entries) > maxRules {
		pl.plan.Notes = append(pl.plan.Notes, fmt.Sprintf("%s: the sandbox's %d rules are spent: its entries are closed", path, maxRules))
		return
	}
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		if excl.excluded[child] {
			continue
		}
		switch t := e.Type(); {
		case t.IsDir():
			pl.grant(child, true, acc, excl)
		case t.IsRegular():
			pl.add(rule{Path: child, Access: acc})
		}
	}
}

// add appends r, merged with an earlier rule on the same path.
func (pl *planner) add(r rule) {
	if i, ok := pl.index[r.Path]; ok {
		pl.plan.Rules[i].Access |= r.Access
		return
	}
	pl.index[r.Path] = len(pl.plan.Rules)
	pl.plan.Rules = append(pl.plan.Rules, r)
}

// errTooMany is the note for a directory past maxDirEntries.
var errTooMany = fmt.Errorf("more than %d entries", maxDirEntries)

// readDirBounded reads at most max entries of dir, in name order, and
// fails with errTooMany if it has more: a huge directory costs one
// bounded read, not a full listing.
func readDirBounded(dir string, max int) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(entries) > max {
		return nil, errTooMany
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// within reports whether p lies strictly beneath dir (both clean and
// absolute): /ws/a is within /ws, /ws_evil is not.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}
