package landlock

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree makes files (name → "" for a directory) under a fresh directory
// and returns its real path.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		p := filepath.Join(base, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// under lists the plan's rules beneath base, with base written as "B".
func under(pl plan, base string) []string {
	var out []string
	for _, r := range pl.Rules {
		if r.Path == base || within(r.Path, base) {
			kind := "file"
			if r.Dir {
				kind = "dir"
			}
			out = append(out, fmt.Sprintf("%s %s %v", "B"+strings.TrimPrefix(r.Path, base), kind, r.Access))
		}
	}
	return out
}

// checkNoRuleCovers fails if a rule opens a denied path: a rule on it,
// beneath it, or on a directory above it.
func checkNoRuleCovers(t *testing.T, pl plan, p Policy) {
	t.Helper()
	scratch := &planner{index: map[string]int{}, plan: plan{Watch: map[string]watchKind{}}}
	for _, d := range scratch.resolveDeny(p.Deny, p.Home) {
		for _, r := range pl.Rules {
			if _, err := os.Lstat(d); r.Access == accList && (p.ListAll || err != nil) {
				continue // names only: everywhere, or above a path not made yet
			}
			if r.Path == d || within(r.Path, d) || within(d, r.Path) {
				if roots := p.writable(); r.Path == p.Workspace || len(roots) > 0 && containsPath(roots, r.Path) {
					continue // a root named by the policy is granted as named
				}
				t.Errorf("rule %v opens the denied %s", r, d)
			}
		}
	}
}

func containsPath(list []string, p string) bool {
	for _, l := range list {
		if filepath.Clean(l) == p {
			return true
		}
	}
	return false
}

func TestPlanCarvesDeniedPaths(t *testing.T) {
	base := tree(t, "home/.ssh/id_rsa", "home/.config/gcloud/creds", "home/.config/other/ok",
		"home/notes.txt", "home/.cache/", "home/.docker/config.json", "home/.docker/other.json")
	home := filepath.Join(base, "home")
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ReadOnly, Home: home, Deny: []string{"~/.ssh", "~/.config/gcloud", "~/.docker/config.json", "~/.absent"}}
	pl, err := makePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"B/home/.cache dir read",
		"B/home/.config/other dir read",
		"B/home/.docker/other.json file read",
		"B/home/notes.txt file read",
	}
	if diff := cmp.Diff(want, under(pl, base)); diff != "" {
		t.Errorf("rules beneath the tree (-want +got)\n%s", diff)
	}
	if len(pl.Notes) != 0 {
		t.Errorf("notes: %q", pl.Notes)
	}
	checkNoRuleCovers(t, pl, p)
	// The whole plan, from /, opens no denied path either, with the
	// built-in list and this machine's home.
	real := DefaultPolicy(WorkspaceWrite, home, "", []string{"HOME=" + os.Getenv("HOME")})
	pl, err = makePlan(real)
	if err != nil {
		t.Fatal(err)
	}
	checkNoRuleCovers(t, pl, real)
}

// A denied path that does not exist yet is carved like one that does:
// its nearest existing ancestor is granted entry by entry, never whole,
// so that a file made there later stays closed to a command already
// running. Through a dangling symbolic link, the link's target is the
// place carved. A directory above missing denied paths only can still be
// listed; the home, which holds the link, cannot.
func TestPlanCarvesMissingDeniedPaths(t *testing.T) {
	base := tree(t, "home/.config/other/ok", "home/.cargo/bin/cargo", "home/notes.txt", "elsewhere/ok.txt")
	home := filepath.Join(base, "home")
	if err := os.Symlink("../elsewhere/aws", filepath.Join(home, ".aws")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ReadOnly, Home: home, Deny: []string{"~/.config/gcloud", "~/.kube/config", "~/.cargo/credentials", "~/.aws"}}
	pl, err := makePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"B/elsewhere dir list",
		"B/elsewhere/ok.txt file read",
		"B/home/.cargo dir list",
		"B/home/.cargo/bin dir read",
		"B/home/.config dir list",
		"B/home/.config/other dir read",
		"B/home/notes.txt file read",
	}
	if diff := cmp.Diff(want, under(pl, base)); diff != "" {
		t.Errorf("rules beneath the tree (-want +got)\n%s", diff)
	}
	checkNoRuleCovers(t, pl, p)
	for _, d := range []string{home, filepath.Join(home, ".config"), filepath.Join(base, "elsewhere")} {
		if pl.Watch[d] != watchEntries {
			t.Errorf("%s is carved but its entries are not watched", d)
		}
	}
}

