package landlock

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The tests run the sandbox for real: the test binary re-executes itself
// as an unsandboxed parent (TestMain, modeParent), which starts the
// sandboxed command the way hostcore's reaper does, through Fork. The
// parent stands for hostcore:
// the probes (modeProbe) go after its descriptors and signal it. Where
// the suite runs as root, the parent is started through setpriv as
// nobody, so that the file permissions would let an ordinary user do
// what the sandbox must refuse.
const (
	modeVar      = "LLTEST_MODE"
	policyVar    = "LLTEST_POLICY"
	howVar       = "LLTEST_HOW"
	controlVar   = "LLTEST_CONTROL"
	childModeVar = "LLTEST_CHILD_MODE"
	parentVar    = "LLTEST_PARENT"
	modeParent   = "parent"
	modeProbe    = "probe"
)

func TestMain(m *testing.M) {
	switch os.Getenv(modeVar) {
	case modeParent:
		os.Exit(runParent(os.Args[1:]))
	case modeProbe:
		os.Exit(runProbe(os.Args[1:]))
	}
	code := m.Run()
	if shared.f != nil {
		os.RemoveAll(shared.f.base)
	}
	os.Exit(code)
}

// runParent reads the control paths (the file permissions allow this
// user to read them, unsandboxed), listens on an abstract unix socket,
// then runs argv sandboxed and exits with its status.
func runParent(argv []string) int {
	p, err := decodePolicy(os.Getenv(policyVar))
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		return 90
	}
	for _, c := range strings.Split(os.Getenv(controlVar), ":") {
		if c == "" {
			continue
		}
		if _, err := os.ReadFile(c); err != nil {
			fmt.Fprintln(os.Stderr, "parent: control read:", err)
			return 91
		}
	}
	ln, err := net.Listen("unix", abstractName(os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent: listen:", err)
		return 92
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	env := []string{parentVar + "=" + strconv.Itoa(os.Getpid()), modeVar + "=" + os.Getenv(childModeVar)}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, modeVar+"=") {
			env = append(env, e)
		}
	}
	switch os.Getenv(howVar) {
	default:
		path, err := exec.LookPath(argv[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "parent:", err)
			return 95
		}
		rs, err := Prepare(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "parent:", err)
			return 96
		}
		defer rs.Close()
		for _, n := range rs.Notes() {
			fmt.Fprintln(os.Stderr, "note:", n)
		}
		pid, err := rs.Fork(func() (int, error) {
			return syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "parent: fork:", err)
			return 97
		}
		if err := leaderFree(); err != nil {
			fmt.Fprintln(os.Stderr, "parent:", err)
			return 99
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			return 98
		}
		return ws.ExitStatus()
	}
}

// leaderFree checks that the process's main thread, which stands for the
// process in /proc and for signals, is not restricted.
func leaderFree() error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	if !strings.Contains(string(status), "NoNewPrivs:\t0") {
		return fmt.Errorf("the main thread was restricted:\n%s", status)
	}
	return nil
}

func abstractName(pid int) string { return fmt.Sprintf("@hostcore-lltest-%d", pid) }

// runProbe tries, from inside the sandbox, each named attack on its
// parent and prints "name=ok" or "name=denied (error)".
func runProbe(ops []string) int {
	ppid, _ := strconv.Atoi(os.Getenv(parentVar))
	for _, op := range ops {
		var err error
		switch op {
		case "fd0":
			var f *os.File
			if f, err = os.OpenFile(fmt.Sprintf("/proc/%d/fd/0", ppid), os.O_RDONLY, 0); err == nil {
				f.Close()
			}
		case "fd1":
			var f *os.File
			if f, err = os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", ppid), os.O_WRONLY, 0); err == nil {
				f.Close()
			}
		case "fdlist":
			_, err = os.ReadDir(fmt.Sprintf("/proc/%d/fd", ppid))
		case "fdlink":
			_, err = os.Readlink(fmt.Sprintf("/proc/%d/fd/0", ppid))
		case "maps":
			_, err = os.ReadFile(fmt.Sprintf("/proc/%d/maps", ppid))
		case "environ":
			_, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", ppid))
		case "cmdline":
			_, err = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid))
		case "pidfd_getfd":
			var pidfd, fd int
			if pidfd, err = unix.PidfdOpen(ppid, 0); err == nil {
				if fd, err = unix.PidfdGetfd(pidfd, 0, 0); err == nil {
					unix.Close(fd)
				}
				unix.Close(pidfd)
			}
		case "kill":
			err = syscall.Kill(ppid, 0)
		case "killself":
			err = syscall.Kill(os.Getpid(), 0)
		case "abstract":
			var c net.Conn
			if c, err = net.Dial("unix", abstractName(ppid)); err == nil {
				c.Close()
			}
		case "selfstatus":
			_, err = os.ReadFile("/proc/self/status")
		default:
			err = fmt.Errorf("unknown probe %q", op)
		}
		if err != nil {
			fmt.Printf("%s=denied (%v)\n", op, err)
		} else {
			fmt.Printf("%s=ok\n", op)
		}
	}
	return 0
}

// fixture is a disk laid out for the tests, outside /tmp (which the
// sandbox opens for writing): a fake home with secrets readable by
// everyone as far as the file permissions go, a workspace, a scratch, a
// directory outside every root, and a copy of the test binary that
// nobody may execute.
type fixture struct {
	base, home, ws, scratch, outside, bin string
}

