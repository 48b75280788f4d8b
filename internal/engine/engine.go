package engine

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"runtime/debug"
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
	// SlotsChanged is called whenever a request takes or leaves a slot or
	// the queue: active streams hold a slot, queued ones wait for one.
	SlotsChanged(active, queued int)
	// FirstAudio reports the time from Submit to the first chunk.
	FirstAudio(d time.Duration)
	// StreamDone reports a finished stream: its compute time, audio
	// seconds and frames, and whether it completed.
	StreamDone(compute time.Duration, audioSeconds float64, frames int, completed bool)
	// Step reports one scheduler step over n streams.
	Step(n int, d time.Duration)
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

// freeOSMemory returns freed memory to the operating system; a variable so
// tests can see the idle release call it.
var freeOSMemory = debug.FreeOSMemory

// ReleaseIdle drops the buffers fam keeps from finished requests, if it
// keeps any (IdleReleaser), and hands the freed memory back to the system
// at once: left to itself the Go runtime's scavenger returns it over
// minutes (about 8 after a burst, measured), so RSS stayed 100–230 MiB
// above its starting level long after the load was gone. What stays
// resident: the weights, what the family keeps for the next request, the
// prefix cache's entries, the inline voice cache (encoded codes, small),
// the scheduler's batch buffers and the Go runtime's own. The engine calls
// it after Config.IdleRelease without a stream; bench calls it to measure
// bursts after such a release.
func ReleaseIdle(fam Family) {
	if rel, ok := fam.(IdleReleaser); ok {
		rel.ReleaseIdle()
	}
	freeOSMemory()
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
		prefix, err = e.prefixes.get(ctx, voice.Key, func(ctx context.Context) (Prefix, error) { return e.fam.NewPrefix(ctx, voice) }, e.outside)
		if err != nil {
			return nil, err
		}
	}
	job, err := e.fam.Prepare(ctx, voice, prefix, req.Text, req.Params)
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
