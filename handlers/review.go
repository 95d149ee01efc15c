package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

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

// before is a file's state captured before a workspace mutation.
type before struct {
	existed    bool
	data       []byte
	reversible bool
}

// captureBefore reads the target's current bytes for a workspace mutation;
// nil for scratch and external targets, which get no review record.
func (s *Server) captureBefore(ctx context.Context, c *call) (*before, error) {
	if !c.hasTarget || c.target.Root != sandbox.RootWorkspace {
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

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// recordReview stores the snapshot and builds the review record.
func (s *Server) recordReview(ctx context.Context, c *call, b *before, after []byte, op string) (*ReviewChange, error) {
	id := newID("snap_")
	sn := store.Snapshot{
		ID: id, SessionID: c.sess.ID, MessageID: c.p.MessageID, Path: c.target.Display, AbsPath: c.target.Abs,
		Existed: b.existed, AfterHash: sha(after), Reversible: b.reversible, State: "active", CreatedAt: store.Now(),
	}
	if b.existed && b.reversible {
		dir := s.snapshotDir(c.sess.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		sn.BeforeFile = filepath.Join(dir, id+".before")
		if err := writeFileSync(sn.BeforeFile, b.data); err != nil {
			return nil, err
		}
	}
	// The snapshot row is written with the tool's audit-bound context so a
	// cancelled call still leaves a consistent record.
	if err := s.store.InsertSnapshot(context.WithoutCancel(ctx), sn); err != nil {
		return nil, err
	}
	rc := &ReviewChange{
		Version: 1, SnapshotID: id, MessageID: c.p.MessageID, Path: c.target.Display, Operation: op,
		Status: "modified", State: "active", Reversible: b.reversible, Hunks: []DiffHunk{},
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
		rc.Hunks, rc.Additions, rc.Deletions, rc.Truncated = diffHunks(string(b.data), string(after))
	}
	return rc, nil
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}

// diffHunks computes line hunks, bounded to reviewMaxLines kept lines; the
// counts cover the whole diff.
func diffHunks(old, new string) ([]DiffHunk, int, int, bool) {
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
			if kept < reviewMaxLines {
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

func trimNL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return s[:n-1]
	}
	return s
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
	if sess.WorkspaceRoot == "" {
		return nil, appError(CodeNoWorkspace, "session has no workspace")
	}
	roots := sandbox.Roots{Workspace: sess.WorkspaceRoot}
	target, err := roots.Resolve(sn.Path)
	if err != nil || target.Root != sandbox.RootWorkspace {
		return nil, appError(CodeConflict, "%s no longer resolves inside the workspace; nothing was changed", sn.Path)
	}
	cur, _, err := sandbox.ReadFileLimit(target, reviewMaxSnapshot+1)
	if err != nil || sha(cur) != sn.AfterHash {
		return nil, appError(CodeConflict, "%s changed after the tool call; it was left untouched", sn.Path)
	}
	if !sn.Existed {
		if err := sandbox.Remove(target); err != nil {
			return nil, appError(CodeToolFailed, "removing %s: %v", sn.Path, err)
		}
	} else {
		prev, err := os.ReadFile(sn.BeforeFile)
		if err != nil {
			return nil, appError(CodeToolFailed, "snapshot file is missing: %v", err)
		}
		if _, err := sandbox.WriteAtomic(target, prev); err != nil {
			return nil, appError(CodeToolFailed, "restoring %s: %v", sn.Path, err)
		}
	}
	if err := s.store.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
		return nil, storageError("saving snapshot state", err)
	}
	return map[string]any{"state": "rolledBack"}, nil
}
