package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// answerID is a request's id as its answer carries it: a number exactly
// as sent, a string as encoding/json writes its value.
func answerID(dst []byte, id json.RawMessage) []byte {
	if len(id) > 0 && id[0] == '"' {
		str, _ := plainString(id)
		q, _ := json.Marshal(str)
		return append(dst, q...)
	}
	return append(dst, id...)
}

// writeResult writes a success response; now: written by the read
// goroutine (writeLineNow).
func (s *lineStream) writeResult(id json.RawMessage, result any, now bool) error {
	res, err := json.Marshal(result)
	if err != nil {
		return err
	}
	line := answerID(append(make([]byte, 0, len(res)+64), `{"id":`...), id)
	line = append(append(line, `,"result":`...), res...)
	line = append(line, `,"jsonrpc":"2.0"}`+"\n"...)
	if now {
		return s.writeLineNow(line)
	}
	return s.writeLine(line)
}

// writeError writes an error response.
func (s *lineStream) writeError(id json.RawMessage, e *Error, now bool) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line := answerID(append(make([]byte, 0, len(data)+64), `{"id":`...), id)
	line = append(append(line, `,"error":`...), data...)
	line = append(line, `,"jsonrpc":"2.0"}`+"\n"...)
	if now {
		return s.writeLineNow(line)
	}
	return s.writeLine(line)
}

