//go:build linux

package background

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"hostcore/sandbox/process"
	"hostcore/sandbox/process/reapertest"
)

func TestMain(m *testing.M) {
	reapertest.Prepare()
	os.Exit(m.Run())
}

// pidsFile is where a test's commands write the pid of each process they
// start (`echo $! >> FILE`), to be looked for after a kill.
func pidsFile(t *testing.T) string { return filepath.Join(t.TempDir(), "pids") }

// alive reads the pids a test's commands wrote and returns those still
// running: all of them, or none once the reaper has killed the tree and
// reaped it.
func alive(file string) (pids []int) {
	b, _ := os.ReadFile(file)
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sleeps is a command that starts n long sleeps, each noting its pid in
// file, and waits.
func sleeps(file string, n int) string {
	return strings.Repeat(fmt.Sprintf("sleep 1000 & echo $! >>%s; ", file), n) + "wait"
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type exits struct {
	mu  sync.Mutex
	got []Exit
}

func (e *exits) add(x Exit) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, x)
}

func (e *exits) all() []Exit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Exit(nil), e.got...)
}

func start(t *testing.T, r *Registry, session, command string) *Shell {
	t.Helper()
	sh, err := r.Start(Options{SessionID: session, ToolCallID: "call-" + command, Dir: t.TempDir(),
		Spec: process.Spec{Path: "/bin/bash", Args: []string{"-c", command}, Dir: t.TempDir(), HeadBytes: 8, TailBytes: 8, Grace: 200 * time.Millisecond}})
	if err != nil {
		t.Fatalf("start %q: %v", command, err)
	}
	return sh
}

func TestReadsAreIncrementalAndTheEndIsReported(t *testing.T) {
	var ex exits
	r := New(ex.add)
	defer r.Close()
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	sh := start(t, r, "s", fmt.Sprintf("echo one; echo err >&2; while [ ! -e %s ]; do sleep 0.01; done; echo two; exit 3", gate))
	waitFor(t, "the first line", func() bool {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return sh.streams[0].total >= 4 && sh.streams[1].total >= 4
	})
	first := sh.Read()
	if first.State != StateRunning || first.ExitCode != nil {
		t.Fatalf("first read: %+v", first)
	}
	if got := []string{first.Streams[0].New.Text(), first.Streams[1].New.Text()}; !cmp.Equal(got, []string{"one\n", "err\n"}) {
		t.Fatalf("first read: %q", got)
	}
	if again := sh.Read(); again.Streams[0].New.Total != 0 || again.Streams[1].New.Total != 0 {
		t.Fatalf("a second read returned the same output again: %+v", again)
	}
	os.WriteFile(gate, nil, 0o600)
	<-sh.Done()
	last := sh.Read()
	if last.State != StateExited || last.ExitCode == nil || *last.ExitCode != 3 || last.KilledBy != "" {
		t.Fatalf("last read: %+v", last)
	}
	if got := last.Streams[0].New.Text(); got != "two\n" {
		t.Fatalf("last read: %q", got)
	}
	if b, _ := os.ReadFile(last.Streams[0].File); string(b) != "one\ntwo\n" {
		t.Fatalf("the stdout file holds %q", b)
	}
	if last.Streams[0].Bytes != 8 {
		t.Fatalf("stdout bytes %d, want 8", last.Streams[0].Bytes)
	}
	waitFor(t, "the exit report", func() bool { return len(ex.all()) == 1 })
	e := ex.all()[0]
	if e.ShellID != sh.ID || e.SessionID != "s" || e.ExitCode == nil || *e.ExitCode != 3 || e.Stdout != 8 || e.Stderr != 4 {
		t.Fatalf("exit report: %+v", e)
	}
}

func TestAReadKeepsHeadAndTail(t *testing.T) {
	r := New(nil)
	defer r.Close()
	sh := start(t, r, "s", "printf 'abcdefghijklmnopqrstuvwxyz'")
	<-sh.Done()
	o := sh.Read().Streams[0]
	if o.New.Head != "abcdefgh" || o.New.Tail != "stuvwxyz" || o.New.Omitted != 10 || !o.New.Truncated || o.New.FullPath != o.File {
		t.Fatalf("read: %+v", o.New)
	}
	if !strings.Contains(o.New.Text(), "[... 10 bytes omitted ...]") {
		t.Fatalf("text: %q", o.New.Text())
	}
}

func TestAStreamFileIsBounded(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &stream{name: "stdout", file: f, path: f.Name(), max: 10}
	s.write([]byte("0123456"), 4, 4)
	s.write([]byte("789abcdef"), 4, 4)
	o := s.take()
	if b, _ := os.ReadFile(f.Name()); string(b) != "0123456789" || !o.FileCut || o.Saved != 10 || o.Bytes != 16 {
		t.Fatalf("file %q, read %+v", b, o)
	}
	if o.New.Head != "0123" || o.New.Tail != "cdef" {
		t.Fatalf("past the file's bound the output is still shown: %+v", o.New)
	}
}

