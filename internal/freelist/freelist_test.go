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
