package engine

import (
	"context"
	"sync"
	"time"
)

// admission is the engine's slot semaphore: at most min(max, limit)
// requests hold a slot, later ones wait first come first served in a
// bounded queue. limit is the real-time limit (see realtime); it may
// change at any time, and a raised limit hands slots to waiters at once.
// A lowered one takes no slot back: it only holds the next requests.
type admission struct {
	mu      sync.Mutex
	inUse   int
	max     int
	limit   int
	queue   int
	waiters []*waiter
	closed  bool
	changed func(active, queued int) // called without mu, may be nil
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

func newAdmission(maxSlots, queue, limit int, changed func(active, queued int)) *admission {
	return &admission{max: maxSlots, limit: limit, queue: queue, changed: changed}
}

func (a *admission) capacity() int { return min(a.max, max(a.limit, 1)) }

// acquire takes a slot, waiting in the queue; ErrBusy when the queue is
// full, ErrClosed once closed (also while waiting), ctx's error if it ends
// first.
func (a *admission) acquire(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	if len(a.waiters) == 0 && a.inUse < a.capacity() {
		a.inUse++
		a.notify()
		return nil
	}
	if len(a.waiters) >= a.queue {
		a.mu.Unlock()
		return ErrBusy
	}
	w := &waiter{ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	a.notify()
	select {
	case <-w.ready: // granted set before ready closed
		if !w.granted {
			return ErrClosed
		}
		return nil
	case <-ctx.Done():
		a.abandon(w)
		return ctx.Err()
	}
}

// abandon withdraws a waiter whose context ended; if a slot was granted
// meanwhile, it goes to the next waiter (after close nobody waits).
func (a *admission) abandon(w *waiter) {
	a.mu.Lock()
	if w.granted {
		a.inUse--
	} else {
		for i, x := range a.waiters {
			if x == w {
				a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
				break
			}
		}
	}
	a.grant()
	a.notify()
}

// release returns a slot.
func (a *admission) release() {
	a.mu.Lock()
	a.inUse--
	a.grant()
	a.notify()
}

// setLimit changes the real-time limit.
func (a *admission) setLimit(n int) {
	a.mu.Lock()
	if n == a.limit {
		a.mu.Unlock()
		return
	}
	a.limit = n
	a.grant()
	a.notify()
}

// close fails every waiter (woken without a slot) and later acquire with
// ErrClosed.
func (a *admission) close() {
	a.mu.Lock()
	a.closed = true
	for _, w := range a.waiters {
		close(w.ready)
	}
	a.waiters = nil
	a.notify()
}

// grant hands free slots to waiters in order; mu held.
func (a *admission) grant() {
	for len(a.waiters) > 0 && a.inUse < a.capacity() {
		w := a.waiters[0]
		a.waiters[0] = nil
		a.waiters = a.waiters[1:]
		w.granted = true
		a.inUse++
		close(w.ready)
	}
}

// notify unlocks mu and reports the counts.
func (a *admission) notify() {
	active, queued := a.inUse, len(a.waiters)
	a.mu.Unlock()
	if a.changed != nil {
		a.changed(active, queued)
	}
}

// current returns how many slots may be in use now.
func (a *admission) current() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.capacity()
}

// counts returns the slots in use and the requests waiting.
func (a *admission) counts() (active, queued int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inUse, len(a.waiters)
}

// realtime learns how many streams the machine steps faster than real time
// and keeps admission's limit there, so that an admitted stream plays
// without gaps: requests beyond it wait in the queue (a longer time to
// first audio) instead of slowing every stream below real time.
//
// It keeps a moving average of the step time per batch size, from steps
// that carry no new stream (a prompt makes a step long once). The limit
// starts at 1. After a step at the limit it rises to the most streams
// expected within raise (75 % of a frame), assuming the cost grows in
// proportion to the streams (batching makes it grow less); it falls to n−1
// when the average at n streams exceeds lower (90 % of a frame). The gap
// between the two is room for what the average cannot see coming: a
// stream's steps get dearer during its first seconds (the codec's attention
// windows fill up), joining streams' prompts, inline clips being encoded,
// other load on the machine. Running streams are never cut: a lowered
// limit holds the next requests.
type realtime struct {
	raise, lower time.Duration
	avg          []time.Duration // moving average per batch size (index n), 0 = none
	limit        int
	max          int
}

// Shares of a frame's duration a step may be expected to take when the
// limit rises, and may take on average before it falls.
const (
	realtimeRaise = 0.75
	realtimeLower = 0.90
)

func newRealtime(frame time.Duration, maxStreams int) *realtime {
	return &realtime{
		raise: time.Duration(float64(frame) * realtimeRaise),
		lower: time.Duration(float64(frame) * realtimeLower),
		avg:   make([]time.Duration, maxStreams+1),
		limit: 1,
		max:   maxStreams,
	}
}

// observe records a steady step over n streams that took d and returns
// the new limit.
func (r *realtime) observe(n int, d time.Duration) int {
	if n < 1 || n >= len(r.avg) {
		return r.limit
	}
	if r.avg[n] == 0 {
		r.avg[n] = d
	} else {
		r.avg[n] += (d - r.avg[n]) / 4
	}
	switch a := r.avg[n]; {
	case a > r.lower && n > 1:
		r.limit = min(r.limit, n-1)
	case n >= r.limit && a > 0:
		// The most streams m with a·m/n within raise.
		fit := int(int64(r.raise) * int64(n) / int64(a))
		r.limit = max(r.limit, min(fit, r.max))
	}
	return r.limit
}
