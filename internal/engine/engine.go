package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Submit.
var (
	// ErrBusy means every generation slot is taken and the wait queue is full.
	ErrBusy = errors.New("engine: all generation slots are busy and the queue is full")
	// ErrClosed means the engine is shutting down.
	ErrClosed = errors.New("engine: shutting down")
)

// Config sizes an Engine.
type Config struct {
	// MaxStreams is the number of requests generating at once (slots).
	MaxStreams int
	// Queue is how many more requests may wait for a slot; beyond that Submit
	// returns ErrBusy.
	Queue int
	// RealTime limits the streams generating at once to what the machine
	// steps faster than real time, learned from the step times (see
	// realtime); requests beyond the limit wait in the queue. MaxStreams
	// stays the upper bound. Without it every slot is used.
	RealTime bool
	// PrefixCacheBytes bounds the voice prefix cache (0 disables it).
	PrefixCacheBytes int64
	// IdleRelease is how long the engine waits with no stream before it
	// asks the family to drop the buffers kept from finished streams
	// (IdleReleaser); 0 keeps them for the engine's lifetime. Buffers are
	// kept because fresh ones cost page faults on their first use.
	IdleRelease time.Duration
	// Logger receives mid-stream faults; nil discards them.
	Logger *slog.Logger
	// Observer, if set, is told about stream events (metrics).
	Observer Observer
}

// Observer receives engine events; implementations must be fast and safe
// for concurrent use.
type Observer interface {
	// StreamStarted is called when a request takes a slot; queued reports
	// how many still wait.
	SlotsChanged(active, queued int)
	// FirstAudio reports the time from Submit to the first chunk.
	FirstAudio(d time.Duration)
	// StreamDone reports a finished stream: its compute time, audio
	// seconds and frames, and whether it completed.
	StreamDone(compute time.Duration, audioSeconds float64, frames int, completed bool)
	// Step reports one scheduler step over n streams.
	Step(n int, d time.Duration)
}

// Request is one synthesis request for Submit.
type Request struct {
	Text string
	// Voice is an encoded voice (a saved voice), or nil with RefPCM set.
	Voice *Voice
	// RefPCM is an inline reference clip (channel-interleaved at the family's
	// rate) to encode after the request gets a slot. RefKey, if set, is its
	// content hash for the encoded-voice and prefix caches.
	RefPCM []float32
	RefKey string
	Params Params
	// FirstChunkFrames and ChunkFrames set the streaming chunk sizes in
	// frames (at least 1): a chunk is handed over as soon as it holds that
	// much audio (silence between text chunks counts as audio).
	FirstChunkFrames, ChunkFrames int
	// RampChunks sends smaller chunks (1, 2, 4, 8 frames, never more than
	// ChunkFrames) while the audio handed over is less than 0.2, 0.55, 1.1 s
	// ahead of real time, so a player that starts at the first chunk does
	// not run dry while the bigger chunks build up.
	RampChunks bool
}

// Chunk is a piece of a stream's audio.
type Chunk struct {
	// Samples is channel-interleaved float audio; the receiver owns it.
	Samples []float32
	// Frames is the number of frames generated since the previous chunk.
	Frames int
}

// Stream is a running request. Read it with Next until io.EOF; Close it
// when done (also to cancel early).
type Stream struct {
	e      *Engine
	job    Job
	ctx    context.Context
	cancel context.CancelFunc

	out  chan Chunk // pending chunks (at most 2): the backpressure
	done chan struct{}
	err  error // set before done closes

	firstTarget, target int // samples per channel
	ramp                bool
	firstAt             time.Time // when the first chunk was handed over
	rate, frameSamples  int
	channels            int
	pending             []float32
	pendingFrames       int
	sent                int // chunks handed over

	submitted time.Time
	stepped   bool // has been in a step (the scheduler's own)
	compute   time.Duration
	frames    int
	samples   int64
	firstSeen atomic.Bool
}

// Chunks returns the text chunks the stream speaks.
func (s *Stream) Chunks() []string { return s.job.Chunks() }

// InputTokens returns the number of text tokens of the request.
func (s *Stream) InputTokens() int { return s.job.InputTokens() }

// Next returns the next chunk of audio, io.EOF after the last one, or the
// error that ended the stream (the context's error when it was cancelled).
func (s *Stream) Next(ctx context.Context) (Chunk, error) {
	select {
	case c, ok := <-s.out:
		if !ok {
			if s.err != nil {
				return Chunk{}, s.err
			}
			return Chunk{}, io.EOF
		}
		if s.firstSeen.CompareAndSwap(false, true) && s.e.cfg.Observer != nil {
			s.e.cfg.Observer.FirstAudio(time.Since(s.submitted))
		}
		s.e.kick() // the stream may step again
		return c, nil
	case <-ctx.Done():
		return Chunk{}, ctx.Err()
	}
}

