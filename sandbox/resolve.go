package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Root kinds, as they appear on the wire.
const (
	RootWorkspace = "workspace"
	RootScratch   = "scratch"
	RootExternal  = "external"
)

// maxSymlinkHops bounds symlink expansions in one resolution, as the kernel's
// MAXSYMLINKS does, so a loop fails at once instead of hanging.
const maxSymlinkHops = 40

var (
	// ErrInvalidPath is a path no file can have: empty, containing NUL, or
	// with a component or total length the file system refuses.
	ErrInvalidPath = errors.New("invalid path")
	// ErrNoWorkspace is a relative path in a session without a workspace.
	ErrNoWorkspace = errors.New("relative path but the session has no workspace")
	// ErrSymlinkLoop is a path whose symlinks do not settle within
	// maxSymlinkHops expansions.
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
	// ErrChanged means the file system no longer matches what was checked
	// (and possibly approved): a symlink was swapped or a directory renamed.
	ErrChanged = errors.New("path changed since it was checked")
)

// Roots are a session's two legal roots, both canonical absolute paths
// (symlinks resolved). Workspace may be "" (Temporary session). Scratch may
// not exist on disk yet; a missing scratch dir is an empty root.
type Roots struct{ Workspace, Scratch string }

// FileIdent identifies a file by device and inode. OfTarget says whether it
// is the target's own identity or that of its nearest existing ancestor.
type FileIdent struct {
	Dev, Ino uint64
	OfTarget bool
}

// Resolved is where a tool path lands.
type Resolved struct {
	// Path is the path exactly as the tool gave it; Recheck resolves it again.
	Path string
	// Root is RootWorkspace, RootScratch or RootExternal.
	Root string
	// Abs is the canonical absolute path: the existing prefix with symlinks
	// resolved, the non-existing tail joined lexically.
	Abs string
	// Display is the workspace-relative slash path for workspace ("." for the
	// root itself), Abs otherwise.
	Display string
	// Base is the directory opened as os.Root for the operation: the
	// workspace root, the scratch root, or for external the canonical parent
	// directory of Abs (its nearest existing ancestor when the parent does not
	// exist yet, so parents can still be created beneath an opened root).
	Base string
	// Name is the target relative to Base; never absolute, never "..".
	Name string
	// Exists reports whether Abs existed at resolution time.
	Exists bool
	// IsDir reports whether Abs was an existing directory.
	IsDir bool
	// Ident is the target's identity if it exists, else its nearest existing
	// ancestor's.
	Ident FileIdent
	// BaseIdent is Base's identity (zero when Base did not exist, which only
	// happens for a scratch root not created yet). Operations refuse to run
	// when the directory at Base is no longer this one.
	BaseIdent FileIdent
}

