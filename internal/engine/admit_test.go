package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitQueued polls until a has n waiters.
func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, q := a.counts(); q == n {
			return
		}
	}
	t.Fatalf("queue never reached %d", n)
}

// TestAdmissionOrder: waiters get slots first come first served, a full
// queue refuses at once, and a raised limit admits waiters immediately
// while a lowered one takes no slot back.
func TestAdmissionOrder(t *testing.T) {
	a := newAdmission(4, 3, 1, nil)
	ctx := context.Background()
	if err := a.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	for i := range 3 {
		go func() {
			if err := a.acquire(ctx); err != nil {
				t.Error(err)
			}
			got <- i
		}()
		waitQueued(t, a, i+1)
	}
	if err := a.acquire(ctx); !errors.Is(err, ErrBusy) {
		t.Fatalf("acquire with a full queue: %v, want ErrBusy", err)
	}
	a.release()
	if i := <-got; i != 0 {
		t.Fatalf("first waiter served: %d, want 0", i)
	}
	for want := 1; want <= 2; want++ {
		a.setLimit(want + 1) // room for one more waiter
		if i := <-got; i != want {
			t.Fatalf("waiter served: %d, want %d", i, want)
		}
	}
	if act, q := a.counts(); act != 3 || q != 0 {
		t.Fatalf("counts %d/%d, want 3/0", act, q)
	}
	a.setLimit(1) // lowering keeps the three slots
	if act, _ := a.counts(); act != 3 {
		t.Fatalf("active after lowering: %d", act)
	}
	a.release()
	a.release()
	// Two still above the limit of one: the next request waits.
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := a.acquire(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire over the limit: %v, want to wait until the deadline", err)
	}
	if act, q := a.counts(); act != 1 || q != 0 {
		t.Fatalf("counts after an abandoned wait %d/%d, want 1/0", act, q)
	}
}

// TestAdmissionAbandonAfterGrant: a waiter granted a slot just as its
// context ends passes the slot on.
func TestAdmissionAbandonAfterGrant(t *testing.T) {
	a := newAdmission(1, 2, 1, nil)
	if err := a.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := &waiter{ready: make(chan struct{})}
	a.mu.Lock()
	a.waiters = append(a.waiters, w)
	a.mu.Unlock()
	next := make(chan error, 1)
	go func() { next <- a.acquire(context.Background()) }()
	waitQueued(t, a, 2)
	a.release() // granted to w
	if !w.granted {
		t.Fatal("the first waiter was not granted the slot")
	}
	a.abandon(w) // its context ended: the slot goes on
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	if act, q := a.counts(); act != 1 || q != 0 {
		t.Fatalf("counts %d/%d, want 1/0", act, q)
	}
}

// TestAdmissionClose fails waiters and later requests with ErrClosed and
// leaves no slot counted for them.
func TestAdmissionClose(t *testing.T) {
	var mu sync.Mutex
	var last [2]int
	a := newAdmission(1, 2, 1, func(act, q int) { mu.Lock(); last = [2]int{act, q}; mu.Unlock() })
	if err := a.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 2)
	for range 2 {
		go func() { res <- a.acquire(context.Background()) }()
	}
	waitQueued(t, a, 2)
	a.close()
	for range 2 {
		if err := <-res; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter after close: %v, want ErrClosed", err)
		}
	}
	if err := a.acquire(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v", err)
	}
	a.release()
	mu.Lock()
	defer mu.Unlock()
	if act, q := a.counts(); act != 0 || q != 0 || last != [2]int{0, 0} {
		t.Fatalf("counts %d/%d (reported %v), want 0/0", act, q, last)
	}
}

// TestRealtimeEstimator follows the limit through step times, with an 80 ms
// frame: it rises to what fits 60 ms and falls when an average exceeds
// 72 ms.
func TestRealtimeEstimator(t *testing.T) {
	ms := time.Millisecond
	r := newRealtime(80*ms, 8)
	if r.raise != 60*ms || r.lower != 72*ms {
		t.Fatalf("thresholds %v, %v", r.raise, r.lower)
	}
	steps := []struct {
		n    int
		d    time.Duration
		want int
	}{
		{1, 20 * ms, 3},  // 60·1/20: three streams fit
		{1, 10 * ms, 3},  // below the limit: no change
		{3, 66 * ms, 3},  // over 60 but not 72: stay
		{3, 90 * ms, 3},  // average 72: not over
		{3, 90 * ms, 2},  // average 76.5 > 72: one stream less
		{2, 50 * ms, 2},  // 60·2/50 = 2.4
		{2, 10 * ms, 3},  // average 40: 60·2/40 = 3, back up
		{1, 200 * ms, 3}, // a step of one stream never lowers the limit
		{9, 10 * ms, 3},  // beyond MaxStreams: ignored
	}
	for i, s := range steps {
		if got := r.observe(s.n, s.d); got != s.want {
			t.Fatalf("step %d (%d streams, %v): limit %d, want %d", i, s.n, s.d, got, s.want)
		}
	}
	// It jumps to what fits, never beyond MaxStreams.
	r = newRealtime(80*ms, 8)
	if got := r.observe(1, 10*ms); got != 6 {
		t.Fatalf("limit %d, want 6", got)
	}
	if got := r.observe(6, 40*ms); got != 8 {
		t.Fatalf("limit %d, want MaxStreams 8", got)
	}
}
