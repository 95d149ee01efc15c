//go:build linux || darwin

package process

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"hostcore/sandbox/landlock"
)

// reaperArg is os.Args[1] when the binary runs as a reaper.
const reaperArg = "__hostcore_reaper"

// killBound is how long the KILL phase of the ladder keeps trying. KILL
// cannot be caught, so only a process in uninterruptible sleep (a hung NFS
// mount) outlasts it; the reaper then reports and leaves it to init rather
// than hang hostcore.
const killBound = 5 * time.Second

// pollEvery is how often the ladder looks for processes still alive.
const pollEvery = 10 * time.Millisecond

// settleDelay is how long the reaper waits, once the shell has exited, to
// learn that no child is left before it scans for leftovers.
const settleDelay = 2 * time.Millisecond

// MaybeRunReaper must be the first thing main calls (and TestMain, in tests
// of packages that use Run). When the process was started as a reaper by Run
// it does the reaper's work and exits; otherwise it returns at once. hostcore
// itself also becomes a subreaper (BecomeHostSubreaper), for the orphans of
// a reaper that died; a program that does not call it keeps init as theirs.
func MaybeRunReaper() {
	if len(os.Args) > 1 && os.Args[1] == reaperArg {
		os.Exit(runReaper())
	}
	reaperCapable.Store(true)
}

// reaperCapable records that this binary dispatches the reaper argument:
// only then may Run re-execute it as a reaper. Without the check, a binary
// that forgot MaybeRunReaper (a test binary, say) would start itself over
// for every command, and the copy would run commands of its own: a fork
// bomb.
var reaperCapable atomic.Bool

// ErrNoReaper is returned by Run when MaybeRunReaper was not called at
// start-up of this process.
var ErrNoReaper = errors.New("process: MaybeRunReaper was not called first thing in main (or TestMain); refusing to re-execute this binary as a reaper")

// reaperSpec is the command a reaper runs, sent on its control socket: a
// reaper is started before its command is known (see Warm), so the command
// cannot be in its arguments. The encoding is a header line and then
// NUL-terminated strings, which carries any bytes a path, an argument or an
// environment entry may hold (none may hold NUL) exactly.
type reaperSpec struct {
	Path  string
	Args  []string // after Path
	Env   []string
	Dir   string
	TTY   bool // fd 0 is a terminal, to become the controlling one
	Batch bool // run the command as a batch task (see forkBatch)
	Grace time.Duration
	// Sandbox is the flags (decimal) to enforce the Landlock ruleset
	// that came before the spec (see sendRuleset) with; "" runs the
	// command unconfined.
	Sandbox string
}

// maxSpec bounds the spec a reaper reads: the environment is the big part,
// and the kernel takes a few MiB of arguments and environment at most.
const maxSpec = 16 << 20

func (sp reaperSpec) encode() ([]byte, error) {
	b := fmt.Appendf(nil, "%d %t %t %d %d\n", int64(sp.Grace), sp.TTY, sp.Batch, len(sp.Args), len(sp.Env))
	fields := append(append([]string{sp.Path, sp.Dir, sp.Sandbox}, sp.Args...), sp.Env...)
	for _, f := range fields {
		if strings.IndexByte(f, 0) >= 0 {
			return nil, fmt.Errorf("%q holds a NUL byte", f)
		}
		b = append(append(b, f...), 0)
	}
	if len(b) > maxSpec {
		return nil, fmt.Errorf("command and environment exceed %d bytes", maxSpec)
	}
	return b, nil
}

func readSpec(r *bufio.Reader) (reaperSpec, error) {
	var sp reaperSpec
	header, err := r.ReadString('\n')
	if err != nil {
		return sp, err
	}
	var grace int64
	var nArgs, nEnv int
	if _, err := fmt.Sscanf(header, "%d %t %t %d %d\n", &grace, &sp.TTY, &sp.Batch, &nArgs, &nEnv); err != nil || nArgs < 0 || nEnv < 0 || nArgs > maxSpec || nEnv > maxSpec {
		return sp, fmt.Errorf("bad spec header %q", header)
	}
	sp.Grace = time.Duration(grace)
	fields := make([]string, 0, 3+min(nArgs+nEnv, 1<<16))
	for range 3 + nArgs + nEnv {
		f, err := r.ReadString(0)
		if err != nil {
			return sp, err
		}
		fields = append(fields, f[:len(f)-1])
	}
	sp.Path, sp.Dir, sp.Sandbox = fields[0], fields[1], fields[2]
	sp.Args, sp.Env = fields[3:3+nArgs], fields[3+nArgs:]
	return sp, nil
}

