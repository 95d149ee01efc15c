package plugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{"acme": "acme", "my-co.tools v2": "my_co_tools_v2", "é/x": "__x", "A_b9": "A_b9"} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

// writeTree writes files (slash paths) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func skeletonDir(t *testing.T, id string) string {
	t.Helper()
	files, err := Skeleton(id, "", "")
	if err != nil {
		t.Fatal(err)
	}
	tree := map[string]string{}
	for _, f := range files {
		tree[f.Path] = string(f.Data)
	}
	return writeTree(t, tree)
}

func check(t *testing.T, dir string) *Report {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	r, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSkeletonPassesCheck(t *testing.T) {
	r := check(t, skeletonDir(t, "acme"))
	if len(r.Problems) > 0 {
		t.Fatalf("the skeleton has problems: %+v", r.Problems)
	}
	want := Report{PluginID: "acme", Version: "0.1.0", Tools: []string{"plugin_acme_hello"}, Skills: []string{"getting-started"},
		Files: []string{"plugin.json", "skills/getting-started/SKILL.md"}, Problems: []Problem{}}
	r.Size = 0
	if diff := gocmp.Diff(want, *r); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestSkeletonRefusesWhatTheManifestCannotHold(t *testing.T) {
	for _, c := range []struct{ id, version, want string }{
		{"acme-tools", "", `"acme_tools" would do`},
		{"", "", "1-64 characters"},
		{"acme", "1.0", "/version"},
	} {
		if _, err := Skeleton(c.id, c.version, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Skeleton(%q, %q): %v, want %q", c.id, c.version, err, c.want)
		}
	}
}

// TestCheckListsEveryProblem: one manifest with many faults is answered
// with each of them, by file, not with the first.
func TestCheckListsEveryProblem(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"plugin.json": `{"id":"acme","version":"1","extra":true,"tools":[
			{"name":"a","description":"A.","inputSchema":{"type":"nope"},"risk":"extreme"},
			{"name":"a","description":"A again.","inputSchema":{},"risk":"low"},
			{"name":"b","description":"B.","inputSchema":{"$ref":"https://example.com/s.json"},"risk":"low"},
			{"name":"` + strings.Repeat("x", 60) + `","description":"Long.","inputSchema":{},"risk":"low"}],
			"skills":["../outside","skills/missing","skills/wrong","skills/nofront"]}`,
		"skills/wrong/SKILL.md":   "---\nname: other\n---\nbody\n",
		"skills/nofront/SKILL.md": "no front matter\n",
		"notes.txt":               "x",
	})
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	r := check(t, dir)
	want := []struct{ file, msg string }{
		{"plugin.json", "/version"},
		{"plugin.json", "extra"},
		{"plugin.json", "/tools/0/risk"},
		{"plugin.json", `tool "a" is declared twice`},
		{"plugin.json", "tools[0].inputSchema"},
		{"plugin.json", "tools[2].inputSchema"},
		{"plugin.json", "longer than the 64 characters"},
		{"plugin.json", "grants lacks agent.tool.register"},
		{"plugin.json", `skills[0]: "../outside"`},
		{"skills/missing/SKILL.md", "missing"},
		{"skills/wrong/SKILL.md", `not its folder's name "wrong"`},
		{"skills/wrong/SKILL.md", "no description"},
		{"skills/nofront/SKILL.md", "front matter"},
		{"link", "symbolic link"},
	}
	for _, w := range want {
		if !slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.File == w.file && strings.Contains(p.Message, w.msg) }) {
			t.Errorf("no problem %s: %q in\n%+v", w.file, w.msg, r.Problems)
		}
	}
	if len(r.Problems) < len(want) {
		t.Errorf("%d problems, want at least %d", len(r.Problems), len(want))
	}
}

func TestCheckManifestSyntaxAndAbsence(t *testing.T) {
	r := check(t, writeTree(t, map[string]string{"plugin.json": "{\n\"id\": \"a\",\n}"}))
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Message, "(line 3)") {
		t.Errorf("syntax error: %+v", r.Problems)
	}
	r = check(t, t.TempDir())
	if diff := gocmp.Diff([]Problem{{File: "plugin.json", Message: "missing"}}, r.Problems); diff != "" {
		t.Errorf("no manifest (-want +got):\n%s", diff)
	}
}

