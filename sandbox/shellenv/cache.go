//go:build !windows

package shellenv

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// FallbackError says why commands run with `bash -lc` (login mode)
// rather than through a snapshot.
type FallbackError struct {
	Err error
}

func (e *FallbackError) Error() string {
	return "no shell snapshot, commands run with bash -lc: " + e.Err.Error()
}

func (e *FallbackError) Unwrap() error { return e.Err }

// Cache holds the current snapshot and takes it again when it is stale.
// One take runs at a time: while it runs, callers with a snapshot of the
// same shell go on with it, callers without one wait. A take that fails
// is not retried until a profile file or the shell changes (a profile
// that hangs would otherwise cost every command the 10 s bound); until
// then Get reports the same FallbackError, and OnFallback hears of it
// once.
type Cache struct {
	opts Options
	// ctx bounds the takes: Close cancels it, and a take that runs is
	// killed with its process tree.
	ctx    context.Context
	cancel context.CancelFunc
	// onFallback is called once for each failed take, without the lock.
	onFallback func(error)

	mu      sync.Mutex
	cur     *Snapshot
	prev    *Snapshot // the one cur replaced: a command may be starting with it
	failed  *failure
	taking  chan struct{} // closed when the running take ends
	closing bool
}

type failure struct {
	shell  string
	files  []string
	stamps []stamp
	err    *FallbackError
}

// NewCache returns an empty cache; snapshots are taken with opts.
// onFallback (may be nil) is told of each failed take, to log it.
func NewCache(opts Options, onFallback func(error)) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{opts: opts, ctx: ctx, cancel: cancel, onFallback: onFallback}
}

// Get returns the snapshot to run a command of shell with, taking it
// first when there is none or it is stale. The error is a *FallbackError
// (run the command with `bash -lc`) or ctx's.
func (c *Cache) Get(ctx context.Context, shell string) (*Snapshot, error) {
	c.mu.Lock()
	for {
		if c.closing {
			c.mu.Unlock()
			return nil, &FallbackError{Err: errors.New("the shell snapshot cache is closed")}
		}
		cur := c.cur
		if cur != nil && cur.shell != shell {
			cur = nil
		}
		if cur != nil && !cur.Stale() {
			c.mu.Unlock()
			return cur, nil
		}
		if f := c.failed; f != nil && f.shell == shell && slices.Equal(readStamps(f.files), f.stamps) {
			c.mu.Unlock()
			return nil, f.err
		}
		if c.taking == nil {
			c.start(shell)
		}
		if cur != nil {
			// Stale: the new one is on its way; this one serves meanwhile.
			c.mu.Unlock()
			return cur, nil
		}
		wait := c.taking
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
	}
}

// Prefetch starts taking the snapshot for shell if there is none (or it
// is stale) and no take runs, without waiting: a caller that knows a
// command is coming (a permission card is open) hides the take's cost.
func (c *Cache) Prefetch(shell string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taking != nil || c.closing {
		return
	}
	if c.cur != nil && c.cur.shell == shell && !c.cur.Stale() {
		return
	}
	if f := c.failed; f != nil && f.shell == shell && slices.Equal(readStamps(f.files), f.stamps) {
		return
	}
	c.start(shell)
}

// start begins a take; c.mu is held. The take is not tied to any one
// caller's context (others may be waiting for it, and it is bounded),
// only the cache's.
func (c *Cache) start(shell string) {
	done := make(chan struct{})
	c.taking = done
	probeShell := probeShellOf(c.opts.ProbeShell, c.opts.env())
	files := append(profileFiles(c.opts.env(), probeShell), shell)
	stamps := readStamps(files)
	go func() {
		snap, err := Take(c.ctx, shell, c.opts)
		var fe *FallbackError
		if err != nil && c.ctx.Err() == nil {
			fe = &FallbackError{Err: err}
			// Told before the waiters wake, so the log line comes
			// before the commands that fall back.
			if c.onFallback != nil {
				c.onFallback(fe)
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case err != nil && fe == nil:
			// Closed while taking: nothing to record.
		case fe != nil:
			c.failed = &failure{shell: shell, files: files, stamps: stamps, err: fe}
		default:
			if c.prev != nil {
				c.prev.Remove()
			}
			if c.closing {
				snap.Remove()
				snap = nil
			}
			c.prev, c.cur, c.failed = c.cur, snap, nil
		}
		c.taking = nil
		close(done)
	}()
}

// Close stops a running take (killing its shell) and removes the
// snapshots' scripts. Get then reports a FallbackError.
func (c *Cache) Close() {
	c.cancel()
	c.mu.Lock()
	c.closing = true
	wait := c.taking
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range []*Snapshot{c.prev, c.cur} {
		if s != nil {
			s.Remove()
		}
	}
	c.prev, c.cur = nil, nil
}
