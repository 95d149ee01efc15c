//go:build !windows

package shellenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"hostcore/sandbox/process/reapertest"
)

func TestMain(m *testing.M) {
	reapertest.Prepare()
	os.Exit(m.Run())
}

const bash = "/bin/bash"

// fixture is a temporary HOME with its own profile files, and the
// environment a hostcore would have there.
type fixture struct {
	home, data string
	env        []string
	opts       Options
}

func newFixture(t testing.TB, profiles map[string]string) *fixture {
	t.Helper()
	home, data := t.TempDir(), t.TempDir()
	for name, text := range profiles {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "SHELL=/bin/bash"}
	return &fixture{home: home, data: data, env: env, opts: Options{Dir: data, Env: env, ProbeShell: "-"}}
}

func (f *fixture) take(t *testing.T) *Snapshot {
	t.Helper()
	s, err := Take(t.Context(), bash, f.opts)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	t.Cleanup(s.Remove)
	return s
}

type ran struct {
	stdout, stderr string
	code           int
}

// run runs command through the snapshot with env (the fixture's if nil).
func (f *fixture) run(t *testing.T, s *Snapshot, command string, env []string, started *Started) ran {
	t.Helper()
	if env == nil {
		env = f.env
	}
	path, args, cenv, err := s.Command(command, env, started)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	return runArgv(t, path, args, cenv)
}

func runArgv(t *testing.T, path string, args, env []string) ran {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Dir = env, "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", path, err)
	}
	return ran{out.String(), errb.String(), code}
}

// fakeShell writes an executable that prints path whatever it is asked:
// a $SHELL whose login PATH is known.
func fakeShell(t *testing.T, path string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "zsh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'a banner'\nprintf %s '"+path+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfilePath(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		".bash_profile": `export PATH="$HOME/bin:$PATH"; export FROM_PROFILE=yes; export LANG=C.UTF-8` + "\n",
	})
	f.opts.ProbeShell = fakeShell(t, "/probed/bin:/usr/bin")
	s := f.take(t)
	// (The machine's /etc/profile may set PATH in between.)
	got := f.run(t, s, `printf '%s|%s|%s' "$PATH" "$FROM_PROFILE" "$LANG"`, nil, nil)
	prefix, suffix := "/probed/bin:/usr/bin:"+f.home+"/bin:", "|yes|C.UTF-8"
	if !strings.HasPrefix(got.stdout, prefix) || !strings.HasSuffix(got.stdout, suffix) || got.stderr != "" || got.code != 0 {
		t.Errorf("got %+v, want %q...%q", got, prefix, suffix)
	}
}

// A profile that sets PATH outright (Debian's /etc/profile does): the
// probed entries still come first, and hostcore's entries the profile
// dropped come last.
func TestProfileSetsPathOutright(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".profile": "PATH=/usr/bin:/bin\n"})
	f.env = append(f.env, "PATH=/opt/host/bin:/usr/bin")
	f.opts.Env = f.env
	f.opts.ProbeShell = fakeShell(t, "/probed/bin:/opt/nvm/bin")
	s := f.take(t)
	got := f.run(t, s, `printf %s "$PATH"`, nil, nil)
	if want := "/probed/bin:/opt/nvm/bin:/usr/bin:/bin:/opt/host/bin"; got.stdout != want {
		t.Errorf("PATH = %q, want %q", got.stdout, want)
	}
}

func TestProfileHangs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "sleep 30\n"})
	f.opts.Timeout = time.Second
	start := time.Now()
	_, err := Take(t.Context(), bash, f.opts)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Take took %v with a 1 s bound", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not finish within 1s") {
		t.Fatalf("Take: %v, want a timeout", err)
	}

	var told []error
	c := NewCache(f.opts, func(err error) { told = append(told, err) })
	defer c.Close()
	for i := range 2 {
		start := time.Now()
		s, err := c.Get(t.Context(), bash)
		var fe *FallbackError
		if s != nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), "did not finish") {
			t.Fatalf("Get %d: %v, %v; want a FallbackError", i, s, err)
		}
		if i == 1 && time.Since(start) > 100*time.Millisecond {
			t.Errorf("the second Get took %v: the failed take was retried", time.Since(start))
		}
	}
	if len(told) != 1 {
		t.Errorf("onFallback called %d times, want once", len(told))
	}
}

