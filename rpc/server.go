// Package rpc is hostcore's JSON-RPC 2.0 transport: line framing, dispatch
// in arrival order, the wire form of errors, and host→client calls whose
// waits end when the client can no longer answer. It knows nothing of tools.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sys/unix"
)

// Dispatcher routes requests. Route is called in arrival order, one request
// at a time (on the read goroutine, or on the sequencer behind a
// configuring method), so it may take ordering tickets; it must not block.
// The returned run answers the request; inline runs finish before the next
// request is routed (configuring methods), while replies to host→client
// requests are still read. A nil run means "method not found".
type Dispatcher interface {
	Route(method string, params json.RawMessage) (run func(ctx context.Context) (any, error), inline bool)
	// Inline says, without side effects, whether Route will run method
	// inline: those are not counted against the in-flight budget.
	Inline(method string) bool
}

// Relief is implemented by a Dispatcher whose methods include some that
// free the in-flight budget rather than use it (cancelling calls). Those
// are counted against a small budget of their own instead, so that a
// budget filled by calls waiting on cards can still be cancelled.
type Relief interface {
	Relieves(method string) bool
}

// reliefBudget is how many budget-relieving requests may run at once;
// one with params over reliefParamsMax (a cancel needs a few dozen bytes)
// is weighed against the in-flight budget like any other request.
const (
	reliefBudget    = 256
	reliefParamsMax = 4 << 10
)

// Coded is implemented by errors that choose their JSON-RPC code and
// hostcore errorCode. Anything else goes out as -32603.
type Coded interface {
	error
	RPCCode() int64
	ErrorCode() string
}

// JSON-RPC codes.
const (
	CodeParseError     = jsonrpc2.CodeParseError
	CodeInvalidRequest = jsonrpc2.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc2.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc2.CodeInvalidParams
	CodeInternalError  = jsonrpc2.CodeInternalError
)

// toWire is the one place an error becomes a wire error; code 0 never
// leaves it.
func toWire(err error) *jsonrpc2.Error {
	e := &jsonrpc2.Error{Code: CodeInternalError, Message: err.Error()}
	var c Coded
	if errors.As(err, &c) {
		if code := c.RPCCode(); code != 0 {
			e.Code = code
		}
		if ec := c.ErrorCode(); ec != "" {
			e.SetError(map[string]string{"errorCode": ec})
		}
	}
	return e
}

// ErrNoClient is returned by Call when nobody is left to answer. Its
// InputClosed tells perms.Wait a card was left unanswered because the
// client's input closed.
var ErrNoClient error = noClient{}

type noClient struct{}

func (noClient) Error() string     { return "client cannot answer: input closed" }
func (noClient) InputClosed() bool { return true }

// errNotSent is ErrNoClient for a request that was never written: the
// input had closed before it. Its NotSent lets a caller tell a card that
// nobody saw from one left unanswered.
type errNotSent struct{}

func (errNotSent) Error() string        { return ErrNoClient.Error() }
func (errNotSent) Is(target error) bool { return target == ErrNoClient }
func (errNotSent) NotSent() bool        { return true }

// Server is one connection on a reader and writer (stdin/stdout).
type Server struct {
	stream *lineStream
	out    *os.File // for noticing a vanished reader while idle; may be nil
	log    *slog.Logger

	conn *jsonrpc2.Conn
	// connReady is closed once conn is set. jsonrpc2.NewConn starts reading
	// (and so dispatching) before Run can store the Conn, so a handler's
	// Call or Notify must wait for it: found by the race detector.
	connReady chan struct{}
	wg        inflight // running handlers
	workers   workers

	callSeq atomic.Uint64 // ids of host→client requests
	// running counts requests on workers; calling, host→client requests
	// waiting for their reply; outFd is stdout's descriptor (-1: none).
	// See Quiet.
	running atomic.Int64
	calling atomic.Int64
	outFd   int
	outKind int
	outBuf  int // the socket's send buffer, when stdout is one

	budget     *semaphore.Weighted // see Handle
	budgetSize int64
	relief     *semaphore.Weighted // requests that free the budget (Relief)

	seq sequencer // configuring methods, and requests read behind them

	inputCtx    context.Context // done when stdin ended or the server stops
	inputCancel context.CancelFunc
	gone        chan struct{}
	goneOnce    sync.Once
}

