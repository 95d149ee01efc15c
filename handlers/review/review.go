package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"

	"hostcore/handlers/rpcerr"
	"hostcore/handlers/tools"
	"hostcore/sandbox"
	"hostcore/store"
)

// Store is where the snapshots are kept.
type Store interface {
	SaveSnapshot(ctx context.Context, sn store.Snapshot, before []byte) (store.Snapshot, error)
	SnapshotBefore(ctx context.Context, sn store.Snapshot) ([]byte, error)
	SetSnapshotState(ctx context.Context, id, state string) error
}

// Save makes the snapshot of a workspace mutation durable before the
// mutation runs (design section 4c: the previous file is captured before
// execution): the store keeps the previous bytes and commits the row,
// applying its retention rule. sn names the change (its ids and paths);
// b is the file before, after what the mutation will write. An error
// means the mutation must not run: it could not be undone. A crash after
// this and before the mutation leaves a row whose after-hash matches
// nothing, which no client was told of.
func Save(ctx context.Context, st Store, sn store.Snapshot, b *tools.Before, after []byte) (*store.Snapshot, error) {
	sn.Existed, sn.AfterHash, sn.Reversible, sn.State, sn.CreatedAt = b.Existed, sha(after), b.Reversible, "active", store.Now()
	saved, err := st.SaveSnapshot(context.WithoutCancel(ctx), sn, b.Data)
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

// Restore puts back what sn's change replaced in the workspace, once the
// rollback's turn has come: only if the file still holds what the change
// wrote (design section 4c), under the file's lock (lockPath), so that a
// Write or Edit of the same file by another session cannot come between
// the check and the restore. Its answer is review.rollback's result.
func Restore(ctx context.Context, st Store, workspace string, sn store.Snapshot, lockPath func(abs string) (unlock func())) (any, error) {
	// The path must still name the file the call changed: a directory on
	// it replaced by a link, or the file by one, would make the restore
	// land on another file, which may well hold the same bytes.
	target, err := sandbox.Roots{Workspace: workspace}.Resolve(sn.Path)
	if err != nil || target.Root != sandbox.RootWorkspace || target.Abs != sn.AbsPath {
		return nil, rpcerr.App(tools.CodeConflict, "%s no longer names the file the tool call changed (a link or a moved directory is on its path); nothing was changed", sn.Path)
	}
	unlock := lockPath(target.Abs)
	defer unlock()
	if same, err := hashIs(target, sn.AfterHash); err != nil || !same {
		// A rollback whose restore landed but whose state was never saved
		// (hostcore killed between the two, or the disk full for the
		// second) finds the file as it was before the call: it is rolled
		// back, and saying CONFLICT ("left untouched") would be false.
		if restored(ctx, st, sn, target) {
			if err := st.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
				return nil, rpcerr.Storage("saving snapshot state", err)
			}
			return map[string]any{"state": "rolledBack", "alreadyRolledBack": true}, nil
		}
		return nil, rpcerr.App(tools.CodeConflict, "%s changed after the tool call; it was left untouched", sn.Path)
	}
	var warning string // the change was made but not synced (sandbox.NotDurableError)
	if !sn.Existed {
		w, err := sandbox.Durable(sandbox.Remove(target))
		if err != nil {
			return nil, rpcerr.App(tools.CodeToolFailed, "removing %s: %v", sn.Path, err)
		}
		warning = w
	} else {
		prev, err := st.SnapshotBefore(ctx, sn)
		if dmg := (*store.DamagedError)(nil); errors.As(err, &dmg) {
			// Restoring content that is not what was taken would put a
			// fragment or another file in place of the file.
			return nil, rpcerr.App(tools.CodeToolFailed, "the snapshot of %s is damaged (%s); %s was left untouched", sn.Path, dmg.Detail, sn.Path)
		} else if err != nil {
			return nil, rpcerr.App(tools.CodeToolFailed, "snapshot file is missing: %v", err)
		}
		_, err = sandbox.WriteAtomic(target, prev)
		w, err := sandbox.Durable(err)
		warning = w
		if err != nil {
			return nil, rpcerr.App(tools.CodeToolFailed, "restoring %s: %v", sn.Path, err)
		}
	}
	if err := st.SetSnapshotState(context.WithoutCancel(ctx), sn.ID, "rolledBack"); err != nil {
		return nil, rpcerr.Storage("saving snapshot state", err)
	}
	if warning != "" {
		return map[string]any{"state": "rolledBack", "warning": warning}, nil
	}
	return map[string]any{"state": "rolledBack"}, nil
}

// restored reports whether target holds what it held before the call:
// no file for a call that created it, else the snapshot's bytes.
func restored(ctx context.Context, st Store, sn store.Snapshot, target sandbox.Resolved) bool {
	if !sn.Existed {
		_, err := os.Lstat(target.Abs)
		return errors.Is(err, fs.ErrNotExist)
	}
	want := sn.BeforeHash
	if want == "" {
		prev, err := st.SnapshotBefore(ctx, sn)
		if err != nil {
			return false
		}
		want = sha(prev)
	}
	same, err := hashIs(target, want)
	return err == nil && same
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

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