func TestFunctionsAndAliases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		".bash_profile": `greet() { printf 'hi %s\n' "$1"; }
alias ll='printf "%s\n" aliased'
alias gg='greet'
shopt -s extglob
strip() { local x=$1; printf '%s\n' "${x%%+([0-9])}"; }
exported() { echo exported; }; export -f exported
`,
	})
	s := f.take(t)
	cases := []struct {
		command string
		want    ran
	}{
		{"greet you; ll", ran{stdout: "hi you\naliased\n"}},
		{"ll\ngg there", ran{stdout: "aliased\nhi there\n"}},
		{"strip abc123", ran{stdout: "abc\n"}},
		{`printf '%s|%s' "$0" "$#"`, ran{stdout: bash + "|0"}},
		{"exit 7", ran{code: 7}},
		{"bash -c exported; bash -c 'declare -F greet || echo no greet'", ran{stdout: "exported\nno greet\n"}},
		{`shopt -q extglob && echo extglob; [[ $- == *[eux]* ]] || echo plain`, ran{stdout: "extglob\nplain\n"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, f.run(t, s, c.command, nil, nil), cmp.AllowUnexported(ran{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.command, diff)
		}
	}
}

// A syntax error reads as it does under bash -c: the command is the -c
// string itself, so the line numbers are the user's.
func TestCommandTextAsTyped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s := f.take(t)
	const command = "echo a\nif then"
	got := f.run(t, s, command, nil, nil)
	want := runArgv(t, bash, []string{"-c", command}, f.env)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-bash -c +snapshot):\n%s", diff)
	}
}

func TestProfileNoiseAndOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		".bash_profile": "echo noise; echo more noise >&2\nset -euo pipefail\nset -x\nset -o noclobber\nshopt -s failglob\n",
	})
	s := f.take(t)
	got := f.run(t, s, `false | true; echo "[$UNSET_VAR]"; echo *.nomatch; echo x > /dev/null; echo x > /dev/null`, nil, nil)
	want := ran{stdout: "[]\n*.nomatch\n"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEnvRoundTrip(t *testing.T) {
	t.Parallel()
	weird := "line1\nline2 \"q\" 'sq' $HOME `x` \\back \xff\xfe end\t"
	f := newFixture(t, map[string]string{
		".bash_profile": `export MADE=$'a\nb "c" $d \\ \xff'
export CHANGED="$CHANGED+"
unset GONE
readonly RO=1; export RO
`,
	})
	f.env = append(f.env, "WEIRD="+weird, "CHANGED="+weird, "GONE=1", "not-a-name=kept")
	f.opts.Env = f.env
	s := f.take(t)
	got := f.run(t, s, `printf '%s\0' "$WEIRD" "$MADE" "$CHANGED" "${GONE-unset}" "$RO"; env | grep -c '^not-a-name=kept$'`, nil, nil)
	want := ran{stdout: strings.Join([]string{weird, "a\nb \"c\" $d \\ \xff", weird + "+", "unset", "1", "1\n"}, "\x00")}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(ran{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// hostcore's own per-command variables are its own; the shell's
	// start-up variables are the command's shell's.
	got = f.run(t, s, `printf '%s|' "$SHLVL" "$PWD" "${HOSTCORE_STARTED-none}" "${BASH_ENV-none}" "${HOSTCORE_SNAPSHOT_BASH_ENV-none}"`, append(f.env, "SHLVL=4"), nil)
	if want := "5|/|none|none|none|"; got.stdout != want {
		t.Errorf("got %q, want %q", got.stdout, want)
	}
}

// The user's own BASH_ENV and POSIXLY_CORRECT reach the command, as in
// bash -lc, though bash itself is given the snapshot's.
func TestDeferredVars(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	userEnv := filepath.Join(f.home, "env.sh")
	os.WriteFile(userEnv, []byte("from_user_env() { :; }\n"), 0o644)
	f.env = append(f.env, "BASH_ENV="+userEnv)
	f.opts.Env = f.env
	s := f.take(t)
	got := f.run(t, s, `printf '%s|' "$BASH_ENV"; declare -F from_user_env`, nil, nil)
	if want := userEnv + "|from_user_env\n"; got.stdout != want || got.stderr != "" {
		t.Errorf("got %+v, want stdout %q", got, want)
	}

	f = newFixture(t, map[string]string{".bash_profile": "export POSIXLY_CORRECT=1\n"})
	s = f.take(t)
	got = f.run(t, s, `printf '%s|' "$POSIXLY_CORRECT"; shopt -qo posix && echo posix`, nil, nil)
	if want := "1|posix\n"; got.stdout != want || got.stderr != "" {
		t.Errorf("got %+v, want stdout %q", got, want)
	}
}

func TestStale(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "export A=1\n"})
	s := f.take(t)
	if s.Stale() {
		t.Fatal("stale at once")
	}
	// A file that did not exist appears.
	rc := filepath.Join(f.home, ".bashrc")
	os.WriteFile(rc, nil, 0o644)
	if !s.Stale() {
		t.Fatal("not stale after ~/.bashrc appeared")
	}
	s2 := f.take(t)
	// An existing file touched.
	later := time.Now().Add(time.Minute)
	os.Chtimes(rc, later, later)
	if !s2.Stale() {
		t.Fatal("not stale after ~/.bashrc was touched")
	}
}

func TestCacheRetakes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "export V=one\n"})
	c := NewCache(f.opts, func(err error) { t.Errorf("fallback: %v", err) })
	defer c.Close()
	s1, err := c.Get(t.Context(), bash)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Get(t.Context(), bash); s != s1 {
		t.Fatal("a fresh snapshot was taken again")
	}
	os.WriteFile(filepath.Join(f.home, ".bash_profile"), []byte("export V=two\n"), 0o644)
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(f.home, ".bash_profile"), later, later)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := c.Get(t.Context(), bash)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.run(t, s, `printf %s "$V"`, nil, nil).stdout; s != s1 {
			if got != "two" {
				t.Fatalf("the new snapshot gives V=%q", got)
			}
			break
		} else if got != "one" {
			t.Fatalf("the old snapshot gives V=%q", got)
		}
		if time.Now().After(deadline) {
			t.Fatal("no new snapshot after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another bash path is another snapshot.
	if s, err := c.Get(t.Context(), "/usr/bin/bash"); err == nil && s.Shell() != "/usr/bin/bash" {
		t.Errorf("Get(/usr/bin/bash) gave a snapshot of %s", s.Shell())
	}
}

func TestCacheGetCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "sleep 30\n"})
	c := NewCache(f.opts, func(err error) { t.Errorf("fallback: %v", err) })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, bash); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get: %v, want the context's error", err)
	}
	// Close stops the take, which hangs, at once.
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}
	var fe *FallbackError
	if _, err := c.Get(t.Context(), bash); !errors.As(err, &fe) {
		t.Errorf("Get after Close: %v", err)
	}
}

