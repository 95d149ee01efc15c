package landlock

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
)

func TestAvailable(t *testing.T) {
	abi, reason := Available()
	t.Logf("Landlock ABI %d %s", abi, reason)
	if abi != 0 && abi < minABI {
		t.Errorf("Available() = %d: below the minimum %d", abi, minABI)
	}
	if abi == 0 && reason == "" {
		t.Error("Available() = 0 without a reason")
	}
}

// A command writes in the workspace, the scratch, /tmp and the cache, and
// nowhere else: not beside the roots, not in the home, not in /etc.
func TestWrites(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	variants(t, func(t *testing.T, how string, nobody bool) {
		got := tries(t, f, run{policy: f.policy(WorkspaceWrite), how: how, nobody: nobody},
			`try workspace 'echo x > "$WS/new.$$" && mkdir "$WS/d.$$" && mv "$WS/new.$$" "$WS/d.$$/" && rm -r "$WS/d.$$"'`,
			`try scratch 'echo x > "$SCRATCH/new.$$"'`,
			`try tmp 't=$(mktemp) && echo x > "$t" && rm "$t"'`,
			`try cache 'mkdir -p "$HOME/.cache/tool.$$" && echo x > "$HOME/.cache/tool.$$/f"'`,
			`try devnull 'echo x > /dev/null'`,
			`try outside 'echo x > "$OUT/new.$$"'`,
			`try outside-truncate 'truncate -s 0 "$OUT/file.txt"'`,
			`try outside-rm 'rm "$OUT/file.txt"'`,
			`try outside-read 'cat "$OUT/file.txt"'`,
			`try home 'echo x > "$HOME/.bashrc"'`,
			`try home-notes 'echo x >> "$HOME/notes.txt"'`,
			`try etc 'echo x > /etc/hostcore-lltest'`,
			`try mknod 'mknod "$WS/null.$$" c 1 3'`,
			`try move-out 'echo x > "$WS/m.$$" && mv "$WS/m.$$" "$OUT/m.$$"'`,
		)
		want := map[string]string{
			"workspace": "ok", "scratch": "ok", "tmp": "ok", "cache": "ok", "devnull": "ok",
			"outside": "denied", "outside-truncate": "denied", "outside-rm": "denied", "outside-read": "ok",
			"home": "denied", "home-notes": "denied", "etc": "denied", "mknod": "denied", "move-out": "denied",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

// Read-only mode: the workspace is read, not written; the scratch and
// the command's own TMPDIR in it are written, the shared /tmp is not.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	variants(t, func(t *testing.T, how string, nobody bool) {
		got := tries(t, f, run{policy: f.policy(ReadOnly), how: how, nobody: nobody},
			`try workspace-write 'echo x > "$WS/new.$$"'`,
			`try workspace-edit 'echo x >> "$WS/README"'`,
			`try workspace-read 'cat "$WS/README"'`,
			`try scratch 'echo x > "$SCRATCH/new.$$"'`,
			`try tmp 't=$(mktemp) && rm "$t"'`,
			`try tmp-private 'case "$TMPDIR" in "$SCRATCH"/*) ;; *) false ;; esac'`,
			`try shared-tmp 'echo x > /tmp/hostcore-ro.$$'`,
			`try cache 'echo x > "$HOME/.cache/f.$$"'`,
		)
		want := map[string]string{
			"workspace-write": "denied", "workspace-edit": "denied", "workspace-read": "ok",
			"scratch": "ok", "tmp": "ok", "tmp-private": "ok", "shared-tmp": "denied", "cache": "denied",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

// The sensitive paths can be neither read, listed, copied, linked nor
// written, however the path is spelled at run time; their siblings read
// as usual.
func TestSecrets(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	variants(t, func(t *testing.T, how string, nobody bool) {
		r := run{policy: f.policy(WorkspaceWrite), how: how, nobody: nobody,
			control: []string{filepath.Join(f.home, ".ssh/id_rsa"), filepath.Join(f.home, ".npmrc")}}
		got := tries(t, f, r,
			`try plain 'cat ~/.ssh/id_rsa'`,
			`try var 'd=.ssh; cat ~/$d/id_rsa'`,
			"try backquote 'cat `printf %s ~/.ss`h/id_rsa'",
			`try printf-v 'printf -v p "%s/.ssh/id_rsa" ~; cat $p'`,
			`try proc-root 'cat /proc/self/root$HOME/.ssh/id_rsa'`,
			`try proc-cwd 'cd ~/.ssh && cat /proc/self/cwd/id_rsa'`,
			`try symlink 'ln -s ~/.ssh/id_rsa "$WS/link.$$" && cat "$WS/link.$$"'`,
			`try hardlink 'ln ~/.ssh/id_rsa "$WS/hard.$$"'`,
			`try copy 'cp -r ~/.ssh "$WS/stolen.$$"'`,
			`try list 'ls ~/.ssh'`,
			`try write 'echo x >> ~/.ssh/known_hosts'`,
			`try aws 'cat ~/.aws/credentials'`,
			`try gcloud 'cat ~/.config/gcloud/creds.json'`,
			`try docker 'cat ~/.docker/config.json'`,
			`try npmrc 'cat ~/.npmrc'`,
			`try notes 'cat ~/notes.txt'`,
			`try config-other 'cat ~/.config/other/ok.txt'`,
			`try docker-other 'cat ~/.docker/other.json'`,
			`try shadow 'cat /etc/shadow'`,
			`try passwd 'cat /etc/passwd'`,
			`try grep 'grep -r SECRET ~ /proc/self/root$HOME 2>/dev/null | grep -q SECRET'`,
			`try list-home 'ls ~'`,
			`try list-root 'ls /'`,
			`try list-workspace 'ls "$WS"'`,
			`try list-usr 'ls /usr'`,
		)
		want := map[string]string{
			"plain": "denied", "var": "denied", "backquote": "denied", "printf-v": "denied",
			"proc-root": "denied", "proc-cwd": "denied", "symlink": "denied", "hardlink": "denied",
			"copy": "denied", "list": "denied", "write": "denied",
			"aws": "denied", "gcloud": "denied", "docker": "denied", "npmrc": "denied",
			"notes": "ok", "config-other": "ok", "docker-other": "ok",
			"shadow": "denied", "passwd": "ok", "grep": "denied",
			// Above a denied path, directories are entered, not listed.
			"list-home": "denied", "list-root": "denied", "list-workspace": "ok", "list-usr": "ok",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

// A denied file that a login creates while a command runs stays closed
// to that command: the directories above a missing denied path are
// carved, not granted whole. The command starts, the test makes
// ~/.aws/credentials and a new file beside it, and the command then reads
// neither; what was there before it started reads as usual, and the home,
// above denied paths not made yet only, lists.
func TestDeniedPathCreatedLater(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	variants(t, func(t *testing.T, how string, nobody bool) {
		home := filepath.Join(f.base, "late-"+strings.ReplaceAll(t.Name(), "/", "-"))
		if err := os.MkdirAll(home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("notes-ok"), 0o644); err != nil {
			t.Fatal(err)
		}
		started, proceed := filepath.Join(f.ws, filepath.Base(home)+".started"), filepath.Join(f.ws, filepath.Base(home)+".go")
		made := make(chan error, 1)
		go func() {
			made <- func() error {
				for range 600 {
					if _, err := os.Stat(started); err == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("SECRET-LATE"), 0o644); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(home, "later.txt"), []byte("later"), 0o644); err != nil {
					return err
				}
				return os.WriteFile(proceed, nil, 0o644)
			}()
		}()
		r := run{policy: DefaultPolicy(WorkspaceWrite, f.ws, f.scratch, []string{"HOME=" + home}), how: how, nobody: nobody,
			extraEnv: []string{"HOME=" + home, "STARTED=" + started, "PROCEED=" + proceed}}
		got := tries(t, f, r,
			`touch "$STARTED"; for i in $(seq 600); do [ -e "$PROCEED" ] && break; sleep 0.05; done`,
			`try aws 'cat ~/.aws/credentials'`,
			`try printf 'cat $(printf "%s/.%s%s/%s" "$HOME" a ws credentials)'`,
			`try later 'cat ~/later.txt'`,
			`try notes 'cat ~/notes.txt'`,
			`try list-home 'ls ~'`,
		)
		if err := <-made; err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"aws": "denied", "printf": "denied", "later": "denied", "notes": "ok", "list-home": "ok"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
		// The next command plans again and reads the new sibling.
		got = tries(t, f, r, `try aws 'cat ~/.aws/credentials'`, `try later 'cat ~/later.txt'`)
		if diff := cmp.Diff(map[string]string{"aws": "denied", "later": "ok"}, got); diff != "" {
			t.Errorf("the next command (-want +got)\n%s", diff)
		}
	})
}

// ListAll lists every directory, the denied ones' names included, and
// still reads none of their files.
func TestListAll(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	p := f.policy(WorkspaceWrite)
	p.ListAll = true
	got := tries(t, f, run{policy: p, how: "fork", nobody: users(t)[len(users(t))-1]},
		`try list-home 'ls ~ | grep -q notes.txt'`,
		`try list-root 'ls / | grep -q usr'`,
		`try list-ssh 'ls ~/.ssh | grep -q id_rsa'`,
		`try read-ssh 'cat ~/.ssh/id_rsa'`,
	)
	want := map[string]string{"list-home": "ok", "list-root": "ok", "list-ssh": "ok", "read-ssh": "denied"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// Nothing inside reaches the parent (hostcore): not its descriptors
// through /proc or pidfd_getfd, not its environment, not a signal, not
// its abstract unix sockets. What ps and a process's own /proc need
// still works.
func TestParentUnreachable(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	abi, _ := Available()
	f := newFixture(t)
	variants(t, func(t *testing.T, how string, nobody bool) {
		r := run{policy: f.policy(WorkspaceWrite), how: how, nobody: nobody, childMode: modeProbe,
			argv: []string{f.bin, "fd0", "fd1", "fdlink", "fdlist", "maps", "environ", "pidfd_getfd", "kill", "abstract", "cmdline", "killself", "selfstatus"}}
		stdout, stderr, code := r.do(t, f)
		if code != 0 {
			t.Fatalf("probe exit %d: %s", code, stderr)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			k, v, _ := strings.Cut(line, "=")
			got[k], _, _ = strings.Cut(v, " ")
		}
		want := map[string]string{
			"fd0": "denied", "fd1": "denied", "fdlink": "denied", "maps": "denied", "environ": "denied", "pidfd_getfd": "denied",
			// The numbers of its descriptors show; what they are does not.
			"fdlist": "ok",
			"kill":   "denied", "abstract": "denied",
			"cmdline": "ok", "killself": "ok", "selfstatus": "ok",
		}
		if abi < scopeABI {
			want["kill"], want["abstract"] = got["kill"], got["abstract"]
		}
		if !nobody && os.Geteuid() == 0 {
			// The kernel lets CAP_PERFMON read any process's environ
			// and maps, whatever the security modules say (mm_access):
			// root's commands can, an ordinary user's cannot.
			want["environ"], want["maps"] = got["environ"], got["maps"]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s\n%s", diff, stdout)
		}
		got = tries(t, f, run{policy: f.policy(WorkspaceWrite), how: how, nobody: nobody},
			`try ps 'ps -e -o pid,comm | grep -q bash'`,
			`try kill-parent 'kill -0 $LLTEST_PARENT'`,
			`try own-fds 'ls /proc/$$/fd'`,
			`try child-fds 'sleep 1 & ls /proc/$!/fd; kill $!'`,
		)
		want = map[string]string{"ps": "ok", "kill-parent": "denied", "own-fds": "ok", "child-fds": "ok"}
		if abi < scopeABI {
			want["kill-parent"] = got["kill-parent"]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

// Fork and Available restrict threads of their own and never the main
// one, which stands for the process: after many forks the process is as
// free as before, even when the main goroutine waits on one processor.
func TestProcessStaysFree(t *testing.T) {
	requireLandlock(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rs, err := Prepare(Policy{Mode: ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for range 50 {
		if _, err := rs.Fork(func() (int, error) { return 0, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := leaderFree(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile("/proc/self/exe"); err != nil {
		t.Fatalf("this process was restricted: %v", err)
	}
}

// A login shell starts without a denial, and go build of a small module
// in the workspace works: the toolchain is read, GOCACHE and the temp dir
// are written. The build uses this user's GOCACHE, named as a writable
// dir the way a setting would name it, so that it does not compile the
// runtime from nothing (TestWrites shows that the default cache dir,
// ~/.cache, is written). Downloading modules into GOMODCACHE
// (~/go/pkg/mod) would be refused: the module cache is read, not written,
// unless a setting names it.
func TestToolsWork(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	out, err := exec.Command(goBin, "env", "GOCACHE").Output()
	gocache := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(gocache) {
		t.Skipf("no GOCACHE: %v", err)
	}
	f := newFixture(t)
	mod := map[string]string{"go.mod": "module hello\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() { println(\"hello\") }\n"}
	for name, body := range mod {
		if err := os.WriteFile(filepath.Join(f.ws, name), []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	p := f.policy(WorkspaceWrite)
	p.WritableExtra = []string{gocache}
	r := run{policy: p, how: "fork",
		extraEnv: []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GOCACHE=" + gocache},
		argv:     []string{"bash", "-lc", `cd "$WS" && ` + goBin + ` build -o hello . && ./hello && echo login-ok`}}
	stdout, stderr, code := r.do(t, f)
	if code != 0 || !strings.Contains(stdout, "login-ok") || !strings.Contains(stderr, "hello") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "ermission denied") {
		t.Errorf("a denial on the way:\n%s", stderr)
	}
}

// A command on a terminal (hostcore's TTY mode) uses it as usual: its
// controlling terminal through /dev/tty, its size, its name; the other
// terminals in /dev/pts stay closed.
func TestTerminal(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	pty.Setsize(master, &pty.Winsize{Rows: 50, Cols: 200})
	otherMaster, other, err := pty.Open() // the user's other terminal
	if err != nil {
		t.Fatal(err)
	}
	defer otherMaster.Close()
	defer other.Close()
	p := f.policy(WorkspaceWrite)
	p.Terminal = slave.Name()
	rs, err := Prepare(p)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	argv := []string{"/bin/bash", "--noprofile", "--norc", "-c", `echo to-tty > /dev/tty && echo to-pts > $(tty) && stty size < $(tty) && ! echo x 2>/dev/null > $OTHER && echo done`}
	attr := &syscall.ProcAttr{Env: append(f.env(), "OTHER="+other.Name()), Files: []uintptr{slave.Fd(), slave.Fd(), slave.Fd()},
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}}
	pid, err := rs.Fork(func() (int, error) { return syscall.ForkExec(argv[0], argv, attr) })
	slave.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(master) // EIO once the terminal is closed
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	got := strings.ReplaceAll(string(out), "\r\n", "\n")
	if ws.ExitStatus() != 0 || got != "to-tty\nto-pts\n50 200\ndone\n" {
		t.Errorf("exit %d, output %q", ws.ExitStatus(), got)
	}
}

// hostcore's data dir can be denied whole while the session's scratch
// inside it stays writable: a root named by the policy is granted even
// inside a denied path. The audit database is then neither read nor
// forged.
func TestDataDirDenied(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	f := newFixture(t)
	data := filepath.Join(f.base, "data")
	scratch := filepath.Join(data, "scratch", "s1")
	if err := os.MkdirAll(scratch, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(scratch, 0o777)
	if err := os.WriteFile(filepath.Join(data, "hostcore.db"), []byte("AUDIT"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.policy(WorkspaceWrite)
	p.Scratch = scratch
	p.Deny = append(p.Deny, data)
	got := tries(t, f, run{policy: p, how: "fork", nobody: users(t)[len(users(t))-1], extraEnv: []string{"DATA=" + data, "S1=" + scratch}},
		`try read-db 'cat "$DATA/hostcore.db"'`,
		`try write-db 'echo x >> "$DATA/hostcore.db"'`,
		`try scratch 'echo x > "$S1/f.$$" && cat "$S1/f.$$"'`,
	)
	want := map[string]string{"read-db": "denied", "write-db": "denied", "scratch": "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
