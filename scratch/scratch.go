// Package scratch manages per-session scratch directories (design section
// 4b): <data-dir>/scratch/<sessionId>, created lazily, removed with the
// session, and swept at start-up.
package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// MaxAge is how long an untouched scratch directory survives the start-up
// sweep.
const MaxAge = 7 * 24 * time.Hour

// Dir is a session's scratch directory (not created).
func Dir(dataDir, sessionID string) string {
	return filepath.Join(dataDir, "scratch", sessionID)
}

// Ensure creates dir (and parents) if missing. Private to the user: other
// local users have no business in an agent's drafts.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating scratch dir: %w", err)
	}
	return nil
}

// Remove deletes a session's scratch directory.
func Remove(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing scratch dir: %w", err)
	}
	return nil
}

// Sweep removes entries of parent (a directory of per-session directories)
// whose session no longer exists, and, when maxAge > 0, those untouched for
// longer than maxAge. It returns the names it removed.
func Sweep(parent string, exists func(sessionID string) bool, maxAge time.Duration, now time.Time) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweeping %s: %w", parent, err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		stale := !exists(name)
		if !stale && maxAge > 0 {
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > maxAge {
				stale = true
			}
		}
		if stale {
			if err := os.RemoveAll(filepath.Join(parent, name)); err == nil {
				removed = append(removed, name)
			}
		}
	}
	return removed, nil
}
