package freelist

import (
	"runtime"
	"sync"
	"testing"
)

func TestList(t *testing.T) {
	var l List[*int]
	if _, ok := l.Get(); ok {
		t.Fatal("Get on an empty list")
	}
	a, b := new(int), new(int)
	l.Put(a)
	l.Put(b)
	if got, ok := l.Get(); !ok || got != b {
		t.Fatal("not LIFO")
	}
	l.Put(b)
	// Unlike sync.Pool, collections keep what is held.
	runtime.GC()
	runtime.GC()
	if l.Len() != 2 {
		t.Fatalf("%d held after two collections, want 2", l.Len())
	}
	if n := l.Drain(); n != 2 || l.Len() != 0 {
		t.Fatalf("Drain = %d, then %d held", n, l.Len())
	}
	if _, ok := l.Get(); ok {
		t.Fatal("Get after Drain")
	}
}

// TestKeep: Keep leaves the n most recently put values, in their order,
// and reports how many it dropped.
func TestKeep(t *testing.T) {
	for _, c := range []struct{ held, keep, dropped int }{
		{0, 1, 0}, {1, 1, 0}, {3, 1, 2}, {3, 0, 3}, {3, 5, 0}, {4, 2, 2}, {2, -1, 2},
	} {
		var l List[int]
		for i := range c.held {
			l.Put(i)
		}
		if got := l.Keep(c.keep); got != c.dropped {
			t.Errorf("%d held, Keep(%d) dropped %d, want %d", c.held, c.keep, got, c.dropped)
		}
		left := c.held - c.dropped
		if l.Len() != left {
			t.Fatalf("%d held, Keep(%d): %d left, want %d", c.held, c.keep, l.Len(), left)
		}
		for i := c.held - 1; i >= c.held-left; i-- { // the latest put first
			if v, ok := l.Get(); !ok || v != i {
				t.Fatalf("%d held, Keep(%d): Get = %d, %v; want %d", c.held, c.keep, v, ok, i)
			}
		}
	}
}

func TestListConcurrent(t *testing.T) {
	var l List[int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				l.Put(g*1000 + i)
				if _, ok := l.Get(); !ok {
					t.Error("a value put by this goroutine is gone")
					return
				}
			}
		}()
	}
	wg.Wait()
	if l.Len() != 0 {
		t.Fatalf("%d left", l.Len())
	}
}
