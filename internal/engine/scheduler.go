package engine

import (
	"fmt"
	"time"
)

// loop is the scheduler: it owns the Stepper and every stream's job.
//
// A stream steps when it has no chunk waiting for its reader. With a
// Pipeline stepper, the audio of step t is rendered (and handed over) on
// another goroutine while step t+1 is generated, so a stream may generate
// once more before its previous output is delivered: a stream then holds at
// most two pending chunks.
//
// Each turn: retire the streams that ended and pick the ready ones; with
// nothing to do, sleep until woken; otherwise run one batched step, whose
// outputs deliverAll hands to the streams.
func (e *Engine) loop() {
	defer close(e.stopped)
	sc := newScheduler(e)
	for {
		empty, stop := sc.pickReady()
		if stop {
			return
		}
		if len(sc.ready) == 0 && sc.inflight == nil {
			sc.sleep(empty)
			continue
		}
		sc.released = false
		if e.coalesce(sc.ready, sc.inflight != nil, &sc.coalesced) {
			continue
		}
		sc.step()
	}
}

// scheduler is loop's state from one turn to the next.
type scheduler struct {
	e         *Engine
	st        Stepper
	pl        Pipeline // st as a Pipeline, if pipelined
	pipelined bool
	ready     []*Stream // the streams this turn steps
	jobs      []Job     // their jobs (reused)
	inflight  *rendering
	// firstAudio is set while the step in flight is one that carried a
	// new stream (its prompt and its first frame).
	firstAudio bool
	// generated is how long the last generation took (the step now in
	// flight), frame one frame's duration of audio.
	generated, frame time.Duration
	// coalesced is how long the current new streams were held back for
	// others about to join them (coalesce).
	coalesced  time.Duration
	canRelease bool // the family keeps buffers (IdleReleaser)
	released   bool // the family's idle memory is released
}

func newScheduler(e *Engine) *scheduler {
	sc := &scheduler{e: e, st: e.fam.NewStepper(), released: true, // nothing kept yet
		frame: time.Duration(e.fam.Info().FrameDuration() * float64(time.Second))}
	sc.pl, sc.pipelined = sc.st.(Pipeline)
	_, sc.canRelease = e.fam.(IdleReleaser)
	return sc
}

// pickReady retires cancelled streams and collects in sc.ready those that
// can step (no chunk waiting for their reader, not done). It reports
// whether no stream is left, and whether the loop should stop (closed,
// empty, nothing in flight).
func (sc *scheduler) pickReady() (empty, stop bool) {
	e := sc.e
	e.mu.Lock()
	defer e.mu.Unlock()
	sc.ready = sc.ready[:0]
	live := e.streams[:0]
	for _, s := range e.streams {
		if err := s.ctx.Err(); err != nil {
			e.finish(s, err)
			continue
		}
		live = append(live, s)
		if len(s.out) == 0 && !s.job.Done() {
			sc.ready = append(sc.ready, s)
		}
	}
	clear(e.streams[len(live):])
	e.streams = live
	empty = len(e.streams) == 0
	if empty {
		e.idle.Broadcast()
	}
	return empty, e.closed && empty && sc.inflight == nil
}

// sleep waits for a wake: a new stream, a chunk taken by a reader, a
// cancelled context or Close. With no stream at all it releases the
// family's idle memory once IdleRelease passes without one.
func (sc *scheduler) sleep(empty bool) {
	e := sc.e
	if !empty || sc.released || !sc.canRelease || e.cfg.IdleRelease <= 0 {
		<-e.wake
		return
	}
	t := time.NewTimer(e.cfg.IdleRelease)
	select {
	case <-e.wake:
		t.Stop()
	case <-t.C:
		ReleaseIdle(e.fam)
		sc.released = true
	}
}

// step runs one batched step: it renders the step in flight (on another
// goroutine) while it generates the ready streams' next frame, then
// reports the step's duration.
func (sc *scheduler) step() {
	e := sc.e
	prompting := false
	for _, s := range sc.ready {
		prompting = prompting || !s.stepped
	}
	e.prompting.Store(prompting)
	t0 := time.Now()
	rendered := sc.render(t0)
	firstAudio := rendered != nil && sc.firstAudio
	first := firstAudio && sc.generated <= sc.frame
	if first {
		// The step in flight holds only new streams' first frames: their
		// clients wait for nothing else and nobody is playing, so render
		// it alone, with the cores to itself, before generating the next
		// step beside it (docs/performance.md, "A new clip's first
		// audio"). Their second frame then comes one generation plus one
		// render after the first, not one step: so only when the step
		// that made the first frames (prompts included) took at most a
		// frame's duration. A burst's first step takes several, and its
		// streams' first chunk (one frame) would play out before the
		// second arrived (bench: at 12 streams in f32, every stream's
		// second chunk 18-88 ms late).
		<-rendered
	}
	sc.firstAudio = onlyNew(sc.ready)
	sc.coalesced = 0
	t1 := time.Now()
	sc.generate()
	sc.generated = time.Since(t1)
	if rendered != nil && !first {
		<-rendered
	}
	// A step that rendered first is not a steady one: its time is the
	// two phases' sum, not their overlap; nor is one that rendered a
	// burst's first frames beside it (the first decodes of many streams).
	sc.observe(time.Since(t0), prompting || firstAudio, rendered != nil)
}

// onlyNew reports whether ready holds streams and none of them has been
// stepped: a step of only new streams. Only such a step's render goes
// before the next generation. Rendering a new stream's first frame alone
// while others play would make every playing stream wait one decode
// longer per arrival, and in a burst the early streams have one frame of
// audio buffered.
func onlyNew(ready []*Stream) bool {
	for _, s := range ready {
		if s.stepped {
			return false
		}
	}
	return len(ready) > 0
}