// NewServer prepares a server; out may be an *os.File to watch.
func NewServer(in io.Reader, out io.Writer, log *slog.Logger) *Server {
	s := &Server{stream: newLineStream(in, out, log), log: log, gone: make(chan struct{}), connReady: make(chan struct{}),
		workers: workers{jobs: make(chan func()), quit: make(chan struct{})}}
	s.SetBudget(DefaultBudget)
	s.relief = semaphore.NewWeighted(reliefBudget)
	s.outFd = -1
	if f, ok := out.(*os.File); ok {
		s.out = f
		s.outFd = fileFd(f)
		s.outKind, s.outBuf = outputKind(s.outFd)
		if fl, err := unix.FcntlInt(uintptr(s.outFd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK != 0 &&
			(s.outKind == kindPipe || s.outKind == kindSocket) {
			// PollableOutput's: a write takes what fits and never waits.
			s.stream.nowaitFd = s.outFd
		}
	}
	s.inputCtx, s.inputCancel = context.WithCancel(context.Background())
	s.stream.onBreak = s.markGone
	return s
}

// SetBudget sets the in-flight budget (see Handle) before Run.
func (s *Server) SetBudget(n int64) {
	s.budget, s.budgetSize = semaphore.NewWeighted(n), n
	s.stream.waitingMax = n
}

// Quiet says whether the connection has nothing under way: no further
// input waiting in the read buffer, no request running on a worker, no
// host→client request waiting for its reply. Only the read goroutine may
// ask (a Dispatcher's Route). A dispatcher may then run a short request
// inline that it would otherwise hand to a worker: should it be slow after
// all (a disk that stalls), no line is held up behind it and no card's
// answer waits to be read. Its answer must also fit in Room, or writing
// it could block the reading of input on a client that writes before it
// reads.
//
// With the sequencer busy it is false at once: the request being routed
// is one that queued behind a configuring method, off the read goroutine.
func (s *Server) Quiet() bool {
	if s.seq.busy.Load() {
		return false
	}
	return s.stream.r.Buffered() == 0 && s.running.Load() == 0 && s.calling.Load() == 0 && s.stream.behind() == nil
}

// Room is how many bytes the read goroutine can write to stdout now
// without blocking: no bound where stdout is non-blocking (PollableOutput:
// writeLineNow leaves what does not fit to a goroutine of its own);
// otherwise as far as the kernel tells: a pipe's free space, a socket's
// free send buffer, halved for its overhead; no bound for a file or a
// terminal; 0 when it cannot tell.
func (s *Server) Room() int64 {
	if s.stream.nowaitFd >= 0 {
		// The read goroutine's writes never block (writeLineNow).
		return math.MaxInt64
	}
	if s.outFd < 0 {
		return 0
	}
	return room(s.outFd, s.outKind, s.outBuf)
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

// PollableOutput returns a non-blocking *os.File that writes where f does,
// when f is a pipe or a socket, so that Go's poller writes it and Run can
// give a write a deadline; otherwise f itself (a terminal, a file: no
// deadline). O_NONBLOCK belongs to an open file description, which other
// descriptors and processes may share, so it is never set on one that
// could be:
//   - a pipe is opened again through /proc/self/fd: a description of its
//     own, that nobody else holds;
//   - a socket (Node's stdio) gets it only when it is not also one of
//     hostcore's other standard descriptors (socat, inetd and 2>&1 share
//     one), on a duplicate descriptor; restore clears it when hostcore is
//     done.
//
// When none of this can be done, f is returned and writes block as before.
func PollableOutput(f *os.File) (out *os.File, restore func()) {
	none := func() {}
	fd := fileFd(f)
	var st unix.Stat_t
	if fd < 0 || unix.Fstat(fd, &st) != nil {
		return f, none
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		nfd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return f, none
		}
		return os.NewFile(uintptr(nfd), f.Name()), none
	case unix.S_IFSOCK:
		for _, other := range []int{0, 1, 2} {
			var ost unix.Stat_t
			if other != fd && unix.Fstat(other, &ost) == nil && ost.Dev == st.Dev && ost.Ino == st.Ino {
				return f, none
			}
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return f, none
		}
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return f, none
		}
		if fl&unix.O_NONBLOCK != 0 {
			// Non-blocking already (a parent that shares it, libuv's
			// sockets are): nothing to set, and nothing to undo.
			return os.NewFile(uintptr(nfd), f.Name()), none
		}
		if unix.SetNonblock(nfd, true) != nil {
			unix.Close(nfd)
			return f, none
		}
		return os.NewFile(uintptr(nfd), f.Name()), func() { unix.SetNonblock(nfd, false) }
	}
	return f, none
}

// fileFd returns f's descriptor without Fd, which would turn off the
// deadlines of a pollable file; -1 if it has none.
func fileFd(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(d uintptr) { fd = int(d) })
	}
	return fd
}

