//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAliasOfRoot: a path named through an alias of a root (a link whose
// canonical form is the root itself) is in that root, under its
// root-relative name; links that merely point into a root, or that lead
// out of it, are not aliases.
func TestAliasOfRoot(t *testing.T) {
	tmp := canonTemp(t)
	ws, sc, out := filepath.Join(tmp, "ws"), filepath.Join(tmp, "scratch"), filepath.Join(tmp, "out")
	for _, d := range []string{ws, sc, out, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{filepath.Join(ws, "a.txt"): "a", filepath.Join(ws, "sub", "b.txt"): "b", filepath.Join(out, "secret.txt"): secret, filepath.Join(sc, "s.txt"): "s"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"wslink":          ws,
		"wslink2":         "wslink", // an alias of an alias
		"sclink":          sc,
		"tmplink":         tmp, // an alias of the roots' parent
		"ws/escape":       out,
		"sublink":         filepath.Join(ws, "sub"), // points into the workspace, is no alias of it
		"scratch/ws_link": ws,
		"ws/sc_link":      sc,
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tmp, name)); err != nil {
			t.Fatal(err)
		}
	}
	roots := Roots{Workspace: ws, Scratch: sc}
	for _, tc := range []struct {
		path, root, display string
	}{
		{"{tmp}/wslink/a.txt", RootWorkspace, "a.txt"},
		{"{tmp}/wslink", RootWorkspace, "."},
		{"{tmp}/wslink/sub/b.txt", RootWorkspace, "sub/b.txt"},
		{"{tmp}/wslink/new.txt", RootWorkspace, "new.txt"},
		{"{tmp}/wslink2/a.txt", RootWorkspace, "a.txt"},
		{"{tmp}/tmplink/ws/a.txt", RootWorkspace, "a.txt"},
		{"{tmp}/sclink/s.txt", RootScratch, "{tmp}/scratch/s.txt"},
		{"{tmp}/tmplink/scratch/s.txt", RootScratch, "{tmp}/scratch/s.txt"},
		{"{tmp}/wslink/escape/secret.txt", RootExternal, "{tmp}/out/secret.txt"},
		{"{tmp}/wslink/../out/secret.txt", RootExternal, "{tmp}/out/secret.txt"},
		{"{tmp}/sublink/b.txt", RootExternal, "{tmp}/ws/sub/b.txt"},
		{"{tmp}/scratch/ws_link/a.txt", RootExternal, "{tmp}/ws/a.txt"},
		{"{tmp}/ws/sc_link/s.txt", RootExternal, "{tmp}/scratch/s.txt"},
	} {
		p := strings.Replace(tc.path, "{tmp}", tmp, 1)
		res, err := roots.Resolve(p)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", tc.path, err)
		}
		display := strings.Replace(tc.display, "{tmp}", tmp, 1)
		if res.Root != tc.root || res.Display != display {
			t.Errorf("Resolve(%s) = %s %q, want %s %q", tc.path, res.Root, res.Display, tc.root, display)
		}
		if res.Root != RootExternal && !NamedInside(ws, sc, p) && !NamedInside(sc, ws, p) {
			t.Errorf("NamedInside(%s) = false for a path in a root", tc.path)
		}
		if res.Root != RootExternal {
			if data, _, err := ReadFileLimit(res, 1<<10); err == nil && string(data) == secret {
				t.Errorf("Resolve(%s) read the outside secret", tc.path)
			}
		}
	}
}
