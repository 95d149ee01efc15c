package sandbox

import (
	"os"
	"path/filepath"
	"sync"
)

// dirRoot is a directory held open for one file operation. Close gives it
// back: a base shared through bases stays open for the next operation.
type dirRoot struct {
	*os.Root
	release func()
}

// Close closes the root, or gives a shared one back.
func (d dirRoot) Close() error {
	if d.release != nil {
		d.release()
		return nil
	}
	return d.Root.Close()
}

// bases keeps the directories file operations start from (a session's
// workspace and scratch) open between operations: opening one costs four
// system calls, checking one held open two.
var bases = baseCache{entries: map[string]*baseEntry{}}

// maxBases bounds the directories bases holds open.
const maxBases = 32

// baseCache holds base directories open by canonical path. An entry is
// used only while the directory it holds is the one Resolve found at the
// path (the same device and inode), is still linked into the tree, and is
// what the path leads to now (stillAt): an inode number freed by
// `rm -rf ws` can come back with the next `mkdir ws`, and a directory
// removed or renamed away while held would take writes that nobody could
// see at the path. An entry that fails this is dropped, and closed when
// the last operation using it gives it back.
type baseCache struct {
	mu      sync.Mutex
	entries map[string]*baseEntry
	clock   uint64
}

type baseEntry struct {
	root    *os.Root
	ident   FileIdent
	users   int
	dropped bool
	used    uint64 // clock at the last take
}

// take returns the directory at path, which Resolve saw as ident, held
// open.
func (c *baseCache) take(path string, ident FileIdent) (dirRoot, error) {
	c.mu.Lock()
	e := c.entries[path]
	if e != nil && e.ident == ident {
		e.users++
		c.clock++
		e.used = c.clock
		c.mu.Unlock()
		if c.stillAt(path, e.root, ident) {
			return dirRoot{Root: e.root, release: func() { c.give(e) }}, nil
		}
		c.mu.Lock()
		c.dropLocked(path, e)
		c.mu.Unlock()
		c.give(e)
	} else {
		if e != nil {
			c.dropLocked(path, e)
		}
		c.mu.Unlock()
	}
	root, err := openChecked(path, ident)
	if err != nil {
		return dirRoot{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[path] != nil {
		// Another operation opened it meanwhile: this one stays its own.
		return dirRoot{Root: root}, nil
	}
	if len(c.entries) >= maxBases {
		c.evictLocked()
	}
	c.clock++
	e = &baseEntry{root: root, ident: ident, users: 1, used: c.clock}
	c.entries[path] = e
	return dirRoot{Root: root, release: func() { c.give(e) }}, nil
}

// stillAt says whether root, held open, is still the directory at path
// that Resolve saw as ident: linked, and the one the path leads to now. A
// call can wait long after Resolve (for its turn in the session's order,
// for a mutation slot), and a workspace renamed away meanwhile is still
// linked, with its old identity: without the look at the path, its write
// would land there and be reported done.
func (c *baseCache) stillAt(path string, root *os.Root, ident FileIdent) bool {
	held, err := root.Stat(".")
	if err != nil || identOf(held) != ident || !linked(held) {
		return false
	}
	there, err := os.Lstat(path)
	return err == nil && there.IsDir() && identOf(there) == ident
}

// give is the end of one operation's use of e.
func (c *baseCache) give(e *baseEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	if e.dropped && e.users == 0 {
		e.root.Close()
	}
}

// dropLocked takes e out of the cache; it is closed once unused.
func (c *baseCache) dropLocked(path string, e *baseEntry) {
	if c.entries[path] != e {
		return
	}
	delete(c.entries, path)
	e.dropped = true
	if e.users == 0 {
		e.root.Close()
	}
}

// evictLocked drops the entry used longest ago.
func (c *baseCache) evictLocked() {
	var oldest string
	var at uint64
	for p, e := range c.entries {
		if oldest == "" || e.used < at {
			oldest, at = p, e.used
		}
	}
	c.dropLocked(oldest, c.entries[oldest])
}

// ReleaseBase closes the directory held open for dir, if any (a session's
// workspace or scratch, when the session ends); an operation using it
// keeps it until it is done.
func ReleaseBase(dir string) {
	bases.mu.Lock()
	defer bases.mu.Unlock()
	if e := bases.entries[filepath.Clean(dir)]; e != nil {
		bases.dropLocked(filepath.Clean(dir), e)
	}
}

// ReleaseBases closes every directory held open (the connection ends).
func ReleaseBases() {
	bases.mu.Lock()
	defer bases.mu.Unlock()
	for p, e := range bases.entries {
		bases.dropLocked(p, e)
	}
}
