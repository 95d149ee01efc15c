//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	// anyOutcome: the operation may succeed or fail; only containment counts.
	anyOutcome = errors.New("any outcome")
	// someError: the operation must fail, with whatever error.
	someError = errors.New("some error")
)

type hostileCase struct {
	name string
	// path is the tool path; {w}, {s} and {tmp} expand to the workspace,
	// scratch and temp dir of the case's fixture.
	path     string
	wantErr  error
	wantRoot string
	// wantAbs is Abs relative to tmp in slash form ("." for tmp itself), or
	// an absolute path for targets outside tmp.
	wantAbs     string
	wantExists  bool
	wantDisplay string // checked when set
	// For in-root results: what ReadFileLimit and WriteAtomic must return
	// (nil means success). External results are not operated on, except
	// that openExternal runs OpenRegular expecting ErrNotRegular.
	readErr, writeErr error
	openExternal      bool
}

func hostileCorpus() []hostileCase {
	const ws, sc, ext = RootWorkspace, RootScratch, RootExternal
	return []hostileCase{
		// Plain inside.
		{name: "relative file", path: "file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true, wantDisplay: "file.txt"},
		{name: "absolute inside", path: "{w}/file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true},
		{name: "workspace root", path: ".", wantRoot: ws, wantAbs: "w", wantExists: true, wantDisplay: ".", readErr: ErrIsDir, writeErr: ErrIsDir},
		{name: "directory read", path: "dir", wantRoot: ws, wantAbs: "w/dir", wantExists: true, readErr: ErrIsDir, writeErr: ErrIsDir},
		{name: "directory trailing slash", path: "dir/", wantRoot: ws, wantAbs: "w/dir", wantExists: true, readErr: ErrIsDir, writeErr: ErrIsDir},
		{name: "redundant separators", path: "{w}//dir///inner.txt", wantRoot: ws, wantAbs: "w/dir/inner.txt", wantExists: true, wantDisplay: "dir/inner.txt"},
		{name: "unicode name", path: "héllo wörld ✓.txt", wantRoot: ws, wantAbs: "w/héllo wörld ✓.txt", wantExists: true, wantDisplay: "héllo wörld ✓.txt"},
		{name: "backslashes are a name on unix", path: `..\outside\secret.txt`, wantRoot: ws, wantAbs: `w/..\outside\secret.txt`, readErr: ErrNotExist},

		// Prefix siblings.
		{name: "prefix sibling absolute", path: "{tmp}/w_evil/secret.txt", wantRoot: ext, wantAbs: "w_evil/secret.txt", wantExists: true},
		{name: "prefix sibling by string append", path: "{w}_evil/new.txt", wantRoot: ext, wantAbs: "w_evil/new.txt"},
		{name: "prefix sibling dir itself", path: "{w}_evil", wantRoot: ext, wantAbs: "w_evil", wantExists: true},
		{name: "prefix sibling relative", path: "../w_evil/secret.txt", wantRoot: ext, wantAbs: "w_evil/secret.txt", wantExists: true},

		// ".." in every position.
		{name: "dotdot leading", path: "../outside/secret.txt", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "dotdot middle", path: "dir/../../outside/secret.txt", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "dotdot trailing inside", path: "dir/..", wantRoot: ws, wantAbs: "w", wantExists: true, wantDisplay: ".", readErr: ErrIsDir, writeErr: ErrIsDir},
		{name: "dotdot alone", path: "..", wantRoot: ext, wantAbs: ".", wantExists: true},
		{name: "dotdot through missing dir", path: "a/../../x", wantRoot: ext, wantAbs: "x"},
		{name: "dot dotdot", path: "./..", wantRoot: ext, wantAbs: ".", wantExists: true},
		{name: "dotdot out and back in", path: "../w/file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true},
		{name: "dotdot after a file", path: "dir/./inner.txt/../inner.txt", wantRoot: ws, wantAbs: "w/dir/inner.txt", wantExists: true},
		{name: "dotdot after a loop folds lexically", path: "{w}/loop2/../file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true},
		{name: "dotdot far above root", path: strings.Repeat("../", 64) + "etc/passwd", wantRoot: ext, wantAbs: "/etc/passwd", wantExists: true},
		{name: "absolute dotdot back in", path: "{w}/../w/file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true},

		// Absolute outside.
		{name: "absolute outside", path: "/etc/passwd", wantRoot: ext, wantAbs: "/etc/passwd", wantExists: true},
		{name: "filesystem root", path: "/", wantRoot: ext, wantAbs: "/", wantExists: true},
		{name: "dev zero", path: "/dev/zero", wantRoot: ext, wantAbs: "/dev/zero", wantExists: true, openExternal: true},

		// Symlinks out of the workspace.
		{name: "symlinked file outside", path: "link_out_file", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "symlinked dir outside", path: "link_out_dir/secret.txt", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "symlinked dir outside new file", path: "link_out_dir/sub/new.txt", wantRoot: ext, wantAbs: "outside/sub/new.txt"},
		{name: "relative symlink escape", path: "rel_escape", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "chain in in out", path: "chain1", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "symlink to prefix sibling", path: "to_evil/secret.txt", wantRoot: ext, wantAbs: "w_evil/secret.txt", wantExists: true},
		{name: "symlink through missing dir dotdot", path: "missing_dotdot", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "dangling link outside", path: "dangling_out", wantRoot: ext, wantAbs: "outside/created_by_attack.txt"},
		{name: "workspace link into scratch", path: "to_scratch", wantRoot: ext, wantAbs: "scratch/s.txt", wantExists: true},

		// Symlinks that stay inside.
		{name: "symlink in to file", path: "link_in", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true, wantDisplay: "file.txt"},
		{name: "symlinked dir inside", path: "link_dir_in/inner.txt", wantRoot: ws, wantAbs: "w/dir/inner.txt", wantExists: true},
		{name: "absolute symlink inside", path: "abs_in", wantRoot: ws, wantAbs: "w/dir/inner.txt", wantExists: true},
		{name: "dangling link inside", path: "dangling_in", wantRoot: ws, wantAbs: "w/nothing_here.txt", readErr: ErrNotExist},

		// Loops fail at once.
		{name: "symlink loop", path: "loop1", wantErr: ErrSymlinkLoop},
		{name: "self loop as directory", path: "selfloop/x", wantErr: ErrSymlinkLoop},

		// Scratch.
		{name: "scratch file", path: "{s}/s.txt", wantRoot: sc, wantAbs: "scratch/s.txt", wantExists: true},
		{name: "scratch root", path: "{s}", wantRoot: sc, wantAbs: "scratch", wantExists: true, readErr: ErrIsDir, writeErr: ErrIsDir},
		{name: "scratch new nested file", path: "{s}/new/deep.txt", wantRoot: sc, wantAbs: "scratch/new/deep.txt", readErr: ErrNotExist},
		{name: "scratch link within scratch", path: "{s}/to_self", wantRoot: sc, wantAbs: "scratch/s.txt", wantExists: true},
		{name: "scratch link to workspace", path: "{s}/to_ws", wantRoot: ext, wantAbs: "w/file.txt", wantExists: true},
		{name: "scratch dir link to workspace", path: "{s}/dir_to_ws/file.txt", wantRoot: ext, wantAbs: "w/file.txt", wantExists: true},
		{name: "scratch link outside", path: "{s}/to_out", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "scratch relative dir link outside", path: "{s}/rel_out/secret.txt", wantRoot: ext, wantAbs: "outside/sub/secret.txt", wantExists: true},
		{name: "scratch dotdot into workspace", path: "{s}/../w/file.txt", wantRoot: ws, wantAbs: "w/file.txt", wantExists: true},
		{name: "scratch dotdot outside", path: "{s}/../outside/secret.txt", wantRoot: ext, wantAbs: "outside/secret.txt", wantExists: true},
		{name: "scratch relative is workspace", path: "scratch_like.txt", wantRoot: ws, wantAbs: "w/scratch_like.txt", readErr: ErrNotExist},

		// Special files.
		{name: "fifo", path: "fifo", wantRoot: ws, wantAbs: "w/fifo", wantExists: true, readErr: ErrNotRegular, writeErr: ErrNotRegular},
		{name: "socket", path: "sock", wantRoot: ws, wantAbs: "w/sock", wantExists: true, readErr: ErrNotRegular, writeErr: ErrNotRegular},
		{name: "file used as directory", path: "file.txt/x", wantRoot: ws, wantAbs: "w/file.txt/x", readErr: someError, writeErr: someError},

		// Malformed.
		{name: "NUL byte", path: "file.txt\x00../../outside/secret.txt", wantErr: ErrInvalidPath},
		{name: "NUL byte absolute", path: "{w}/\x00", wantErr: ErrInvalidPath},
		{name: "empty", path: "", wantErr: ErrInvalidPath},
		{name: "component too long", path: strings.Repeat("x", 300), wantErr: ErrInvalidPath},
		{name: "long path", path: strings.Repeat("a/", 1900) + "x", wantRoot: ws, wantAbs: "w/" + strings.Repeat("a/", 1900) + "x", readErr: anyOutcome, writeErr: anyOutcome},
		{name: "path over PATH_MAX", path: strings.Repeat("a/", 2100) + "x", wantErr: ErrInvalidPath},
	}
}

func TestHostileCorpus(t *testing.T) {
	cases := hostileCorpus()
	if len(cases) < 30 {
		t.Fatalf("corpus has %d cases, want at least 30", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			p := strings.NewReplacer("{w}", fx.ws, "{s}", fx.scratch, "{tmp}", fx.tmp).Replace(tc.path)
			before := fx.snapshot(t)
			defer fx.assertOutsideUnchanged(t, before)

			var res Resolved
			var err error
			guard(t, "Resolve", func() { res, err = fx.roots.Resolve(p) })
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want %v", tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if res.Root != tc.wantRoot {
				t.Errorf("Root = %q, want %q (Abs %s)", res.Root, tc.wantRoot, res.Abs)
			}
			wantAbs := tc.wantAbs
			if !filepath.IsAbs(wantAbs) {
				wantAbs = filepath.Join(fx.tmp, filepath.FromSlash(wantAbs))
			}
			if res.Abs != wantAbs {
				t.Errorf("Abs = %q, want %q", fx.rel(res.Abs), fx.rel(wantAbs))
			}
			if res.Exists != tc.wantExists {
				t.Errorf("Exists = %v, want %v", res.Exists, tc.wantExists)
			}
			if tc.wantDisplay != "" && res.Display != tc.wantDisplay {
				t.Errorf("Display = %q, want %q", res.Display, tc.wantDisplay)
			}
			checkInvariants(t, fx.roots, res)

			if res.Root == RootExternal {
				if tc.openExternal {
					guard(t, "OpenRegular", func() {
						f, _, err := OpenRegular(res)
						if err == nil {
							f.Close()
						}
						if !errors.Is(err, ErrNotRegular) {
							t.Errorf("OpenRegular error = %v, want ErrNotRegular", err)
						}
					})
				}
				return
			}

			guard(t, "ReadFileLimit", func() {
				data, _, err := ReadFileLimit(res, 1<<20)
				checkOutcome(t, "ReadFileLimit", err, tc.readErr)
				if strings.Contains(string(data), secret) {
					t.Errorf("ReadFileLimit returned the outside secret")
				}
			})
			guard(t, "WriteAtomic", func() {
				_, err := WriteAtomic(res, []byte("pwned"))
				checkOutcome(t, "WriteAtomic", err, tc.writeErr)
				if err == nil {
					// Read back through the root: Abs may exceed PATH_MAX.
					if got, _, rerr := ReadFileLimit(res, 1<<20); rerr != nil || string(got) != "pwned" {
						t.Errorf("after WriteAtomic, %s = %q, %v", fx.rel(res.Abs), got, rerr)
					}
				}
			})
		})
	}
}

func checkOutcome(t *testing.T, op string, err, want error) {
	t.Helper()
	switch want {
	case anyOutcome:
	case someError:
		if err == nil {
			t.Errorf("%s succeeded, want an error", op)
		}
	case nil:
		if err != nil {
			t.Errorf("%s: %v", op, err)
		}
	default:
		if !errors.Is(err, want) {
			t.Errorf("%s error = %v, want %v", op, err, want)
		}
	}
}

// checkInvariants holds for every successful resolution.
func checkInvariants(t testing.TB, roots Roots, res Resolved) {
	t.Helper()
	if !validName(res.Name) {
		t.Errorf("Name %q is not a clean relative name", res.Name)
	}
	if got := filepath.Join(res.Base, res.Name); got != res.Abs {
		t.Errorf("Base+Name = %q, Abs = %q", got, res.Abs)
	}
	switch res.Root {
	case RootWorkspace:
		if res.Base != roots.Workspace || !Within(roots.Workspace, res.Abs) {
			t.Errorf("workspace result with Base %q Abs %q", res.Base, res.Abs)
		}
	case RootScratch:
		if res.Base != roots.Scratch || !Within(roots.Scratch, res.Abs) {
			t.Errorf("scratch result with Base %q Abs %q", res.Base, res.Abs)
		}
	case RootExternal:
		if res.Display != res.Abs {
			t.Errorf("external Display %q != Abs %q", res.Display, res.Abs)
		}
	default:
		t.Errorf("unknown Root %q", res.Root)
	}
}

// TestResolveRefusesOverlongPaths: a path of a million components took
// hours to resolve (each component re-joined the path so far), before any
// card or timeout and beyond cancelling. Anything the kernel could not open
// (over PATH_MAX) is now refused at once, also when symlinks make it long.
func TestResolveRefusesOverlongPaths(t *testing.T) {
	ws := t.TempDir()
	r := Roots{Workspace: ws}
	if _, err := r.Resolve(strings.Repeat("a/", 20000) + "x"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("40 KB path: err = %v, want ErrInvalidPath", err)
	}
	// The link expands to 3 KB of missing components: with 3 KB more
	// after it the path is longer than PATH_MAX once resolved.
	long := strings.Repeat("m/", 1500)
	if err := os.Symlink(long, filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("l/" + long); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("path long once resolved: err = %v, want ErrInvalidPath", err)
	}
	// The longest path that is allowed still resolves.
	ok := strings.Repeat("b/", (maxPathLen-len(ws)-2)/2)
	if _, err := r.Resolve(ok + "x"); err != nil {
		t.Fatalf("a %d-byte path: %v", len(ws)+len(ok)+2, err)
	}
}
