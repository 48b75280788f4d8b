package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
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
// that carry no new stream (a prompt makes a step long once); an average
// not fed for staleSteps steps starts afresh, so that what the machine did
// at that size a while ago (quieter, or busier) does not linger. It predicts
// the step time at other sizes from a shape: a step costs a fixed part
// (the model's weights are read once per step however many streams it
// carries) plus a part per stream, so d(n) = s·(fixed + n) with fixed in
// units of one stream's cost. The shape is measured at start-up (calibrate:
// steps at a few batch sizes); until then fixed is 0, every stream costing
// the same (the most cautious guess). The scale s comes from the step just
// observed, so other load on the machine (a noisy neighbour) shows at once
// in the prediction and leaves with it.
//
// After a step at or above the limit, the limit rises to the most streams
// whose step is predicted within raise (75 % of a frame): a request is
// admitted while the step with it is expected to stay well inside the
// frame. It falls, to at most n−1 and to what the prediction allows, when
// the average at n streams exceeds lower (90 % of a frame). The gap between
// the two is the hysteresis that keeps the limit from flapping, and room for
// what the average cannot see coming: a stream's steps get dearer during
// its first seconds (the codec's attention windows fill up), joining
// streams' prompts, inline clips being encoded. Running streams are never
// cut: a lowered limit holds the next requests.
//
// When even one stream cannot be stepped within lower, no stream can play
// without gaps and holding requests back buys nothing: a queued request
// would wait whole requests long and then play with gaps all the same,
// while batching more streams raises the frames per second the machine
// delivers. The limit then opens every slot (overloaded) until one stream
// surely fits within raise again. Both tests assume the least favourable
// shape rather than the calibrated one (see overloaded and oneFits), so
// that a calibration taken on a busy machine cannot make the limit flap
// between 1 and every slot. Without this a busy machine admitted one
// stream at a time: minutes of waiting, and gaps as well.
type realtime struct {
	mu           sync.Mutex
	raise, lower time.Duration
	avg          []time.Duration // moving average per batch size (index n), 0 = none
	seen         []int64         // the step that last fed avg[n]
	steps        int64
	limit        int
	max          int
	fixed        float64 // the shape's fixed part, in streams' worth of cost
	hold         int     // while calibrating: the limit, whatever the steps say
	overloaded   bool    // one stream is not real time: every slot is open
}

// Shares of a frame's duration a step may be expected to take when the
// limit rises, and may take on average before it falls.
const (
	realtimeRaise = 0.75
	realtimeLower = 0.90
)

// maxFixed bounds the shape's fixed part: a calibration that finds steps
// hardly growing with the streams (noise, or a machine busy elsewhere
// while the small batches ran) must not promise many more streams than
// were measured. The step times in docs/performance.md put it near 2
// (int8) to 8 (f32) streams on Zen 5.
const maxFixed = 16

// staleSteps is how many steps an average per batch size outlives its last
// update: about two seconds of serving.
const staleSteps = 25

func newRealtime(frame time.Duration, maxStreams int) *realtime {
	return &realtime{
		raise: time.Duration(float64(frame) * realtimeRaise),
		lower: time.Duration(float64(frame) * realtimeLower),
		avg:   make([]time.Duration, maxStreams+1),
		seen:  make([]int64, maxStreams+1),
		limit: 1,
		max:   maxStreams,
	}
}

// observe records a steady step over n streams that took d and returns
// the new limit.
func (r *realtime) observe(n int, d time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 || n >= len(r.avg) {
		return r.current()
	}
	r.steps++
	if r.avg[n] == 0 || r.steps-r.seen[n] > staleSteps {
		r.avg[n] = d
	} else {
		r.avg[n] += (d - r.avg[n]) / 4
	}
	r.seen[n] = r.steps
	if r.hold > 0 {
		return r.hold
	}
	a := r.avg[n]
	if a <= 0 {
		return r.limit
	}
	fit := r.fit(n, a)
	switch {
	case r.overloaded && r.oneFits(n, a):
		r.overloaded = false
		r.limit = fit
		return r.limit
	case r.overloaded:
		return r.limit
	case overloaded(n, a, r.lower):
		r.overloaded = true
		r.limit = r.max
		return r.limit
	}
	switch {
	case a > r.lower && n > 1:
		r.limit = max(1, min(r.limit, n-1, fit))
	case n >= r.limit:
		r.limit = max(r.limit, fit)
	}
	return r.limit
}

// current is the limit admission should use; r.mu held.
func (r *realtime) current() int {
	if r.hold > 0 {
		return r.hold
	}
	return r.limit
}

// overloaded reports whether a step of n streams taking a shows that one
// stream cannot be stepped within lower, whatever the shape: a step of one
// stream costs at least 1/n of a step of n. This does not rest on the
// calibration, which a busy machine makes noisy.
func overloaded(n int, a, lower time.Duration) bool { return a/time.Duration(n) > lower }

