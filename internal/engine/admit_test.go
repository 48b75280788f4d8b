package engine

import (
	"context"
	"errors"
	"math"
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

// machine is a synthetic step-time model: a step of n streams takes
// load·(fixed + perStream·n).
type machine struct {
	fixed, perStream time.Duration
	load             float64
}

func (m machine) step(n int) time.Duration {
	return time.Duration(m.load * float64(m.fixed+time.Duration(n)*m.perStream))
}

// calibrate feeds r the steps Engine.Calibrate would measure on m.
func calibrate(r *realtime, m machine, sizes ...int) int {
	for _, n := range sizes {
		r.calibrating(n)
		for range 8 {
			if got := r.observe(n, m.step(n)); got != n {
				panic("the limit moved while calibrating")
			}
		}
	}
	limit, _ := r.calibrated()
	return limit
}

// serve runs steps on m with more requests than slots: whenever the limit
// allows more streams, queued requests join at once; when it is below the
// running streams, one of them ends per step (running streams are never
// cut). It returns the lowest and highest limit over the last half of the
// steps and the longest step of that half.
func serve(r *realtime, m machine, active *int, steps int) (lo, hi int, longest time.Duration) {
	lo = math.MaxInt
	for i := range steps {
		r.mu.Lock()
		limit := r.current()
		r.mu.Unlock()
		if *active < limit {
			*active = limit
		} else if *active > limit {
			*active--
		}
		d := m.step(*active)
		got := r.observe(*active, d)
		if i >= steps/2 {
			lo, hi, longest = min(lo, got), max(hi, got), max(longest, d)
		}
	}
	return lo, hi, longest
}

// TestRealtimeCalibratedMachine follows the limit on a machine whose steps
// cost 22 ms plus 3 ms per stream (an 80 ms frame, up to 16 streams): the
// calibration finds that shape and starts at 12 streams (22+3·12 = 58 ms,
// within 60); a noisy neighbour that makes every step 1.6× longer brings it
// to 5 (1.6·(22+3·5) = 59 ms) without flapping; when it leaves, the limit
// climbs back to 12. A load that makes even one stream miss its frame opens
// every slot until it leaves.
func TestRealtimeCalibratedMachine(t *testing.T) {
	ms := time.Millisecond
	r := newRealtime(80*ms, 16)
	m := machine{fixed: 22 * ms, perStream: 3 * ms, load: 1}
	if got := calibrate(r, m, 1, 4, 8); got != 12 {
		t.Fatalf("calibrated limit %d, want 12", got)
	}
	if math.Abs(r.fixed-22.0/3) > 0.01 {
		t.Fatalf("fixed part %.3f streams, want %.3f", r.fixed, 22.0/3)
	}
	active := 0
	phases := []struct {
		name    string
		load    float64
		lo, hi  int
		longest time.Duration
	}{
		{"quiet", 1, 12, 12, 58 * ms},
		{"noisy neighbour", 1.6, 5, 5, time.Duration(1.6 * float64(37*ms))},
		{"neighbour gone", 1, 12, 12, 58 * ms},
		// Four times slower, one stream takes 100 ms: none can be real
		// time, so every slot opens (throughput) instead of one stream at
		// a time.
		{"overloaded", 4, 16, 16, 4 * 70 * ms},
		{"load gone", 1, 12, 12, 58 * ms},
	}
	for _, p := range phases {
		m.load = p.load
		lo, hi, longest := serve(r, m, &active, 200)
		if lo != p.lo || hi != p.hi || longest > p.longest+ms {
			t.Errorf("%s: limit %d–%d, longest step %v; want %d–%d, ≤ %v", p.name, lo, hi, longest, p.lo, p.hi, p.longest)
		}
	}
}

// TestRealtimeUncalibrated: without a calibration every stream is assumed
// to cost the same, the cautious guess; on the same machine the limit then
// settles lower, and still follows a neighbour down and back up, and an
// overload open every slot.
func TestRealtimeUncalibrated(t *testing.T) {
	ms := time.Millisecond
	r := newRealtime(80*ms, 16)
	m := machine{fixed: 22 * ms, perStream: 3 * ms, load: 1}
	active := 0
	quiet, _, _ := serve(r, m, &active, 200)
	if quiet < 2 || quiet > 12 {
		t.Fatalf("uncalibrated quiet limit %d, want within 2–12", quiet)
	}
	m.load = 1.6
	noisy, _, _ := serve(r, m, &active, 200)
	m.load = 1
	back, _, _ := serve(r, m, &active, 200)
	if noisy >= quiet || back < quiet {
		t.Errorf("limit quiet %d, noisy %d, after %d: want it lower with the neighbour and back after", quiet, noisy, back)
	}
	// Overloaded (one stream takes 100 ms), the wrong shape must not make
	// the limit flap between 1 and every slot.
	m.load = 4
	if lo, hi, _ := serve(r, m, &active, 200); lo != 16 || hi != 16 {
		t.Errorf("overloaded: limit %d–%d, want every slot (16)", lo, hi)
	}
	m.load = 1
	// It settles again, within one of where it was (the cautious shape
	// predicts neighbouring sizes only roughly), its steps within 72 ms.
	if lo, hi, longest := serve(r, m, &active, 200); lo != hi || lo < back-1 || lo > back+1 || longest > 72*ms {
		t.Errorf("after the overload: limit %d–%d, longest step %v; want steady within one of %d, ≤ 72ms", lo, hi, longest, back)
	}
}

// TestRealtimeShape: the fixed part fitted to calibration steps, bounded
// for steps that do not grow with the streams (or shrink: noise) and zero
// for steps that grow faster than the streams; one batch size leaves the
// cautious shape.
func TestRealtimeShape(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		steps map[int]time.Duration
		fixed float64
		limit int
	}{
		{"linear", map[int]time.Duration{1: 25 * ms, 4: 34 * ms, 8: 46 * ms}, 22.0 / 3, 12},
		{"flat", map[int]time.Duration{1: 30 * ms, 8: 30 * ms}, maxFixed, 16},
		{"shrinking", map[int]time.Duration{1: 40 * ms, 8: 30 * ms}, maxFixed, 16},
		{"faster than proportional", map[int]time.Duration{1: 5 * ms, 8: 60 * ms}, 0, 8},
		{"one size", map[int]time.Duration{4: 30 * ms}, 0, 8},
		{"too slow already", map[int]time.Duration{1: 50 * ms, 4: 90 * ms}, 2.75, 1},
		{"overloaded", map[int]time.Duration{1: 100 * ms, 4: 136 * ms, 8: 184 * ms}, 22.0 / 3, 16},
	} {
		r := newRealtime(80*ms, 16)
		for n, d := range tc.steps {
			r.calibrating(n)
			r.observe(n, d)
		}
		limit, fixed := r.calibrated()
		if limit != tc.limit || math.Abs(fixed-tc.fixed) > 0.01 {
			t.Errorf("%s: limit %d, fixed %.3f; want %d, %.3f", tc.name, limit, fixed, tc.limit, tc.fixed)
		}
	}
}

// TestRealtimeStale: an average not fed for staleSteps steps restarts from
// the next step instead of blending what the machine did then.
func TestRealtimeStale(t *testing.T) {
	ms := time.Millisecond
	r := newRealtime(80*ms, 16)
	r.observe(8, 40*ms)
	r.observe(8, 40*ms)
	for range staleSteps {
		r.observe(4, 30*ms)
	}
	r.observe(8, 100*ms)
	if r.avg[8] != 100*ms {
		t.Fatalf("average at 8 after a long pause: %v, want the new step's 100ms", r.avg[8])
	}
	r.observe(8, 60*ms)
	if r.avg[8] != 90*ms {
		t.Fatalf("average at 8: %v, want 90ms (a quarter of the way to 60)", r.avg[8])
	}
}
