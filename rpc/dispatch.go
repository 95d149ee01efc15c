package rpc

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
)

// dispatcher reads the method table for one Run.
type dispatcher struct {
	s       *Server
	methods Methods
	ctx     context.Context // Run's: cancelled when hostcore stops
	// readDone is closed when input has ended and read is done.
	readDone chan struct{}

	// running holds the cancel functions of the Ordinary requests under
	// way, by request id (idKey), for $/cancelRequest. Under mu.
	mu      sync.Mutex
	running map[string][]*underway
}

// underway is one Ordinary request under way.
type underway struct {
	cancel context.CancelCauseFunc
}

// read is the read goroutine: it takes the messages framing hands on, in
// arrival order, until input ends. A reply goes to the Call waiting for
// it at once; a request is handled (handle). At the end of input nobody
// is left to answer cards or questions: their waits end now, and running
// calls finish within their own timeouts before read closes readDone.
//
// A request that runs off the read goroutine runs on this goroutine, and
// an idle worker reads on in its place: the thread that read the request
// is awake and holds it in cache, and handing the call to a worker
// instead would put a thread's wake-up (tens of microseconds on a VM) on
// the path of every call, where the reader's hand-over is off it. Reading
// still never waits for a call: the next line is read by the next reader
// while this call runs.
func (d *dispatcher) read() {
	s := d.s
	for {
		m, err := s.stream.next()
		if err != nil {
			s.inputCancel()
			s.wg.Wait()
			s.stream.settle()
			close(d.readDone)
			return
		}
		if m.method == "" {
			s.deliver(m)
			continue
		}
		if job := d.handle(m); job != nil {
			s.workers.do(d.read)
			job()
			return
		}
	}
}

// queued is a request read and counted (wg) but not yet routed.
type queued struct {
	message
	m     Method
	known bool
}

// handle takes one request, on the read goroutine, in arrival order, and
// returns the job that runs it when that is to happen off the read
// goroutine (read runs it).
//
// A configuring method finishes before any request read after it starts,
// but it does not hold up the reading of input: it runs on the
// sequencer, and requests read while the sequencer is busy queue behind
// it there, while replies to our cards go on being read and delivered.
// Anything else, with the sequencer idle, is handled here.
func (d *dispatcher) handle(msg message) (job func()) {
	s := d.s
	// Counted from the moment it is read, not only once it runs: Run,
	// stopping, waits for the answers of requests it has read, those
	// queued or refused here included (Prepare may take a while: a quick
	// Read opens its file there).
	if !s.wg.Enter() {
		// The drain is over: the store is about to close, or has.
		if msg.id != nil {
			s.stream.writeError(msg.id, toWire(errStopped), true)
		}
		return nil
	}
	m, known := d.methods[msg.method]
	if strings.HasPrefix(msg.method, "$/") {
		m, known = d.dollar(msg)
	}
	if !known {
		// Weighed and refused as any request, then answered -32601.
		m = Method{WhileStopping: true}
	}
	r := queued{message: msg, m: m, known: known}
	switch s.seq.queue(r, d.processQueued) {
	case runHere:
		return d.process(r)
	case refuseFull:
		s.wg.Done()
		s.log.Warn("request refused: too many requests wait behind a configuring method", "method", msg.method)
		if msg.id != nil {
			s.stream.writeError(msg.id, toWire(errBusy), true)
		}
	}
	return nil
}

// processQueued is process on the sequencer: a job it returns runs on a
// worker.
func (d *dispatcher) processQueued(r queued) {
	if job := d.process(r); job != nil {
		d.s.workers.do(job)
	}
}

