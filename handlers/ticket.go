package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"hostcore/handlers/order"
	"hostcore/handlers/tools"
	"hostcore/perms"
	"hostcore/store"
)

// ticket is what a call takes on the read goroutine the moment its line is
// read: its registration in the session's running calls (so a tools.cancel
// or turn.cancel on a later line finds it even before it has started) and,
// for a Write/Edit, its place in the session's mutation order. Taking it
// reads nothing from the store: the read goroutine never waits on SQLite
// for a call. The session and the permission mode are read by the call's
// own goroutine (lookUp); a configuring method, which may change them,
// first completes the lookups of the calls read before it
// (settleLookups), so a call is judged as things stood when its line was
// read.
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

	// looked makes the lookup happen once, by whichever needs it first:
	// the call, or a configuring method read after it.
	looked sync.Once
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
	if err := decode(raw, &p); err != nil || p.SessionID == "" || p.ToolCallID == "" {
		return nil
	}
	tk := &ticket{id: p.ToolCallID, p: p, tool: s.tools.Get(p.ToolName)}
	s.mu.Lock()
	tk.rt = s.runtimeLocked(p.SessionID)
	tk.entry, tk.dup = tk.rt.register(p.ToolCallID, p.TurnID)
	if t := tk.tool; t != nil && t.Mutation {
		tk.mutation, tk.n = true, tk.rt.mut.Take()
	}
	s.mu.Unlock()
	s.lookups.Add(tk)
	return tk
}

// lookUp reads the call's session and the permission mode in force, once.
func (s *Server) lookUp(tk *ticket) {
	tk.looked.Do(func() {
		defer s.lookups.Remove(tk)
		tk.lookUp(s)
	})
}

func (tk *ticket) lookUp(s *Server) {
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
		t.rt.mut.Release(t.n)
	}
	if t.entry != nil {
		t.rt.unregister(t.id, t.entry)
	}
	// Ids a client makes up must not grow memory: the state kept for a
	// session that does not exist goes once nothing of it is under way.
	s.lookUp(t)
	if t.absent || t.lookupErr != nil {
		s.forgetIdle(t.p.SessionID, t.rt)
	}
}

// lookups are the tickets whose session is not looked up yet.
type lookups = order.Pending[*ticket]

// settleLookups completes the lookups of every call read so far, doing
// them here for the calls that have not started (a lookup under way is
// waited for). The configuring methods call it before they change a
// session or a setting.
func (s *Server) settleLookups() {
	for _, tk := range s.lookups.All() {
		s.lookUp(tk)
	}
}
