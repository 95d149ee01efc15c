package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates files (content by slash path) under dir. A value
// starting with "->" makes a symlink to the rest.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// ignoreTree exercises the walk filters; every file holds "needle" unless
// noted.
func ignoreTree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	writeTree(t, outside, map[string]string{"secret.txt": "needle\n"})
	big := strings.Repeat("x", 100<<10) + "\n"
	writeTree(t, root, map[string]string{
		".git/HEAD":                "needle\n",
		".git/info/exclude":        "excluded.txt\n",
		".gitignore":               "*.log\n/anchored.txt\nbuild/\n!keep.log\nnode_modules\ndeep/**/gen.go\nonlyfile/\nsub/anch2.txt\n# comment\n\\#hash.txt\n",
		".ignore":                  "ignored-by-dotignore.txt\n",
		"a.txt":                    "needle\n",
		"app.log":                  "needle\n",
		"keep.log":                 "needle\n",
		"anchored.txt":             "needle\n",
		"sub/anchored.txt":         "needle\n",
		"sub/anch2.txt":            "needle\n",
		"sub/x/anch2.txt":          "needle\n",
		"build/out.txt":            "needle\n",
		"sub/build":                "needle\n", // a file: "build/" is directory-only
		"node_modules/m.js":        "needle\n",
		"deep/a/b/gen.go":          "needle\n",
		"deep/gen.go":              "needle\n",
		"excluded.txt":             "needle\n",
		"#hash.txt":                "needle\n",
		"ignored-by-dotignore.txt": "needle\n",
		"nested/.gitignore":        "*.txt\n!wanted.txt\n",
		"nested/drop.txt":          "needle\n",
		"nested/wanted.txt":        "needle\n",
		"nested/code.go":           "needle\n",
		"nested/inner/.gitignore":  "!drop.txt\n",
		"nested/inner/drop.txt":    "needle\n",
		"neg/.gitignore":           "dir/**\n!dir/keep.txt\n",
		"neg/dir/keep.txt":         "needle\n",
		"neg/dir/gone.txt":         "needle\n",
		".hidden/h.txt":            "needle\n",
		".dotfile":                 "needle\n",
		"bin/early-nul.bin":        "needle\n\x00rest\n",
		"bin/late-nul.bin":         "needle\n" + big + "\x00\n",
		"bin/after-nul.bin":        big + "\x00needle\n",
		"link-dir":                 "->" + outside,
		"link-file":                "->" + filepath.Join(outside, "secret.txt"),
		"link-inside":              "->a.txt",
		"crlf.txt":                 "needle\r\nother\r\n",
		"noeol.txt":                "needle",
		"empty.txt":                "",
	})
	return root, outside
}

var ignoreTreeWant = []string{
	"a.txt", "bin/late-nul.bin", "crlf.txt", "keep.log",
	"neg/dir/keep.txt", "nested/code.go", "nested/inner/drop.txt", "nested/wanted.txt",
	"noeol.txt", "sub/anchored.txt", "sub/build", "sub/x/anch2.txt",
}

