package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"hostcore/handlers/rpcerr"
	"hostcore/handlers/tools"
	"hostcore/store"
)

// fakeStore keeps one snapshot's previous bytes and the states set.
type fakeStore struct {
	before []byte
	states map[string]string
}

func (f *fakeStore) SaveSnapshot(_ context.Context, sn store.Snapshot, before []byte) (store.Snapshot, error) {
	f.before = before
	return sn, nil
}

func (f *fakeStore) SnapshotBefore(context.Context, store.Snapshot) ([]byte, error) {
	return f.before, nil
}

func (f *fakeStore) SetSnapshotState(_ context.Context, id, state string) error {
	f.states[id] = state
	return nil
}

func noLock(string) func() { return func() {} }

// saved is the snapshot Save records of a change of rel in ws from before
// to after (before nil: the file did not exist).
func saved(t *testing.T, st *fakeStore, ws, rel string, before, after []byte) store.Snapshot {
	t.Helper()
	b := &tools.Before{Existed: before != nil, Data: before, Reversible: true}
	sn, err := Save(t.Context(), st, store.Snapshot{ID: "snap_" + rel, Path: rel, AbsPath: filepath.Join(ws, rel)}, b, after)
	if err != nil {
		t.Fatal(err)
	}
	if sn.AfterHash != sha(after) || sn.Existed != (before != nil) || !sn.Reversible || sn.State != "active" {
		t.Fatalf("saved snapshot %+v", sn)
	}
	return *sn
}

// TestRestoreIsHashGuarded: a file that still holds what the change wrote
// is put back (removed, when the change created it); one changed since is
// left untouched with CONFLICT; one already as it was before is reported
// rolled back.
func TestRestoreIsHashGuarded(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &fakeStore{states: map[string]string{}}
	write := func(rel, s string) { os.WriteFile(filepath.Join(ws, rel), []byte(s), 0o644) }
	read := func(rel string) string { b, _ := os.ReadFile(filepath.Join(ws, rel)); return string(b) }

	write("a.txt", "new\n")
	sn := saved(t, st, ws, "a.txt", []byte("old\n"), []byte("new\n"))
	if ans, err := Restore(t.Context(), st, ws, sn, noLock); err != nil || read("a.txt") != "old\n" || st.states[sn.ID] != "rolledBack" {
		t.Fatalf("restore: %v %v, file %q, state %q", ans, err, read("a.txt"), st.states[sn.ID])
	}
	// Restored but its state not saved: found as it was before.
	if ans, err := Restore(t.Context(), st, ws, sn, noLock); err != nil || ans.(map[string]any)["alreadyRolledBack"] != true {
		t.Fatalf("restore again: %v %v", ans, err)
	}

	write("b.txt", "made\n")
	created := saved(t, st, ws, "b.txt", nil, []byte("made\n"))
	if _, err := Restore(t.Context(), st, ws, created, noLock); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "b.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a created file is still there after its rollback: %v", err)
	}

	write("c.txt", "new\n")
	changed := saved(t, st, ws, "c.txt", []byte("old\n"), []byte("new\n"))
	write("c.txt", "edited by hand\n")
	var e *rpcerr.Error
	if _, err := Restore(t.Context(), st, ws, changed, noLock); !errors.As(err, &e) || e.Kind != tools.CodeConflict || read("c.txt") != "edited by hand\n" {
		t.Fatalf("restore of a file changed since: %v, file %q", err, read("c.txt"))
	}

	// A path that no longer names the file changed (AbsPath elsewhere).
	moved := sn
	moved.AbsPath = filepath.Join(ws, "elsewhere", "a.txt")
	if _, err := Restore(t.Context(), st, ws, moved, noLock); !errors.As(err, &e) || e.Kind != tools.CodeConflict {
		t.Fatalf("restore through a moved path: %v", err)
	}
}
