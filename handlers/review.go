package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"hostcore/sandbox"
	"hostcore/store"
)

// Review bounds (design section 4c: bounded review evidence).
const (
	reviewMaxSnapshot = 16 << 20 // previous bytes kept for rollback
	reviewMaxDiff     = 2 << 20  // files larger than this get no hunks
	reviewMaxLines    = 2000     // hunk lines kept in a result
	reviewContext     = 3
)

// ReviewChange is design section 4c's record.
type ReviewChange struct {
	Version    int        `json:"version"`
	SnapshotID string     `json:"snapshotId"`
	MessageID  string     `json:"messageId"`
	Path       string     `json:"path"`
	Operation  string     `json:"operation"`
	Status     string     `json:"status"`
	State      string     `json:"state"`
	Additions  int        `json:"additions"`
	Deletions  int        `json:"deletions"`
	Hunks      []DiffHunk `json:"hunks"`
	Binary     bool       `json:"binary,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	Reversible bool       `json:"reversible"`
}

// DiffHunk is one unified-diff hunk; lines start with ' ', '+' or '-'.
type DiffHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// reviewSessionBudget bounds the previous content one session's snapshots
// keep on disk: past it, a mutation still runs, but its review is not
// reversible (a model editing a 16 MiB file in a loop would otherwise fill
// the user's disk with copies of it).
const reviewSessionBudget = 1 << 30

// before is a file's state captured before a workspace mutation.
type before struct {
	existed    bool
	data       []byte
	reversible bool
}

// inWorkspace reports whether a mutation changes a workspace file: one
// addressed in the workspace, or one reached from elsewhere (a link in the
// scratch dir) whose canonical path lies in it. Design section 4c: every
// successful workspace mutation carries a review snapshot. A Write through
// a scratch link to a workspace file changed it with no way back.
func (c *call) inWorkspace() bool {
	return c.hasTarget && (c.target.Root == sandbox.RootWorkspace ||
		c.sess.WorkspaceRoot != "" && sandbox.Within(c.sess.WorkspaceRoot, c.target.Abs))
}

// workspacePath is the target as its snapshot names it: relative to the
// workspace, as review.rollback resolves it.
func (c *call) workspacePath() string {
	if c.target.Root == sandbox.RootWorkspace {
		return c.target.Display
	}
	rel, _ := filepath.Rel(c.sess.WorkspaceRoot, c.target.Abs)
	return filepath.ToSlash(rel)
}

// captureBefore reads the target's current bytes for a workspace mutation;
// nil for scratch and external targets, which get no review record.
func (s *Server) captureBefore(ctx context.Context, c *call) (*before, error) {
	if !c.inWorkspace() {
		return nil, nil
	}
	data, _, err := sandbox.ReadFileLimit(c.target, reviewMaxSnapshot)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &before{existed: false, reversible: true}, nil
	case errors.Is(err, sandbox.ErrTooLarge):
		return &before{existed: true, reversible: false}, nil
	case err != nil:
		return nil, err
	}
	return &before{existed: true, data: data, reversible: true}, nil
}

// beforeOf is the state of a file whose bytes the tool already read (Edit).
func beforeOf(data []byte) *before {
	if len(data) > reviewMaxSnapshot {
		return &before{existed: true, reversible: false}
	}
	return &before{existed: true, data: data, reversible: true}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// saveSnapshot makes the snapshot of a workspace mutation durable before
// the mutation runs (design section 4c: the previous file is captured
// before execution): the previous bytes are written and fsynced, then the
// row is committed. An error means the mutation must not run: it could
// not be undone. A crash after this and before the mutation leaves a row
// whose after-hash matches nothing, which no client was told of.
func (s *Server) saveSnapshot(ctx context.Context, c *call, b *before, after []byte) (*store.Snapshot, error) {
	ctx = context.WithoutCancel(ctx)
	sn := &store.Snapshot{
		ID: newID("snap_"), SessionID: c.sess.ID, MessageID: c.p.MessageID, Path: c.workspacePath(), AbsPath: c.target.Abs,
		Existed: b.existed, AfterHash: sha(after), Reversible: b.reversible, State: "active", CreatedAt: store.Now(),
	}
	if b.existed && b.reversible {
		used, err := s.store.SnapshotBytes(ctx, c.sess.ID)
		if err != nil {
			return nil, err
		}
		if used+int64(len(b.data)) > reviewSessionBudget {
			b.reversible, b.data, sn.Reversible = false, nil, false
		}
	}
	if b.existed && b.reversible {
		dir := s.snapshotDir(c.sess.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		sn.BeforeFile = filepath.Join(dir, sn.ID+".before")
		sn.BeforeSize = int64(len(b.data))
		if err := writeFileSync(sn.BeforeFile, b.data); err != nil {
			os.Remove(sn.BeforeFile)
			return nil, err
		}
	}
	if err := s.store.InsertSnapshot(ctx, *sn); err != nil {
		if sn.BeforeFile != "" {
			os.Remove(sn.BeforeFile)
		}
		return nil, err
	}
	return sn, nil
}

// dropSnapshot removes the snapshot of a mutation that did not happen.
func (s *Server) dropSnapshot(ctx context.Context, sn *store.Snapshot) {
	if err := s.store.DeleteSnapshot(context.WithoutCancel(ctx), sn.ID); err != nil {
		s.log.Warn("snapshot of a failed mutation not removed", "snapshot", sn.ID, "err", err)
		return
	}
	if sn.BeforeFile != "" {
		os.Remove(sn.BeforeFile)
	}
}

// reviewOf builds the review record of a mutation that ran.
func reviewOf(sn *store.Snapshot, b *before, after []byte, op string) *ReviewChange {
	rc := &ReviewChange{
		Version: 1, SnapshotID: sn.ID, MessageID: sn.MessageID, Path: sn.Path, Operation: op,
		Status: "modified", State: "active", Reversible: sn.Reversible, Hunks: []DiffHunk{},
	}
	if !b.existed {
		rc.Status = "added"
	}
	switch {
	case b.existed && !b.reversible:
		rc.Truncated = true
	case isBinary(b.data) || isBinary(after):
		rc.Binary = true
	case len(b.data) > reviewMaxDiff || len(after) > reviewMaxDiff:
		rc.Truncated = true
	default:
		rc.Hunks, rc.Additions, rc.Deletions, rc.Truncated = diffHunks(string(bytes.TrimPrefix(b.data, utf8BOM)), string(bytes.TrimPrefix(after, utf8BOM)))
	}
	return rc
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}

// diffHunks computes line hunks, bounded to reviewMaxLines kept lines; the
// counts cover the whole diff.
func diffHunks(old, new string) ([]DiffHunk, int, int, bool) {
	return diffHunksMax(old, new, reviewMaxLines)
}

// diffHunksMax is diffHunks keeping at most maxLines lines.
func diffHunksMax(old, new string, maxLines int) ([]DiffHunk, int, int, bool) {
	edits := udiff.Lines(old, new)
	u, err := udiff.ToUnifiedDiff("a", "b", old, edits, reviewContext)
	if err != nil {
		return []DiffHunk{}, 0, 0, true
	}
	hunks := []DiffHunk{}
	adds, dels, kept := 0, 0, 0
	truncated := false
	for _, h := range u.Hunks {
		dh := DiffHunk{OldStart: h.FromLine, NewStart: h.ToLine, Lines: []string{}}
		for _, l := range h.Lines {
			prefix := " "
			switch l.Kind {
			case udiff.Insert:
				prefix = "+"
				adds++
				dh.NewLines++
			case udiff.Delete:
				prefix = "-"
				dels++
				dh.OldLines++
			default:
				dh.OldLines++
				dh.NewLines++
			}
			if kept < maxLines {
				dh.Lines = append(dh.Lines, prefix+trimNL(l.Content))
				kept++
			} else {
				truncated = true
			}
		}
		if len(dh.Lines) > 0 {
			hunks = append(hunks, dh)
		}
	}
	return hunks, adds, dels, truncated
}

// trimNL drops a line's ending, "\n" or "\r\n", as Read does.
func trimNL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return strings.TrimSuffix(s[:n-1], "\r")
	}
	return s
}

// hashIs says whether the target's content has the given sha256 (hex),
// reading it in pieces: a file of any size can be checked.
func hashIs(target sandbox.Resolved, want string) (bool, error) {
	f, _, err := sandbox.OpenRegular(target)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, sandbox.ReadErr(err)
	}
	return hex.EncodeToString(h.Sum(nil)) == want, nil
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// restored reports whether target holds what it held before the call:
// no file for a call that created it, else the snapshot's bytes.
func restored(sn store.Snapshot, target sandbox.Resolved) bool {
	if !sn.Existed {
		_, err := os.Lstat(target.Abs)
		return errors.Is(err, fs.ErrNotExist)
	}
	prev, err := os.Open(sn.BeforeFile)
	if err != nil {
		return false
	}
	defer prev.Close()
	h := sha256.New()
	if _, err := io.Copy(h, prev); err != nil {
		return false
	}
	same, err := hashIs(target, hex.EncodeToString(h.Sum(nil)))
	return err == nil && same
}

// reviewRollback restores a snapshot, hash-guarded (design section 4c).
func (s *Server) reviewRollback(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		SessionID  string `json:"sessionId"`
		SnapshotID string `json:"snapshotId"`
	}
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if p.SnapshotID == "" {
		return nil, invalidParams("invalid params: snapshotId is required")
	}
	sess, err := s.loadSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	sn, err := s.store.GetSnapshot(ctx, p.SessionID, p.SnapshotID)
	if errors.Is(err, store.ErrNotFound) {
		// A session.delete on a later line may have run first: its
		// snapshots went with it, and that is what to say.
		if _, err := s.loadSession(ctx, p.SessionID); err != nil {
			return nil, err
		}
		return nil, invalidParams("invalid params: snapshot %q not found in session %q", p.SnapshotID, p.SessionID)
	} else if err != nil {
		return nil, storageError("reading snapshot", err)
	}
	if sn.State == "rolledBack" {
		return map[string]any{"state": "rolledBack", "alreadyRolledBack": true}, nil
	}
	if !sn.Reversible {
		return nil, appError(CodeConflict, "snapshot %s is not reversible (the previous content was too large to keep)", sn.ID)
	}
	// A rollback is a mutation: it waits its turn behind the session's
	// in-flight Write/Edit calls.
	rt := s.runtime(p.SessionID)
	t := rt.mut.take()
	defer rt.mut.release(t)
	if err := rt.mut.wait(ctx, t); err != nil {
		return nil, appError(CodeToolAborted, "rollback cancelled")
	}
	// A session.delete that came meanwhile ended the calls ahead of this
	// one: the session is gone, and so is its undo.
	if rt.isDeleted() {
		return nil, appError(CodeSessionNotFound, "session %q was deleted while the rollback waited; nothing was changed", p.SessionID)
	}
	if sess.WorkspaceRoot == "" {
		return nil, appError(CodeNoWorkspace, "session has no workspace")
	}
	// The path must still name the file the call changed: a directory on
	// it replaced by a link, or the file by one, would make the restore
	// land on another file, which may well hold the same bytes.
	roots := sandbox.Roots{Workspace: sess.WorkspaceRoot}
	target, err := roots.Resolve(sn.Path)
	if err != nil || target.Root != sandbox.RootWorkspace || target.Abs != sn.AbsPath {
		return nil, appError(CodeConflict, "%s no longer names the file the tool call changed (a link or a moved directory is on its path); nothing was changed", sn.Path)
	}
	// Another session's Write or Edit of the same file takes the same lock:
	// the check and the restore below are one step to it.
	unlock := s.lockPath(target.Abs)
	defer unlock()
	if same, err := hashIs(target, sn.AfterHash); err != nil || !same {
		// A rollback whose restore landed but whose state was never saved
		// (hostcore killed between the two, or the disk full for the
		// second) finds the file as it was before the call: it is rolled
		// back, and saying CONFLICT ("left untouched") would be false.
		if restored(sn, target) {
			if err := s.store.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
				return nil, storageError("saving snapshot state", err)
			}
			return map[string]any{"state": "rolledBack", "alreadyRolledBack": true}, nil
		}
		return nil, appError(CodeConflict, "%s changed after the tool call; it was left untouched", sn.Path)
	}
	var warning string // the change was made but not synced (sandbox.NotDurableError)
	if !sn.Existed {
		w, err := sandbox.Durable(sandbox.Remove(target))
		if err != nil {
			return nil, appError(CodeToolFailed, "removing %s: %v", sn.Path, err)
		}
		warning = w
	} else {
		prev, err := os.ReadFile(sn.BeforeFile)
		if err != nil {
			return nil, appError(CodeToolFailed, "snapshot file is missing: %v", err)
		}
		if sn.BeforeSize > 0 && int64(len(prev)) != sn.BeforeSize {
			// Cut short or grown on disk since it was taken: restoring
			// it would put a fragment in place of the file. (Snapshots
			// taken before schema v3 have no size, 0: not checked.)
			return nil, appError(CodeToolFailed, "the snapshot of %s is damaged (%d bytes on disk, %d taken); %s was left untouched", sn.Path, len(prev), sn.BeforeSize, sn.Path)
		}
		_, err = sandbox.WriteAtomic(target, prev)
		w, err := sandbox.Durable(err)
		warning = w
		if err != nil {
			return nil, appError(CodeToolFailed, "restoring %s: %v", sn.Path, err)
		}
	}
	if err := s.store.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
		return nil, storageError("saving snapshot state", err)
	}
	if warning != "" {
		return map[string]any{"state": "rolledBack", "warning": warning}, nil
	}
	return map[string]any{"state": "rolledBack"}, nil
}