// A command may put anything where the script was: a FIFO would hold
// every later command at its start. Command writes the script again.
func TestScriptReplaced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "hello() { echo hello; }\n"})
	s := f.take(t)
	os.Remove(s.Script())
	if err := syscall.Mkfifo(s.Script(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, s, "hello", nil, nil); got.stdout != "hello\n" {
		t.Fatalf("got %+v", got)
	}
	if fi, err := os.Stat(s.Script()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("script: %v, %v; want mode 0600", fi, err)
	}
	s.Remove()
	if _, _, _, err := s.Command("true", f.env, nil); err == nil {
		t.Error("Command of a removed snapshot succeeded")
	}
}

func TestTakeFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "exec /bin/sh -c 'exit 3'\n"})
	if _, err := Take(t.Context(), bash, f.opts); err == nil || !strings.Contains(err.Error(), "exited with status 3") {
		t.Errorf("a profile that execs: %v", err)
	}
	f.opts.Dir = "/tmp/$x"
	if _, err := Take(t.Context(), bash, f.opts); err == nil {
		t.Error("a directory bash would expand was accepted")
	}
	// A function the restore script cannot define again fails the check
	// rather than print its error before every command.
	f = newFixture(t, map[string]string{".bash_profile": "shopt -s extglob; f() { echo ok; }\n"})
	if _, err := Take(t.Context(), bash, f.opts); err != nil {
		t.Errorf("Take: %v", err)
	}
}

// A profile that leaves a process behind (an agent, a daemon) holding
// the shell's output: the take ends when the shell does, and kills it.
func TestProfileLeavesProcess(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{".bash_profile": "sleep 300 &\nexport AFTER=1\n"})
	start := time.Now()
	s := f.take(t)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Take took %v", took)
	}
	if got := f.run(t, s, `printf %s "$AFTER"`, nil, nil); got.stdout != "1" {
		t.Errorf("got %+v", got)
	}
}
