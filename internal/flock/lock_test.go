package flock

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestLock: a held lock excludes other goroutines until released, a wait
// ends with the context's error, and a context that is already done still
// gets one try (so "try once" is a zero timeout).
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	done, cancel := context.WithCancel(context.Background())
	cancel()

	unlock, err := Lock(context.Background(), path, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if _, err := Lock(ctx, path, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held: %v, want the deadline", err)
	}
	if _, err := Lock(done, path, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a done context while held: %v, want canceled", err)
	}
	unlock()
	u, err := Lock(done, path, time.Millisecond)
	if err != nil {
		t.Fatalf("Lock with a done context on a free lock: %v, want one successful try", err)
	}
	u()

	// Mutual exclusion among goroutines.
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := Lock(context.Background(), path, time.Millisecond)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			u()
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d goroutines held the lock at once", most)
	}
}
