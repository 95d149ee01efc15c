//go:build unix

package sandbox

import (
	"io"
	"strings"
	"testing"
)

// checkQuick: whenever QuickOpen answers, Resolve gives the same
// answer (a workspace file at the same canonical path) and OpenRegular
// opens the same file.
func checkQuick(t *testing.T, fx *fixture, p string, res Resolved, rerr error) {
	t.Helper()
	var d QuickDir
	defer d.Close()
	f, qres, fi, ok := fx.roots.QuickOpen(&d, p)
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