// Close cancels the stream if it is still running and waits until it has
// left the scheduler. It is safe to call more than once.
func (s *Stream) Close() {
	s.cancel()
	<-s.done
}

// Stats describe a stream; they are final once Next has returned io.EOF or
// an error.
type Stats struct {
	Frames       int
	AudioSeconds float64
	Compute      time.Duration
}

// Stats returns the stream's statistics. Call it after the stream ended.
func (s *Stream) Stats() Stats {
	<-s.done
	return Stats{Frames: s.frames, AudioSeconds: audioSeconds(s.samples, s.e.fam.Info().SampleRate), Compute: s.compute}
}

// Engine schedules streams of one Family: every step advances every ready
// stream by one frame in one batched Stepper call (with a Pipeline family,
// decoding the previous step's frames meanwhile). A stream whose previous
// chunk has not been taken sits out, so a slow reader never slows the
// others, and each stream holds at most two pending chunks.
type Engine struct {
	fam Family
	cfg Config
	adm *admission
	rt  *realtime // nil unless cfg.RealTime
	// preparing counts admitted requests that are about to become streams:
	// not while they encode a clip or wait for a prefix (see outside).
	preparing atomic.Int32
	// prompting is set while the step being generated includes a new
	// stream (its prompt): such a step is long.
	prompting atomic.Bool

	mu      sync.Mutex
	streams []*Stream
	closed  bool
	wake    chan struct{}
	stopped chan struct{}
	idle    *sync.Cond

	prefixes *prefixCache
	voices   *voiceCache
}

// New starts an engine over fam.
func New(fam Family, cfg Config) *Engine {
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 1
	}
	if cfg.Queue < 0 {
		cfg.Queue = 0
	}
	e := &Engine{
		fam:      fam,
		cfg:      cfg,
		wake:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		prefixes: newPrefixCache(cfg.PrefixCacheBytes),
		voices:   newVoiceCache(256),
	}
	e.idle = sync.NewCond(&e.mu)
	limit := cfg.MaxStreams
	if cfg.RealTime {
		frame := time.Duration(fam.Info().FrameDuration() * float64(time.Second))
		e.rt = newRealtime(frame, cfg.MaxStreams)
		limit = e.rt.limit
	}
	var changed func(active, queued int)
	if cfg.Observer != nil {
		changed = cfg.Observer.SlotsChanged
	}
	e.adm = newAdmission(cfg.MaxStreams, cfg.Queue, limit, changed)
	go e.loop()
	return e
}

// Family returns the engine's model.
func (e *Engine) Family() Family { return e.fam }

// Active returns the number of streams holding a slot and the number waiting.
func (e *Engine) Active() (active, queued int) { return e.adm.counts() }

// StreamLimit returns how many requests may hold a slot now: MaxStreams,
// or less while the real-time limit (Config.RealTime) holds them back.
func (e *Engine) StreamLimit() int { return e.adm.current() }

func (e *Engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Submit waits for a generation slot (or fails with ErrBusy), prepares the
// request — encoding an inline reference and fetching or computing the voice
// prefix — and starts it. Errors are returned before any audio exists, so a
// server can still answer with an error status. The stream stops when ctx is
// cancelled.
func (e *Engine) Submit(ctx context.Context, req Request) (*Stream, error) {
	submitted := time.Now()
	if err := e.adm.acquire(ctx); err != nil {
		return nil, err
	}
	e.preparing.Add(1)
	s, err := e.start(ctx, req, submitted)
	e.preparing.Add(-1) // after the stream is registered (or not)
	if err != nil {
		e.adm.release()
		return nil, err
	}
	return s, nil
}

// outside runs f, a long stage of a request's preparation (encoding its
// clip, computing or waiting for its prefix; not a prefix cache hit),
// outside the preparing count: the scheduler does not hold new streams back
// for it.
func (e *Engine) outside(f func()) {
	e.preparing.Add(-1)
	defer e.preparing.Add(1)
	f()
}

func (e *Engine) start(ctx context.Context, req Request, submitted time.Time) (*Stream, error) {
	voice := req.Voice
	if voice == nil {
		if req.RefPCM == nil {
			return nil, &InputError{Msg: "no voice: a saved voice or a reference clip is required"}
		}
		if req.RefKey != "" {
			voice = e.voices.get(req.RefKey)
		}
		if voice == nil {
			var v *Voice
			var err error
			e.outside(func() { v, err = e.fam.EncodeReference(ctx, req.RefPCM) })
			if err != nil {
				return nil, err
			}
			v.Key = req.RefKey
			if req.RefKey != "" {
				e.voices.put(req.RefKey, v)
			}
			voice = v
		}
	}
	var prefix Prefix
	if voice.Key != "" && e.prefixes.enabled() {
		var err error
		prefix, err = e.prefixes.get(voice.Key, func() (Prefix, error) { return e.fam.NewPrefix(voice) }, e.outside)
		if err != nil {
			return nil, err
		}
	}
	job, err := e.fam.Prepare(voice, prefix, req.Text, req.Params)
	if err != nil {
		return nil, err
	}
	info := e.fam.Info()
	first, next := max(req.FirstChunkFrames, 1), max(req.ChunkFrames, 1)
	sctx, cancel := context.WithCancel(ctx)
	s := &Stream{
		e: e, job: job, ctx: sctx, cancel: cancel,
		out:          make(chan Chunk, 2),
		done:         make(chan struct{}),
		firstTarget:  first * info.SamplesPerFrame,
		ramp:         req.RampChunks,
		rate:         info.SampleRate,
		frameSamples: info.SamplesPerFrame,
		target:       next * info.SamplesPerFrame,
		channels:     info.Channels,
		submitted:    submitted,
	}
	context.AfterFunc(sctx, e.kick)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		cancel()
		return nil, ErrClosed
	}
	e.streams = append(e.streams, s)
	e.mu.Unlock()
	e.kick()
	return s, nil
}

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
				rel.ReleaseIdle()
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

