//go:build unix

package search

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rules string
		dir   string // top-relative directory of the entry
		name  string
		isDir bool
		want  bool
	}{
		{"*.log\n", "a/b", "x.log", false, true},
		{"*.log\n!keep.log\n", "", "keep.log", false, false},
		{"!keep.log\n*.log\n", "", "keep.log", false, true}, // last match wins
		{"/top.txt\n", "", "top.txt", false, true},
		{"/top.txt\n", "sub", "top.txt", false, false},
		{"a/b.txt\n", "a", "b.txt", false, true},
		{"a/b.txt\n", "x/a", "b.txt", false, false},
		{"build/\n", "", "build", false, false},
		{"build/\n", "", "build", true, true},
		{"**/gen\n", "x/y", "gen", false, true},
		{"a/**/z\n", "a", "z", false, true},
		{"a/**/z\n", "a/b/c", "z", false, true},
		{"dir/**\n", "", "dir", true, false},
		{"dir/**\n", "dir", "f", false, true},
		{"trail  \n", "", "trail", false, true},
		{"sp\\ \n", "", "sp ", false, true},
		{"\\#h\n", "", "#h", false, true},
		{"# comment\n", "", "# comment", false, false},
		{"\\!bang\n", "", "!bang", false, true},
		{"f[0-9].txt\n", "", "f3.txt", false, true},
		{"f[!0-9].txt\n", "", "f3.txt", false, false},
		{"{a,b}\n", "", "a", false, false}, // no braces in gitignore
		{"{a,b}\n", "", "{a,b}", false, true},
		{"pre*\n", "", "prefix", false, true},
		{"?.c\n", "", "x.c", false, true},
		{"x\r\n", "", "x", false, true},
	}
	for _, tt := range tests {
		n := &ignoreNode{}
		parseIgnore([]byte(tt.rules), n)
		if got := n.ignored(tt.dir, tt.name, tt.isDir); got != tt.want {
			t.Errorf("rules %q, %s/%s dir=%v: ignored=%v, want %v", tt.rules, tt.dir, tt.name, tt.isDir, got, tt.want)
		}
	}
}

// TestOpenInRefusesSymlinkComponents pins the containment the walk relies
// on: a directory replaced by a symlink after listing is not followed.
func TestOpenInRefusesSymlinkComponents(t *testing.T) {
	t.Parallel()
	root, outside := ignoreTree(t)
	fd, err := openRoot(root, Ident{})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if f, err := openIn(fd, filepath.Join(root, "link-dir/secret.txt"), "link-dir/secret.txt", syscall.O_RDONLY); err == nil {
		syscall.Close(f)
		t.Errorf("opened a file through a symlinked directory (outside is %s)", outside)
	}
	if f, err := openIn(fd, filepath.Join(root, "a.txt"), "a.txt", syscall.O_RDONLY); err != nil {
		t.Errorf("a.txt: %v", err)
	} else {
		syscall.Close(f)
	}
}
