package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"

	"hostcore/handlers/tools"
	"hostcore/sandbox"
	"hostcore/store"
)

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// saveSnapshot makes the snapshot of a workspace mutation durable before
// the mutation runs (design section 4c: the previous file is captured
// before execution): the store keeps the previous bytes and commits the
// row, applying its retention rule. An error means the mutation must not
// run: it could not be undone. A crash after this and before the mutation
// leaves a row whose after-hash matches nothing, which no client was told
// of.
func (s *Server) saveSnapshot(ctx context.Context, c *call, b *tools.Before, after []byte) (*store.Snapshot, error) {
	ctx = context.WithoutCancel(ctx)
	sn := store.Snapshot{
		ID: newID("snap_"), SessionID: c.sess.ID, MessageID: c.p.MessageID, Path: b.Path, AbsPath: b.Abs,
		Existed: b.Existed, AfterHash: sha(after), Reversible: b.Reversible, State: "active", CreatedAt: store.Now(),
	}
	saved, err := s.store.SaveSnapshot(ctx, sn, b.Data)
	if err != nil {
		return nil, err
	}
	if !saved.Reversible {
		// Past a bound of the retention rule: the mutation runs, but its
		// review says it cannot be undone.
		b.Reversible, b.Data = false, nil
	}
	return &saved, nil
}

// dropSnapshot removes the snapshot of a mutation that did not happen.
func (s *Server) dropSnapshot(ctx context.Context, sn *store.Snapshot) {
	if err := s.store.DropSnapshot(context.WithoutCancel(ctx), sn.ID); err != nil {
		s.log.Warn("snapshot of a failed mutation not removed", "snapshot", sn.ID, "err", err)
	}
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

// restored reports whether target holds what it held before the call:
// no file for a call that created it, else the snapshot's bytes.
func (s *Server) restored(ctx context.Context, sn store.Snapshot, target sandbox.Resolved) bool {
	if !sn.Existed {
		_, err := os.Lstat(target.Abs)
		return errors.Is(err, fs.ErrNotExist)
	}
	want := sn.BeforeHash
	if want == "" {
		prev, err := s.store.SnapshotBefore(ctx, sn)
		if err != nil {
			return false
		}
		want = sha(prev)
	}
	same, err := hashIs(target, want)
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
		return nil, appError(tools.CodeConflict, "snapshot %s is not reversible (%s)", sn.ID, sn.NotReversibleReason())
	}
	// A rollback is a mutation: it waits its turn behind the session's
	// in-flight Write/Edit calls.
	rt := s.runtime(p.SessionID)
	t := rt.mut.take()
	defer rt.mut.release(t)
	if err := rt.mut.wait(ctx, t); err != nil {
		return nil, appError(tools.CodeToolAborted, "rollback cancelled")
	}
	// A session.delete that came meanwhile ended the calls ahead of this
	// one: the session is gone, and so is its undo.
	if rt.isDeleted() {
		return nil, appError(tools.CodeSessionNotFound, "session %q was deleted while the rollback waited; nothing was changed", p.SessionID)
	}
	if sess.WorkspaceRoot == "" {
		return nil, appError(tools.CodeNoWorkspace, "session has no workspace")
	}
	// The path must still name the file the call changed: a directory on
	// it replaced by a link, or the file by one, would make the restore
	// land on another file, which may well hold the same bytes.
	roots := sandbox.Roots{Workspace: sess.WorkspaceRoot}
	target, err := roots.Resolve(sn.Path)
	if err != nil || target.Root != sandbox.RootWorkspace || target.Abs != sn.AbsPath {
		return nil, appError(tools.CodeConflict, "%s no longer names the file the tool call changed (a link or a moved directory is on its path); nothing was changed", sn.Path)
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
		if s.restored(ctx, sn, target) {
			if err := s.store.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
				return nil, storageError("saving snapshot state", err)
			}
			return map[string]any{"state": "rolledBack", "alreadyRolledBack": true}, nil
		}
		return nil, appError(tools.CodeConflict, "%s changed after the tool call; it was left untouched", sn.Path)
	}
	var warning string // the change was made but not synced (sandbox.NotDurableError)
	if !sn.Existed {
		w, err := sandbox.Durable(sandbox.Remove(target))
		if err != nil {
			return nil, appError(tools.CodeToolFailed, "removing %s: %v", sn.Path, err)
		}
		warning = w
	} else {
		prev, err := s.store.SnapshotBefore(ctx, sn)
		if dmg := (*store.DamagedError)(nil); errors.As(err, &dmg) {
			// Restoring content that is not what was taken would put a
			// fragment or another file in place of the file.
			return nil, appError(tools.CodeToolFailed, "the snapshot of %s is damaged (%s); %s was left untouched", sn.Path, dmg.Detail, sn.Path)
		} else if err != nil {
			return nil, appError(tools.CodeToolFailed, "snapshot file is missing: %v", err)
		}
		_, err = sandbox.WriteAtomic(target, prev)
		w, err := sandbox.Durable(err)
		warning = w
		if err != nil {
			return nil, appError(tools.CodeToolFailed, "restoring %s: %v", sn.Path, err)
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
