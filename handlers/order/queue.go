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

// Pending is a set of what is under way and not yet settled, that
// someone may need to settle all at once: the calls read whose session
// lookup has not run, which a configuring method completes first. The
// zero Pending is ready.
type Pending[T comparable] struct {
	mu  sync.Mutex
	set map[T]struct{}
}

// Add puts v in the set.
func (p *Pending[T]) Add(v T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set == nil {
		p.set = map[T]struct{}{}
	}
	p.set[v] = struct{}{}
}

// Remove takes v out of the set.
func (p *Pending[T]) Remove(v T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.set, v)
}

// All lists what is in the set now.
func (p *Pending[T]) All() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := make([]T, 0, len(p.set))
	for v := range p.set {
		all = append(all, v)
	}
	return all
}
