//go:build linux || darwin

package process

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// warmPid waits for w to have a reaper ready and returns its pid.
func warmPid(t *testing.T, w *Warm) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		w.mu.Lock()
		r := w.ready
		w.mu.Unlock()
		if r != nil {
			return r.cmd.Process.Pid
		}
	}
	t.Fatal("no warm reaper became ready")
	return 0
}

// newWarm returns a Warm that is closed when the test ends.
func newWarm(t *testing.T) *Warm {
	w := NewWarm(time.Minute)
	t.Cleanup(w.Close)
	return w
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// shellParent runs `echo $PPID` through Run and returns the shell's parent:
// the reaper that ran it.
func shellParent(t *testing.T, s Spec) int {
	t.Helper()
	res := run(t, s)
	pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout.Head))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("echo $PPID: %+v", res)
	}
	return pid
}

// TestWarmReaperRunsTheNextCommand: the first Run starts a warm reaper, the
// next Run's shell is its child, with the Run's own directory and
// environment (not those of the moment the reaper started), and a new warm
// reaper takes its place.
func TestWarmReaperRunsTheNextCommand(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	s := bash(`echo $PPID`)
	s.Warm = w
	first := shellParent(t, s)
	warm := warmPid(t, w)
	if warm == first {
		t.Fatalf("the warm reaper %d is the one that ran the first command", warm)
	}
	dir := t.TempDir()
	s2 := bash(`echo $PPID; printf '%s %s' "$PWD" "$FOO" >&2; exit 4`)
	s2.Warm, s2.Dir, s2.Env = w, dir, []string{"FOO=bar baz", "PATH=/usr/bin:/bin"}
	res := run(t, s2)
	if got := strings.TrimSpace(res.Stdout.Head); got != strconv.Itoa(warm) {
		t.Errorf("second command's parent %s, want the warm reaper %d", got, warm)
	}
	if got, want := res.Stderr.Head, dir+" bar baz"; got != want || res.ExitCode != 4 {
		t.Errorf("got %q exit %d, want %q exit 4", got, res.ExitCode, want)
	}
	if next := warmPid(t, w); next == warm {
		t.Errorf("no new warm reaper after the first was used")
	}
	if alive(warm) {
		t.Errorf("the used reaper %d is still alive after its command", warm)
	}
}

// TestWarmReaperLeavesWhenIdle, and on Close: no process is left either way.
func TestWarmReaperLeavesWhenIdle(t *testing.T) {
	t.Parallel()
	w := NewWarm(200 * time.Millisecond)
	defer w.Close()
	w.fill() // as Run does; a reaper started by a Run may be gone before it returns
	pid := warmPid(t, w)
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("idle warm reaper %d still alive after its idle time", pid)
	}
	w.mu.Lock()
	ready := w.ready
	w.mu.Unlock()
	if ready != nil {
		t.Errorf("Warm still holds the reaper that left")
	}

	w2 := NewWarm(time.Minute)
	s := bash("true")
	s.Warm = w2
	run(t, s)
	pid = warmPid(t, w2)
	w2.Close()
	if alive(pid) {
		t.Errorf("warm reaper %d alive after Close", pid)
	}
	// A closed Warm starts no reaper, and Run still works without one.
	if got := run(t, s); got.ExitCode != 0 {
		t.Errorf("Run after Close: %+v", got)
	}
	w2.mu.Lock()
	defer w2.mu.Unlock()
	if w2.ready != nil || w2.filling != nil {
		t.Errorf("a closed Warm started a reaper")
	}
}

// TestWarmTakeWaitsForTheStartInFlight: a command that comes while the
// next reaper is starting (commands back to back) takes that reaper
// rather than start a second one.
func TestWarmTakeWaitsForTheStartInFlight(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	w.fill()
	r := w.take(t.Context())
	if r == nil {
		t.Fatal("take did not wait for the reaper being started")
	}
	r.discard()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready != nil || w.filling != nil {
		t.Errorf("the Warm holds another reaper after its only start was taken")
	}
}