// oneFits reports whether one stream is surely stepped within raise again,
// given that a step of n streams takes a: predicted with the largest fixed
// part the shape may have, which predicts the dearest single stream.
// r.mu held.
func (r *realtime) oneFits(n int, a time.Duration) bool {
	return float64(a)*(maxFixed+1)/(maxFixed+float64(n)) < float64(r.raise)
}

// fit returns the most streams (1 … max) whose step is predicted within
// raise, given that a step of n streams takes a; r.mu held.
func (r *realtime) fit(n int, a time.Duration) int {
	// a·(fixed+m)/(fixed+n) ≤ raise
	m := float64(r.raise)*(r.fixed+float64(n))/float64(a) - r.fixed
	if m >= float64(r.max) {
		return r.max
	}
	return max(1, int(m))
}

// calibrating holds the limit at n while calibrate's batches run.
func (r *realtime) calibrating(n int) {
	r.mu.Lock()
	r.hold = n
	r.mu.Unlock()
}

// calibrated ends a calibration: it fits the shape d(n) = α + β·n to the
// averages measured so far (least squares over the batch sizes seen), sets
// fixed = α/β, and sets the limit from the largest batch measured. With
// fewer than two sizes the shape stays as it was.
func (r *realtime) calibrated() (limit int, fixed float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = 0
	var sn, sd, snn, snd, k float64
	largest := 0
	for n, a := range r.avg {
		if a <= 0 {
			continue
		}
		x, y := float64(n), float64(a)
		sn, sd, snn, snd, k = sn+x, sd+y, snn+x*x, snd+x*y, k+1
		largest = n
	}
	if k >= 2 {
		beta := (k*snd - sn*sd) / (k*snn - sn*sn)
		alpha := (sd - beta*sn) / k
		switch {
		case beta <= 0:
			r.fixed = maxFixed
		case alpha <= 0:
			r.fixed = 0
		default:
			r.fixed = min(alpha/beta, maxFixed)
		}
	}
	if largest > 0 {
		r.limit = r.fit(largest, r.avg[largest])
		for n, a := range r.avg {
			if n > 1 && a > r.lower {
				r.limit = max(1, min(r.limit, n-1))
			}
		}
		r.overloaded = false
		for n, a := range r.avg {
			if a > 0 && overloaded(n, a, r.lower) {
				r.overloaded = true
				r.limit = r.max
			}
		}
	}
	return r.limit, r.fixed
}

// Calibration is what Calibrate measured.
type Calibration struct {
	// Limit is the real-time limit it set.
	Limit int
	// Steps is the average steady step time per batch size measured.
	Steps map[int]time.Duration
	// FixedStreams is the part of a step that does not grow with the
	// streams, in streams' worth of cost (0: every stream costs the same).
	FixedStreams float64
}

// calibrateFrames is how many frames each calibration request generates:
// enough steady steps for an average after the prompt's step, few enough
// to keep start-up short.
const calibrateFrames = 10

// Calibrate measures the step time at a few batch sizes (1, and up to 8
// concurrent requests, at most MaxStreams) with requests speaking with the
// voice of ref (a clip in the family's format), and starts the real-time
// limit from it instead of from 1: the most streams whose step is expected
// within 75 % of a frame. Call it when no request runs (at start-up, after
// Warm); it leaves nothing in the caches. Without Config.RealTime it does
// nothing and returns the slot count.
func (e *Engine) Calibrate(ctx context.Context, ref []float32) (Calibration, error) {
	if e.rt == nil {
		return Calibration{Limit: e.adm.current()}, nil
	}
	v, err := e.Encode(ctx, ref)
	if err != nil {
		return Calibration{}, fmt.Errorf("calibrate: encode the reference: %w", err)
	}
	v.Key = "engine:calibrate"
	defer e.prefixes.invalidate(v.Key)
	top := min(e.cfg.MaxStreams, 8)
	sizes := []int{1}
	if top >= 4 {
		sizes = append(sizes, top/2)
	}
	if top > 1 {
		sizes = append(sizes, top)
	}
	p := e.fam.DefaultParams()
	p.MaxFrames = calibrateFrames
	p.IgnoreEOS = true
	for _, n := range sizes {
		e.rt.calibrating(n)
		e.adm.setLimit(n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := Request{Text: "Calibrate, 1 2 3.", Voice: v, Params: p, FirstChunkFrames: 1, ChunkFrames: 1}
				r.Params.Seed = uint64(i)
				errs[i] = e.run(ctx, r)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			limit, _ := e.rt.calibrated()
			e.adm.setLimit(limit)
			return Calibration{}, fmt.Errorf("calibrate at %d streams: %w", n, err)
		}
	}
	c := Calibration{Steps: map[int]time.Duration{}}
	c.Limit, c.FixedStreams = e.rt.calibrated()
	e.adm.setLimit(c.Limit)
	e.rt.mu.Lock()
	for _, n := range sizes {
		if a := e.rt.avg[n]; a > 0 {
			c.Steps[n] = a
		}
	}
	e.rt.mu.Unlock()
	return c, nil
}

// run submits r and reads its stream to the end.
func (e *Engine) run(ctx context.Context, r Request) error {
	st, err := e.Submit(ctx, r)
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		if _, err := st.Next(ctx); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