// stopping is the cause calls are cancelled with when hostcore stops
// (perms.Stopping).
type stopping string

func (e stopping) Error() string  { return string(e) }
func (e stopping) Stopping() bool { return true }

// Stopping is the cause to cancel Run's context with when hostcore stops
// (shutdown, a signal): a call waiting on its card is then denied, as
// PROTOCOL section 1 says ("pending waits resolve as deny"), where a
// plain cancellation cancels it.
func Stopping(reason string) error { return stopping(reason) }

// Run serves until input ends and every running call has answered (nil),
// or until ctx ends or the client vanishes: then running calls see their
// context cancelled and get DrainTimeout to answer.
func (s *Server) Run(ctx context.Context, d Dispatcher) error {
	// Calls run under ctx, so that its end (with the cause Stopping, from
	// the shutdown method or a signal) reaches them at once, before the
	// next line is read; a vanished client ends them with that cause too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer close(s.workers.quit)
	s.stream.atEOF = func() {
		// Nobody is left to answer cards or questions: end their waits now,
		// then let running calls finish within their own timeouts.
		s.inputCancel()
		s.wg.Wait()
		s.stream.settle()
	}
	// The Conn closes itself when its context ends, dropping replies still
	// owed; it gets a context of its own and is closed after the drain.
	h := &handler{s: s, d: d, ctx: ctx}
	s.stream.direct = h.handle
	s.stream.mark = s.seq.mark
	s.conn = jsonrpc2.NewConn(context.Background(), s.stream, h, jsonrpc2.SetLogger(slogPrinter{s.log}))
	close(s.connReady)
	defer s.conn.Close()
	stopWatch := s.watchOutput()
	defer stopWatch()
	select {
	case <-s.conn.DisconnectNotify():
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

// WatchOutput calls gone once the reader of out has closed its end, even
// while nothing is written, by polling a pipe or socket for POLLERR/POLLHUP
// every 200 ms. Other kinds of file are not watched.
func WatchOutput(out *os.File, gone func()) (stop func()) {
	fi, err := out.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return func() {}
	}
	fd := fileFd(out)
	if fd < 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			n, err := unix.Poll(fds, 200)
			if err != nil && err != unix.EINTR {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				gone()
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// Call sends a host→client request and waits for its reply. The wait ends
// with an error when ctx ends, when input has ended (nobody can answer) or
// when the connection closes; a reply arriving later is dropped.
//
// A reply read while configuring methods read before it are still running
// is acted on only once they have finished (PROTOCOL section 1), as if
// read then; if ctx ends meanwhile (a session.delete or shutdown among
// them ended the call), the reply is dropped.
func (s *Server) Call(ctx context.Context, method string, params, result any) error {
	return s.CallWithin(ctx, 0, method, params, result)
}

// CallWithin is Call with the reply due within d (0: no bound): past it,
// the wait fails with an error wrapping context.DeadlineExceeded. Only
// the reply's arrival is bounded: one read in time counts, even if the
// configuring methods it waits behind (see Call) end after d.
func (s *Server) CallWithin(ctx context.Context, d time.Duration, method string, params, result any) error {
	if s.inputCtx.Err() != nil {
		return errNotSent{}
	}
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.inputCtx, cancel)
	defer stop()
	if d > 0 {
		var cancelD context.CancelFunc
		ctx, cancelD = context.WithTimeout(ctx, d)
		defer cancelD()
	}
	conn, err := s.connection(ctx)
	if err == nil {
		// hostcore picks the id, so that the stream knows which ids are
		// owed a reply (a malformed reply is then never answered).
		// Not 0: jsonrpc2 takes ID{Num: 0} for "unset" and numbers the
		// request itself, and two requests then share an id.
		id := s.callSeq.Add(1)
		key := strconv.FormatUint(id, 10)
		o := new(owed)
		s.stream.pending.Store(key, o)
		s.calling.Add(1)
		var raw json.RawMessage // decoded into result only if it counts
		var w jsonrpc2.Waiter
		if w, err = conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(jsonrpc2.ID{Num: id})); err == nil {
			err = w.Wait(ctx, &raw)
			if err != nil && err == ctx.Err() && caller.Err() == nil && o.read.Load() {
				// The reply was read before the wait ended (the input's
				// end or the deadline right behind it): it counts. Wait
				// picked at random between the two; jsonrpc2 hands a
				// read reply over before it reads on, so it is there
				// (a review: 10 in 100 denies read just before EOF were
				// taken for a card left unanswered).
				late, cancelLate := context.WithTimeout(caller, time.Second)
				err = w.Wait(late, &raw)
				cancelLate()
			}
		}
		if behind := o.behind.Load(); behind > 0 && (err == nil || errors.As(err, new(*jsonrpc2.Error))) {
			if werr := s.seq.waitFor(caller, behind); werr != nil {
				err = werr
			}
		}
		if err == nil && result != nil {
			err = json.Unmarshal(raw, result)
		}
		s.calling.Add(-1)
		s.stream.pending.Delete(key)
	}
	if err != nil && s.inputCtx.Err() != nil && !errors.As(err, new(*jsonrpc2.Error)) {
		// An error reply read before the input closed stays what it is.
		return ErrNoClient
	}
	return err
}

// Notify sends a host→client notification.
func (s *Server) Notify(ctx context.Context, method string, params any) error {
	conn, err := s.connection(ctx)
	if err != nil {
		return err
	}
	return conn.Notify(ctx, method, params)
}

// connection returns the Conn once Run has stored it.
func (s *Server) connection(ctx context.Context) (*jsonrpc2.Conn, error) {
	select {
	case <-s.connReady:
		return s.conn, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NotifyBuildN sends n notifications of one method with one write. build(i,
// dst) appends the params of notification i, one valid JSON object,
// straight into the lines that are written (and must not keep dst): a flood
// of output is encoded once, copied by nobody on its way to the client, and
// costs a system call per batch, not per notification. jsonrpc2's Notify
// encodes params and then re-validates them at every level of the message;
// a command printing hundreds of megabytes spent most of its time there.
func (s *Server) NotifyBuildN(method string, n int, build func(i int, dst []byte) []byte) error {
	m, err := json.Marshal(method)
	if err != nil {
		return err
	}
	bp := linePool.Get().(*[]byte)
	lines := (*bp)[:0]
	for i := range n {
		lines = append(lines, `{"jsonrpc":"2.0","method":`...)
		lines = append(lines, m...)
		lines = append(lines, `,"params":`...)
		lines = build(i, lines)
		lines = append(lines, '}', '\n')
	}
	err = s.stream.writeLine(lines)
	*bp = lines
	linePool.Put(bp)
	return err
}

// linePool recycles notification lines: a flood of output would otherwise
// allocate, fault in and scavenge a fresh buffer per chunk.
var linePool = sync.Pool{New: func() any { return new([]byte) }}

type handler struct {
	s   *Server
	d   Dispatcher
	ctx context.Context
}

// Handle is jsonrpc2's entry for requests; ReadObject hands them to
// handle itself (see lineStream.direct), so it serves only a request
// whose id decodeID could not read.
func (h *handler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	h.handle(req.Method, req.ID, req.Notif)
}

// handle takes one request, on the read goroutine, in arrival order. It
// needs nothing of jsonrpc2's: the answer is a response (jsonrpc2's Conn
// tracks only the requests it sends), written whole by the stream.
//
// A configuring method (Dispatcher.Inline) finishes before any request
// read after it starts, but it does not hold up the reading of input: it
// runs on the sequencer, and requests read while the sequencer is busy
// queue behind it there, while replies to our cards go on being read and
// delivered. (It once ran here: a card answered while a session.delete
// waited for its calls to end was read only after the card's timeout had
// denied it.) Anything else, with the sequencer idle, is handled here.
func (h *handler) handle(method string, id jsonrpc2.ID, notif bool) {
	// Counted from the moment it is read, not only once it runs: Run,
	// stopping, waits for the answers of requests it has read, those
	// queued or refused here included (Route may take a while: a quick
	// Read opens its file there).
	if !h.s.wg.Enter() {
		// The drain is over: the store is about to close, or has.
		if !notif {
			h.s.stream.writeError(id, toWire(errStopped), true)
		}
		return
	}
	params, err := h.s.stream.takeParams()
	if err != nil {
		h.s.wg.Done()
		h.s.log.Error("request params lost", "method", method, "err", err)
		if !notif {
			h.s.stream.writeError(id, &jsonrpc2.Error{Code: CodeInternalError, Message: "internal error: request params lost"}, true)
		}
		return
	}
	r := queued{method: method, id: id, notif: notif, params: params, configuring: h.d.Inline(method)}
	switch h.s.seq.queue(r, h.process) {
	case runHere:
		h.process(r)
	case refuseFull:
		h.s.wg.Done()
		h.s.log.Warn("request refused: too many requests wait behind a configuring method", "method", method)
		if !notif {
			h.s.stream.writeError(id, toWire(errBusy), true)
		}
	}
}

// queued is a request read and counted (wg) but not yet routed.
type queued struct {
	method string
	id     jsonrpc2.ID
	notif  bool
	params json.RawMessage
	// configuring: Dispatcher.Inline said so, once, as it was read.
	configuring bool
}

// sequencer runs configuring methods, and the requests read while one
// runs, in arrival order on a goroutine of its own (see handler.handle).
type sequencer struct {
	mu    sync.Mutex
	room  *sync.Cond // signalled as the queue shrinks
	busy  atomic.Bool
	reqs  []queued
	bytes int64

	// read counts the requests queued so far, done those handled (a
	// configuring one finished, any other routed and under way);
	// progress is closed and replaced as done grows. Under mu; read and
	// done are atomics so that a reply can see at once that it waits
	// behind nothing.
	read, done atomic.Uint64
	progress   chan struct{}
}

// mark is what a reply read now waits behind: every request queued so
// far (0: none is left to handle). Called on the read goroutine.
func (q *sequencer) mark() uint64 {
	if r := q.read.Load(); q.done.Load() < r {
		return r
	}
	return 0
}

// waitFor waits until the first n requests queued have been handled, or
// ctx ends.
func (q *sequencer) waitFor(ctx context.Context, n uint64) error {
	for {
		q.mu.Lock()
		if q.done.Load() >= n {
			q.mu.Unlock()
			return ctx.Err() // ended by what it waited behind (a session.delete)?
		}
		if q.progress == nil {
			q.progress = make(chan struct{})
		}
		progress := q.progress
		q.mu.Unlock()
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Bounds of the sequencer's queue. Past them a request that is not a
// configuring method is refused BUSY at once (the in-flight budget would
// refuse most of them when they ran anyway), and a configuring one waits
// for room: only then does the read goroutine wait, replies unread, as it
// did for every configuring method before there was a queue.
const (
	seqMaxRequests = 4096
	seqMaxBytes    = 64 << 20
)

// What queue did with a request.
const (
	runHere    = iota // the sequencer is idle: the caller handles it
	runQueued         // the sequencer has it
	refuseFull        // refused: the caller answers BUSY
)

// queue hands r to the sequencer when it is busy or r is configuring (see
// the constants above). Only the read goroutine calls it, so busy can
// turn true only here.
func (q *sequencer) queue(r queued, process func(queued)) int {
	if !q.busy.Load() && !r.configuring {
		return runHere // idle stays idle: only this goroutine makes it busy
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.room == nil {
		q.room = sync.NewCond(&q.mu)
	}
	full := func() bool {
		return len(q.reqs) > 0 && (len(q.reqs) >= seqMaxRequests || q.bytes+int64(len(r.params)) > seqMaxBytes)
	}
	if !r.configuring && full() {
		return refuseFull
	}
	for full() {
		q.room.Wait()
	}
	q.reqs = append(q.reqs, r)
	q.bytes += int64(len(r.params))
	q.read.Add(1)
	if !q.busy.Load() {
		q.busy.Store(true)
		go q.drain(process)
	}
	return runQueued
}

// drain processes the queue until it is empty, then marks the sequencer
// idle.
func (q *sequencer) drain(process func(queued)) {
	for {
		q.mu.Lock()
		if len(q.reqs) == 0 {
			q.busy.Store(false)
			q.mu.Unlock()
			return
		}
		r := q.reqs[0]
		q.reqs[0] = queued{}
		q.reqs = q.reqs[1:]
		q.bytes -= int64(len(r.params))
		q.room.Broadcast()
		q.mu.Unlock()
		process(r)
		q.mu.Lock()
		q.done.Add(1)
		if q.progress != nil {
			close(q.progress)
			q.progress = nil
		}
		q.mu.Unlock()
	}
}

// process routes and runs one request read earlier, on the read
// goroutine or the sequencer, in arrival order; wg counts it already.
func (h *handler) process(r queued) {
	method, id, notif, params, configuring := r.method, r.id, r.notif, r.params, r.configuring
	handedOff := false
	defer func() {
		if !handedOff {
			h.s.wg.Done()
		}
	}()
	// Requests run concurrently, but not without bound: each holds its
	// params and, until its answer is written, its result. A client that
	// sends without reading our output, or sends megabyte lines by the
	// dozen, would otherwise grow memory until the process is killed. One
	// over the budget is answered at once, on this goroutine, which is
	// never made to wait for a running call: the replies to our cards
	// come in on it. The budget is taken before Route, which may take the
	// request's place in an order (a Write's ticket) that only running
	// it gives back. Inline methods (configuring ones, run here one at a
	// time) are not counted, so that shutdown is never refused.
	var weight int64
	sem := h.s.budget
	if r, ok := h.d.(Relief); ok && r.Relieves(method) && len(params) <= reliefParamsMax {
		sem, weight = h.s.relief, 1
	} else if !configuring {
		weight = min(requestWeight+int64(len(params)), h.s.budgetSize)
	}
	if weight > 0 && !sem.TryAcquire(weight) {
		h.s.log.Warn("request refused: too much in flight", "method", method, "paramsBytes", len(params))
		if !notif {
			h.s.stream.writeError(id, toWire(errBusy), true)
		}
		return
	}
	release := func() {
		if weight > 0 {
			sem.Release(weight)
		}
	}
	if f, ok := h.d.(Finishing); h.ctx.Err() != nil && ok && !f.RunsWhileStopping(method) {
		// Stopping (shutdown, a signal, the client gone): everything was
		// cancelled at once, so a later request would only fail against
		// its cancelled context, or change what the stop has settled.
		release()
		if !notif {
			h.s.stream.writeError(id, toWire(errStopped), true)
		}
		return
	}
	run, inline := h.d.Route(method, params)
	if run == nil {
		release()
		if !notif {
			h.s.stream.writeError(id, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: "method not found: " + method}, true)
		}
		return
	}
	// inline: answered on this goroutine, whose writes must not block on
	// a client that is not reading (see lineStream.writeLineNow).
	answer := func(inline bool) {
		defer release()
		if !inline && sem == h.s.budget && weight > 0 {
			// Its answer might wait behind answers the client has not
			// read: it may wait before running instead (waitForRoom).
			done := h.s.stream.waitForRoom(h.ctx)
			defer done()
		}
		result, err := safeRun(h.ctx, run)
		// What a result leaves for after its answer runs whatever becomes
		// of the answer: a notification gets none, an error or a broken
		// pipe none that arrives (a quick Read's file is closed there).
		if a, ok := result.(AfterReplier); ok {
			defer a.AfterReply()
		}
		if notif {
			return
		}
		if err != nil {
			h.s.stream.writeError(id, toWire(err), inline)
			return
		}
		if result == nil {
			result = struct{}{}
		}
		if err := h.s.stream.writeResult(id, result, inline); err != nil {
			h.s.log.Debug("reply not sent", "method", method, "err", err)
		}
	}
	if inline {
		answer(true)
		return
	}
	h.s.running.Add(1)
	handedOff = true
	h.s.workers.do(func() {
		defer h.s.wg.Done()
		defer h.s.running.Add(-1)
		answer(false)
	})
}

// inflight counts running handlers. Unlike a sync.WaitGroup it may be
// added to while it is waited on: the read goroutine goes on handling
// requests while Run drains (a request read then runs with its context
// cancelled and answers as aborted), and a WaitGroup's Add from zero
// during a Wait is a misuse (the race detector's report, found by
// TestRunReturnsOnlyOnceEveryAnswerIsWritten). Wait returns once none
// runs. Once closed (the drain is over and the store closes next),
// Enter refuses: a request read then must not run against a closed
// store.
type inflight struct {
	mu     sync.Mutex
	cond   *sync.Cond
	n      int
	closed bool
}

// Enter counts one more running handler, unless closed.
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

func (f *inflight) Add(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n += d; f.n == 0 && f.cond != nil {
		f.cond.Broadcast()
	}
}

func (f *inflight) Done() { f.Add(-1) }

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

// The in-flight budget: every running request weighs requestWeight plus
// the size of its params; DefaultBudget admits about a thousand small
// requests at once, or three of the largest lines.
const (
	requestWeight = 64 << 10
	DefaultBudget = 64 << 20
)

// Finishing is implemented by a Dispatcher with methods that still run
// once the server is stopping (its context cancelled: shutdown, a
// signal, the client gone), such as a tool call that answers as aborted
// and is audited. Every other method is then refused with errStopped.
type Finishing interface {
	RunsWhileStopping(method string) bool
}

// errStopped answers a request that hostcore, stopping, will not run.
var errStopped = &stoppedError{}

type stoppedError struct{}

func (*stoppedError) Error() string {
	return "hostcore is shutting down: the request was not run"
}
func (*stoppedError) RPCCode() int64    { return -32000 } // application errors (PROTOCOL section 7)
func (*stoppedError) ErrorCode() string { return "SHUTTING_DOWN" }

// errBusy answers a request over the in-flight budget.
var errBusy = &busyError{}

type busyError struct{}

func (*busyError) Error() string {
	return "server busy: too many requests (or too many large ones) are running; retry once some have been answered"
}
func (*busyError) RPCCode() int64    { return CodeServerBusy }
func (*busyError) ErrorCode() string { return "BUSY" }

// CodeServerBusy is the JSON-RPC code of errBusy, in the range the
// specification reserves for implementation-defined server errors.
const CodeServerBusy = -32000

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

// safeRun turns a handler panic into an internal error: no input may crash
// the process.
func safeRun(ctx context.Context, run func(context.Context) (any, error)) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &panicError{r}
		}
	}()
	return run(ctx)
}

type panicError struct{ v any }

func (p *panicError) Error() string { return "internal error: handler panicked" }

type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) {
	p.l.Debug("jsonrpc2", "msg", format, "args", v)
}

// AfterReplier is a result with work left for once it has been written
// (or could not be): closing what the call used, off the client's wait.
type AfterReplier interface {
	AfterReply()
}
