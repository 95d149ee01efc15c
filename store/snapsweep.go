package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SweepReport says what SweepSnapshots removed, or kept.
type SweepReport struct {
	SessionDirs int // snapshots/<session>/ of sessions that no longer exist
	StrayFiles  int // per-snapshot files no row names
	StrayBlobs  int // blob files no row names, and unfinished writes
	// Kept is set when the database is new but the data dir holds
	// snapshot files: they are kept (see SweepSnapshots).
	Kept []string
}

// SweepSnapshots removes what a crash or an older hostcore left behind:
// the snapshots/<session>/ directories of sessions that no longer exist,
// the files in the others that no row names, and blob files no row
// names. It walks the data dir, so the caller runs it in the background,
// after the first answer: saves may run beside it.
//
// A database that was just created (Fresh) next to snapshot files says
// nothing about them: the database file may have been emptied or
// removed, and those files are all the user has left. They are kept and
// listed in Kept.
func (s *Store) SweepSnapshots(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	sessions, err := s.ListSessions(ctx)
	if err != nil {
		return rep, err
	}
	legacy := filepath.Join(s.dataDir, "snapshots")
	blobs := filepath.Join(s.dataDir, blobDirName)
	if s.Fresh && len(sessions) == 0 {
		for _, d := range []string{legacy, blobs} {
			if entries, _ := os.ReadDir(d); len(entries) > 0 {
				rep.Kept = append(rep.Kept, fmt.Sprintf("%s/ (%d entries)", filepath.Base(d), len(entries)))
			}
		}
		return rep, nil
	}
	// Files made since start-up are not judged: a snapshot of this
	// process may be between its file and its row. (Two seconds of
	// margin for file systems with coarse times.)
	cutoff := s.openedAt.Add(-2 * time.Second)
	if err := s.sweepLegacy(ctx, legacy, sessions, cutoff, &rep); err != nil {
		return rep, err
	}
	dirs, _ := os.ReadDir(blobs)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(blobs, d.Name()))
		var unnamed []string
		for _, f := range files {
			p := filepath.Join(blobs, d.Name(), f.Name())
			if fi, err := f.Info(); err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
				continue
			}
			if _, err := hex.DecodeString(f.Name()); err != nil || len(f.Name()) != 2*sha256.Size {
				if os.Remove(p) == nil { // an unfinished write (.tmp-*)
					rep.StrayBlobs++
				}
				continue
			}
			unnamed = append(unnamed, f.Name())
		}
		s.fileMu.Lock()
		rep.StrayBlobs += s.removeUnnamedBlobs(unnamed)
		s.fileMu.Unlock()
	}
	return rep, ctx.Err()
}

// sweepLegacy sweeps snapshots/, where each snapshot of the per-snapshot
// format has a file of its own under its session's directory.
func (s *Store) sweepLegacy(ctx context.Context, root string, sessions []Session, cutoff time.Time, rep *SweepReport) error {
	dirs, _ := os.ReadDir(root)
	if len(dirs) == 0 {
		return nil
	}
	live := map[string]bool{}
	for _, sess := range sessions {
		live[sess.ID] = true
	}
	stored, err := s.SnapshotFiles(ctx)
	if err != nil {
		return err
	}
	// By name: a data dir moved elsewhere keeps its rows' old paths, and
	// its files must not all read as strays.
	known := map[string]bool{}
	for p := range stored {
		known[filepath.Base(p)] = true
	}
	for _, d := range dirs {
		fi, err := d.Info()
		if err != nil || !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		if !live[d.Name()] {
			if fi.ModTime().Before(cutoff) && os.RemoveAll(dir) == nil {
				rep.SessionDirs++
			}
			continue
		}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if known[f.Name()] || !f.Type().IsRegular() {
				continue
			}
			if fi, err := f.Info(); err == nil && fi.ModTime().Before(cutoff) && os.Remove(filepath.Join(dir, f.Name())) == nil {
				rep.StrayFiles++
			}
		}
	}
	return nil
}
