package scratch

import (
	"fmt"
	"io/fs"
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
	if err := removeAll(dir); err != nil {
		return fmt.Errorf("removing scratch dir: %w", err)
	}
	return nil
}

// removeAll is os.RemoveAll that first makes the directories inside
// writable when it has to: a command may leave a read-only tree (a Go
// module cache), whose files os.RemoveAll cannot unlink, and what is left
// would go to the next session given the same id. Links are not followed.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			// Checked again right before the chmod, which follows links.
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				os.Chmod(p, 0o700)
			}
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// touchedSince says whether anything in dir, or dir itself, was modified
// after cutoff: a file rewritten in place, or written into a subdirectory,
// leaves the top directory's time as it was.
func touchedSince(dir string, cutoff time.Time) bool {
	touched := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(cutoff) {
			touched = true
			return fs.SkipAll
		}
		return nil
	})
	return touched
}

// Sweep removes entries of parent (a directory of per-session directories)
// whose session no longer exists, and, when maxAge > 0, those in which
// nothing was modified for longer than maxAge. It returns the names it removed.
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
				stale = !touchedSince(filepath.Join(parent, name), now.Add(-maxAge))
			}
		}
		if stale {
			if err := removeAll(filepath.Join(parent, name)); err == nil {
				removed = append(removed, name)
			}
		}
	}
	return removed, nil
}
