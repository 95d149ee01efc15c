//go:build linux || darwin

package process

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hostcore/sandbox/landlock"
)

// drainDelay bounds how long Run waits for the output pipes to reach EOF
// after the reaper is gone. The reaper kills every descendant before it
// exits, so EOF normally comes at once; the bound covers a writer that got
// out of the tree (the pipe passed over a socket to a daemon, a process stuck
// in uninterruptible sleep).
const drainDelay = 2 * time.Second

// reaperGoneBound is how long Run waits for a reaper it SIGKILLed to be
// gone before it kills the tree itself and answers (see errReaperHeld).
const reaperGoneBound = 2 * time.Second

// errReaperHeld: the reaper did not end after SIGKILL.
var errReaperHeld = errors.New("the reaper did not end after SIGKILL (held by a tracer)")

// contEvery is how often Run continues the reaper (see its watcher).
const contEvery = 200 * time.Millisecond

// runMarkVar names the environment variable that marks a run's processes.
const runMarkVar = "HOSTCORE_RUN"

// newRunMark returns a value no other run has.
func newRunMark() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run starts the command and waits for it. Cancelling ctx aborts it; Timeout
// expiring times it out. Either way the complete process tree is terminated
// (TERM, Grace, KILL) before Run returns. When the shell exits on its own,
// descendants still running are terminated the same way. The returned error
// is non-nil only if the command could not be started.
func Run(ctx context.Context, s Spec) (Result, error) {
	if !reaperCapable.Load() {
		return Result{}, ErrNoReaper
	}
	start := time.Now()
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.HeadBytes <= 0 {
		s.HeadBytes = DefaultHeadBytes
	}
	if s.TailBytes <= 0 {
		s.TailBytes = DefaultTailBytes
	}
	path := s.Path
	if path == "" {
		return Result{}, errors.New("no shell path")
	}
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return Result{}, fmt.Errorf("finding %s: %w", path, err)
		}
		path = p
	}

	if err := ctx.Err(); err != nil {
		return Result{}, err // nothing started
	}
	spec := reaperSpec{Path: path, Args: s.Args, Env: s.Env, Dir: s.Dir, TTY: s.TTY, Batch: s.Batch, Grace: s.Grace}
	if spec.Env == nil {
		spec.Env = os.Environ()
	}
	if s.Sandbox != nil {
		spec.Env = s.Sandbox.CommandEnv(spec.Env) // its TMPDIR
	}
	// Every process of the command inherits a mark of this run, found in
	// /proc should the reaper be killed before it could clean up.
	markValue := newRunMark()
	mark := runMarkVar + "=" + markValue
	// A mark inherited (hostcore run from a command of another hostcore,
	// or given by the client) would name another run's cgroup.
	env := make([]string, 0, len(spec.Env)+1)
	for _, e := range spec.Env {
		if !strings.HasPrefix(e, runMarkVar+"=") {
			env = append(env, e)
		}
	}
	spec.Env = append(env, mark)
	if _, err := spec.encode(); err != nil {
		return Result{}, fmt.Errorf("starting %s: %w", path, err) // before a reaper is started for nothing
	}
	var r *reaper
	if w := s.Warm; w != nil && !s.TTY {
		r = w.take(ctx)
		defer func() {
			// Not for an aborted command: hostcore may be shutting down,
			// or the session going.
			if ctx.Err() == nil {
				w.fill()
				if s.Sandbox != nil {
					w.refresh(*s.Sandbox)
				}
			}
		}()
	}
	warm := r != nil
	var err error
	if !warm {
		// A cold reaper starts while the ruleset is made.
		if r, err = startReaper(s.TTY); err != nil {
			return Result{}, fmt.Errorf("starting %s: %w", path, err)
		}
	}
	rs, err := s.ruleset(ctx, r.terminal)
	if err != nil {
		r.discard()
		switch {
		case ctx.Err() != nil:
			return Result{}, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Making the ruleset outlasted the command's timeout (a
			// file system that does not answer): nothing ran.
			return Result{Duration: time.Since(start), TimedOut: true, NotStarted: true, ExitCode: -1}, nil
		}
		return Result{}, fmt.Errorf("starting %s: sandbox: %w", path, err)
	}
	if rs != nil {
		defer rs.Close() // the reaper has its own descriptor once sent
		_, flags := rs.Handoff()
		spec.Sandbox = strconv.FormatUint(uint64(flags), 10)
	}
	line, err := spec.encode()
	if err != nil {
		r.discard()
		return Result{}, fmt.Errorf("starting %s: %w", path, err)
	}
	if warm {
		r.cont() // it may have been stopped while it waited
		if err := r.send(ctx, rs, line); err != nil {
			r.discard()
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			// The warm reaper is gone (killed from outside while it
			// waited) or stuck: start one as if there had been none.
			warm = false
			if r, err = startReaper(s.TTY); err != nil {
				return Result{}, fmt.Errorf("starting %s: %w", path, err)
			}
		}
	}
	if !warm {
		if err := r.send(ctx, rs, line); err != nil {
			r.discard()
			return Result{}, fmt.Errorf("starting %s: reaper: %w", path, err)
		}
	}
	defer r.close()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, s.Timeout)
		defer cancel()
	}
	// Abort and timeout close the control socket: the reaper runs the ladder
	// and exits. Backstop: a reaper that has not finished the ladder by
	// then is killed, and Run goes on to kill the shell's session itself.
	var stopped atomic.Bool
	exited, watched, killed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		// The command can stop its own reaper (kill -STOP $PPID), which
		// would then neither see the shell end nor kill what is left:
		// the call would wait for its timeout and leave escapees behind.
		// The reaper is continued while it works.
		tick := time.NewTicker(contEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				r.cont()
				continue
			case <-runCtx.Done():
				stopped.Store(true)
				r.stop()
				r.cont()
				backstop := time.After(s.Grace + killBound + time.Second)
				for {
					select {
					case <-exited:
					case <-tick.C:
						r.cont()
						continue
					case <-backstop:
						r.cmd.Process.Kill()
						close(killed)
					}
					break
				}
			case <-exited:
			}
			return
		}
	}()

	readers, names := r.readers, r.names
	var wg sync.WaitGroup
	captures := make([]*capture, len(readers))
	for i, r := range readers {
		captures[i] = newCapture(names[i], s.HeadBytes, s.TailBytes, s.SpillDir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			pump(r, captures[i], s.OnOutput)
		}()
	}

	waited := make(chan error, 1)
	go func() { waited <- waitTracked(r.cmd) }()
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-killed:
		select {
		case waitErr = <-waited:
		case <-time.After(reaperGoneBound):
			// SIGKILLed and still not gone: a tracer holds its threads
			// (a command can ptrace its reaper when the kernel lets it).
			// The fallback below kills the tree from here, the tracer
			// with it, and the call is answered; the wait ends in the
			// background once the tracer has let go.
			waitErr = errReaperHeld
		}
	}
	close(exited)
	<-watched
	r.stop()
	st := readStatus(r.status)

	if !st.done && st.taken {
		// The reaper died without reporting (killed from outside, even by
		// the command, or by the watcher's backstop): kill what we know
		// of the tree, the shell's session, and every process that still
		// carries this run's mark (those that left the session were
		// handed to init when the reaper died).
		if st.pid > 0 {
			syscall.Kill(-st.pid, syscall.SIGKILL)
		}
		killMarked(mark)
	}
	// The command's cgroup, if the reaper could not remove it (it died,
	// or gave up on a process it could not kill): a stat when it is gone.
	killCgroupOf(markValue)
	// Orphans of a reaper that died, those that rewrote their environment
	// too, are hostcore's children when it is their subreaper
	// (BecomeHostSubreaper): all of them are escapees, of this run or
	// another, and go now. Reading hostcore's children costs a few small
	// reads of /proc.
	SweepAdopted()
	deadline := time.Now().Add(drainDelay)
	for _, r := range readers {
		r.SetReadDeadline(deadline)
	}
	wg.Wait()

	if warm && !st.taken && !stopped.Load() && ctx.Err() == nil {
		// The warm reaper died before it took the command (killed from
		// outside while it waited, the spec already in its pipe): it
		// started nothing, so the command runs under a fresh reaper, in
		// the time it has left.
		r.close()
		s.Warm = nil
		if s.Timeout > 0 {
			if s.Timeout -= time.Since(start); s.Timeout <= 0 {
				return Result{Duration: time.Since(start), TimedOut: true, ExitCode: -1}, nil // nothing ran
			}
		}
		res, err := Run(ctx, s)
		res.Duration = time.Since(start)
		return res, err
	}

	res := Result{Duration: time.Since(start)}
	res.Stdout = captures[0].finish()
	if len(captures) > 1 {
		res.Stderr = captures[1].finish()
	}
	if stopped.Load() {
		res.Aborted = ctx.Err() != nil
		res.TimedOut = !res.Aborted
	}
	switch {
	case st.startErr != "":
		return res, fmt.Errorf("starting %s: %s", path, st.startErr)
	case st.done && st.signal != 0:
		res.ExitCode, res.Signal = -1, signalName(st.signal)
	case st.done:
		res.ExitCode = st.exit
	case !st.taken && stopped.Load():
		// Stopped before the reaper took the command (a cancel that came
		// at once): nothing ran, nothing was killed.
		res.ExitCode, res.NotStarted = -1, true
	default:
		// No report: describe the reaper's own end, which took the command with it.
		res.ExitCode, res.Signal = -1, "SIGKILL"
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				res.Signal = signalName(ws.Signal())
			}
		}
	}
	return res, nil
}

