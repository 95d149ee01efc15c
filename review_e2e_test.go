package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func edit(session, id, path, old, new string) map[string]any {
	return map[string]any{"sessionId": session, "turnId": "t", "toolCallId": id, "toolName": "Edit",
		"args": map[string]any{"path": path, "old_string": old, "new_string": new}}
}

func snapshotOf(t *testing.T, r map[string]any) string {
	t.Helper()
	if r["ok"] != true {
		t.Fatalf("call failed: %v", r)
	}
	return r["review"].(map[string]any)["snapshotId"].(string)
}

// A rollback and another session's Edit of the same file are one after
// the other, in either order; before, the rollback's check and restore
// straddled the Edit, and either the Edit was lost or the rollback said
// rolledBack and restored nothing (25 of 25 runs with a 12 MiB file).
func TestRollbackAndAnotherSessionsEditOfTheFileDoNotInterleave(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	c.call(2, "session.create", map[string]any{"sessionId": "b", "workspaceRoot": ws, "permissionMode": "auto"})
	f := filepath.Join(ws, "f.txt")
	fill := bytes.Repeat([]byte("y"), 8<<20)
	id := 10
	for round := range 8 {
		os.WriteFile(f, append(append([]byte(nil), fill...), "MARKA\n"...), 0o644)
		snap := snapshotOf(t, c.call(id, "tools.execute", edit("s", fmt.Sprint("a", round), "f.txt", "MARKA", "MARKB")))
		c.send(id+1, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": snap})
		c.send(id+2, "tools.execute", edit("b", fmt.Sprint("b", round), "f.txt", "MARKB", "MARKC"))
		rb, rbErr := c.answerOf(id + 1)
		ed, _ := c.answerOf(id + 2)
		id += 3
		got, _ := os.ReadFile(f)
		tail := string(got[len(got)-6:])
		switch {
		case rbErr == "" && rb["state"] == "rolledBack" && ed["ok"] == false && tail == "MARKA\n":
		case rbErr == "error:CONFLICT" && ed["ok"] == true && tail == "MARKC\n":
		default:
			t.Fatalf("round %d: rollback %v %s, edit ok=%v %v, file ends %q", round, rb, rbErr, ed["ok"], ed["message"], tail)
		}
	}
}

// An Edit of a file over the snapshot bound keeps no copy and says it
// cannot be undone; one whose result grows past the bound can still be
// rolled back (the check hashes the current file whatever its size).
func TestEditSnapshotBoundAndRollbackOfALargeResult(t *testing.T) {
	_, _, c, ws, data := hostWithSession(t, "auto")
	big := filepath.Join(ws, "big.txt")
	os.WriteFile(big, append(bytes.Repeat([]byte("z"), 17<<20), "MARK\n"...), 0o644)
	r := c.call(2, "tools.execute", edit("s", "e1", "big.txt", "MARK", "MARK0"))
	review := r["review"].(map[string]any)
	if r["ok"] != true || review["reversible"] != false {
		t.Fatalf("edit of a 17 MiB file: %v", review)
	}
	if entries, _ := filepath.Glob(filepath.Join(data, "snapshot-blobs", "*", "*")); len(entries) != 0 {
		t.Fatalf("a copy was kept of a file too large to keep: %d files", len(entries))
	}
	if _, code := (func() (map[string]any, string) {
		c.send(3, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": review["snapshotId"]})
		return c.answerOf(3)
	})(); code != "error:CONFLICT" {
		t.Fatalf("rollback of an irreversible snapshot: %q", code)
	}

	grow := filepath.Join(ws, "grow.txt")
	orig := append(bytes.Repeat([]byte("g"), (16<<20)-10), "MARK\n"...)
	os.WriteFile(grow, orig, 0o644)
	snap := snapshotOf(t, c.call(4, "tools.execute", edit("s", "e2", "grow.txt", "MARK", strings.Repeat("w", 1<<20))))
	if r := c.call(5, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": snap}); r["state"] != "rolledBack" {
		t.Fatalf("rollback of an edit that grew the file past 16 MiB: %v", r)
	}
	if got, _ := os.ReadFile(grow); !bytes.Equal(got, orig) {
		t.Fatalf("rolled back to %d bytes, want the original %d", len(got), len(orig))
	}
}

// A rollback restores the file the call changed or nothing: a directory
// on the path replaced by a link, or the file by one, is CONFLICT. Before,
// the rollback of an empty `gen/__init__.py` deleted `src/__init__.py`.
func TestRollbackRefusesAPathThatNowLeadsElsewhere(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "__init__.py"), nil, 0o644)
	created := snapshotOf(t, c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write",
		"args": map[string]any{"path": "gen/__init__.py", "content": ""}}))
	os.RemoveAll(filepath.Join(ws, "gen"))
	os.Symlink("src", filepath.Join(ws, "gen"))
	c.send(3, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": created})
	if _, code := c.answerOf(3); code != "error:CONFLICT" {
		t.Fatalf("rollback through a swapped directory: %q", code)
	}
	if _, err := os.Stat(filepath.Join(ws, "src", "__init__.py")); err != nil {
		t.Fatalf("another file was removed: %v", err)
	}

	os.WriteFile(filepath.Join(ws, "p.txt"), []byte("p1"), 0o644)
	edited := snapshotOf(t, c.call(4, "tools.execute", edit("s", "e1", "p.txt", "p1", "p2")))
	os.WriteFile(filepath.Join(ws, "other.txt"), []byte("p2"), 0o644)
	os.Remove(filepath.Join(ws, "p.txt"))
	os.Symlink("other.txt", filepath.Join(ws, "p.txt"))
	c.send(5, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": edited})
	if _, code := c.answerOf(5); code != "error:CONFLICT" {
		t.Fatalf("rollback through a file swapped for a link: %q", code)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "other.txt")); string(got) != "p2" {
		t.Fatalf("the link's target was written: %q", got)
	}
}