// process routes one request read earlier, on the read goroutine or the
// sequencer, in arrival order; wg counts it already. One answered there
// and then returns nil; otherwise the job that runs and answers it.
//
// Requests run concurrently, but not without bound: each holds its
// params and, until its answer is written, its result. A client that
// sends without reading our output, or sends megabyte lines by the
// dozen, would otherwise grow memory until the process is killed. One
// over the budget is answered at once, on this goroutine, which is never
// made to wait for a running call: the replies to our cards come in on
// it. The budget is taken before Prepare, which may take the request's
// place in an order (a Write's ticket) that only running it gives back.
func (d *dispatcher) process(r queued) (job func()) {
	s := d.s
	method, id, params := r.method, r.id, r.params
	handedOff := false
	defer func() {
		if !handedOff {
			s.wg.Done()
		}
	}()
	var weight int64
	sem := s.budget
	switch {
	case r.m.Kind == Cancel && len(params) <= reliefParamsMax:
		sem, weight = s.relief, 1
	case r.m.Kind != Configuring:
		weight = min(requestWeight+int64(len(params)), s.budgetSize)
	}
	if weight > 0 && !sem.TryAcquire(weight) {
		s.log.Warn("request refused: too much in flight", "method", method, "paramsBytes", len(params))
		if id != nil {
			s.stream.writeError(id, toWire(errBusy), true)
		}
		return nil
	}
	release := func() {
		if weight > 0 {
			sem.Release(weight)
		}
	}
	if d.ctx.Err() != nil && !r.m.WhileStopping {
		// Stopping (shutdown, a signal, the client gone): everything was
		// cancelled at once, so a later request would only fail against
		// its cancelled context, or change what the stop has settled.
		release()
		if id != nil {
			s.stream.writeError(id, toWire(errStopped), true)
		}
		return nil
	}
	var run Run
	var inline bool
	if r.known {
		run, inline = r.m.route(params)
	}
	if run == nil {
		release()
		if id != nil {
			s.stream.writeError(id, &Error{Code: CodeMethodNotFound, Message: "method not found: " + method}, true)
		}
		return nil
	}
	// inline: answered on this goroutine, whose writes must not block on
	// a client that is not reading (see lineStream.writeLineNow).
	answer := func(inline bool) {
		defer release()
		if !inline && sem == s.budget && weight > 0 {
			// Its answer might wait behind answers the client has not
			// read: it may wait before running instead (waitForRoom).
			done := s.stream.waitForRoom(d.ctx)
			defer done()
		}
		result, err := safeRun(d.ctx, run)
		// What a result leaves for after its answer runs whatever becomes
		// of the answer: a notification gets none, an error or a broken
		// pipe none that arrives.
		if a, ok := result.(AfterReplier); ok {
			defer a.AfterReply()
		}
		if id == nil {
			return
		}
		if err != nil {
			s.stream.writeError(id, toWire(err), inline)
			return
		}
		if result == nil {
			result = struct{}{}
		}
		if err := s.stream.writeResult(id, result, inline); err != nil {
			s.log.Debug("reply not sent", "method", method, "err", err)
		}
	}
	if inline {
		answer(true)
		return nil
	}
	if id != nil && r.m.Kind == Ordinary {
		run = d.cancellable(id, run)
	}
	handedOff = true
	return func() {
		defer s.wg.Done()
		answer(false)
	}
}

// dollar is the method of a request whose name begins with "$/": the
// LSP convention for methods a peer may ignore. $/cancelRequest, a
// notification, cancels the request it names (cancelRequest); any other
// such notification is ignored; such a request is answered -32601 (known
// false), as LSP says.
func (d *dispatcher) dollar(msg message) (Method, bool) {
	if msg.id != nil {
		return Method{}, false
	}
	params := msg.params
	if msg.method != "$/cancelRequest" {
		params = nil
	}
	// Answered on the goroutine that routes it, in arrival order: it finds
	// every request read before it.
	return Method{Kind: Cancel, WhileStopping: true, Prepare: func(json.RawMessage) (Run, bool) {
		return func(context.Context) (any, error) {
			if params != nil {
				d.cancelRequest(params)
			}
			return nil, nil
		}, true
	}}, true
}

// Cancelled is the cause a request's context is cancelled with by
// $/cancelRequest. A tools.execute so cancelled ends as a tools.cancel ends
// it: TOOL_ABORTED, its process tree killed, its audit row written, its
// message naming this cause; a card it waits on is withdrawn as cancelled
// (not as denied: Cancelled has no Stopping method).
type Cancelled struct{}

func (Cancelled) Error() string { return "cancelled by $/cancelRequest" }

// cancelRequest cancels the Ordinary requests under way whose id is the
// one params name ({"id": ...}); anything else is ignored, as a
// notification cannot be answered.
func (d *dispatcher) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || !validID(p.ID) || len(p.ID) == 0 {
		return
	}
	d.mu.Lock()
	calls := d.running[idKey(p.ID)]
	d.mu.Unlock()
	for _, c := range calls {
		c.cancel(Cancelled{})
	}
}

// cancellable wraps run so that $/cancelRequest naming id cancels its
// context. It is registered now, on the routing goroutine, so that a
// cancel read after the request finds it even before it has started.
func (d *dispatcher) cancellable(id json.RawMessage, run Run) Run {
	key := idKey(id)
	c := &underway{}
	ctx, cancel := context.WithCancelCause(d.ctx)
	c.cancel = cancel
	d.mu.Lock()
	if d.running == nil {
		d.running = map[string][]*underway{}
	}
	d.running[key] = append(d.running[key], c)
	d.mu.Unlock()
	return func(context.Context) (any, error) {
		defer func() {
			d.mu.Lock()
			list := d.running[key]
			for i, x := range list {
				if x == c {
					list = append(list[:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(d.running, key)
			} else {
				d.running[key] = list
			}
			d.mu.Unlock()
			cancel(nil)
		}()
		return run(ctx)
	}
}

// idKey is a request id as one text however it was written: a string by
// its decoded value, a number as written.
func idKey(id json.RawMessage) string {
	if str, ok := plainString(id); ok && len(id) > 0 && id[0] == '"' {
		return "s" + str
	}
	return "n" + string(id)
}

// safeRun turns a handler panic into an internal error: no input may crash
// the process.
func safeRun(ctx context.Context, run Run) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &panicError{r}
		}
	}()
	return run(ctx)
}
