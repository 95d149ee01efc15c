package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// ticket is what a call takes on the read goroutine the moment its line is
// read: its registration in the session's running calls (so a tools.cancel
// or turn.cancel on a later line finds it even before it has started) and,
// for a Write/Edit, its place in the session's mutation order. Taking it
// reads nothing from the store: the read goroutine never waits on SQLite.
// The session and the permission mode are read on a goroutine of their
// own (lookup), and the configuring methods, which change them, wait for
// the lookups of the calls read before them (lookups.wait): a call is
// judged as things stood when its line was read.
type ticket struct {
	rt       *runtime
	id       string
	entry    *running // nil when the id was already running (dup)
	dup      bool
	mutation bool
	n        uint64
	// tool is the definition the line named when it was read: a
	// plugins.register on a later line must not change an earlier call's
	// tool, schema or risk (nil: unknown when read).
	tool *tools.Def
	// p is the call's params, decoded once when its line was read (ids
	// only when partial: a frontend's Arrive).
	p       ExecuteParams
	partial bool

	// looked is closed once lookup has filled what follows.
	looked chan struct{}
	// sess is the session as it was when the line was read: its operating
	// mode and delegate definitions judge the call, not those a later
	// approval.resolve or session.configure line set (design section 10:
	// nothing bypasses the matrix). absent: no such session then, and a
	// session.create on a later line does not make one for this call.
	sess      store.Session
	absent    bool
	lookupErr error
	permMode  string // the effective permission mode when the line was read
}

// takeTicket runs on the read goroutine. It returns nil for a line
// without ids.
func (s *Server) takeTicket(raw json.RawMessage) *ticket {
	var p ExecuteParams
	if err := json.Unmarshal(raw, &p); err != nil || p.SessionID == "" || p.ToolCallID == "" {
		return nil
	}
	tk := &ticket{id: p.ToolCallID, p: p, tool: s.tools.Get(p.ToolName), looked: make(chan struct{})}
	s.mu.Lock()
	tk.rt = s.runtimeLocked(p.SessionID)
	tk.entry, tk.dup = tk.rt.register(p.ToolCallID, p.TurnID)
	if t := tk.tool; t != nil && t.Mutation {
		tk.mutation, tk.n = true, tk.rt.mut.take()
	}
	s.mu.Unlock()
	s.lookups.start()
	go s.lookup(tk)
	return tk
}

// lookup reads the call's session and the permission mode in force.
func (s *Server) lookup(tk *ticket) {
	defer s.lookups.done()
	defer close(tk.looked)
	ctx := context.Background()
	sess, err := s.store.GetSession(ctx, tk.p.SessionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		tk.absent = true
		return
	case err != nil:
		tk.lookupErr = err
		return
	}
	tk.sess = sess
	if global, err := s.globalMode(ctx); err == nil {
		tk.permMode = perms.Effective(sess.PermissionMode, global)
	}
}

func (s *Server) releaseTicket(t *ticket) {
	if t == nil {
		return
	}
	if t.mutation {
		t.rt.mut.release(t.n)
	}
	if t.entry != nil {
		t.rt.unregister(t.id, t.entry)
	}
	// Ids a client makes up must not grow memory: the state kept for a
	// session that does not exist goes once nothing of it is under way.
	<-t.looked
	if t.absent || t.lookupErr != nil {
		s.forgetIdle(t.p.SessionID, t.rt)
	}
}

// lookups counts the session lookups under way for calls already read.
type lookups struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

func (l *lookups) start() {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
}

func (l *lookups) done() {
	l.mu.Lock()
	if l.n--; l.n == 0 && l.idle != nil {
		l.idle.Broadcast()
	}
	l.mu.Unlock()
}

// wait returns once every lookup started before it has ended. The
// configuring methods call it before they change a session or a setting.
func (l *lookups) wait() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idle == nil {
		l.idle = sync.NewCond(&l.mu)
	}
	for l.n > 0 {
		l.idle.Wait()
	}
}
