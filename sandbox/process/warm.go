//go:build linux || darwin

package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"

	"hostcore/sandbox/landlock"
)

// reaper is a started reaper process waiting for its command on the control
// pipe (see runReaper), with hostcore's ends of its pipes.
type reaper struct {
	cmd      *exec.Cmd
	ctl      *os.File   // the spec goes in (a unix socket: a ruleset goes with it); closing it stops the reaper
	status   *os.File   // the reaper's report comes out
	readers  []*os.File // the command's output
	names    []string   // stream name per reader
	terminal string     // with tty, the pseudo-terminal's name (/dev/pts/N)

	stopOnce sync.Once
}

// startReaper starts a reaper whose shell will have pipes for stdout and
// stderr and /dev/null for stdin or, with tty, one pseudo-terminal for all
// three. hostcore keeps only its own ends: EOF on an output pipe means every
// writer in the tree is gone.
func startReaper(tty bool) (r *reaper, err error) {
	var child []*os.File // the ends that go to the reaper, closed here once it has them
	r = &reaper{}
	defer func() {
		for _, f := range child {
			f.Close()
		}
		if err != nil {
			r.close()
		}
	}()
	pipe := func() (*os.File, *os.File, error) {
		pr, pw, err := os.Pipe()
		if err == nil {
			child = append(child, pr, pw) // the caller moves its end out
		}
		return pr, pw, err
	}
	// keep moves f from the child's ends to hostcore's.
	keep := func(f *os.File) *os.File {
		for i, c := range child {
			if c == f {
				child = append(child[:i], child[i+1:]...)
				break
			}
		}
		return f
	}

	// The control socket carries the sandbox's ruleset and the spec, and
	// then no data: its EOF tells the reaper to kill the tree. hostcore
	// closes its end on abort and timeout, and the kernel closes it when
	// hostcore dies, however it dies. A unix socket rather than a pipe,
	// so that the ruleset's descriptor can go with the spec (see give).
	ctlHost, ctlReaper, err := controlPair()
	if err != nil {
		return r, fmt.Errorf("creating the control socket: %w", err)
	}
	child = append(child, ctlReaper)
	r.ctl = ctlHost
	// The status pipe carries the reaper's report: the shell's pid, then how
	// it ended (see readStatus).
	stR, stW, err := pipe()
	if err != nil {
		return r, fmt.Errorf("creating status pipe: %w", err)
	}
	r.status = keep(stR)

	cmd := exec.Command(selfExe(), reaperArg)
	cmd.Args[0] = "hostcore-reaper"
	if tty {
		master, slave, err := pty.Open()
		if err != nil {
			return r, fmt.Errorf("opening pty: %w", err)
		}
		child = append(child, slave)
		r.readers, r.names, r.terminal = []*os.File{master}, []string{"stdout"}, slave.Name()
		// A wide terminal so that tools which wrap or truncate to the width
		// do not mangle output meant for the model.
		_ = pty.Setsize(master, &pty.Winsize{Rows: 50, Cols: 200})
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	} else {
		outR, outW, err := pipe()
		if err != nil {
			return r, fmt.Errorf("creating stdout pipe: %w", err)
		}
		r.readers = append(r.readers, keep(outR))
		errR, errW, err := pipe()
		if err != nil {
			return r, fmt.Errorf("creating stderr pipe: %w", err)
		}
		r.readers = append(r.readers, keep(errR))
		r.names = []string{"stdout", "stderr"}
		cmd.Stdout, cmd.Stderr = outW, errW // stdin: /dev/null
	}
	cmd.ExtraFiles = []*os.File{ctlReaper, stW} // fds 3 and 4 in the reaper
	// Its own process group keeps terminal signals (^C in a terminal running
	// hostcore) from reaching the reaper around hostcore's back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := startTracked(cmd); err != nil {
		return r, fmt.Errorf("starting the reaper: %w", err)
	}
	r.cmd = cmd
	return r, nil
}

// send writes the spec to the reaper. The write gives up after sendBound,
// or when ctx ends, so a spec bigger than the pipe's buffer cannot hold Run
// on a reaper that does not read it (one stopped with SIGSTOP by an earlier
// command, or a start stuck on an overloaded machine). A spec that fits
// the buffer is written at once; a reaper that then never takes it holds
// Run until the command's timeout (see Run's watcher).
//
// Once the write has completed the command may start at any moment, so
// send then reports success even if ctx has ended: Run must go on and stop
// the command the usual way (the whole ladder, then the kill by pid), not
// return as if nothing had started.
//
// The ruleset rs (nil: the command runs unconfined) goes first, its
// descriptor in a message of one byte: the reaper receives it before it
// reads the spec, which says how to enforce it.
func (r *reaper) send(ctx context.Context, rs *landlock.Ruleset, spec []byte) error {
	if err := r.ctl.SetWriteDeadline(time.Now().Add(sendBound)); err != nil {
		return err
	}
	unblock := context.AfterFunc(ctx, func() { r.ctl.SetWriteDeadline(time.Now()) })
	defer unblock()
	if err := sendRuleset(r.ctl, rs); err != nil {
		return err
	}
	_, err := r.ctl.Write(spec)
	return err
}

// sendBound is how long a reaper gets to take its spec. A spec fits the
// pipe's buffer unless the environment is huge, so the write normally
// returns at once, whether or not the reaper has started.
var sendBound = 10 * time.Second

