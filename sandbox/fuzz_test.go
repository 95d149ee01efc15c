//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzVocab are the path components the fuzzer strings together: the names
// of the fixture's files and links plus the lexical tricks.
var fuzzVocab = []string{
	"..", ".", "", "w", "scratch", "outside", "w_evil", "sub", "dir", "file.txt",
	"inner.txt", "secret.txt", "s.txt", "sdir", "missing", "link_out_file",
	"link_out_dir", "rel_escape", "link_in", "link_dir_in", "abs_in", "chain1",
	"chain2", "chain3", "loop1", "selfloop", "dangling_out", "dangling_in",
	"to_scratch", "missing_dotdot", "to_evil", "to_ws", "dir_to_ws", "to_out",
	"rel_out", "to_self", "up", "root_link", "ws_link", "fifo",
}

// FuzzResolve checks that no generated path is classified as workspace or
// scratch while its real target lies outside that root. The real target is
// computed independently with filepath.EvalSymlinks on the longest prefix
// that resolves, both of the input path and of the reported Abs.
func FuzzResolve(f *testing.F) {
	fx := newFixture(f)
	// Extra links only the fuzzer uses.
	for target, name := range map[string]string{
		"..":    filepath.Join(fx.ws, "dir", "up"),
		"/":     filepath.Join(fx.ws, "root_link"),
		fx.ws:   filepath.Join(fx.scratch, "ws_link"),
		"../..": filepath.Join(fx.scratch, "sdir", "up"),
	} {
		if err := os.Symlink(target, name); err != nil {
			f.Fatal(err)
		}
	}

	// base selects how the path starts: relative, or one of these absolutes.
	bases := []string{"", fx.ws, fx.scratch, fx.out, fx.tmp, "/", fx.ws + "_evil"}
	idx := func(name string) byte {
		for i, v := range fuzzVocab {
			if v == name {
				return byte(i)
			}
		}
		panic(name)
	}
	toks := func(names ...string) []byte {
		var b []byte
		for _, n := range names {
			b = append(b, idx(n))
		}
		return b
	}
	f.Add(uint8(0), toks("file.txt"), "")
	f.Add(uint8(0), toks("..", "outside", "secret.txt"), "")
	f.Add(uint8(0), toks("dir", "up", "outside", "secret.txt"), "")
	f.Add(uint8(0), toks("chain1"), "")
	f.Add(uint8(0), toks("missing_dotdot"), "")
	f.Add(uint8(0), toks("missing", "..", "link_out_dir", "secret.txt"), "")
	f.Add(uint8(0), toks("dangling_out"), "")
	f.Add(uint8(0), toks("root_link"), "etc/passwd")
	f.Add(uint8(2), toks("to_ws"), "")
	f.Add(uint8(2), toks("dir_to_ws", "file.txt"), "")
	f.Add(uint8(2), toks("sdir", "up", "outside"), "")
	f.Add(uint8(2), toks("ws_link", "link_out_dir"), "")
	f.Add(uint8(1), toks("loop1"), "")
	f.Add(uint8(0), []byte{}, "a/../../x")
	f.Add(uint8(6), []byte{}, "/secret.txt")
	f.Add(uint8(0), toks("link_dir_in"), "../../outside")

	f.Fuzz(func(t *testing.T, base uint8, tokens []byte, raw string) {
		// Long inputs add nothing the corpus's long-path cases do not cover,
		// and they make minimisation crawl.
		if len(tokens) > 48 || len(raw) > 256 {
			return
		}
		parts := []string{bases[int(base)%len(bases)]}
		for _, b := range tokens {
			parts = append(parts, fuzzVocab[int(b)%len(fuzzVocab)])
		}
		if raw != "" {
			parts = append(parts, raw)
		}
		p := strings.Join(parts, "/")
		if parts[0] == "" {
			p = strings.TrimLeft(p, "/")
		}
		if p == "" {
			return
		}

		res, err := fx.roots.Resolve(p)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) && !errors.Is(err, ErrSymlinkLoop) && !errors.Is(err, ErrNoWorkspace) {
				t.Fatalf("Resolve(%q): unexpected error %v", p, err)
			}
			return
		}
		checkInvariants(t, fx.roots, res)
		var root string
		switch res.Root {
		case RootWorkspace:
			root = fx.ws
		case RootScratch:
			root = fx.scratch
		default:
			return
		}
		input := p
		if !filepath.IsAbs(input) {
			input = filepath.Join(fx.ws, input)
		}
		if real, ok := realTarget(input); ok && !Within(root, real) {
			t.Fatalf("Resolve(%q) = %s %s, but the path really lands at %s", p, res.Root, res.Abs, real)
		}
		if real, ok := realTarget(res.Abs); ok && !Within(root, real) {
			t.Fatalf("Resolve(%q) = %s %s, but Abs really lands at %s", p, res.Root, res.Abs, real)
		}
		if res.Exists {
			if real, err := filepath.EvalSymlinks(res.Abs); err != nil || real != res.Abs {
				t.Fatalf("Resolve(%q): existing Abs %s is not canonical (%s, %v)", p, res.Abs, real, err)
			}
		}
		if res.Root == RootScratch && !NamedInside(fx.scratch, fx.ws, p) {
			t.Fatalf("Resolve(%q) = scratch, but the path is not lexically inside scratch", p)
		}
		if data, _, err := ReadFileLimit(res, 1<<16); err == nil && strings.Contains(string(data), secret) {
			t.Fatalf("Resolve(%q) = %s, and reading it returned the outside secret", p, res.Root)
		}
	})
}

// realTarget is the oracle: EvalSymlinks of the longest prefix of the clean
// absolute path p that resolves, with the rest joined. ok is false when even
// that fails for a reason other than a missing component (a loop).
func realTarget(p string) (string, bool) {
	p = filepath.Clean(p)
	tail := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, tail), true
		}
		if !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "not a directory") {
			return "", false
		}
		if p == "/" {
			return "", false
		}
		tail = filepath.Join(filepath.Base(p), tail)
		p = filepath.Dir(p)
	}
}
