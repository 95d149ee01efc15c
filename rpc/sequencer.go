package rpc

import (
	"context"
	"sync"
	"sync/atomic"
)

// sequencer runs configuring methods, and the requests read while one
// runs, in arrival order on a goroutine of its own (see dispatcher.handle).
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
// for room: only then does the read goroutine wait, replies unread.
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
	if !q.busy.Load() && r.m.Kind != Configuring {
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
	if r.m.Kind != Configuring && full() {
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
