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
