package rpc

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sync"
	"time"
	"unicode/utf8"
)

// owed is a host→client request waiting for its reply.
type owed struct {
	// reply receives the reply, on the read goroutine, before it reads on.
	reply chan reply
}

// reply is a client's reply as read.
type reply struct {
	result json.RawMessage
	err    *Error
	// behind is how many requests the sequencer had been given when the
	// reply was read (sequencer.mark): it is acted on only once they have
	// all been handled.
	behind uint64
}

// owes says whether a host request with this id (JSON text) waits for
// its reply.
func (s *Server) owes(id []byte) bool {
	_, ok := s.owed(id)
	return ok
}

// owed finds the request waiting for a reply with this id (JSON text).
// Host ids are strings: a number matches nothing, and a string matches
// however the client escaped it.
func (s *Server) owed(id []byte) (*owed, bool) {
	if len(id) == 0 || id[0] != '"' {
		return nil, false
	}
	key, ok := plainString(id)
	if !ok {
		return nil, false
	}
	v, ok := s.pending.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*owed), true
}

// deliver hands a reply to the Call waiting for it. One that matches no
// waiting request (late, never asked for, or forged: a host id cannot be
// guessed) is dropped and logged, never matched to anything else.
func (s *Server) deliver(m message) {
	o, ok := s.owed(m.id)
	if !ok {
		s.log.Warn("reply to no pending host request dropped (late, or never asked for)", "id", boundedID(m.id))
		return
	}
	select {
	case o.reply <- reply{result: m.result, err: m.err, behind: s.seq.mark()}:
	default: // a second reply to the same request
	}
}

// maxLoggedID bounds an id as logged: a stray reply's id is the client's
// text, up to a whole line long.
const maxLoggedID = 64

// boundedID is an id (JSON text) cut to maxLoggedID bytes on a character
// boundary, for the log (whose encoder escapes what it holds).
func boundedID(id []byte) string {
	if len(id) <= maxLoggedID {
		return string(id)
	}
	cut := maxLoggedID
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return string(id[:cut]) + "…"
}

// newCallID returns the id of a host request: at least 128 random bits
// (crypto/rand.Text), so that nobody but the client, which reads the
// request, can answer it. A reply with a guessed id matches nothing.
func newCallID() string { return rand.Text() }

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
	// hostcore picks the id, so that framing knows which ids are owed a
	// reply (a malformed reply is then never answered).
	key := newCallID()
	o := &owed{reply: make(chan reply, 1)}
	s.pending.Store(key, o)
	err := s.waitReply(ctx, caller, key, o, method, params, result)
	s.pending.Delete(key)
	if err != nil && s.inputCtx.Err() != nil && !errors.As(err, new(*Error)) {
		// An error reply read before the input closed stays what it is.
		return ErrNoClient
	}
	return err
}

// waitReply sends the request and waits for its reply.
func (s *Server) waitReply(ctx, caller context.Context, key string, o *owed, method string, params, result any) error {
	// The id is base32: its JSON text is the string quoted, no escapes.
	line, err := requestLine(`"`+key+`"`, method, params)
	if err != nil {
		return err
	}
	if err := s.stream.writeLine(line); err != nil {
		return err
	}
	var r reply
	select {
	case r = <-o.reply:
	case <-s.closed:
		return errClosed
	case <-ctx.Done():
		// A reply read before the wait ended (the input's end, or the
		// deadline right behind it) counts: the read goroutine hands it
		// over before it reads on, so it is there now.
		select {
		case r = <-o.reply:
			if caller.Err() != nil {
				return ctx.Err()
			}
		default:
			return ctx.Err()
		}
	}
	if r.behind > 0 {
		if err := s.seq.waitFor(caller, r.behind); err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
	if result == nil {
		return nil
	}
	return decodeReply(method, r.result, result)
}

// Notify sends a host→client notification.
func (s *Server) Notify(ctx context.Context, method string, params any) error {
	select {
	case <-s.closed:
		return errClosed
	default:
	}
	line, err := requestLine("", method, params)
	if err != nil {
		return err
	}
	return s.stream.writeLine(line)
}

// requestLine encodes a host→client request (a notification without id)
// as one line, members in name order; params nil are left out.
func requestLine(id, method string, params any) ([]byte, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, err
	}
	line := []byte{'{'}
	if id != "" {
		line = append(append(append(line, `"id":`...), id...), ',')
	}
	line = append(append(line, `"jsonrpc":"2.0","method":`...), m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		line = append(append(line, `,"params":`...), p...)
	}
	return append(line, '}', '\n'), nil
}

// NotifyBuildN sends n notifications of one method with one write. build(i,
// dst) appends the params of notification i, one valid JSON object,
// straight into the lines that are written (and must not keep dst): a flood
// of output is encoded once, copied by nobody on its way to the client, and
// costs a system call per batch, not per notification.
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
