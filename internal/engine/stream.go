package engine

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

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