func TestCheckSkipsHiddenEntries(t *testing.T) {
	dir := skeletonDir(t, "acme")
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.Symlink("/", filepath.Join(dir, ".git", "escape"))
	os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte("x"), 0o644)
	if r := check(t, dir); len(r.Problems) > 0 || len(r.Files) != 2 {
		t.Fatalf("hidden entries: %+v %v", r.Problems, r.Files)
	}
}

func pack(t *testing.T, dir string) []byte {
	t.Helper()
	r := check(t, dir)
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	var buf bytes.Buffer
	if err := Pack(root, r.Files, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPackIsReproducible: the same files give the same bytes, whatever
// their times and modes; other contents give other bytes.
func TestPackIsReproducible(t *testing.T) {
	dir := skeletonDir(t, "acme")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o600)
	os.MkdirAll(filepath.Join(dir, "z", "deep"), 0o755)
	os.WriteFile(filepath.Join(dir, "z", "deep", "b.sh"), []byte("#!/bin/sh\n"), 0o755)
	first := sha256.Sum256(pack(t, dir))
	if again := sha256.Sum256(pack(t, dir)); again != first {
		t.Fatal("two packs of the same plugin differ")
	}
	later := time.Now().Add(time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		os.Chtimes(p, later, later)
		if !fi.IsDir() {
			os.Chmod(p, 0o640)
		}
		return nil
	})
	if touched := sha256.Sum256(pack(t, dir)); touched != first {
		t.Fatal("touching mtimes and modes changed the pack")
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b"), 0o600)
	if changed := sha256.Sum256(pack(t, dir)); changed == first {
		t.Fatal("a changed file did not change the pack")
	}

	zr, err := gzip.NewReader(bytes.NewReader(pack(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header: %v %q", zr.ModTime, zr.Name)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Mode != 0o644 || !h.ModTime.Equal(packTime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mode %o time %v owner %d:%d %q:%q", h.Name, h.Mode, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
		}
	}
	want := []string{"a.txt", "plugin.json", "skills/getting-started/SKILL.md", "z/deep/b.sh"}
	if diff := gocmp.Diff(want, names); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestParseSkillFile(t *testing.T) {
	for _, c := range []struct {
		in   string
		want FrontMatter
		err  string
	}{
		{in: "---\nname: a-b\ndescription: \"Does: things.\"\nlicense: MIT\n---\n\n# Body\n", want: FrontMatter{Name: "a-b", Description: "Does: things.", Body: "# Body\n"}},
		{in: "\ufeff---\r\nname: 'x'\r\ndescription: y\r\n---", want: FrontMatter{Name: "x", Description: "y"}},
		{in: "# no front matter\n", err: "must start"},
		{in: "---\nname: x\n", err: "no closing"},
	} {
		got, err := ParseSkillFile([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if diff := gocmp.Diff(c.want, got); err != nil || diff != "" {
			t.Errorf("%q: %v (-want +got):\n%s", c.in, err, diff)
		}
	}
}

func TestCheckSkill(t *testing.T) {
	ok := Skill{Name: "review-code", Description: "Review code.", Instructions: "Read it.", BaseDir: "/opt/p/skills/review-code"}
	if err := CheckSkill(ok); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Skill{
		{Name: "Review", Description: "d"},
		{Name: "a--b", Description: "d"},
		{Name: "-a", Description: "d"},
		{Name: strings.Repeat("a", 65), Description: "d"},
		{Name: "a", Description: " "},
		{Name: "a", Description: strings.Repeat("d", DescriptionMax+1)},
		{Name: "a", Description: "d", Instructions: strings.Repeat("i", InstructionsMax+1)},
		{Name: "a", Description: "d", BaseDir: "relative/dir"},
		{Name: "a", Description: "d", BaseDir: "/dir\nwith a newline"},
	} {
		if CheckSkill(bad) == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

func TestCompileBounds(t *testing.T) {
	if _, err := Compile("x", []byte(`{"$ref":"file:///etc/passwd"}`)); err == nil {
		t.Error("an external $ref compiled")
	}
	deep := strings.Repeat(`{"items":`, SchemaDepth+1) + "{}" + strings.Repeat("}", SchemaDepth+1)
	if _, err := Compile("x", []byte(deep)); err != ErrSchemaDepth {
		t.Errorf("too deep: %v", err)
	}
	if _, err := CompactSchema([]byte(`[1]`)); !errors.Is(err, errNotObject) {
		t.Errorf("an array: %v", err)
	}
	if c, err := CompactSchema(nil); err != nil || string(c) != `{"type":"object"}` {
		t.Errorf("absent: %s %v", c, err)
	}
}