// Roots named by the policy are granted as named: inside a denied path
// (someone chose it), and carved around denied paths beneath them.
func TestPlanRoots(t *testing.T) {
	base := tree(t, "home/.ssh/id_rsa", "home/.ssh/proj/main.go", "home/src/a.go", "home/notes.txt")
	home := filepath.Join(base, "home")
	for _, tc := range []struct {
		name, ws string
		want     []string
	}{
		{"inside a denied path", filepath.Join(home, ".ssh/proj"), []string{
			"B/home/notes.txt file read",
			"B/home/src dir read",
			"B/home/.ssh/proj dir read+write",
		}},
		{"above a denied path", home, []string{
			"B/home/notes.txt file read+write",
			"B/home/src dir read+write",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: WorkspaceWrite, Workspace: tc.ws, Home: home, Deny: []string{"~/.ssh"}}
			pl, err := makePlan(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, under(pl, base)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// A directory above a denied path with more entries than the bound is
// left closed, with a note: only the roots granted by name stay open in it.
func TestPlanHugeDirectoryFailsClosed(t *testing.T) {
	base := tree(t, "home/.ssh/id_rsa", "home/ws/main.go")
	home := filepath.Join(base, "home")
	for i := range maxDirEntries + 10 {
		if err := os.WriteFile(filepath.Join(home, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Mode: WorkspaceWrite, Workspace: filepath.Join(home, "ws"), Home: home, Deny: []string{"~/.ssh"}}
	pl, err := makePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"B/home/ws dir read+write"}, under(pl, base)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if len(pl.Notes) != 1 || !strings.Contains(pl.Notes[0], home) || !strings.Contains(pl.Notes[0], "entries") {
		t.Errorf("notes = %q, want one about %s", pl.Notes, home)
	}
	checkNoRuleCovers(t, pl, p)
}

// A home reached through a symbolic link is denied by both names.
func TestPlanLinkedHome(t *testing.T) {
	base := tree(t, "real/.ssh/id_rsa", "real/notes.txt")
	link := filepath.Join(base, "home")
	if err := os.Symlink(filepath.Join(base, "real"), link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ReadOnly, Home: link, Deny: []string{"~/.ssh"}}
	pl, err := makePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"B/real/notes.txt file read"}, under(pl, base)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestPlanListAll(t *testing.T) {
	pl, err := makePlan(Policy{Mode: ReadOnly, ListAll: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pl.Rules {
		if r.Path == "/" {
			if r.Access != accList {
				t.Errorf("rule %v, want list only", r)
			}
			return
		}
	}
	t.Error("no rule on /")
}

func TestPolicyRefused(t *testing.T) {
	for _, p := range []Policy{
		{Mode: "off"},
		{Mode: WorkspaceWrite, Workspace: "/"},
		{Mode: ReadOnly, TempDirs: []string{"/tmp/../"}},
		{Mode: WorkspaceWrite, WritableExtra: []string{"relative"}},
		{Mode: ReadOnly, Home: "~"},
		{Mode: ReadOnly, Scratch: "/s", PrivateTmp: "/tmp/x"},
		{Mode: ReadOnly, PrivateTmp: "/s/tmp"},
	} {
		if _, err := makePlan(p); err == nil {
			t.Errorf("makePlan(%+v) = nil error", p)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	env := []string{"HOME=/h", "TMPDIR=/t", "XDG_CACHE_HOME=/c", "HOME=/home/u"}
	p := DefaultPolicy(WorkspaceWrite, "/ws", "/s", env)
	p.WritableExtra = []string{"/x"}
	if diff := cmp.Diff([]string{"/s", "/tmp", "/dev/shm", "/t", "/ws", "/c", "/x"}, p.writable()); diff != "" {
		t.Errorf("workspace-write (-want +got)\n%s", diff)
	}
	if p.Home != "/home/u" {
		t.Errorf("Home = %q, want the last HOME", p.Home)
	}
	p.Mode = ReadOnly
	if diff := cmp.Diff([]string{"/s", "/tmp", "/dev/shm", "/t"}, p.writable()); diff != "" {
		t.Errorf("read-only (-want +got)\n%s", diff)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "/home/u" {
		if !slices.Contains(p.Deny, filepath.Join(u.HomeDir, ".ssh")) {
			t.Errorf("Deny lacks the user database's home %s: %q", u.HomeDir, p.Deny)
		}
		if p := DefaultPolicy(ReadOnly, "/ws", "/s", nil); p.Home != u.HomeDir {
			t.Errorf("without HOME, Home = %q, want %q", p.Home, u.HomeDir)
		}
	}
	if p := DefaultPolicy(WorkspaceWrite, "/ws", "/s", []string{"TMPDIR=relative"}); len(p.TempDirs) != 2 || p.PrivateTmp != "" {
		t.Errorf("workspace-write, relative TMPDIR: temps %q, private %q", p.TempDirs, p.PrivateTmp)
	}
	// Read-only: no shared temp dir (a workspace under /tmp would be
	// written through it), a TMPDIR of its own in the scratch.
	p = DefaultPolicy(ReadOnly, "/ws", "/s", []string{"HOME=/home/u", "TMPDIR=/t"})
	if p.CacheDir != "/home/u/.cache" || len(p.TempDirs) != 0 || p.PrivateTmp != "/s/tmp" {
		t.Errorf("read-only: cache %q temps %q private %q", p.CacheDir, p.TempDirs, p.PrivateTmp)
	}
	if diff := cmp.Diff([]string{"/s"}, p.writable()); diff != "" {
		t.Errorf("read-only writable (-want +got)\n%s", diff)
	}
	if p := DefaultPolicy(ReadOnly, "/ws", "", nil); p.PrivateTmp != "" {
		t.Errorf("read-only without a scratch: private temp %q", p.PrivateTmp)
	}
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodePolicy(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("round trip (-want +got)\n%s", diff)
	}
}

// CommandEnv points the temp variables at the private temp dir, and
// leaves the environment alone without one.
func TestCommandEnv(t *testing.T) {
	env := []string{"A=1", "TMPDIR=/tmp", "TMP=/tmp", "TEMP=/x", "B=2"}
	p := DefaultPolicy(ReadOnly, "/ws", "/s", env)
	want := []string{"A=1", "B=2", "TMPDIR=/s/tmp", "TMP=/s/tmp", "TEMP=/s/tmp"}
	if diff := cmp.Diff(want, p.CommandEnv(env)); diff != "" {
		t.Errorf("read-only (-want +got)\n%s", diff)
	}
	p = DefaultPolicy(WorkspaceWrite, "/ws", "/s", env)
	if diff := cmp.Diff(env, p.CommandEnv(env)); diff != "" {
		t.Errorf("workspace-write (-want +got)\n%s", diff)
	}
}

func TestSummary(t *testing.T) {
	p := DefaultPolicy(ReadOnly, "/ws", "/s", []string{"HOME=/home/u"})
	got := p.Summary()
	for _, want := range []string{"read-only", "the scratch dir (/s)", "its own TMPDIR (/s/tmp)", "~/.ssh", "more", "entered but not listed"} {
		if !strings.Contains(got, want) {
			t.Errorf("Summary() lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "/ws") || strings.Contains(got, "/dev/shm") || strings.Contains(got, " /tmp") {
		t.Errorf("read-only Summary() names the workspace or a shared temp dir as writable:\n%s", got)
	}
	if !LooksDenied("cat: /home/u/.ssh/id_rsa: Permission denied") || LooksDenied("No such file or directory") {
		t.Error("LooksDenied")
	}
}

// decodePolicy reads what Policy.Encode wrote.
func decodePolicy(s string) (Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("decoding the sandbox policy: %w", err)
	}
	return p, p.validate()
}