// runReaper waits for its command on the control socket, starts the shell in
// its own session and waits for it; then, or as soon as it is told to stop,
// it terminates every descendant, reports how the shell ended on the status
// pipe and returns the exit code for itself.
//
// fd 3 is the control socket (the ruleset message, the spec, then EOF or
// any byte: stop), fd 4 the status pipe; fds 0-2 are the shell's stdio.
func runReaper() int {
	// fds 3 and 4 arrived without close-on-exec, as they had to survive our
	// own exec. The shell must not inherit them: the status pipe has to reach
	// EOF when the reaper exits, and nothing but hostcore may stop us.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	// The command must not freeze its reaper with ptrace: a frozen reaper
	// neither reports nor kills. (The shell it starts is dumpable again:
	// execve resets the flag.)
	refuseTracers()
	// One byte over the bound, so that a spec of exactly maxSpec bytes is
	// not followed by a false EOF (stop) from the limit.
	control := bufio.NewReader(io.LimitReader(os.NewFile(3, "control"), maxSpec+1))
	report := os.NewFile(4, "status")
	rulesetFD, err := receiveRuleset(3)
	if err == nil {
		var spec reaperSpec
		if spec, err = readSpec(control); err == nil {
			return runSpec(spec, rulesetFD, control, report)
		}
		if rulesetFD >= 0 {
			syscall.Close(rulesetFD)
		}
	}
	if err == io.EOF {
		return 0 // hostcore let us go (or died) before there was a command
	}
	fmt.Fprintf(report, "error reading the command: %v\n", err)
	return 2
}

// runSpec is runReaper's work once it has its command: the spec, the
// ruleset's descriptor (-1: none) and the rest of the control socket.
func runSpec(spec reaperSpec, rulesetFD int, control *bufio.Reader, report *os.File) int {
	argv := append([]string{spec.Path}, spec.Args...)
	// hostcore may have let the command go while the spec was on its way
	// (the call was cancelled): then nothing starts.
	if stopped(3) {
		return 0
	}
	// From here on the shell may be started: hostcore must not run the
	// command elsewhere if this reaper dies (see Run's cold fallback).
	fmt.Fprintf(report, "taken\n")

	// Stop on EOF (or any byte) on the control socket, which covers hostcore's
	// abort, timeout and death alike, and on the usual termination signals.
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopNow := func() { stopOnce.Do(func() { close(stop) }) }
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() { <-sigs; stopNow() }()
	go func() { control.ReadByte(); stopNow() }()

	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(report, "error becoming subreaper: %v\n", err)
		return 2
	}
	// A session of its own: no controlling terminal unless TTY (then the
	// pty on fd 0), and a process group apart from ours; and, where one
	// can be had, a cgroup of its own (see commandCgroup).
	sys := &syscall.SysProcAttr{Setsid: true, Setctty: spec.TTY, Ctty: 0}
	attr := &syscall.ProcAttr{Dir: spec.Dir, Env: spec.Env, Files: []uintptr{0, 1, 2}, Sys: sys}
	cg := newCommandCgroup(runMarkOf(spec.Env))
	cg.attach(sys)
	forkExec := func() (int, error) { return syscall.ForkExec(spec.Path, argv, attr) }
	if spec.Batch {
		fork := forkExec
		forkExec = func() (int, error) { return forkBatch(fork) } // see forkBatch
	}
	if spec.Sandbox != "" || rulesetFD >= 0 {
		// The shell is forked from a thread confined by the ruleset
		// hostcore prepared: it and everything it starts inherit the
		// confinement.
		flags, err := strconv.ParseUint(spec.Sandbox, 10, 32)
		var rs *landlock.Ruleset
		switch {
		case err != nil || rulesetFD < 0:
			err = fmt.Errorf("the spec asks for flags %q and came with descriptor %d", spec.Sandbox, rulesetFD)
		default:
			rs, err = landlock.Adopt(rulesetFD, uint32(flags))
		}
		if err != nil {
			cg.remove()
			fmt.Fprintf(report, "error sandbox: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
			return 127
		}
		defer rs.Close()
		fork := forkExec
		forkExec = func() (int, error) { return rs.Fork(fork) }
	}
	pid, err := forkExec()
	if err != nil && cg != nil {
		// clone3 into the cgroup refused (a kernel or a policy that
		// does not allow it): the command runs without.
		cg.detach(sys)
		cg.remove()
		cg = nil
		pid, err = forkExec()
	}
	defer cg.remove()
	if err != nil {
		fmt.Fprintf(report, "error %v\n", err)
		return 127
	}
	fmt.Fprintf(report, "pid %d\n", pid)

	var shellStatus syscall.WaitStatus
	shellDone := make(chan struct{})
	allGone := make(chan struct{})
	go reapAll(pid, &shellStatus, shellDone, allGone)

	select {
	case <-shellDone: // leftovers (background jobs, daemons) go too
		// Usually there are none: the wait after the shell's finds no
		// child at once. Give it that moment before scanning /proc (every
		// process on the machine) for leftovers.
		select {
		case <-allGone:
		case <-time.After(settleDelay):
		}
	case <-stop:
	}
	terminateTree(pid, spec.Grace, allGone, cg)
	select {
	case <-shellDone:
	default:
		return 0 // the shell outlived KILL (uninterruptible sleep); hostcore kills its session
	}
	if shellStatus.Signaled() {
		fmt.Fprintf(report, "signal %d\n", int(shellStatus.Signal()))
	} else {
		fmt.Fprintf(report, "exit %d\n", shellStatus.ExitStatus())
	}
	return 0
}

