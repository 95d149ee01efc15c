package rpc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Server is one connection on a reader and writer (stdin/stdout).
type Server struct {
	stream *lineStream
	out    *os.File // for noticing a vanished reader while idle; may be nil
	log    *slog.Logger

	wg      inflight // requests read and not yet answered
	workers workers

	// pending holds the host→client requests waiting for their reply, by
	// id (the decoded string; see call.go).
	pending sync.Map // string → *owed
	// outFd is stdout's descriptor (-1: none).
	outFd int

	budget     *semaphore.Weighted // see dispatcher.process
	budgetSize int64
	relief     *semaphore.Weighted // Cancel methods

	seq sequencer // configuring methods, and requests read behind them

	inputCtx    context.Context // done when stdin ended
	inputCancel context.CancelFunc
	closed      chan struct{} // closed when Run returns
	gone        chan struct{}
	goneOnce    sync.Once
}

// The in-flight budget: every running request weighs requestWeight plus
// the size of its params; DefaultBudget admits about a thousand small
// requests at once, or three of the largest lines.
const (
	requestWeight = 64 << 10
	DefaultBudget = 64 << 20
)

// reliefBudget is how many Cancel requests may run at once; one with
// params over reliefParamsMax (a cancel needs a few dozen bytes) is
// weighed against the in-flight budget like any other request.
const (
	reliefBudget    = 256
	reliefParamsMax = 4 << 10
)

// NewServer prepares a server; out may be an *os.File to watch.
func NewServer(in io.Reader, out io.Writer, log *slog.Logger) *Server {
	s := &Server{stream: newLineStream(in, out, log), log: log, gone: make(chan struct{}), closed: make(chan struct{}),
		workers: workers{jobs: make(chan func()), quit: make(chan struct{})}}
	s.SetBudget(DefaultBudget)
	s.relief = semaphore.NewWeighted(reliefBudget)
	s.outFd = -1
	if f, ok := out.(*os.File); ok {
		s.out = f
		s.outFd = fileFd(f)
		if s.outFd >= 0 {
			// PollableOutput's: a write takes what fits and never waits.
			s.stream.nowaitFd = nonblockingFd(s.outFd, outputKind(s.outFd))
		}
	}
	s.inputCtx, s.inputCancel = context.WithCancel(context.Background())
	s.stream.onBreak = s.markGone
	s.stream.owes = s.owes
	return s
}

// SetBudget sets the in-flight budget (see dispatcher.process) before Run.
func (s *Server) SetBudget(n int64) {
	s.budget, s.budgetSize = semaphore.NewWeighted(n), n
	s.stream.waitingMax = n
}

func (s *Server) markGone() { s.goneOnce.Do(func() { close(s.gone) }) }

// Gone is closed when the client stopped reading our output.
func (s *Server) Gone() <-chan struct{} { return s.gone }

// DrainTimeout bounds how long Run waits for running calls after ctx ends.
const DrainTimeout = 2500 * time.Millisecond

// writeDrain bounds each write to stdout once ctx has ended: it leaves a
// call blocked on a client that stopped reading time to end within
// DrainTimeout, and is far more than a write to a reading client takes.
const writeDrain = time.Second

// Run serves methods until input ends and every running call has
// answered (nil), or until ctx ends or the client vanishes: then running
// calls see their context cancelled and get DrainTimeout to answer.
func (s *Server) Run(ctx context.Context, methods Methods) error {
	// Calls run under ctx, so that its end (with the cause Stopping, from
	// the shutdown method or a signal) reaches them at once, before the
	// next line is read; a vanished client ends them with that cause too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer close(s.workers.quit)
	defer close(s.closed)
	readDone := make(chan struct{})
	d := &dispatcher{s: s, methods: methods, ctx: ctx, readDone: readDone}
	s.workers.do(d.read)
	stopWatch := s.watchOutput()
	defer stopWatch()
	select {
	case <-readDone:
		return nil
	case <-ctx.Done():
	case <-s.gone:
		s.log.Warn("client vanished: stdout reader closed; cancelling all calls")
	}
	// Running calls see ctx cancelled and end as aborted; a call waiting
	// on its card is denied, the card withdrawn (perms.Wait). (Once ctx
	// has ended, this keeps the cause it ended with.)
	cancel(stopping("the client went away"))
	// A call blocked writing to a client that stopped reading (a flood of
	// tool.output) would hold its answer, and its audit row, past the
	// drain: from now on each write gets writeDrain to complete (the one
	// blocked now included), then fails, and the call still ends as
	// TOOL_ABORTED with its row committed. A client that reads gets every
	// answer. Only a pollable stdout (PollableOutput) takes a deadline.
	s.stream.draining.Store(true)
	if s.out != nil {
		s.out.SetWriteDeadline(time.Now().Add(writeDrain))
	}
	done := make(chan struct{})
	go func() {
		// A request read while calls finish still runs (a tool call
		// answers as aborted, audited); one read after they have all
		// finished is refused, and the second wait is for one that
		// entered in between.
		s.wg.Wait()
		s.wg.Close()
		s.wg.Wait()
		s.stream.settle()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(DrainTimeout):
		s.wg.Close()
		s.log.Warn("calls still running at exit")
	}
	return nil
}

// watchOutput notices that the reader of stdout closed, even while idle.
func (s *Server) watchOutput() (stop func()) {
	if s.out == nil {
		return func() {}
	}
	return WatchOutput(s.out, s.markGone)
}

// inflight counts the requests read and not yet answered. Unlike a
// sync.WaitGroup it may be added to while it is waited on: the read
// goroutine goes on handling requests while Run drains (a request read
// then runs with its context cancelled and answers as aborted), and a
// WaitGroup's Add from zero during a Wait is a misuse. Wait returns once
// none is left. Once closed (the drain is over and the store closes
// next), Enter refuses: a request read then must not run against a
// closed store.
type inflight struct {
	mu     sync.Mutex
	cond   *sync.Cond
	n      int
	closed bool
}

// Enter counts one more request, unless closed.
func (f *inflight) Enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

// Close makes Enter refuse from now on.
func (f *inflight) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func (f *inflight) Done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 && f.cond != nil {
		f.cond.Broadcast()
	}
}

func (f *inflight) Wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cond == nil {
		f.cond = sync.NewCond(&f.mu)
	}
	for f.n != 0 {
		f.cond.Wait()
	}
}

// workers run requests on goroutines that outlive one request. A fresh
// goroutine starts with a small stack, and a tool call's deep path (SQLite
// above all) grew it several times on every call: a tenth of hostcore's
// CPU in a profile of Read round trips. A request takes an idle worker or
// starts a new one, so any number can wait on cards at once; a worker idle
// for workerIdle ends, and every idle worker ends when Run returns.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only into an idle worker
	quit chan struct{}
}

const workerIdle = 30 * time.Second

func (w *workers) do(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.jobs:
		case <-idle.C:
			return
		case <-w.quit:
			return
		}
	}
}
