// Package freelist keeps idle buffers for reuse.
//
// Unlike sync.Pool a List never drops what it holds on a garbage
// collection: per-stream buffers (KV caches, decoder rings) are large and
// costly to fault in again, and a pool emptied between two bursts of
// requests makes the second burst allocate them anew while the first
// burst's copies still count in the resident memory. A List holds at most
// as many values as were ever idle at once (no more than the peak number of
// streams); Drain hands them all back to the garbage collector, for an
// owner that has been idle a while.
package freelist

import "sync"

// List is a LIFO stack of idle values, safe for concurrent use. The zero
// value is empty and ready.
type List[T any] struct {
	mu    sync.Mutex
	items []T
}

// Get pops the most recently put value (warmest in cache), if any.
func (l *List[T]) Get() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero T
	n := len(l.items)
	if n == 0 {
		return zero, false
	}
	v := l.items[n-1]
	l.items[n-1] = zero
	l.items = l.items[:n-1]
	return v, true
}

// Put adds an idle value.
func (l *List[T]) Put(v T) {
	l.mu.Lock()
	l.items = append(l.items, v)
	l.mu.Unlock()
}

// Len returns the number of idle values held.
func (l *List[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

// Drain drops every idle value and returns how many there were.
func (l *List[T]) Drain() int { return l.Keep(0) }

// Keep drops all but the n most recently put idle values (the warmest in
// cache, the next Get's) and returns how many it dropped.
func (l *List[T]) Keep(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	drop := max(len(l.items)-max(n, 0), 0)
	if drop == 0 {
		return 0
	}
	kept := make([]T, len(l.items)-drop) // a new array: the dropped values are unreachable
	copy(kept, l.items[drop:])
	l.items = kept
	return drop
}