// stop closes the control socket: a reaper waiting for its command exits, one
// running a command kills its tree and exits.
func (r *reaper) stop() {
	r.stopOnce.Do(func() {
		if r.ctl != nil {
			r.ctl.Close()
		}
	})
}

// noCont is set by tests that need a reaper to stay stuck.
var noCont atomic.Bool

// cont sends SIGCONT to the reaper: a stopped reaper would hold its
// command's end (see Run's watcher). Harmless to a running one.
func (r *reaper) cont() {
	if r.cmd != nil && r.cmd.Process != nil && !noCont.Load() {
		r.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// close releases hostcore's ends of the pipes.
func (r *reaper) close() {
	r.stop()
	if r.status != nil {
		r.status.Close()
	}
	for _, f := range r.readers {
		f.Close()
	}
}

// discard lets a reaper that has no command (or could not be given one) go,
// and waits for it.
func (r *reaper) discard() {
	r.stop()
	if r.cmd != nil {
		kill := time.AfterFunc(discardBound, func() { r.cmd.Process.Kill() })
		waitTracked(r.cmd)
		kill.Stop()
	}
	r.close()
}

// discardBound is how long a reaper without a command gets to exit after its
// control socket closed; it has nothing to clean up, so this is generous.
const discardBound = 2 * time.Second

// Warm keeps one reaper started ahead of need, so that a command does not
// wait for one to start: starting hostcore's binary again costs about 30 ms
// on a typical machine, most of the run time of a short command. Each Run
// that uses a Warm starts the next reaper once its command is done, while
// the model reads the result. A warm reaper runs nothing until it is given a command; it leaves when it
// has not been used for the idle time, when Close is called, or when
// hostcore dies (its control socket closes). The zero Warm is not usable; use
// NewWarm.
type Warm struct {
	idle time.Duration
	// rulesets keeps the sandbox ruleset of the last policy, while the
	// disk it was planned from stays as it was (landlock.Cache).
	rulesets landlock.Cache

	mu      sync.Mutex
	ready   *reaper
	expire  *time.Timer   // drops ready after idle
	filling chan struct{} // closed when the start in flight is over; nil when none is
	closed  bool
	wg      sync.WaitGroup // starts and drops in flight
}

// NewWarm returns a Warm whose reaper leaves after idle without use. The
// first reaper is started by the first Run that uses it.
func NewWarm(idle time.Duration) *Warm {
	return &Warm{idle: idle}
}

// take returns the warm reaper, or nil if none is ready. A reaper still
// starting (commands back to back: the last one's fill is in flight) is
// waited for, up to startWait or until ctx ends: it is further along than
// a cold start begun now, which would also take the CPU it needs.
func (w *Warm) take(ctx context.Context) *reaper {
	w.mu.Lock()
	filling := w.filling
	if w.ready != nil || filling == nil {
		defer w.mu.Unlock()
		return w.takeLocked()
	}
	w.mu.Unlock()
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-filling:
	case <-t.C:
	case <-ctx.Done():
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.takeLocked()
}

// startWait bounds take's wait for a reaper that is starting: a start
// takes tens of milliseconds, far more only on a machine so loaded that a
// cold start would be as slow.
const startWait = time.Second

// takeLocked removes the ready reaper, if any, and cancels its expiry; the
// caller owns it. If the expiry is already running, drop finds the reaper
// gone and only does its Done.
func (w *Warm) takeLocked() *reaper {
	r := w.ready
	w.ready = nil
	if r != nil && w.expire.Stop() {
		w.wg.Done() // the expiry will not run
	}
	return r
}

// fill starts the next warm reaper in the background unless one is ready
// or starting. Run calls it once its command is done: a reaper starting
// alongside the command would take a core from it (a start costs the whole
// 30 ms in CPU).
func (w *Warm) fill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.filling != nil || w.ready != nil {
		return
	}
	filling := make(chan struct{})
	w.filling = filling
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		r, err := startReaper(false)
		w.mu.Lock()
		w.filling = nil
		close(filling)
		if err == nil && !w.closed {
			ready := r
			w.ready, r = ready, nil
			w.wg.Add(1)
			w.expire = time.AfterFunc(w.idle, func() { w.drop(ready) })
		}
		w.mu.Unlock()
		if r != nil {
			r.discard()
		}
	}()
}

// refresh makes p's ruleset again in the background if the disk changed
// since it was kept (landlock.Cache), so that the next command of the
// same policy finds it ready, as it finds its reaper: a command that
// changed a directory the plan read (a file made in a listed home or
// /tmp) would otherwise pay the whole ruleset. It is not waited for by
// Close: a file system that does not answer would hold hostcore's exit.
func (w *Warm) refresh(p landlock.Policy) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return
	}
	go func() {
		if rs, err := w.rulesets.Prepare(p); err == nil {
			rs.Close()
		}
	}()
}

// drop lets r go if it is still the idle warm reaper.
func (w *Warm) drop(r *reaper) {
	defer w.wg.Done()
	w.mu.Lock()
	mine := w.ready == r
	if mine {
		w.ready = nil
	}
	w.mu.Unlock()
	if mine {
		r.discard()
	}
}

// Close lets the warm reaper go, waits until it has, and starts no other.
func (w *Warm) Close() {
	w.mu.Lock()
	w.closed = true
	r := w.takeLocked()
	w.mu.Unlock()
	if r != nil {
		r.discard()
	}
	w.wg.Wait()
	w.rulesets.Close()
}