// Within reports whether p is root or lies beneath it. Both must be
// canonical (or at least cleaned) absolute paths; the comparison is by whole
// components, so /w/p does not contain /w/p_evil.
func Within(root, p string) bool {
	if root == "" || p == "" {
		return false
	}
	root, p = filepath.Clean(root), filepath.Clean(p)
	if root == p {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// LexicallyInside reports whether p, cleaned lexically with no disk access,
// is inside root. It is only a hint for skipping the permission card on
// scratch writes: the caller must still Resolve and use the resolved Root.
// A relative p is never inside: relative tool paths resolve against the
// workspace, so treating one as inside scratch would be a confusion, not a
// convenience.
func LexicallyInside(root, p string) bool {
	if root == "" || !filepath.IsAbs(root) || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	return Within(root, p)
}

// NamedInside reports whether the absolute path p names a place inside
// root: lexically, or beneath an alias of root (a directory whose canonical
// form is root itself, such as a symlink /tmp/wslink to the workspace
// /tmp/ws, or macOS's /tmp for /private/tmp). A session created on an alias
// stores the canonical root, and the user and the model keep using the name
// they chose. Only the ancestor that resolves to the root counts: a link
// somewhere else pointing into the root is no alias, and where p really
// lands is still for Resolve to check. A path inside the session's other
// root (other, "" for none) is never read through an alias: a link in
// scratch to the workspace keeps the scratch name it was given.
func NamedInside(root, other, p string) bool {
	if LexicallyInside(root, p) {
		return true
	}
	if root == "" || !filepath.IsAbs(root) || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 || len(p) > maxPathLen {
		return false
	}
	return aliasOf(filepath.Clean(root), other, filepath.Clean(p))
}

// aliasOf reports whether the clean absolute path lex or one of its
// ancestors resolves to root, lex not lying in the other root.
func aliasOf(root, other, lex string) bool {
	if Within(other, lex) {
		return false
	}
	for a := lex; ; a = filepath.Dir(a) {
		if w, err := canonicalize(a); err == nil && w.abs == root {
			return true
		}
		if a == filepath.Dir(a) {
			return false
		}
	}
}

// Resolve classifies p. Relative paths join the workspace root; absolute
// paths are checked against the workspace first, then scratch. A path is in a
// root only when both its cleaned form (read through an alias of the root,
// see NamedInside) and its canonical form are; anything else is
// RootExternal. Scratch is addressed by absolute path only.
func (r Roots) Resolve(p string) (Resolved, error) {
	if p == "" {
		return Resolved{}, fmt.Errorf("%w: empty", ErrInvalidPath)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return Resolved{}, fmt.Errorf("%w: contains a NUL byte", ErrInvalidPath)
	}
	if len(p) > maxPathLen {
		return Resolved{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalidPath, maxPathLen)
	}
	abs := filepath.IsAbs(p)
	var lex string
	if abs {
		lex = filepath.Clean(p)
	} else {
		if r.Workspace == "" {
			return Resolved{}, ErrNoWorkspace
		}
		lex = filepath.Join(r.Workspace, p)
	}

	w, err := canonicalize(lex, filepath.Clean(r.Workspace), filepath.Clean(r.Scratch))
	if err != nil {
		return Resolved{}, err
	}
	res := Resolved{Path: p, Abs: w.abs, Exists: w.exists}

	switch {
	case r.Workspace != "" && Within(r.Workspace, w.abs) && (Within(r.Workspace, lex) || aliasOf(filepath.Clean(r.Workspace), r.Scratch, lex)):
		res.Root, res.Base = RootWorkspace, filepath.Clean(r.Workspace)
	case abs && r.Scratch != "" && Within(r.Scratch, w.abs) && (Within(r.Scratch, lex) || aliasOf(filepath.Clean(r.Scratch), r.Workspace, lex)):
		res.Root, res.Base = RootScratch, filepath.Clean(r.Scratch)
	default:
		res.Root = RootExternal
	}

	identPath := w.existing
	if w.exists {
		identPath = w.abs
	}
	fi, err := w.stat(identPath, false)
	if err != nil {
		return Resolved{}, fmt.Errorf("resolving %s: %w", p, err)
	}
	res.Ident = identOf(fi)
	res.Ident.OfTarget = w.exists
	res.IsDir = w.exists && fi.IsDir()

	if res.Root == RootExternal {
		switch {
		case w.exists:
			res.Base = filepath.Dir(w.abs)
		case fi.IsDir():
			res.Base = w.existing
		default: // the existing prefix is a file: "file.txt/x"
			res.Base = filepath.Dir(w.existing)
		}
	}
	if res.Name, err = filepath.Rel(res.Base, res.Abs); err != nil || !validName(res.Name) {
		// Unreachable by construction; refuse rather than hand out a bad name.
		return Resolved{}, fmt.Errorf("%w: %s does not lie under %s", ErrInvalidPath, res.Abs, res.Base)
	}
	if res.Root == RootWorkspace {
		res.Display = filepath.ToSlash(res.Name)
	} else {
		res.Display = res.Abs
	}

	switch bfi, err := w.stat(res.Base, true); {
	case err == nil:
		res.BaseIdent = identOf(bfi)
	case res.Root == RootScratch && errors.Is(err, fs.ErrNotExist):
		// Scratch is created lazily; there is nothing to pin yet.
	default:
		return Resolved{}, fmt.Errorf("resolving %s: %w", p, err)
	}
	return res, nil
}

// Recheck resolves approved.Path again immediately before execution and
// fails with ErrChanged when the Root, Abs or BaseIdent differ, or when a
// directory target is no longer the same directory, so an approval cannot
// be raced by swapping a symlink or renaming a directory while the
// permission card is open: any such swap moves Abs or replaces Base.
//
// A file target may have been replaced at the same canonical path (an
// earlier Write of the same batch renames a new file over it; a missing
// file may have been created meanwhile): that is the same location the
// user approved, and the operation still runs beneath the pinned Base. It
// must not have turned into a directory.
func (r Roots) Recheck(approved Resolved) (Resolved, error) {
	if approved.Path == "" {
		return Resolved{}, fmt.Errorf("%w: nothing was resolved", ErrInvalidPath)
	}
	cur, err := r.Resolve(approved.Path)
	if err != nil {
		return Resolved{}, err
	}
	switch {
	case cur.Root != approved.Root:
		return Resolved{}, fmt.Errorf("%w: %s is now %s, was %s", ErrChanged, approved.Path, cur.Root, approved.Root)
	case cur.Abs != approved.Abs:
		return Resolved{}, fmt.Errorf("%w: %s now lands at %s, was %s", ErrChanged, approved.Path, cur.Abs, approved.Abs)
	case cur.BaseIdent != approved.BaseIdent:
		return Resolved{}, fmt.Errorf("%w: the directory holding %s was replaced", ErrChanged, approved.Path)
	case approved.IsDir && cur.Ident != approved.Ident, cur.IsDir != approved.IsDir:
		return Resolved{}, fmt.Errorf("%w: %s was replaced", ErrChanged, approved.Path)
	}
	return cur, nil
}

// walked is the result of canonicalize.
type walked struct {
	abs      string // existing prefix resolved, missing tail joined lexically
	existing string // the longest existing prefix of abs
	exists   bool   // abs == existing
	// seen holds what the walk's Lstat found at the last path it
	// resolved and at the paths it was asked to note, none of them a
	// symbolic link: Resolve needs no second look at them.
	seen [3]seenPath
}

// seenPath is one path the walk found, and what it found there.
type seenPath struct {
	path string
	fi   fs.FileInfo
}

// stat is what the walk found at p (no link: Stat and Lstat agree), or
// else a new Stat of p (Lstat unless follow).
func (w *walked) stat(p string, follow bool) (fs.FileInfo, error) {
	for _, s := range w.seen {
		if s.fi != nil && s.path == p {
			return s.fi, nil
		}
	}
	if follow {
		return os.Stat(p)
	}
	return os.Lstat(p)
}

// canonicalize resolves symlinks in the longest existing prefix of the clean
// absolute path p, one component at a time with Lstat, the way the kernel
// would, and joins the rest lexically. Unlike filepath.EvalSymlinks it accepts
// a missing tail, and it reports loops as ErrSymlinkLoop.
//
// A ".." met after a missing component pops that component and, once back at
// an existing directory, resolution resumes; otherwise a symlink target such
// as "missing/../out_link/x" would be joined lexically past a real symlink.
// maxPathLen is Linux's PATH_MAX less its NUL: no longer path can be
// opened, and without a bound a path of a million components took hours
// to resolve (every component re-joins the path so far), uncancellable.
const maxPathLen = 4095

func canonicalize(p string, note ...string) (walked, error) {
	var w walked
	sep := string(filepath.Separator)
	resolved := sep
	missing := 0 // trailing components of resolved that do not exist
	rest := splitPath(p)
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			if missing > 0 {
				missing--
			}
			continue
		}
		next := filepath.Join(resolved, c)
		if len(next) > maxPathLen {
			// The kernel would refuse it too (ENAMETOOLONG); checked
			// here because a missing tail is never given to the kernel,
			// and each Join costs the length so far.
			return walked{}, fmt.Errorf("%w: longer than %d bytes once resolved", ErrInvalidPath, maxPathLen)
		}
		if missing > 0 {
			resolved = next
			missing++
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			switch {
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
				resolved = next
				missing = 1
				continue
			case errors.Is(err, syscall.ENAMETOOLONG):
				return walked{}, fmt.Errorf("%w: %w", ErrInvalidPath, err)
			case errors.Is(err, syscall.ELOOP):
				return walked{}, fmt.Errorf("%w: %s", ErrSymlinkLoop, next)
			}
			return walked{}, fmt.Errorf("resolving %s: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			w.seen[0] = seenPath{next, fi}
			for i, n := range note[:min(len(note), len(w.seen)-1)] {
				if n == next {
					w.seen[i+1] = seenPath{next, fi}
				}
			}
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return walked{}, fmt.Errorf("%w: %s", ErrSymlinkLoop, p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return walked{}, fmt.Errorf("resolving %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		rest = append(splitPath(target), rest...)
	}
	existing := resolved
	for range missing {
		existing = filepath.Dir(existing)
	}
	w.abs, w.existing, w.exists = resolved, existing, missing == 0
	return w, nil
}

func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// validName reports whether name is a clean relative path that stays under
// its base: what os.Root methods are given.
func validName(name string) bool {
	if name == "" || filepath.IsAbs(name) || strings.IndexByte(name, 0) >= 0 {
		return false
	}
	if filepath.Clean(name) != name {
		return false
	}
	return name != ".." && !strings.HasPrefix(name, ".."+string(filepath.Separator))
}