// reapAll waits for every child of the reaper: the shell, and as subreaper
// every orphan of the tree. It records the shell's status and closes
// shellDone, and closes allGone when no child is left (ECHILD). Every live
// descendant has a live chain of ancestors up to the reaper, so no child
// means no descendant: this, not a scan of the process table, is what says
// the tree is gone.
func reapAll(shellPid int, shellStatus *syscall.WaitStatus, shellDone, allGone chan<- struct{}) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			close(allGone)
			return
		}
		if pid == shellPid {
			*shellStatus = ws
			close(shellDone)
		}
	}
}

// terminateTree runs the ladder over every descendant of the reaper until
// allGone: TERM (with CONT, so a stopped process can act on it), up to grace
// for them to exit, then KILL. Each round rescans, so processes forked
// meanwhile (or missed by a scan that raced an exit) get their signal in the
// next round; a process with KILL pending cannot fork, so the KILL phase
// converges even on a fork bomb. It gives up after grace+killBound. With
// the command's cgroup (nil without), every process in it gets the same
// signals, and the KILL rounds kill the cgroup whole: nothing in it can
// fork its way out.
func terminateTree(shell int, grace time.Duration, allGone <-chan struct{}, cg *commandCgroup) {
	self := os.Getpid()
	// Every process group the tree was ever seen in, starting with the
	// shell's (it leads its own session and group): see killGroups.
	groups := map[int]bool{shell: true}
	own := syscall.Getpgrp()
	termed := make(map[int]bool)
	killAt := time.Now().Add(grace)
	giveUp := killAt.Add(killBound)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-allGone: // the common case: nothing outlived the shell
			return
		default:
		}
		tree := descendants(self)
		kill := time.Now().After(killAt)
		for _, p := range tree {
			if p.pgid > 1 && p.pgid != own {
				groups[p.pgid] = true
			}
			switch {
			case kill:
				signalProc(p, tree, self, syscall.SIGKILL)
			case !termed[p.pid]:
				termed[p.pid] = true
				signalProc(p, tree, self, syscall.SIGTERM)
				signalProc(p, tree, self, syscall.SIGCONT)
			}
		}
		if !kill {
			for _, pid := range cg.pids() {
				if pid != self && !termed[pid] {
					termed[pid] = true
					cg.signal(pid, syscall.SIGTERM)
					cg.signal(pid, syscall.SIGCONT)
				}
			}
		} else {
			cg.kill()
			// A process that forks and exits in a loop lives shorter
			// than one scan of a busy /proc: its next child is not in
			// the list, and it is seldom seen at all. A fork stays in
			// its parent's process group, and a group is killed whole,
			// forks included: every group the tree was seen in, the
			// shell's above all, is killed each round.
			for g := range groups {
				syscall.Kill(-g, syscall.SIGKILL)
			}
		}
		select {
		case <-allGone:
			return
		case <-tick.C:
		}
		if time.Now().After(giveUp) {
			return
		}
	}
}

// runMarkOf is the value of the run's mark in env (see Run).
func runMarkOf(env []string) string {
	mark := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, runMarkVar+"="); ok {
			mark = v // Run's own comes last
		}
	}
	return mark
}

// proc is one live process of the tree (a zombie only while threads of
// it still run). pgid is its process group: never the reaper's, which the
// command's processes cannot join (they run in sessions of their own).
type proc struct{ pid, ppid, pgid int }

// stopped reports, without waiting, whether hostcore has closed the control
// pipe fd (or written to it past the spec, which it never does; a byte
// already in the bufio.Reader would not show).
func stopped(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents != 0
}