// shared is the fixture the tests share (made once: it holds a copy of
// the test binary); TestMain removes it. The commands name what they
// create after their pid, so tests run in parallel on it.
var shared struct {
	once sync.Once
	f    *fixture
	err  error
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	if _, err := os.Stat("/var/tmp"); err != nil {
		t.Skip("no /var/tmp for a tree outside /tmp")
	}
	shared.once.Do(func() { shared.f, shared.err = makeFixture() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.f
}

func makeFixture() (*fixture, error) {
	base, err := os.MkdirTemp("/var/tmp", "hostcore-landlock-")
	if err != nil {
		return nil, err
	}
	f := &fixture{
		base:    base,
		home:    filepath.Join(base, "home"),
		ws:      filepath.Join(base, "ws"),
		scratch: filepath.Join(base, "scratch"),
		outside: filepath.Join(base, "outside"),
		bin:     filepath.Join(base, "bin", "landlock.test"),
	}
	files := map[string]string{
		"home/.ssh/id_rsa":               "SECRET-SSH",
		"home/.ssh/known_hosts":          "SECRET-HOSTS",
		"home/.aws/credentials":          "SECRET-AWS",
		"home/.config/gcloud/creds.json": "SECRET-GCLOUD",
		"home/.config/other/ok.txt":      "config-ok",
		"home/.docker/config.json":       "SECRET-DOCKER",
		"home/.docker/other.json":        "docker-ok",
		"home/.npmrc":                    "SECRET-NPM",
		"home/notes.txt":                 "notes-ok",
		"outside/file.txt":               "outside-ok",
		"ws/README":                      "ws-ok",
	}
	for name, body := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{base, f.home, filepath.Dir(f.bin)} {
		os.MkdirAll(d, 0o755)
		os.Chmod(d, 0o755)
	}
	// Writable by everyone, so that only the sandbox stands in the way.
	for _, d := range []string{f.ws, f.scratch, filepath.Join(f.scratch, "tmp"), f.outside, filepath.Join(f.home, ".cache"), f.home} {
		os.MkdirAll(d, 0o777)
		os.Chmod(d, 0o777)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.bin, data, 0o755); err != nil {
		return nil, err
	}
	return f, nil
}

// policy is the default policy for the fixture's home, workspace and scratch.
func (f *fixture) policy(mode Mode) Policy {
	return DefaultPolicy(mode, f.ws, f.scratch, []string{"HOME=" + f.home})
}

// env is the command's environment: the fixture's home, no TMPDIR.
func (f *fixture) env() []string {
	return []string{"HOME=" + f.home, "PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C",
		"WS=" + f.ws, "SCRATCH=" + f.scratch, "OUT=" + f.outside}
}

// run describes one sandboxed command.
type run struct {
	policy    Policy
	how       string // "fork": the reaper's way
	nobody    bool   // start the parent as nobody (only when root)
	control   []string
	childMode string
	argv      []string
	extraEnv  []string
}

// do runs it and returns its stdout, stderr and exit code.
func (r run) do(t testing.TB, f *fixture) (string, string, int) {
	t.Helper()
	enc, err := r.policy.Encode()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{f.bin}, r.argv...)
	if r.nobody {
		argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = f.ws
	cmd.Env = r.policy.CommandEnv(append(f.env(), r.extraEnv...))
	cmd.Env = append(cmd.Env, modeVar+"="+modeParent, policyVar+"="+enc, howVar+"="+r.how,
		controlVar+"="+strings.Join(r.control, ":"), childModeVar+"="+r.childMode)
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", argv, err)
	}
	if code >= 90 && code < 100 {
		t.Fatalf("the test parent failed (%d): %s", code, stderr.String())
	}
	return stdout.String(), stderr.String(), code
}

// requireLandlock skips when the kernel cannot run the sandbox.
func requireLandlock(t testing.TB) {
	t.Helper()
	if abi, reason := Available(); abi == 0 {
		t.Skipf("no Landlock: %s", reason)
	}
}

// users are the ways to run the parent: as this user, and as nobody
// when this is root and setpriv is there.
func users(t *testing.T) []bool {
	out := []bool{false}
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err == nil {
			out = append(out, true)
		} else {
			t.Log("no setpriv: the tests run as root only")
		}
	}
	return out
}

// tries runs a bash script of try lines under the sandbox and returns
// what each came to: "ok" or "denied".
func tries(t *testing.T, f *fixture, r run, lines ...string) map[string]string {
	t.Helper()
	script := `try() { if eval "$2" >/dev/null 2>&1; then echo "$1=ok"; else echo "$1=denied"; fi; }` + "\n" + strings.Join(lines, "\n")
	r.argv = []string{"bash", "--noprofile", "--norc", "-c", script}
	stdout, stderr, code := r.do(t, f)
	if code != 0 {
		t.Fatalf("script exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	return got
}

// variants runs body for each way of starting the sandbox and each user.
func variants(t *testing.T, body func(t *testing.T, how string, nobody bool)) {
	for _, how := range []string{"fork"} {
		for _, nobody := range users(t) {
			name := how
			if nobody {
				name += "/nobody"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				body(t, how, nobody)
			})
		}
	}
}
