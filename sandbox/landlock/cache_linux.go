package landlock

import (
	"maps"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Cache keeps the ruleset of the last policy it prepared, with the state
// of every path its plan was read from (plan.Watch), and hands the same
// ruleset out again while none of them has changed. Building a ruleset
// costs an open and a system call per rule, and a carved home or /tmp
// holds hundreds: milliseconds at every command, where checking the
// watched paths costs one lstat each. A change anywhere the plan looked
// (an entry made, removed or renamed in a listed directory, a link or a
// directory put on the way to a root or a denied path, a denied path
// made or its mode changed) makes the next Prepare plan again from the
// disk, as every command did without the cache. The zero Cache is ready.
type Cache struct {
	mu     sync.Mutex
	key    string // the encoded policy
	rs     *Ruleset
	stamps map[string]stamp
}

// stamp is what of a watched path its watchKind covers.
type stamp struct {
	err            unix.Errno // the lstat's failure (ENOENT: missing); 0 when it succeeded
	dev, ino       uint64
	mode, uid, gid uint32
	mtime          int64 // nanoseconds; watchEntries only
}

// racyWindow: a directory modified this shortly before its plan was
// made is not trusted to show a later change by its modification time
// (file systems stamp times at a clock tick of a few milliseconds, so a
// second change in the same tick keeps the time), and its plan is not
// kept. A time with no nanoseconds comes from a file system that stamps
// whole seconds (or two, FAT), or truncates to them: coarseWindow holds
// for it.
const (
	racyWindow   = 100 * time.Millisecond
	coarseWindow = 2*time.Second + racyWindow
)

// Prepare is Prepare through the cache. The caller owns the ruleset it
// returns (a duplicate of the kept one's descriptor) and closes it.
//
// A ruleset is kept only when the watched paths looked the same just
// before its plan was made as just after, so that the plan read the disk
// in the state the stamps record: the first Prepare of a policy (with no
// paths to look at before) keeps nothing but the stamps, the next one
// keeps its ruleset if the disk held still, and later ones use it.
func (c *Cache) Prepare(p Policy) (*Ruleset, error) {
	key, err := p.Encode()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	var before map[string]stamp
	if c.key == key {
		before = takeStamps(c.stamps)
		if c.rs != nil && maps.Equal(c.stamps, before) {
			return c.rs.dup()
		}
	}
	c.dropLocked()
	rs, pl, err := prepare(p)
	if err != nil {
		return nil, err
	}
	after := takeStamps(pl.Watch)
	c.key, c.stamps = key, after // what the next Prepare looks at
	if before == nil || !maps.Equal(before, after) || racy(pl.Watch, after, start) {
		return rs, nil // not kept: the disk changed while it was read, or may have
	}
	c.rs = rs
	return rs.dup()
}

// Close lets the cached ruleset go.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
}

func (c *Cache) dropLocked() {
	if c.rs != nil {
		c.rs.Close()
	}
	c.key, c.rs, c.stamps = "", nil, nil
}

// takeStamps stamps every path of watch (a plan's Watch, or the stamps
// of one: only the keys are read, and whether mtime is kept).
func takeStamps[V watchKind | stamp](watch map[string]V) map[string]stamp {
	out := make(map[string]stamp, len(watch))
	for path, v := range watch {
		entries := false
		switch v := any(v).(type) {
		case watchKind:
			entries = v == watchEntries
		case stamp:
			entries = v.mtime != 0
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			errno, ok := err.(unix.Errno)
			if !ok {
				errno = unix.EIO
			}
			out[path] = stamp{err: errno}
			continue
		}
		s := stamp{dev: st.Dev, ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid}
		if entries {
			s.mtime = max(st.Mtim.Nano(), 1) // 0 stands for "not kept"
		}
		out[path] = s
	}
	return out
}

// racy reports whether a watched directory changed within racyWindow
// of now, or within coarseWindow for a time in whole seconds.
func racy(watch map[string]watchKind, stamps map[string]stamp, now time.Time) bool {
	fine, coarse := now.Add(-racyWindow).UnixNano(), now.Add(-coarseWindow).UnixNano()
	for path, kind := range watch {
		if kind != watchEntries {
			continue
		}
		m := stamps[path].mtime
		if m > fine || m%int64(time.Second) == 0 && m > coarse {
			return true
		}
	}
	return false
}

// dup is a second handle on the same kernel ruleset, for a caller to
// close when it is done.
func (rs *Ruleset) dup() (*Ruleset, error) {
	fd, err := unix.FcntlInt(uintptr(rs.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	return &Ruleset{fd: fd, flags: rs.flags, handled: rs.handled, notes: rs.notes}, nil
}