func TestAHeadIsCutBetweenRunes(t *testing.T) {
	s := &stream{name: "stdout", max: 0}
	s.write([]byte("aé€x"), 3, 3) // a, é (2 bytes), € (3 bytes), x
	o := s.take().New
	if o.Head != "aé" || !strings.HasSuffix(o.Tail, "x") {
		t.Fatalf("read: %+v", o)
	}
}

// TestKillEndsTheWholeTree: a grandchild in a session of its own and a
// double fork are gone when KillShell answers.
func TestKillEndsTheWholeTree(t *testing.T) {
	var ex exits
	r := New(ex.add)
	defer r.Close()
	pids := pidsFile(t)
	sh := start(t, r, "s", fmt.Sprintf("setsid sleep 1000 & echo $! >>%[1]s; (sleep 1000 & echo $! >>%[1]s); sleep 1000 & echo $! >>%[1]s; wait", pids))
	waitFor(t, "three sleeps", func() bool { return len(alive(pids)) == 3 })
	if !sh.Kill(KilledByKillShell) {
		t.Fatal("Kill says the command had ended on its own")
	}
	if left := alive(pids); len(left) > 0 {
		t.Fatalf("survivors after Kill: %v", left)
	}
	o := sh.State()
	if o.State != StateExited || o.KilledBy != KilledByKillShell || o.ExitCode != nil || o.Signal == "" {
		t.Fatalf("state after Kill: %+v", o)
	}
	waitFor(t, "the exit report", func() bool { return len(ex.all()) == 1 })
	if sh.Kill(KilledByKillShell) {
		t.Fatal("a second Kill says it killed")
	}
}

func TestTheNinthIsRefusedAndEndSessionKillsAll(t *testing.T) {
	r := New(nil)
	defer r.Close()
	pids, otherPids := pidsFile(t), pidsFile(t)
	var shells []*Shell
	for range MaxRunning {
		shells = append(shells, start(t, r, "s", sleeps(pids, 1)))
	}
	_, err := r.Start(Options{SessionID: "s", Dir: t.TempDir(), Spec: process.Spec{Path: "/bin/bash", Args: []string{"-c", "true"}}})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("the ninth: %v, want ErrLimit", err)
	}
	// Another session has its own count.
	other := start(t, r, "other", sleeps(otherPids, 1))
	waitFor(t, "nine sleeps", func() bool {
		return len(alive(pids)) == MaxRunning && len(alive(otherPids)) == 1
	})
	r.EndSession("s")
	for _, sh := range shells {
		if o := sh.State(); o.State != StateExited || o.KilledBy != KilledBySession {
			t.Fatalf("after EndSession: %+v", o)
		}
	}
	if left := alive(pids); len(left) > 0 {
		t.Fatalf("EndSession left %v running", left)
	}
	if left := alive(otherPids); len(left) != 1 {
		t.Fatal("EndSession killed another session's command")
	}
	if _, err := r.Get("s", shells[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a shell of an ended session: %v", err)
	}
	if _, err := r.Get("s", other.ID); !errors.Is(err, ErrNotFound) {
		t.Fatal("another session's shell is found in this one")
	}
	r.Close()
	if left := alive(otherPids); len(left) > 0 {
		t.Fatalf("survivors after Close: %v", left)
	}
	if _, err := r.Start(Options{SessionID: "s", Dir: t.TempDir(), Spec: process.Spec{Path: "/bin/bash", Args: []string{"-c", "true"}}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("a start after Close: %v", err)
	}
}

func TestEndedShellsAreKeptBounded(t *testing.T) {
	r := New(nil)
	defer r.Close()
	var last *Shell
	for range maxKept + 3 {
		last = start(t, r, "s", "true")
		<-last.Done()
	}
	r.mu.Lock()
	n := len(r.sessions["s"])
	r.mu.Unlock()
	if n != maxKept {
		t.Fatalf("%d shells kept, want %d", n, maxKept)
	}
	if _, err := r.Get("s", last.ID); err != nil {
		t.Fatalf("the newest: %v", err)
	}
}

// TestATerminalIsOneStream: under a terminal stdout and stderr are one
// merged stream, with one file.
func TestATerminalIsOneStream(t *testing.T) {
	r := New(nil)
	defer r.Close()
	sh, err := r.Start(Options{SessionID: "s", Dir: t.TempDir(),
		Spec: process.Spec{Path: "/bin/bash", Args: []string{"-c", "echo out; echo err >&2"}, Dir: t.TempDir(), TTY: true}})
	if err != nil {
		t.Fatal(err)
	}
	<-sh.Done()
	o := sh.Read()
	if len(o.Streams) != 1 || len(sh.Files()) != 1 || o.Streams[0].Name != "stdout" {
		t.Fatalf("streams under a terminal: %+v", o.Streams)
	}
	if got := o.Streams[0].New.Text(); got != "out\r\nerr\r\n" {
		t.Fatalf("merged output %q", got)
	}
}
