package handlers

import (
	"context"
	"encoding/json"
	"errors"

	"hostcore/handlers/review"
	"hostcore/handlers/tools"
	"hostcore/store"
)

// saveSnapshot makes the snapshot of a workspace mutation durable before
// the mutation runs (review.Save); an error means it must not run.
func (s *Server) saveSnapshot(ctx context.Context, c *call, b *tools.Before, after []byte) (*store.Snapshot, error) {
	sn := store.Snapshot{ID: newID("snap_"), SessionID: c.sess.ID, MessageID: c.p.MessageID, Path: b.Path, AbsPath: b.Abs}
	return review.Save(ctx, s.store, sn, b, after)
}

// dropSnapshot removes the snapshot of a mutation that did not happen.
func (s *Server) dropSnapshot(ctx context.Context, sn *store.Snapshot) {
	if err := s.store.DropSnapshot(context.WithoutCancel(ctx), sn.ID); err != nil {
		s.log.Warn("snapshot of a failed mutation not removed", "snapshot", sn.ID, "err", err)
	}
}

// reviewRollback restores a snapshot, hash-guarded (design section 4c),
// in its turn among the session's mutations (review.Restore).
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
	t := rt.mut.Take()
	defer rt.mut.Release(t)
	if err := rt.mut.Wait(ctx, t); err != nil {
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
	return review.Restore(ctx, s.store, sess.WorkspaceRoot, sn, s.lockPath)
}
