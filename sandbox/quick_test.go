package sandbox

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// checkQuick: whenever QuickOpen answers, Resolve gives the same
// answer (a workspace file at the same canonical path) and OpenRegular
// opens the same file.
func checkQuick(t *testing.T, fx *fixture, p string, res Resolved, rerr error) {
	t.Helper()
	f, qres, fi, ok := fx.roots.QuickOpen(p)
	if !ok {
		return
	}
	defer f.Close()
	if rerr != nil {
		t.Fatalf("QuickOpen(%q) opened a file Resolve refuses: %v", p, rerr)
	}
	if res.Root != RootWorkspace || !res.Exists || res.IsDir || qres.Abs != res.Abs || qres.Display != res.Display ||
		qres.Name != res.Name || qres.Base != res.Base || qres.Ident != res.Ident || qres.BaseIdent != res.BaseIdent {
		t.Fatalf("QuickOpen(%q) = %+v, Resolve = %+v", p, qres, res)
	}
	quick, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("QuickOpen(%q): reading: %v", p, err)
	}
	slow, _, err := ReadFileLimit(res, 1<<16)
	if err != nil || string(slow) != string(quick) || fi.Size() != int64(len(quick)) {
		t.Fatalf("QuickOpen(%q) read %q (size %d), OpenRegular %q (%v)", p, quick, fi.Size(), slow, err)
	}
	if strings.Contains(string(quick), secret) {
		t.Fatalf("QuickOpen(%q) read the outside secret", p)
	}
}

// QuickOpen opens only plain workspace files by a path without links,
// and leaves everything else to Resolve.
func TestQuickOpen(t *testing.T) {
	fx := newFixture(t)
	for p, want := range map[string]string{
		"file.txt":                            "file.txt",
		"dir/inner.txt":                       "dir/inner.txt",
		"./dir//inner.txt":                    "dir/inner.txt",
		"dir/../file.txt":                     "file.txt",
		"missing/../file.txt":                 "file.txt",
		"héllo wörld ✓.txt":                   "héllo wörld ✓.txt",
		filepath.Join(fx.ws, "file.txt"):      "file.txt",
		filepath.Join(fx.ws, "../w/file.txt"): "file.txt",
		"link_in":                             "",
		"link_dir_in/inner.txt":               "",
		"link_out_file":                       "",
		"abs_in":                              "",
		"rel_escape":                          "",
		"../outside/secret.txt":               "",
		"../w/file.txt":                       "",
		filepath.Join(fx.out, "secret.txt"):   "",
		filepath.Join(fx.scratch, "s.txt"):    "",
		fx.ws + "_evil/secret.txt":            "",
		"fifo":                                "",
		"sock":                                "",
		"dir":                                 "",
		".":                                   "",
		"missing.txt":                         "",
		"file.txt/":                           "",
		"file.txt/.":                          "",
		"a\x00b":                              "",
		"":                                    "",
	} {
		guard(t, "QuickOpen "+p, func() {
			f, res, _, ok := fx.roots.QuickOpen(p)
			if ok {
				f.Close()
			}
			switch {
			case want == "" && ok:
				t.Errorf("QuickOpen(%q) opened %s; it must leave it to Resolve", p, res.Abs)
			case want != "" && !ok:
				t.Errorf("QuickOpen(%q) declined", p)
			case ok && res.Display != want:
				t.Errorf("QuickOpen(%q) = %s, want %s", p, res.Display, want)
			}
			if r, err := fx.roots.Resolve(p); err == nil || ok {
				checkQuick(t, fx, p, r, err)
			}
		})
	}
	if _, _, _, ok := (Roots{Scratch: fx.scratch}).QuickOpen("file.txt"); ok {
		t.Error("QuickOpen without a workspace opened something")
	}
}

// A workspace that is now a link is refused, though its old fd-free
// path would still open.
func TestQuickOpenRefusesAWorkspaceLink(t *testing.T) {
	fx := newFixture(t)
	roots := Roots{Workspace: filepath.Join(fx.scratch, "dir_to_ws"), Scratch: fx.scratch}
	if _, _, _, ok := roots.QuickOpen("file.txt"); ok {
		t.Fatal("QuickOpen followed a link at the workspace path")
	}
}
