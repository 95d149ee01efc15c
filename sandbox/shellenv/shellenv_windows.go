package shellenv

import (
	"context"
	"errors"
	"time"
)

// ErrNotSupported: Windows has no login bash profile to snapshot;
// callers run commands as they do without one.
var ErrNotSupported = errors.New("shell snapshots are not supported on Windows")

// Options say how to take a snapshot (unused on Windows).
type Options struct {
	Dir, WorkDir, ProbeShell string
	Env                      []string
	Timeout, ProbeTimeout    time.Duration
}

// Snapshot is never made on Windows.
type Snapshot struct{}

// Take fails: not supported.
func Take(ctx context.Context, shell string, opts Options) (*Snapshot, error) {
	return nil, ErrNotSupported
}

// Stale is always true.
func (s *Snapshot) Stale() bool { return true }

// Command fails: not supported.
func (s *Snapshot) Command(command string, env []string, started *Started) (string, []string, []string, error) {
	return "", nil, nil, ErrNotSupported
}

// Remove does nothing.
func (s *Snapshot) Remove() {}

// FallbackError says why commands run without a snapshot.
type FallbackError struct{ Err error }

func (e *FallbackError) Error() string { return "no shell snapshot: " + e.Err.Error() }

func (e *FallbackError) Unwrap() error { return e.Err }

// Cache always reports the fallback on Windows.
type Cache struct{}

// NewCache returns a cache that never has a snapshot.
func NewCache(opts Options, onFallback func(error)) *Cache { return &Cache{} }

// Get reports the fallback.
func (c *Cache) Get(ctx context.Context, shell string) (*Snapshot, error) {
	return nil, &FallbackError{Err: ErrNotSupported}
}

// Prefetch does nothing.
func (c *Cache) Prefetch(shell string) {}

// Close does nothing.
func (c *Cache) Close() {}