// deliver adds a step's output to the pending chunk and hands the chunk over
// when it is big enough (or the stream ended). The send never blocks: a
// stream only steps with an empty out channel, and at most two of its steps
// are delivered before it steps again (one rendered while the other was
// generated).
func (s *Stream) deliver(o Output) {
	if o.Frame != nil {
		s.frames++
		s.pendingFrames++
	}
	target := s.target
	switch {
	case s.sent == 0:
		target = s.firstTarget
		if s.ramp && s.e.prompting.Load() && s.pendingFrames < 2 {
			// The step being generated now carries other requests'
			// prompts and will take several frames' time: a one-frame
			// first chunk would run dry before the next one. Hand over
			// two frames instead.
			target = max(target, 2*s.frameSamples)
		}
	case s.ramp:
		// Smaller chunks while the client holds little audio, as the
		// OpenMOSS streaming runtime does: lead = audio handed over minus
		// time since the first chunk. A chunk never exceeds the interval.
		lead := float64(s.samples)/float64(s.rate) - time.Since(s.firstAt).Seconds()
		frames := 8
		switch {
		case lead < 0.20:
			frames = 1
		case lead < 0.55:
			frames = 2
		case lead < 1.10:
			frames = 4
		}
		target = min(target, frames*s.frameSamples)
	}
	if s.pending == nil && len(o.Samples) > 0 {
		// The next chunk's buffer (the client keeps it), sized once
		// instead of grown frame by frame, up to maxPresizeFrames (a
		// buffered response's "chunk" is the whole response, of unknown
		// length: it grows from there).
		s.pending = make([]float32, 0, max(min(target, maxPresizeFrames*s.frameSamples)*s.channels, len(o.Samples)))
	}
	s.pending = append(s.pending, o.Samples...)
	if len(s.pending) >= target*s.channels || (o.Done && len(s.pending) > 0) {
		s.samples += int64(len(s.pending) / s.channels)
		s.out <- Chunk{Samples: s.pending, Frames: s.pendingFrames}
		s.pending = nil
		s.pendingFrames = 0
		if s.sent == 0 {
			s.firstAt = time.Now()
		}
		s.sent++
	}
}

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

// Close stops accepting requests, lets running streams finish until ctx
// expires (then cancels them), and stops the scheduler.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.stopped
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.adm.close()
	e.kick()
	drained := make(chan struct{})
	go func() {
		e.mu.Lock()
		for len(e.streams) > 0 {
			e.idle.Wait()
		}
		e.mu.Unlock()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
		e.mu.Lock()
		for _, s := range e.streams {
			s.cancel()
		}
		e.mu.Unlock()
		e.kick()
		<-drained
	}
	e.kick()
	<-e.stopped
	return err
}

// audioSeconds converts samples per channel to seconds.
func audioSeconds(samples int64, rate int) float64 {
	if rate <= 0 {
		return math.NaN()
	}
	return float64(samples) / float64(rate)
}

// Encode encodes a reference clip into a Voice, holding a generation slot
// (and waiting in the queue like Submit) so encodes share the machine fairly
// with generation.
func (e *Engine) Encode(ctx context.Context, pcm []float32) (*Voice, error) {
	if err := e.adm.acquire(ctx); err != nil {
		return nil, err
	}
	defer e.adm.release()
	return e.fam.EncodeReference(ctx, pcm)
}