// writeLine writes one or more whole lines, each ending in '\n', with one
// Write: no other line can come between them.
func (s *lineStream) writeLine(line []byte) error {
	s.addWaiting(int64(len(line)))
	defer s.addWaiting(-int64(len(line)))
	// Lines the read goroutine left behind (writeLineNow) answered
	// requests read before this line's was, or were sent before it: they
	// go first, as they would had the read goroutine written them itself.
	if active := s.behind(); active != nil {
		<-active
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(line)
}

func (s *lineStream) writeLocked(line []byte) error {
	if s.broken {
		return errClientGone
	}
	if d, ok := s.w.(interface{ SetWriteDeadline(time.Time) error }); ok && s.draining.Load() {
		d.SetWriteDeadline(time.Now().Add(writeDrain))
	}
	if _, err := s.w.Write(line); err != nil {
		s.broken = true
		if s.onBreak != nil {
			go s.onBreak()
		}
		return errClientGone
	}
	return nil
}

var errClientGone = errors.New("client is gone: stdout closed")

// writeLineNow is writeLine for the read goroutine: it does not wait for
// a client that does not read, so that such a client can still finish
// writing the request it is stuck on. Where stdout is non-blocking
// (nowaitFd, see Server), one write system call puts in what the pipe or
// socket takes now; the rest, if any, is left behind: one goroutine
// writes what is left behind, in order, and holds the write lock across
// the rest of a line begun, so no other line comes between its parts. A
// line that finds the lock taken, or lines left behind before it, is
// left behind too. Past maxBehind
// bytes left behind, the read goroutine waits for them (a client that
// sends without ever reading must not grow memory without bound).
// Elsewhere it is writeLine.
func (s *lineStream) writeLineNow(line []byte) error {
	if s.nowaitFd < 0 {
		return s.writeLine(line)
	}
	s.qmu.Lock()
	active, over := s.qdone, s.queued > maxBehind
	s.qmu.Unlock()
	if over {
		<-active
		active = nil
	}
	if active != nil || !s.wmu.TryLock() {
		s.leaveBehind(line, false)
		return nil
	}
	if s.broken || s.draining.Load() {
		defer s.wmu.Unlock()
		return s.writeLocked(line)
	}
	n, err := writeNonblocking(s.nowaitFd, line)
	if err != nil {
		// What writeLocked does on a failed write; the poller's write
		// would fail the same way.
		defer s.wmu.Unlock()
		return s.writeLocked(line[max(n, 0):])
	}
	if n == len(line) {
		s.wmu.Unlock()
		return nil
	}
	s.leaveBehind(line[n:], true)
	return nil
}

// maxBehind bounds the memory of lines writeLineNow leaves behind (their
// buffers' capacity).
const maxBehind = 16 << 20

// leaveBehind queues p for the goroutine that writes what is left behind,
// starting it if none runs. locked: the caller holds the write lock,
// which passes to that goroutine (p is the rest of a line begun; nothing
// is queued then, or the caller would not have written).
func (s *lineStream) leaveBehind(p []byte, locked bool) {
	s.qmu.Lock()
	s.queue = append(s.queue, p)
	s.queued += cap(p) // what it holds: a short answer sits in a larger buffer
	start := s.qdone == nil
	if start {
		s.qdone = make(chan struct{})
	}
	s.qmu.Unlock()
	if start {
		go s.writeBehind(locked)
	}
}

// writeBehind writes the lines left behind until none is left. Between
// two lines it lets the write lock go, so that a worker's answer is not
// held up behind a queue.
func (s *lineStream) writeBehind(locked bool) {
	for {
		s.qmu.Lock()
		if len(s.queue) == 0 {
			done := s.qdone
			s.qdone, s.queue = nil, nil
			s.qmu.Unlock()
			close(done)
			return
		}
		p := s.queue[0]
		s.queue[0], s.queue = nil, s.queue[1:]
		s.qmu.Unlock()
		if !locked {
			s.wmu.Lock()
		}
		s.writeLocked(p)
		s.wmu.Unlock()
		locked = false
		s.qmu.Lock()
		s.queued -= cap(p)
		s.qmu.Unlock()
	}
}

// settle returns once every line begun has been written whole, or has
// failed: it waits for the lines left behind, then takes the write lock
// (a worker's line in progress). Run calls it before it returns (the
// process then exits): an answer counted as given must not be cut off.
func (s *lineStream) settle() {
	for active := s.behind(); active != nil; active = s.behind() {
		<-active
	}
	s.wmu.Lock()
	s.wmu.Unlock()
}

// behind returns, while lines left behind are being written, a channel
// closed once they all are; nil when none is left.
func (s *lineStream) behind() chan struct{} {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.qdone
}

// addWaiting counts d bytes in (or, negative, out of) writeLine.
func (s *lineStream) addWaiting(d int64) {
	s.wamu.Lock()
	defer s.wamu.Unlock()
	s.waiting += d
	if d < 0 {
		s.wakeLocked()
	}
}

// wakeLocked lets the calls waitForRoom holds look again.
func (s *lineStream) wakeLocked() {
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// Bounds of waitForRoom: past backedUp bytes waiting in writeLine the
// client is taken to be behind, and at most behindCalls calls run at once
// that started then, while at most waitingMax bytes wait.
const (
	backedUp    = 1 << 20
	behindCalls = 8
)

// waitForRoom is called by a call before it runs. While the client keeps
// up (at most backedUp bytes waiting in writeLine) it returns at once.
// Once the client is behind, the call waits until at most waitingMax bytes
// wait and fewer than behindCalls calls that started that way have yet to
// see their answers written; done, called once the call's answer is
// written, frees its place. A client that sends requests without reading
// the answers (a Read's can be megabytes) would otherwise have every call
// the in-flight budget admits, a thousand, hold its finished answer:
// gigabytes. Waiting, a call holds only its params, which the budget
// bounds, and requests past the budget are refused BUSY as ever; the read
// goroutine never waits here. A call waits at most until ctx ends
// (shutdown), and runs then, to answer as aborted.
func (s *lineStream) waitForRoom(ctx context.Context) (done func()) {
	for {
		s.wamu.Lock()
		if s.waitingMax <= 0 || s.waiting <= backedUp {
			s.wamu.Unlock()
			return func() {}
		}
		if s.waiting <= s.waitingMax && s.behindRunning < behindCalls {
			s.behindRunning++
			s.wamu.Unlock()
			return func() {
				s.wamu.Lock()
				defer s.wamu.Unlock()
				s.behindRunning--
				s.wakeLocked()
			}
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.wamu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return func() {}
		}
	}
}
