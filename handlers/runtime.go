package handlers

import (
	"context"
	"sync"

	"hostcore/handlers/failcount"
	"hostcore/handlers/order"
)

// runtime is the in-memory state of one session.
type runtime struct {
	mu       sync.Mutex
	running  map[string]*running // by toolCallId
	seq      uint64              // the last running.seq given out
	mut      order.Queue         // the session's mutation order
	failures failcount.Counts    // failed mutations per prompt (design section 4d)
	deleted  bool
	shells   shellPins // the shell each recent turn pinned (bash.go)
	// modeGate makes a switch into Plan or Goal and the calls those modes
	// refuse one after the other: such a call holds it for reading from
	// its last mode check to the end of its body, and the switch holds it
	// for writing. A Write that passed the check cannot land after the
	// session entered Plan, and one that has not is checked after.
	modeGate sync.RWMutex
}

// running is a call registered in its session: from the moment its line
// is read until it has been answered.
type running struct {
	turnID string
	seq    uint64        // arrival order within the session
	done   chan struct{} // closed once the call has ended and been audited
	// Under the runtime's mu: cancel is nil until the call starts; cause is
	// the first stop, applied when it starts if it came before.
	cancel context.CancelCauseFunc
	cause  error
	// stopped: the call ended early because it was cancelled
	// (ToolResult.stopped). Written before done is closed, read after.
	stopped bool
}

// register adds a call to the session's running calls; dup reports that one
// with the same id is still there (and nothing was added).
func (rt *runtime) register(id, turnID string) (r *running, dup bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if _, ok := rt.running[id]; ok {
		return nil, true
	}
	rt.seq++
	r = &running{turnID: turnID, seq: rt.seq, done: make(chan struct{})}
	rt.running[id] = r
	return r, false
}

// start gives a registered call its cancel function, and applies a stop
// that came before it started. deleted: the session is being deleted.
func (rt *runtime) start(r *running, cancel context.CancelCauseFunc) (deleted bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r.cancel = cancel
	if r.cause != nil {
		cancel(r.cause)
	}
	return rt.deleted
}

// unregister removes an ended call and wakes whoever waits for its end.
func (rt *runtime) unregister(id string, r *running) {
	rt.mu.Lock()
	if rt.running[id] == r {
		delete(rt.running, id)
	}
	rt.mu.Unlock()
	close(r.done)
}

// stop cancels the call, or has it cancelled the moment it starts. The
// runtime's mu is held.
func (r *running) stop(cause error) {
	if r.cause == nil {
		r.cause = cause
	}
	if r.cancel != nil {
		r.cancel(cause)
	}
}

func (s *Server) runtime(id string) *runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runtimeLocked(id)
}

// runtimeLocked is runtime with s.mu held.
func (s *Server) runtimeLocked(id string) *runtime {
	rt := s.sessions[id]
	if rt == nil {
		rt = &runtime{running: map[string]*running{}}
		s.sessions[id] = rt
	}
	return rt
}

// forgetIdle drops the session's in-memory state if it is rt and holds
// nothing: no call registered or waiting its turn, no failure counted, no
// shell pinned. Calls register under s.mu, so none can be joining it.
func (s *Server) forgetIdle(id string, rt *runtime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[id] != rt {
		return
	}
	rt.mu.Lock()
	idle := len(rt.running) == 0 && rt.failures.Empty() && len(rt.shells.byTurn) == 0 && !rt.deleted && rt.mut.Idle()
	rt.mu.Unlock()
	if idle {
		delete(s.sessions, id)
	}
}

// isDeleted says whether the session is being (or was) deleted.
func (rt *runtime) isDeleted() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.deleted
}

func (s *Server) dropRuntime(id string) *runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.sessions[id]
	delete(s.sessions, id)
	return rt
}

// lockPath serialises mutations of one file across sessions (order.PathLocks).
func (s *Server) lockPath(abs string) (unlock func()) { return s.pathLocks.Lock(abs) }
