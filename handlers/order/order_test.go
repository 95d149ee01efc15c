package order

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestQueueRunsInTicketOrder: holders run one at a time in the order their
// tickets were taken, whatever order they start waiting in, and a ticket
// released before its turn is skipped.
func TestQueueRunsInTicketOrder(t *testing.T) {
	var q Queue
	const n = 8
	tickets := make([]uint64, n)
	for i := range tickets {
		tickets[i] = q.Take()
	}
	q.Release(tickets[3]) // never runs
	var mu sync.Mutex
	var ran []uint64
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		if i == 3 {
			continue
		}
		wg.Go(func() {
			if err := q.Wait(t.Context(), tickets[i]); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ran = append(ran, tickets[i])
			mu.Unlock()
			q.Release(tickets[i])
		})
	}
	wg.Wait()
	want := []uint64{0, 1, 2, 4, 5, 6, 7}
	if len(ran) != len(want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	for i := range want {
		if ran[i] != want[i] {
			t.Fatalf("ran %v, want %v", ran, want)
		}
	}
	if !q.Idle() {
		t.Fatal("every ticket was released, but the queue is not idle")
	}
}

// TestQueueWaitEndsWithItsContext: a holder whose turn has not come stops
// waiting when its context ends, and its release lets the next one go.
func TestQueueWaitEndsWithItsContext(t *testing.T) {
	var q Queue
	first, second, third := q.Take(), q.Take(), q.Take()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- q.Wait(ctx, second) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel = %v, want context.Canceled", err)
	}
	q.Release(second)
	if q.Idle() {
		t.Fatal("idle with two tickets out")
	}
	q.Release(first)
	if err := q.Wait(t.Context(), third); err != nil {
		t.Fatalf("third after first and second ended: %v", err)
	}
	// A turn that has come is taken even by a holder whose context ended.
	if err := q.Wait(ctx, third); err != nil {
		t.Fatalf("Wait for the ticket served, with an ended context = %v", err)
	}
	q.Release(third)
	if !q.Idle() {
		t.Fatal("not idle once every ticket ended")
	}
}

// TestPathLocksSerialiseOneFile: holders of one path never overlap, a
// holder of one path takes another without waiting, and no lock is kept
// once all are done.
func TestPathLocksSerialiseOneFile(t *testing.T) {
	var p PathLocks
	var inside atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock := p.Lock("/ws/a")
			if inside.Add(1) != 1 {
				t.Error("two holders of /ws/a at once")
			}
			p.Lock("/ws/b")() // not held up by /ws/a
			runtime.Gosched()
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.locks); n != 0 {
		t.Fatalf("%d locks kept after every holder unlocked", n)
	}
}

// TestPendingListsWhatIsUnderWay: All lists what was added and not yet
// removed, once each.
func TestPendingListsWhatIsUnderWay(t *testing.T) {
	var p Pending[int]
	if len(p.All()) != 0 {
		t.Fatal("a new Pending holds something")
	}
	p.Add(1)
	p.Add(2)
	p.Add(2)
	p.Add(3)
	p.Remove(1)
	p.Remove(7)
	got := p.All()
	slices.Sort(got)
	if !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("All = %v, want [2 3]", got)
	}
}