// render starts rendering the step in flight, if any, on its own
// goroutine, which delivers the outputs; the returned channel closes when
// it is done (nil if nothing was in flight).
func (sc *scheduler) render(t0 time.Time) chan struct{} {
	if sc.inflight == nil {
		return nil
	}
	rendered := make(chan struct{})
	go func(r *rendering) {
		defer close(rendered)
		outs, err := sc.pl.Render(r.generated)
		sc.e.deliverAll(r.streams, outs, err, time.Since(t0))
	}(sc.inflight)
	sc.inflight = nil
	return rendered
}

// generate steps the ready streams: with a Pipeline it generates their
// frame and leaves it in flight for the next turn's render; otherwise it
// steps and delivers at once.
func (sc *scheduler) generate() {
	e := sc.e
	if len(sc.ready) == 0 {
		return
	}
	sc.jobs = sc.jobs[:0]
	for _, s := range sc.ready {
		sc.jobs = append(sc.jobs, s.job)
		s.stepped = true
	}
	t1 := time.Now()
	if !sc.pipelined {
		outs, err := sc.st.Step(sc.jobs)
		e.deliverAll(sc.ready, outs, err, time.Since(t1))
		return
	}
	g, err := sc.pl.Generate(sc.jobs)
	if err != nil {
		e.deliverAll(sc.ready, nil, err, 0)
		return
	}
	e.mu.Lock()
	share := time.Since(t1) / time.Duration(len(sc.ready))
	for _, s := range sc.ready {
		s.compute += share
	}
	e.mu.Unlock()
	sc.inflight = &rendering{streams: append([]*Stream(nil), sc.ready...), generated: g}
}

// observe reports a step of d to the Observer and, for a steady step, to
// the real-time admission limit.
func (sc *scheduler) observe(d time.Duration, prompting, rendered bool) {
	e := sc.e
	if len(sc.ready) == 0 {
		return
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.Step(len(sc.ready), d)
	}
	if e.rt != nil && !prompting && (!sc.pipelined || rendered && sc.inflight != nil) {
		// A steady step: every stream was stepped before and, with a
		// pipeline, the loop both rendered and generated (its first and
		// last steps do one of the two).
		e.adm.setLimit(e.rt.observe(len(sc.ready), d))
	}
}

// coalesceFor is how long the scheduler holds a step made only of new
// streams while more requests are being prepared, so that requests arriving
// together prefill together: a request that joins one step later would make
// that step long (its prompt) just after the first streams handed out their
// first, short chunk, and their playback would run dry.
const coalesceFor = 20 * time.Millisecond

// coalesce reports whether the loop should wait (it waited up to 1 ms for a
// wake): when every ready stream is new, no step is in flight, other
// admitted requests are about to become streams (a matter of milliseconds:
// encoding a clip or computing a prefix does not count), and the streams
// have waited less than coalesceFor. *waited accumulates the wait.
func (e *Engine) coalesce(ready []*Stream, rendering bool, waited *time.Duration) bool {
	if rendering || *waited >= coalesceFor || e.preparing.Load() == 0 {
		return false
	}
	for _, s := range ready {
		if s.stepped {
			return false
		}
	}
	t := time.NewTimer(time.Millisecond)
	t0 := time.Now()
	select {
	case <-e.wake:
	case <-t.C:
	}
	t.Stop()
	*waited += time.Since(t0)
	return true
}

// rendering is a Pipeline step waiting for its Render.
type rendering struct {
	streams   []*Stream
	generated any
}

// deliverAll hands one step's outputs to its streams (skipping those that
// ended meanwhile) and charges them d of compute; a step error ends them
// all.
func (e *Engine) deliverAll(streams []*Stream, outs []Output, err error, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		// A fault in a batched step cannot be pinned on one stream: end
		// them all cleanly, log it, and keep serving.
		if e.cfg.Logger != nil {
			e.cfg.Logger.Error("generation step failed", "err", err, "streams", len(streams))
		}
		for _, s := range streams {
			e.finish(s, fmt.Errorf("generation failed: %w", err))
		}
		e.removeFinished()
		return
	}
	share := d / time.Duration(len(streams))
	for i, s := range streams {
		select {
		case <-s.done: // cancelled while its audio was rendered
			continue
		default:
		}
		s.compute += share
		s.deliver(outs[i])
		if outs[i].Done {
			e.finish(s, nil)
		}
	}
	e.removeFinished()
}

// maxPresizeFrames bounds the frames a chunk's buffer is allocated for
// before they arrive (deliver): the default streamed chunks (7 frames) and
// the ramp's largest (8) fit; larger chunks grow from there.
const maxPresizeFrames = 8

// finish ends a stream: records err, closes its channels, frees its slot.
// Called with e.mu held.
func (e *Engine) finish(s *Stream, err error) {
	select {
	case <-s.done:
		return
	default:
	}
	// The slot first: a reader that sees the end may submit again at once.
	e.adm.release()
	s.err = err
	close(s.out)
	close(s.done)
	s.cancel()
	if e.cfg.Observer != nil {
		e.cfg.Observer.StreamDone(s.compute, float64(s.samples)/float64(e.fam.Info().SampleRate), s.frames, err == nil)
	}
}

func (e *Engine) removeFinished() {
	live := e.streams[:0]
	for _, s := range e.streams {
		select {
		case <-s.done:
		default:
			live = append(live, s)
		}
	}
	clear(e.streams[len(live):])
	e.streams = live
	if len(e.streams) == 0 {
		e.idle.Broadcast()
	}
}
