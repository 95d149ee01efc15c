package order

import (
	"context"
	"sync"
)

// Queue hands out arrival-order tickets and lets their holders run one at
// a time in ticket order. A ticket released before its turn is skipped.
// The zero Queue is ready.
type Queue struct {
	mu       sync.Mutex
	next     uint64          // the next ticket handed out
	serving  uint64          // the ticket whose turn it is
	released map[uint64]bool // tickets released before their turn
	moved    chan struct{}   // closed at every release, for the waiters
}

// Take hands out the next ticket.
func (q *Queue) Take() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.next
	q.next++
	return t
}

// Idle says no ticket is out.
func (q *Queue) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.next == q.serving
}

// Wait blocks until it is t's turn or ctx ends.
func (q *Queue) Wait(ctx context.Context, t uint64) error {
	for {
		q.mu.Lock()
		if q.serving == t {
			q.mu.Unlock()
			return nil
		}
		if err := ctx.Err(); err != nil {
			q.mu.Unlock()
			return err
		}
		if q.moved == nil {
			q.moved = make(chan struct{})
		}
		moved := q.moved
		q.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
		}
	}
}

// Release ends ticket t, whether or not it ran.
func (q *Queue) Release(t uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released == nil {
		q.released = map[uint64]bool{}
	}
	q.released[t] = true
	for q.released[q.serving] {
		delete(q.released, q.serving)
		q.serving++
	}
	if q.moved != nil {
		close(q.moved)
		q.moved = nil
	}
}
