package order

import (
	"context"
	"errors"
	"slices"
	"sync"
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

// TestPathLocksSerialiseOneFile: two holders of one path never overlap,
// another path is not held up, and no lock is kept once all are done.
func TestPathLocksSerialiseOneFile(t *testing.T) {
	var p PathLocks
	unlock := p.Lock("/ws/a")
	other := p.Lock("/ws/b") // does not wait for /ws/a
	other()
	got := make(chan struct{})
	go func() {
		u := p.Lock("/ws/a")
		close(got)
		u()
	}()
	select {
	case <-got:
		t.Fatal("a second holder took /ws/a while the first held it")
	default:
	}
	unlock()
	<-got
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
