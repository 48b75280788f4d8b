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
func (e *Engine) loop() {
	defer close(e.stopped)
	st := e.fam.NewStepper()
	pl, pipelined := st.(Pipeline)
	var ready []*Stream
	var jobs []Job
	var inflight *rendering // generated, not yet rendered
	var coalesced time.Duration
	rel, canRelease := e.fam.(IdleReleaser)
	released := true // nothing kept yet
	for {
		e.mu.Lock()
		// Retire cancelled streams; pick the ready ones.
		ready = ready[:0]
		live := e.streams[:0]
		for _, s := range e.streams {
			if err := s.ctx.Err(); err != nil {
				e.finish(s, err)
				continue
			}
			live = append(live, s)
			if len(s.out) == 0 && !s.job.Done() {
				ready = append(ready, s)
			}
		}
		clear(e.streams[len(live):])
		e.streams = live
		empty := len(e.streams) == 0
		if empty {
			e.idle.Broadcast()
		}
		stop := e.closed && empty && inflight == nil
		e.mu.Unlock()
		if stop {
			return
		}
		if len(ready) == 0 && inflight == nil {
			// Wakes come from a new stream, a chunk taken by a reader, a
			// cancelled context and Close.
			if !empty || released || !canRelease || e.cfg.IdleRelease <= 0 {
				<-e.wake
				continue
			}
			t := time.NewTimer(e.cfg.IdleRelease)
			select {
			case <-e.wake:
				t.Stop()
			case <-t.C:
				e.releaseIdle(rel)
				released = true
			}
			continue
		}
		released = false
		if e.coalesce(ready, inflight != nil, &coalesced) {
			continue
		}
		prompting := false
		for _, s := range ready {
			prompting = prompting || !s.stepped
		}
		e.prompting.Store(prompting)
		t0 := time.Now()
		var rendered chan struct{}
		if inflight != nil {
			rendered = make(chan struct{})
			go func(r *rendering) {
				defer close(rendered)
				outs, err := pl.Render(r.generated)
				e.deliverAll(r.streams, outs, err, time.Since(t0))
			}(inflight)
			inflight = nil
		}
		coalesced = 0
		if len(ready) > 0 {
			jobs = jobs[:0]
			for _, s := range ready {
				jobs = append(jobs, s.job)
				s.stepped = true
			}
			t1 := time.Now()
			if pipelined {
				g, err := pl.Generate(jobs)
				if err != nil {
					e.deliverAll(ready, nil, err, 0)
				} else {
					e.mu.Lock()
					share := time.Since(t1) / time.Duration(len(ready))
					for _, s := range ready {
						s.compute += share
					}
					e.mu.Unlock()
					inflight = &rendering{streams: append([]*Stream(nil), ready...), generated: g}
				}
			} else {
				outs, err := st.Step(jobs)
				e.deliverAll(ready, outs, err, time.Since(t1))
			}
		}
		if rendered != nil {
			<-rendered
		}
		if len(ready) > 0 {
			d := time.Since(t0)
			if e.cfg.Observer != nil {
				e.cfg.Observer.Step(len(ready), d)
			}
			if e.rt != nil && !prompting && (!pipelined || rendered != nil && inflight != nil) {
				// A steady step: every stream was stepped before and, with
				// a pipeline, the loop both rendered and generated (its
				// first and last steps do one of the two).
				e.adm.setLimit(e.rt.observe(len(ready), d))
			}
		}
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
