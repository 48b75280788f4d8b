package audio

// StreamResampler resamples a signal that arrives in pieces (the model's
// output while it is generated). Its output, Process calls followed by
// Flush, equals Resampler.Resample over the whole signal bit for bit,
// whatever the piece sizes: each output sample is the same dot product over
// the same inputs. Outputs are released as soon as every input they read
// has arrived, so the delay is the kernel's half width (about 6 input
// samples at the lower of the two rates). Mono; use one per channel.
type StreamResampler struct {
	r *Resampler
	// x holds the input still needed, x[0] being input sample base-lead
	// (the stream is preceded by lead zeros, as torchaudio pads it).
	x           []float32
	base        int // index (in input samples, lead zeros counted) of x[0]
	lead        int
	reach       int // the farthest tap offset of any phase
	first       int // the earliest tap offset of any phase (≤ 0)
	k           int // the next output frame (k·orig input offset)
	j           int // the next phase within frame k
	in          int // input samples received
	out         int // output samples produced
	flushed     bool
	passthrough bool
}

// NewStreamResampler returns a streaming resampler with r's kernel.
func NewStreamResampler(r *Resampler) *StreamResampler {
	s := &StreamResampler{r: r, passthrough: r.inRate == r.outRate}
	for _, p := range r.phases {
		s.lead = max(s.lead, -p.start)
		s.reach = max(s.reach, p.start+len(p.taps))
		s.first = min(s.first, p.start)
	}
	s.x = make([]float32, s.lead, s.lead+4096)
	return s
}

// Process appends the output that src completes to dst and returns it.
func (s *StreamResampler) Process(dst, src []float32) []float32 {
	if s.flushed {
		panic("audio: StreamResampler.Process after Flush")
	}
	s.in += len(src)
	if s.passthrough {
		s.out += len(src)
		return append(dst, src...)
	}
	s.x = append(s.x, src...)
	return s.emit(dst, len(s.x)+s.base, -1)
}

// Flush appends the remaining output (the input followed by zeros, up to
// the whole-signal length Resampler.OutputLen) and ends the stream.
func (s *StreamResampler) Flush(dst []float32) []float32 {
	if s.flushed {
		return dst
	}
	s.flushed = true
	if s.passthrough {
		return dst
	}
	total := s.r.OutputLen(s.in)
	// Zeros after the input up to the last tap the last output reads.
	need := s.lead + ((total-1)/s.r.new)*s.r.orig + s.reach
	if have := s.base + len(s.x); need > have {
		s.x = append(s.x, make([]float32, need-have)...)
	}
	return s.emit(dst, s.base+len(s.x), total)
}

// emit produces outputs whose taps lie below avail (in input samples, lead
// counted), stopping at limit outputs when limit ≥ 0.
func (s *StreamResampler) emit(dst []float32, avail, limit int) []float32 {
	r := s.r
	for limit < 0 || s.out < limit {
		p := &r.phases[s.j]
		off := s.lead + s.k*r.orig + p.start
		if off+len(p.taps) > avail {
			break
		}
		dst = append(dst, float32(dot(p.taps, s.x[off-s.base:])))
		s.out++
		if s.j++; s.j == r.new {
			s.j = 0
			s.k++
		}
	}
	// Drop the input no later output reads: frame k's earliest tap.
	if drop := s.lead + s.k*r.orig + s.first - s.base; drop > 4096 && drop <= len(s.x) {
		n := copy(s.x, s.x[drop:])
		s.x = s.x[:n]
		s.base += drop
	}
	return dst
}