// ruleset is the command's Landlock ruleset, nil when it runs
// unconfined. It is made here rather than in the reaper, so that Warm's
// cache keeps it from one command to the next (a policy with a terminal
// is one command's own and is not kept). terminal is the command's
// pseudo-terminal, "" without one.
//
// Making it reads the disk, and a file system that does not answer (a
// dead network mount above a root) would hold the call for ever: the
// work runs apart, and the call stops waiting for it when ctx ends or
// the command's timeout passes, as it would for a reaper stuck the same
// way. What it makes after that is let go.
func (s Spec) ruleset(ctx context.Context, terminal string) (*landlock.Ruleset, error) {
	if s.Sandbox == nil {
		return nil, nil
	}
	p := *s.Sandbox
	prepare := landlock.Prepare
	switch {
	case terminal != "":
		p.Terminal = terminal
	case s.Warm != nil:
		prepare = s.Warm.rulesets.Prepare
	}
	type made struct {
		rs  *landlock.Ruleset
		err error
	}
	done := make(chan made, 1)
	hold := prepareHeld.Load()
	go func() {
		if hold != nil {
			<-*hold
		}
		rs, err := prepare(p)
		done <- made{rs, err}
	}()
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	select {
	case m := <-done:
		return m.rs, m.err
	case <-ctx.Done():
		go func() {
			if m := <-done; m.rs != nil {
				m.rs.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// prepareHeld, set by tests, holds the making of rulesets until the
// channel it points to is closed: a file system that does not answer.
var prepareHeld atomic.Pointer[chan struct{}]

// pump reads one output stream to EOF (or to the drain deadline), feeding the
// bounded capture and, when set, the output emitter.
func pump(r *os.File, c *capture, onOutput func(string, int, [][]byte)) {
	var ch chan *[]byte
	done := make(chan struct{})
	if onOutput != nil {
		ch = make(chan *[]byte, 4)
		go func() {
			defer close(done)
			emit(c.name, ch, onOutput)
		}()
	} else {
		close(done)
	}
	var buf []byte
	if ch == nil {
		buf = make([]byte, readBuf)
	}
	grown := false
	draining, left := false, 0
	for {
		// With an emitter, read straight into a pooled chunk and hand it
		// over: emit returns it once appended, so a flood reuses a few
		// buffers and its bytes are copied by nobody here.
		var p *[]byte
		if ch != nil {
			size := readBuf
			if grown {
				size = floodRead
			}
			p = chunkPool.Get().(*[]byte)
			if cap(*p) < size {
				*p = make([]byte, size)
			}
			buf = (*p)[:size]
		}
		n, err := r.Read(buf)
		if n > 0 {
			c.write(buf[:n])
		}
		if n == readBuf && !grown {
			// The pipe was full: a flood. Only then is it grown, so that
			// the many commands that print little do not spend the user's
			// pipe-buffer quota (past it, every new pipe of the user is
			// cut to a page or two).
			GrowPipe(r)
			grown = true
		}
		if p != nil {
			if n > 0 {
				*p = buf[:n]
				ch <- p
			} else {
				chunkPool.Put(p)
			}
		}
		if err != nil {
			// io.EOF for a pipe; EIO from a pty master once every slave is
			// closed; a deadline error if a writer escaped the tree.
			if !errors.Is(err, os.ErrDeadlineExceeded) || draining {
				break
			}
			// The drain deadline may have passed while this goroutine
			// waited on a slow client (the emitter holds it back): what
			// is in the pipe now was written, most of it before the
			// command ended, and is read, however long the client takes;
			// an escaped writer adds at most a pipeful.
			if draining, left = true, pending(r); left <= 0 {
				break
			}
		}
		if draining {
			if left -= n; left <= 0 {
				break
			}
			// Each read gets its own short bound: the wait for the client
			// between two reads is no writer's fault.
			r.SetReadDeadline(time.Now().Add(drainRead))
		}
	}
	if ch != nil {
		close(ch)
	}
	<-done
}

// drainRead bounds one read of what was left in a pipe at the drain
// deadline (see pump): the bytes are there, so a read returns at once.
const drainRead = 100 * time.Millisecond

// status is the reaper's report.
type status struct {
	taken    bool // the reaper read the spec and was going to start the shell
	pid      int
	done     bool
	exit     int
	signal   syscall.Signal
	startErr string
}

// readStatus reads the reaper's report once the reaper has exited. The
// status pipe's write end lives only in the reaper (it is close-on-exec
// there), so EOF is immediate; the deadline is a backstop.
func readStatus(r *os.File) status {
	r.SetReadDeadline(time.Now().Add(time.Second))
	var st status
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	for sc.Scan() {
		kind, arg, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.Atoi(arg)
		switch kind {
		case "taken":
			st.taken = true
		case "pid":
			st.pid = n
		case "exit":
			st.done, st.exit = true, n
		case "signal":
			st.done, st.signal = true, syscall.Signal(n)
		case "error":
			st.startErr = arg
		}
	}
	return st
}

// signalName gives the conventional name, "SIGKILL", or "SIG<n>" for a
// number without one.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// selfExe is the binary to re-execute as the reaper. On Linux /proc/self/exe
// still names hostcore's own image after the file on disk was replaced.
func selfExe() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe"
	}
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}