func TestGrepFilters(t *testing.T) {
	t.Parallel()
	root, _ := ignoreTree(t)
	res, err := Grep(t.Context(), GrepOptions{Root: root, Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ignoreTreeWant, lines(res.Text)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if res.Files != len(ignoreTreeWant) || res.Matches != len(ignoreTreeWant) || res.Truncated {
		t.Errorf("files=%d matches=%d truncated=%v", res.Files, res.Matches, res.Truncated)
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		cmd := exec.Command(rg, "-l", "needle")
		cmd.Dir = root
		out, _ := cmd.Output()
		got := lines(string(out))
		slices.Sort(got)
		if diff := cmp.Diff(ignoreTreeWant, got); diff != "" {
			t.Errorf("rg disagrees with the expected set (-want +rg):\n%s", diff)
		}
	}
}

func TestGrepSubdirRootUsesParentIgnores(t *testing.T) {
	t.Parallel()
	root, _ := ignoreTree(t)
	res, err := Grep(t.Context(), GrepOptions{Root: filepath.Join(root, "sub"), Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	// "sub/anch2.txt" is anchored in the parent's .gitignore.
	want := []string{"anchored.txt", "build", "x/anch2.txt"}
	if diff := cmp.Diff(want, lines(res.Text)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGrepModes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.go":     "l1\nfoo 1\nl3\nl4\nl5\nl6\nfoo 7\nl8\nfoo 9\nl10\nl11\nl12\n",
		"b.go":     "FOO\nbar\n",
		"c.ts":     "x\nfoo\n",
		"d/e.go":   "nothing\n",
		"noeol.go": "l1\nfoo",
		".env":     "foo=1\n",
	})
	tests := []struct {
		name string
		o    GrepOptions
		want string
		nf   int
		nm   int
	}{
		{"files", GrepOptions{Pattern: "foo"}, "a.go\nc.ts\nnoeol.go\n", 3, 5}, // matches counts lines, as in count mode
		{"count", GrepOptions{Pattern: "foo", Mode: ModeCount}, "a.go:3\nc.ts:1\nnoeol.go:1\n", 3, 5},
		{"ignore case", GrepOptions{Pattern: "foo", IgnoreCase: true, Mode: ModeCount}, "a.go:3\nb.go:1\nc.ts:1\nnoeol.go:1\n", 4, 6},
		{"ignore case regex", GrepOptions{Pattern: "^fo+$", IgnoreCase: true, Mode: ModeCount}, "b.go:1\nc.ts:1\nnoeol.go:1\n", 3, 3},
		{"include", GrepOptions{Pattern: "foo", Include: "*.{ts,tsx}"}, "c.ts\n", 1, 1},
		{"include path", GrepOptions{Pattern: "o", Include: "d/*.go"}, "d/e.go\n", 1, 1},
		{"content", GrepOptions{Pattern: "foo", Mode: ModeContent, Include: "a.go"},
			"a.go:2:foo 1\na.go:7:foo 7\na.go:9:foo 9\n", 1, 3},
		{"context", GrepOptions{Pattern: "foo", Mode: ModeContent, Context: 1},
			"a.go-1-l1\na.go:2:foo 1\na.go-3-l3\n--\na.go-6-l6\na.go:7:foo 7\na.go-8-l8\na.go:9:foo 9\na.go-10-l10\n--\n" +
				"c.ts-1-x\nc.ts:2:foo\n--\nnoeol.go-1-l1\nnoeol.go:2:foo\n", 3, 5},
		{"regex no literal", GrepOptions{Pattern: `^\d`, Mode: ModeCount}, "", 0, 0},
		{"regex across lines is per line", GrepOptions{Pattern: `l3\s+l4`, Mode: ModeCount}, "", 0, 0},
		{"class", GrepOptions{Pattern: `l1[0-2]`, Mode: ModeContent}, "a.go:10:l10\na.go:11:l11\na.go:12:l12\n", 1, 3},
		{"empty pattern matches every line", GrepOptions{Pattern: "", Mode: ModeCount, Include: "b.go"}, "b.go:2\n", 1, 2},
		{"anchors", GrepOptions{Pattern: "^bar$", Mode: ModeContent}, "b.go:2:bar\n", 1, 1},
		{"head limit", GrepOptions{Pattern: "l", Mode: ModeContent, HeadLimit: 2, Include: "a.go"},
			"a.go:1:l1\na.go:3:l3\n[output truncated: 2 lines shown; 9 matching lines in 1 files; narrow the pattern, path or include]\n", 1, 9},
		// a review's findings: matches that exactly fill the limit are
		// not cut; an empty match at the end of an unterminated last
		// line is a match on it, as in ripgrep
		{"include naming a hidden file", GrepOptions{Pattern: "foo", Include: ".env"}, ".env\n", 1, 1},
		{"head limit filled exactly", GrepOptions{Pattern: "foo", Mode: ModeContent, HeadLimit: 3, Include: "a.go"},
			"a.go:2:foo 1\na.go:7:foo 7\na.go:9:foo 9\n", 1, 3},
		{"end of an unterminated last line", GrepOptions{Pattern: `\s*$`, Mode: ModeContent, Include: "noeol.go"},
			"noeol.go:1:l1\nnoeol.go:2:foo\n", 1, 2},
		{"dollar on an unterminated last line", GrepOptions{Pattern: `$`, Mode: ModeCount, Include: "noeol.go"},
			"noeol.go:2\n", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Root = root
			res, err := Grep(t.Context(), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if res.Files != tt.nf || res.Matches != tt.nm {
				t.Errorf("files=%d matches=%d, want %d %d", res.Files, res.Matches, tt.nf, tt.nm)
			}
		})
	}
}

func TestGrepContextAcrossBuffers(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var b strings.Builder
	var want []string
	for i := 1; i <= 20000; i++ {
		if i%3001 == 0 {
			b.WriteString("match here\n")
			want = append(want, "f.txt-"+itoa(i-1)+"-line "+itoa(i-1), "f.txt:"+itoa(i)+":match here", "f.txt-"+itoa(i+1)+"-line "+itoa(i+1))
			if i > 3001 {
				want = append(want[:len(want)-3], append([]string{"--"}, want[len(want)-3:]...)...)
			}
			continue
		}
		b.WriteString("line " + itoa(i) + "\n")
	}
	writeTree(t, root, map[string]string{"f.txt": b.String()})
	res, err := Grep(t.Context(), GrepOptions{Root: root, Pattern: "match", Mode: ModeContent, Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, lines(res.Text)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		cmd := exec.Command(rg, "-n", "-C1", "--no-heading", "match", "f.txt")
		cmd.Dir = root
		out, _ := cmd.Output()
		var got []string
		for _, l := range lines(string(out)) {
			if l != "--" {
				l = "f.txt" + map[bool]string{true: ":", false: "-"}[strings.Contains(l, ":match")] + l
			}
			got = append(got, l)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rg disagrees (-want +rg):\n%s", diff)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestGrepSingleFileRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "foo\n", "b.go": "foo\n", ".gitignore": "a.go\n"})
	file := filepath.Join(root, "a.go")
	res, err := Grep(t.Context(), GrepOptions{Root: file, Pattern: "foo", Mode: ModeContent})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a.go:1:foo\n" {
		t.Errorf("got %q", res.Text)
	}
	res, err = Grep(t.Context(), GrepOptions{Root: file, Pattern: "foo", Include: "*.ts"})
	if err != nil || res.Files != 0 || res.Text != "" {
		t.Errorf("include should filter the single file: %+v %v", res, err)
	}
}

func TestGrepLongLines(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	long := strings.Repeat("a", 2000) + "needle" + strings.Repeat("b", 2000)
	// One line longer than the largest buffer: searched in segments.
	huge := strings.Repeat("z", maxLineBuf+100) + "needle" + strings.Repeat("z", 10) + "\nneedle again\n"
	writeTree(t, root, map[string]string{"long.txt": long + "\n", "huge.txt": huge})
	res, err := Grep(t.Context(), GrepOptions{Root: root, Pattern: "needle", Mode: ModeContent})
	if err != nil {
		t.Fatal(err)
	}
	got := lines(res.Text)
	if len(got) != 3 {
		t.Fatalf("got %d lines: %.300q", len(got), res.Text)
	}
	// The match lies in the line's second segment, which is what is shown.
	if want := "huge.txt:1:" + strings.Repeat("z", 100) + "needle" + strings.Repeat("z", 10); got[0] != want {
		t.Errorf("huge line: %.200q", got[0])
	}
	if got[1] != "huge.txt:2:needle again" {
		t.Errorf("line after the huge one: %q", got[1])
	}
	if !strings.HasPrefix(got[2], "long.txt:1:[…] aaa") || !strings.Contains(got[2], "needle") || !strings.HasSuffix(got[2], "[… line cut: 500 of 4006 characters shown]") {
		t.Errorf("long line: %q", got[2])
	}
	if res.Matches != 3 {
		t.Errorf("matches = %d", res.Matches)
	}
}

func TestGrepMaxBytes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files["dir/file"+itoa(1000+i)+".txt"] = strings.Repeat("needle line\n", 50)
	}
	writeTree(t, root, files)
	res, err := Grep(t.Context(), GrepOptions{Root: root, Pattern: "needle", Mode: ModeContent, HeadLimit: 100000, MaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Text) > 4096 || !res.Truncated || !strings.Contains(res.Text, "[output truncated:") {
		t.Errorf("len=%d truncated=%v tail=%q", len(res.Text), res.Truncated, res.Text[max(0, len(res.Text)-120):])
	}
	if !strings.HasPrefix(res.Text, "dir/file1000.txt:1:needle line\n") {
		t.Errorf("not in path order: %.80q", res.Text)
	}
	if res.Files != 300 || res.Matches != 300*50 {
		t.Errorf("files=%d matches=%d", res.Files, res.Matches)
	}
	res, err = Grep(t.Context(), GrepOptions{Root: root, Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(lines(res.Text)); got != DefaultGrepHeadLimit+1 || !res.Truncated {
		t.Errorf("files mode: %d lines, truncated=%v", got, res.Truncated)
	}
}

func TestBadPatterns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, o := range []GrepOptions{
		{Root: root, Pattern: "("},
		{Root: root, Pattern: "a{2,1}"},
		{Root: root, Pattern: "x", Include: "[a"},
		{Root: root, Pattern: "x", Mode: "lines"},
	} {
		if _, err := Grep(t.Context(), o); !errors.Is(err, ErrBadPattern) {
			t.Errorf("Grep(%+v) = %v, want ErrBadPattern", o, err)
		}
	}
	for _, p := range []string{"[a", "", "/abs/*.go", "{a,b"} {
		if _, err := Glob(t.Context(), GlobOptions{Root: root, Pattern: p}); !errors.Is(err, ErrBadPattern) {
			t.Errorf("Glob(%q) = %v, want ErrBadPattern", p, err)
		}
	}
}

func TestGlob(t *testing.T) {
	t.Parallel()
	root, _ := ignoreTree(t)
	writeTree(t, root, map[string]string{
		"src/x.ts": "", "src/a/x.tsx": "", "src/a/b/x.ts": "", "src/y.go": "",
		".github/workflows/ci.yml": "", "top.go": "", "sub/s.go": "",
	})
	now := time.Now()
	for i, p := range []string{"src/a/b/x.ts", "src/x.ts", "src/a/x.tsx"} { // newest first
		tm := now.Add(-time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(root, p), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	old := now.Add(-48 * time.Hour)
	for _, p := range []string{"top.go", "sub/s.go", "nested/code.go", "nested/inner/drop.txt", "nested/wanted.txt"} {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		pattern string
		limit   int
		want    []string
		count   int
	}{
		{"src/**/x.{ts,tsx}", 0, []string{"src/a/b/x.ts", "src/x.ts", "src/a/x.tsx"}, 3},
		{"src/**/x.{ts,tsx}", 2, []string{"src/a/b/x.ts", "src/x.ts"}, 3},
		{"*.go", 0, []string{"top.go"}, 1},
		{"**/*.go", 0, []string{"src/y.go", "nested/code.go", "sub/s.go", "top.go"}, 4},
		{"**/gen.go", 0, nil, 0},
		{"nested/**", 0, []string{"nested/code.go", "nested/inner/drop.txt", "nested/wanted.txt"}, 3},
		{".github/**/*.yml", 0, []string{".github/workflows/ci.yml"}, 1},
		{"**/*.yml", 0, nil, 0},
		{"build/*", 0, nil, 0},
		{"node_modules/**", 0, nil, 0},
		{"link-dir/*", 0, nil, 0},
		{"**/secret.txt", 0, nil, 0},
		{"*/anch*.txt", 0, []string{"sub/anchored.txt"}, 1},
		{"missing/**", 0, nil, 0},
	}
	for _, tt := range tests {
		res, err := Glob(t.Context(), GlobOptions{Root: root, Pattern: tt.pattern, HeadLimit: tt.limit})
		if err != nil {
			t.Errorf("%s: %v", tt.pattern, err)
			continue
		}
		if res.Count != tt.count || res.Truncated != (tt.count > len(res.Paths)) {
			t.Errorf("%s: count=%d truncated=%v, want %d (%v)", tt.pattern, res.Count, res.Truncated, tt.count, res.Paths)
		}
		if tt.want != nil {
			if diff := cmp.Diff(tt.want, res.Paths); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.pattern, diff)
			}
		}
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Grep(ctx, GrepOptions{Root: "/usr/local/go/src", Pattern: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Grep: %v", err)
	}
	if _, err := Glob(ctx, GlobOptions{Root: "/usr/local/go/src", Pattern: "**"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Glob: %v", err)
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// A file far larger than the time allowed for it.
	f, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("abcdefgh\n"), 1<<16)
	for range 64 {
		f.Write(chunk)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Grep(ctx, GrepOptions{Root: root, Pattern: `[x-z]+[q-r]`, Mode: ModeCount})
	if err == nil {
		t.Skip("machine searched 37 MB in 5ms")
	}
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("err=%v after %v", err, time.Since(start))
	}
}

// TestGrepSingleFileThatCannotBeOpenedIsAnError: the one file asked for
// failing to open (here a symlink, refused with O_NOFOLLOW; for a user, a
// file they may not read) is an error, not "no matches" (a review got
// ok:true "No matches found" for an unreadable file).
func TestGrepSingleFileThatCannotBeOpenedIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "real.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	res, err := Grep(t.Context(), GrepOptions{Root: filepath.Join(dir, "link.txt"), Pattern: "needle", Mode: ModeContent})
	if !errors.Is(err, ErrRootChanged) {
		t.Fatalf("Grep of a file that became a link: %v, %+v; want ErrRootChanged", err, res)
	}
}

// TestDisplayNameQuotesWhatCouldForgeOrHideLines: controls of every kind,
// the Unicode separators, bidirectional overrides and bytes that are not
// UTF-8 are quoted; ordinary names, accents and U+FFFD itself are not.
func TestDisplayNameQuotesWhatCouldForgeOrHideLines(t *testing.T) {
	for _, name := range []string{"a\nb", "a\rb", "a\tb", "a\x7fb", "a\u0085b", "a\u2028b", "a\u2029b", "a\u202eb", "a\u2067b", "a\xffb"} {
		if got := DisplayName(name); got == name {
			t.Errorf("%q not quoted", name)
		}
	}
	for _, name := range []string{"src/main.go", "docs/café.md", "日本語/ファイル.txt", "weird \ufffd name", "a b:c"} {
		if got := DisplayName(name); got != name {
			t.Errorf("%q quoted as %s", name, got)
		}
	}
}