// The snapshot is saved before the mutation: when it cannot be, the file
// is not touched and the call says why. Before, the Edit landed and its
// result simply had no review.
func TestEditThatCannotBeSnapshottedDoesNotRun(t *testing.T) {
	_, _, c, ws, data := hostWithSession(t, "auto")
	// Past store.SmallSnapshot, the previous content is a file of its own
	// under snapshot-blobs/, which a file in the way stops.
	v1 := strings.Repeat("padding\n", 10000) + "v1\n"
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(v1), 0o644)
	os.WriteFile(filepath.Join(data, "snapshot-blobs"), []byte("in the way"), 0o600)
	r := c.call(2, "tools.execute", edit("s", "e1", "a.txt", "v1", "v2"))
	if r["ok"] != false || r["errorCode"] != "TOOL_FAILED" || !strings.Contains(r["message"].(string), "snapshot") {
		t.Fatalf("edit without a snapshot: %v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != v1 {
		t.Fatalf("the file was changed: %d bytes", len(got))
	}
	w := c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w1", "toolName": "Write",
		"args": map[string]any{"path": "a.txt", "content": "v3\n"}})
	if w["ok"] != false {
		t.Fatalf("write without a snapshot: %v", w)
	}
	// Once the snapshot directory can be made, the same Edit runs.
	os.Remove(filepath.Join(data, "snapshot-blobs"))
	if r := c.call(4, "tools.execute", edit("s", "e2", "a.txt", "v1", "v2")); r["ok"] != true {
		t.Fatalf("edit once the snapshot directory can be made: %v", r)
	}
}

// A rollback killed between its restore and saving the snapshot's state
// could never be finished: the retry found the file no longer held the
// call's result and answered CONFLICT, "left untouched" (29 of 150 kills
// in a review). A file that holds what it held before the call is rolled
// back.
func TestRollbackRetryAfterItsRestoreLanded(t *testing.T) {
	_, _, c, ws, _ := hostWithSession(t, "auto")
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("seed\n"), 0o644)
	w := c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": "f.txt", "content": "new\n"}})
	n := c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "n", "toolName": "Write", "args": map[string]any{"path": "created.txt", "content": "new\n"}})
	// What the first rollback did before it was killed: the restore.
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("seed\n"), 0o644)
	os.Remove(filepath.Join(ws, "created.txt"))
	for i, r := range []map[string]any{w, n} {
		id := r["review"].(map[string]any)["snapshotId"]
		c.send(10+i, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": id})
		res, code := c.answerOf(10 + i)
		if code != "" || res["state"] != "rolledBack" {
			t.Errorf("retry of rollback %v: %v %s", id, res, code)
		}
	}
	// A file changed otherwise is still a conflict.
	os.WriteFile(filepath.Join(ws, "g.txt"), []byte("seed\n"), 0o644)
	g := c.call(20, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "g", "toolName": "Write", "args": map[string]any{"path": "g.txt", "content": "new\n"}})
	os.WriteFile(filepath.Join(ws, "g.txt"), []byte("someone else\n"), 0o644)
	c.send(21, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": g["review"].(map[string]any)["snapshotId"]})
	if _, code := c.answerOf(21); code != "error:CONFLICT" {
		t.Errorf("a file changed by someone else: %q", code)
	}
}

// A Write through a link in the scratch dir to a workspace file changed
// the workspace with no review record: it was classed external and could
// not be undone (design section 4c; a review against the design).
func TestWriteThroughAScratchLinkIsReviewed(t *testing.T) {
	_, _, c, ws, data := hostWithSession(t, "auto")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("mine\n"), 0o644)
	c.call(2, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "mk", "toolName": "Bash", "args": map[string]any{"command": "true"}})
	scratchDir, _ := filepath.EvalSymlinks(filepath.Join(data, "scratch", "s"))
	if err := os.Symlink(filepath.Join(ws, "a.txt"), filepath.Join(scratchDir, "afile")); err != nil {
		t.Fatal(err)
	}
	r := c.call(3, "tools.execute", map[string]any{"sessionId": "s", "turnId": "t", "toolCallId": "w", "toolName": "Write", "args": map[string]any{"path": filepath.Join(scratchDir, "afile"), "content": "pwn\n"}})
	review, _ := r["review"].(map[string]any)
	if r["ok"] != true || review == nil || review["path"] != "a.txt" {
		t.Fatalf("Write through the link: %v", r)
	}
	c.call(4, "review.rollback", map[string]any{"sessionId": "s", "snapshotId": review["snapshotId"]})
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != "mine\n" {
		t.Fatalf("after rollback a.txt is %q", got)
	}
}