// TestWarmReaperKilledWhileIdle: a warm reaper killed from outside is not
// used; the command runs under a fresh one.
func TestWarmReaperKilledWhileIdle(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	s := bash(`echo $PPID`)
	s.Warm = w
	shellParent(t, s)
	dead := warmPid(t, w)
	syscall.Kill(dead, syscall.SIGKILL)
	for alive(dead) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := shellParent(t, s); got == dead {
		t.Errorf("the command ran under the killed reaper")
	}
}

// TestWarmConcurrentRuns: commands started together share one Warm; each
// runs once, under a reaper of its own.
func TestWarmConcurrentRuns(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	var mu sync.Mutex
	parents := map[int]bool{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := bash(`echo $PPID; exit ` + strconv.Itoa(i))
			s.Warm = w
			res, err := Run(t.Context(), s)
			if err != nil || res.ExitCode != i {
				t.Errorf("run %d: %v %+v", i, err, res)
				return
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(res.Stdout.Head))
			mu.Lock()
			defer mu.Unlock()
			if parents[pid] {
				t.Errorf("two commands ran under reaper %d", pid)
			}
			parents[pid] = true
		})
	}
	wg.Wait()
}

// TestReaperSpecRoundTrip: the command reaches the reaper byte for byte,
// whatever the bytes (but NUL, which no argument can hold).
func TestReaperSpecRoundTrip(t *testing.T) {
	sp := reaperSpec{
		Path: "/bin/sh", Dir: "/tmp/a b\n", TTY: true, Batch: true, Grace: 1500 * time.Millisecond,
		Args: []string{"-c", "printf '\xff\xfe %s' \"$X\"\n", ""},
		Env:  []string{"X=\x80\xc3 not utf-8", "EMPTY="},
	}
	b, err := sp.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSpec(bufioReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Path != sp.Path || got.Dir != sp.Dir || got.TTY != sp.TTY || got.Batch != sp.Batch || got.Grace != sp.Grace ||
		strings.Join(got.Args, "|") != strings.Join(sp.Args, "|") || strings.Join(got.Env, "|") != strings.Join(sp.Env, "|") {
		t.Errorf("got %+v, want %+v", got, sp)
	}
	sp.Args = []string{"a\x00b"}
	if _, err := sp.encode(); err == nil {
		t.Error("an argument holding NUL was encoded")
	}
	if _, err := Run(t.Context(), bash("echo \x00")); err == nil {
		t.Error("Run accepted a command holding NUL")
	}
	for _, bad := range []string{"", "1 true false 1\n", "1 true 5 0\n", "1 true false 5 0\n/bin/sh\x00\x00a\x00", "1 false false 9223372036854775807 9223372036854775807\n", "1 false false 99999999999999999999 0\n"} {
		if _, err := readSpec(bufioReader(bad)); err == nil {
			t.Errorf("readSpec(%q) accepted it", bad)
		}
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// TestWarmNoRefillAfterAbort: an aborted command readies no reaper (hostcore
// may be shutting down; Close must not wait for a start).
func TestWarmNoRefillAfterAbort(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	ctx, cancel := context.WithCancel(t.Context())
	s := bash("echo ready; sleep " + marker())
	s.Warm, s.Grace = w, 100*time.Millisecond
	s.OnOutput = eachChunk(func(_ string, _ int, data []byte) {
		if strings.Contains(string(data), "ready") {
			cancel()
		}
	})
	res, err := Run(ctx, s)
	if err != nil || !res.Aborted {
		t.Fatalf("got %v %+v, want aborted", err, res)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready != nil || w.filling != nil {
		t.Errorf("an aborted Run readied a reaper")
	}
}

// stoppedWarm returns a Warm whose ready reaper has been stopped with
// SIGSTOP (what a hostile command can do to it), a Spec that uses it, and
// the stopped reaper's pid. Run continues a stopped reaper; with stuck set
// it does not, so that the reaper stands for one stuck in another way (the
// paths that bound a reaper that does not answer). Tests that set it must
// not be parallel.
func stoppedWarm(t *testing.T, stuck bool) (*Warm, Spec, int) {
	t.Helper()
	if stuck {
		noCont.Store(true)
		t.Cleanup(func() { noCont.Store(false) })
	}
	w := newWarm(t)
	s := bash(`true`)
	s.Warm = w
	run(t, s)
	pid := warmPid(t, w)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return w, s, pid
}

// TestWarmReaperStoppedIsContinued: a hostile command stops the idle
// reaper; the next command used to wait for its timeout and end as
// TOOL_TIMEOUT without running. Run continues the reaper and it runs.
func TestWarmReaperStoppedIsContinued(t *testing.T) {
	t.Parallel()
	_, s, stopped := stoppedWarm(t, false)
	s.Args = []string{"-c", "echo $PPID"}
	s.Timeout = 20 * time.Second
	res := run(t, s)
	if got := strings.TrimSpace(res.Stdout.Head); res.TimedOut || res.ExitCode != 0 || got != strconv.Itoa(stopped) {
		t.Fatalf("got %+v, want the command run by the continued reaper %d", res, stopped)
	}
}

// TestWarmReaperStoppedDoesNotHoldRun: a hostile command can SIGSTOP the idle
// reaper. A spec too big for the pipe's buffer then never gets read: the
// next Run gives up on that reaper after sendBound, kills it, and runs the
// command under a fresh one. Not parallel: it shortens sendBound.
func TestWarmReaperStoppedDoesNotHoldRun(t *testing.T) {
	defer func(d time.Duration) { sendBound = d }(sendBound)
	// Long enough for the fresh reaper, started on a loaded machine, to read
	// the same big spec in time.
	sendBound = 2 * time.Second
	w, s, stuck := stoppedWarm(t, true)
	s.Args = []string{"-c", "echo ok"}
	s.Env = os.Environ()
	for i := range 16 { // 1 MiB; one string may not pass 128 KiB
		s.Env = append(s.Env, fmt.Sprintf("BIG%d=%s", i, strings.Repeat("x", 64<<10)))
	}
	start := time.Now()
	res := run(t, s)
	if got := strings.TrimSpace(res.Stdout.Head); got != "ok" || res.ExitCode != 0 {
		t.Fatalf("got %+v", res)
	}
	if d := time.Since(start); d > sendBound+discardBound+5*time.Second {
		t.Errorf("Run took %v past a stopped reaper", d)
	}
	if alive(stuck) {
		t.Errorf("the stopped reaper %d is still alive", stuck)
	}

	// The same with the caller's context ending first: Run returns its
	// error, and the reaper, never having read the spec, starts nothing.
	syscall.Kill(warmPid(t, w), syscall.SIGSTOP)
	sendBound = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	ran := filepath.Join(t.TempDir(), "ran")
	s.Args = []string{"-c", "echo ran >" + ran}
	if _, err := Run(ctx, s); err == nil {
		t.Error("Run with a stuck reaper and an ended context reported no error")
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran after its context ended")
	}
}

// TestWarmReaperKilledWithTheSpecInItsPipe: the idle reaper is stopped, so
// the spec waits unread in its pipe, and then killed (a `pkill` from another
// session's command). It never took the command, so the command runs once,
// under a fresh reaper, and Run's deferred refill still works.
func TestWarmReaperKilledWithTheSpecInItsPipe(t *testing.T) {
	w, s, stuck := stoppedWarm(t, true)
	time.AfterFunc(300*time.Millisecond, func() { syscall.Kill(stuck, syscall.SIGKILL) })
	count := filepath.Join(t.TempDir(), "count")
	s.Args = []string{"-c", "echo once >>" + count + "; echo $PPID"}
	res := run(t, s)
	if got := strings.TrimSpace(res.Stdout.Head); res.ExitCode != 0 || got == strconv.Itoa(stuck) || got == "" {
		t.Fatalf("got %+v, want the command run by a reaper other than %d", res, stuck)
	}
	if b, _ := os.ReadFile(count); string(b) != "once\n" {
		t.Errorf("the command ran %q times", b)
	}
	if next := warmPid(t, w); next == stuck {
		t.Error("no new warm reaper after the fallback")
	}
}

// TestWarmReaperStuckTimesOut: a warm reaper that is stuck (stopped, and
// not continued) never reads a small spec (it fits the pipe): the
// command's timeout ends the call, the reaper is killed by the backstop,
// and nothing ran.
func TestWarmReaperStuckTimesOut(t *testing.T) {
	_, s, stuck := stoppedWarm(t, true)
	ran := filepath.Join(t.TempDir(), "ran")
	s.Args = []string{"-c", "echo ran >" + ran}
	s.Timeout, s.Grace = 300*time.Millisecond, 100*time.Millisecond
	res := run(t, s)
	if !res.TimedOut || res.Aborted {
		t.Errorf("got %+v, want a timeout", res)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran under a stopped reaper")
	}
	if alive(stuck) {
		t.Errorf("the stopped reaper %d is still alive", stuck)
	}
}

// TestRunCancelledAsItStarts: whatever moment the caller's context ends,
// an error from Run means the command never started, and a result means
// its whole tree is gone, even a shell that ignores TERM. The delays sweep
// the handing over of the spec, warm and cold.
func TestRunCancelledAsItStarts(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	for i := range 24 {
		dir := t.TempDir()
		pids := filepath.Join(dir, "pids")
		s := bash(`echo $$ >>` + pids + `; trap '' TERM; sleep 30`)
		s.Grace = 100 * time.Millisecond
		if i%2 == 0 {
			// An aborted run readies no reaper: one run to completion does.
			ready := bash("true")
			ready.Warm = w
			run(t, ready)
			warmPid(t, w)
			s.Warm = w
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Duration(i/2)*time.Millisecond, cancel)
		res, err := Run(ctx, s)
		b, _ := os.ReadFile(pids)
		if err != nil {
			if len(b) > 0 {
				t.Errorf("run %d: Run said %v, but the command started", i, err)
			}
		} else if !res.Aborted {
			t.Errorf("run %d: %+v, want aborted", i, res)
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, _ := strconv.Atoi(f); alive(pid) {
				t.Errorf("run %d: shell %d outlived Run", i, pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		cancel()
	}
}

// lateCancel is a context that is live for Run's first look and ends 300 ms
// after it was made; any later look at Err waits for that. So the moment
// Run asks whether it was cancelled after handing the spec over is the
// moment the reaper starts the command.
type lateCancel struct {
	context.Context
	calls atomic.Int32
	done  chan struct{}
}

func newLateCancel() *lateCancel {
	c := &lateCancel{Context: context.Background(), done: make(chan struct{})}
	time.AfterFunc(300*time.Millisecond, func() { close(c.done) })
	return c
}

func (c *lateCancel) Done() <-chan struct{} { return c.done }

func (c *lateCancel) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	<-c.done
	return context.Canceled
}

// TestRunCancelledAfterTheSpecWentOut: a context that ends once the spec is
// in the reaper's pipe is an abort of a started command (the ladder, the
// tree gone), not an error saying nothing started. It used to be the error,
// with the shell left to the reaper's own ladder.
func TestRunCancelledAfterTheSpecWentOut(t *testing.T) {
	t.Parallel()
	w := newWarm(t)
	ready := bash("true")
	ready.Warm = w
	run(t, ready)
	warmPid(t, w)
	pids := filepath.Join(t.TempDir(), "pids")
	s := bash(`echo $$ >>` + pids + `; trap '' TERM; sleep 30`)
	s.Warm, s.Grace = w, 100*time.Millisecond
	res, err := Run(newLateCancel(), s)
	b, _ := os.ReadFile(pids)
	if err != nil || !res.Aborted {
		t.Errorf("got %+v, %v (command started: %t), want an abort", res, err, len(b) > 0)
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, _ := strconv.Atoi(f); alive(pid) {
			t.Errorf("shell %d outlived Run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
