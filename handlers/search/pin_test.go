//go:build unix

package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func identOf(t *testing.T, p string) Ident {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return Ident{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // widths differ by platform
}

// TestSearchRootIsPinned: the root was opened by path, following symlinks,
// so a directory (or file) swapped for a link to elsewhere between the
// caller's resolution and the search was searched, under the caller's
// label (root "workspace"). With RootIdent the swap is refused.
func TestSearchRootIsPinned(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "creds.txt"), []byte("TOPSECRET\n"), 0o600)
	sub := filepath.Join(ws, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "f.txt"), []byte("inside\n"), 0o644)
	dirID, fileID := identOf(t, sub), identOf(t, filepath.Join(sub, "f.txt"))

	ctx := context.Background()
	if _, err := Grep(ctx, GrepOptions{Root: sub, RootIdent: dirID, Pattern: "inside"}); err != nil {
		t.Fatalf("unchanged root: %v", err)
	}
	os.Rename(sub, sub+".old")
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	if r, err := Grep(ctx, GrepOptions{Root: sub, RootIdent: dirID, Pattern: "SECRET"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Grep of a swapped directory: %+v, %v; want ErrRootChanged", r, err)
	}
	if r, err := Glob(ctx, GlobOptions{Root: sub, RootIdent: dirID, Pattern: "*"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Glob of a swapped directory: %+v, %v; want ErrRootChanged", r, err)
	}
	// A single file swapped (through its swapped parent) for another.
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := Grep(ctx, GrepOptions{Root: filepath.Join(sub, "f.txt"), RootIdent: fileID, Pattern: "SECRET"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Grep of a swapped file: %+v, %v; want ErrRootChanged", r, err)
	}
}

// A parent directory swapped for a link between the caller's component
// walk and its identity check gives an identity taken through the link:
// the outside directory's. The root was then opened through the link
// too, the identities matched, and Grep and Glob searched the outside
// directory under the workspace's label, with no card (a review raced
// the swap in a loop: 538 leaks in 44,000 calls). A root is canonical, so
// any link on it now is refused, whatever identity the caller took.
func TestSearchRootThroughASwappedParentIsRefused(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(outside, "deep"), 0o755)
	os.WriteFile(filepath.Join(outside, "deep", "g.txt"), []byte("OUTSIDE_SECRET\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(ws, "sw")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(ws, "sw", "deep") // canonical when resolved; "sw" is a link now
	dirID, fileID := identOf(t, root), identOf(t, filepath.Join(root, "g.txt"))
	ctx := context.Background()
	if r, err := Grep(ctx, GrepOptions{Root: root, RootIdent: dirID, Pattern: "SECRET"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Grep through a swapped parent: %+v, %v; want ErrRootChanged", r, err)
	}
	if r, err := Glob(ctx, GlobOptions{Root: root, RootIdent: dirID, Pattern: "*"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Glob through a swapped parent: %+v, %v; want ErrRootChanged", r, err)
	}
	file := filepath.Join(root, "g.txt")
	if r, err := Grep(ctx, GrepOptions{Root: file, RootIdent: fileID, Pattern: "SECRET"}); !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Grep of a file through a swapped parent: %+v, %v; want ErrRootChanged", r, err)
	}
}
