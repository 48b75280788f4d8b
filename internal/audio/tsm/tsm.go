// Package tsm changes the tempo of audio without changing its pitch
// (time-scale modification), for the OpenAI speech API's speed parameter.
//
// # Method: WSOLA
//
// The Stretcher uses WSOLA (waveform-similarity overlap-add, Verhelst and
// Roelands 1993). Output is built from segments of Hs samples (10 ms). Output
// segment j is a cross-fade, with a sin² (Hann) ramp, from the natural
// continuation of the previous segment's source, x[q_j : q_j+Hs] with
// q_j = p_{j-1} + Hs, to the input at p_j, x[p_j : p_j+Hs]:
//
//	y[j·Hs + i] = (1−w[i])·x[q_j + i] + w[i]·x[p_j + i],  w[i] = sin²(π(i+½)/(2·Hs))
//
// which is classic WSOLA with 20 ms Hann frames at 50 % overlap, written one
// overlap region at a time. p_j is searched within ±Δ (7.5 ms) of the nominal
// position a_j = round(j·Hs·speed) for the position whose next L = 2·Hs samples
// best match (normalized cross-correlation) the L samples of the natural
// continuation at q_j, so the two signals being cross-faded are in phase and
// the waveform's periods, hence its pitch, are kept. Because the ramps sum to
// one and the faded signals are aligned, the level never dips and there are
// no clicks. ±7.5 ms covers half a period of any voice above 67 Hz, so an
// aligned position always exists in the search range.
//
// Why WSOLA rather than a phase vocoder: speech is the only material here, and
// WSOLA copies the waveform itself, so voice quality (formants, breathiness)
// survives without the phasiness and transient smearing of a phase vocoder,
// and it costs a few correlations per 10 ms instead of FFTs of every frame.
// Its known weakness, audible repetition of transients at very slow speeds
// (0.25), is the same for phase vocoders at that ratio.
//
// Cost: the search runs first on a box-filtered, decimated copy of the
// (channel-summed) signal at about 8 kHz and is then refined at the full rate
// within one decimation step, which makes it about 1/D² as expensive as a
// full-rate search (D = 6 at 48 kHz) while still landing on the exact sample.
// The refinement matches only the Hs samples that are cross-faded, where
// alignment matters. BenchmarkProcess measures a real-time factor of about
// 0.006–0.009 at speed 0.25 and ≤ 0.003 from 0.5 to 4 on one core for 48 kHz
// mono speech.
//
// Measured quality (tsm_test.go): the median F0 of the stretched speech
// clips stays within 0.7 % of the original's along the time map at every
// speed from 0.25 to 4; a stretched tone keeps its level within 0.5 dB.
//
// # Channels
//
// All channels share one time warp: the positions p_j are found on the sum of
// the channels and applied to every channel, so inter-channel time and phase
// differences, hence the stereo image, are kept.
//
// # Length and latency
//
// After Flush the output has exactly round(n/speed) frames for n input
// frames. Process emits a segment as soon as it is final, so output is never
// held back longer than the search needs: the input buffered beyond what the
// emitted output stands for is at most Latency() frames, the largest of
// Δ + 2·Hs (27.5 ms), Δ + 3·Hs − Hs·speed (35 ms at speed 0.25) and Hs·speed
// (the 10 ms output granularity: 40 ms of input at speed 4), plus two frames,
// at every sample rate. The first 10 ms of output (the input itself) come out
// as soon as max(1, speed)·10 ms of input are in. With speed 1 the Stretcher
// is an exact pass-through with no delay.
//
// # Streaming
//
// Every decision depends only on the input samples, never on how they were
// split into Process calls, so any chunking gives bit-identical output.
// NaN and infinite samples are treated as 0 (and huge values as ±16) by the
// similarity search, so they cannot derail the time warp; the audio itself is
// copied as given.
package tsm

import (
	"fmt"
	"math"
)

// MinSpeed and MaxSpeed bound the speed factor, as the OpenAI speech API does.
const (
	MinSpeed = 0.25
	MaxSpeed = 4.0
)

// maxChannels bounds the channel count; speech output is mono or stereo.
const maxChannels = 8

// Stretcher changes the tempo of one interleaved float32 stream. It is not
// safe for concurrent use.
type Stretcher struct {
	speed    float64
	channels int
	hs       int // segment (overlap) length Hs, frames
	sim      int // similarity window L = 2·Hs, frames
	delta    int // search half-width Δ, frames
	dec      int // decimation factor D of the coarse search
	ramp     []float32

	// Input since frame base: interleaved samples, their channel sum
	// (sanitized, for the search) and its D-frame block sums.
	base   int
	buf    []float32
	mix    []float32
	coarse []float32
	avail  int // frames in buf, counted from 0 (including Flush's padding)
	n      int // real input frames received

	partial []float32 // samples of an incomplete frame (len < channels)

	seg     int // index j of the next output segment
	q       int // natural-continuation position q_j for segment j
	emitted int // output frames emitted
	flushed bool

	// onSegment, if set (by tests), sees each segment's q_j and p_j.
	onSegment func(q, p int)
}

// New returns a stretcher for interleaved float32 audio; speed > 1 is faster
// (shorter output). speed must be in [MinSpeed, MaxSpeed], sampleRate
// positive and channels 1–8.
func New(sampleRate, channels int, speed float64) (*Stretcher, error) {
	if !(speed >= MinSpeed && speed <= MaxSpeed) {
		return nil, fmt.Errorf("tsm: speed %v is outside [%v, %v]", speed, MinSpeed, MaxSpeed)
	}
	if sampleRate <= 0 || sampleRate > 1<<24 {
		return nil, fmt.Errorf("tsm: sample rate %d Hz is outside (0, 2^24]", sampleRate)
	}
	if channels < 1 || channels > maxChannels {
		return nil, fmt.Errorf("tsm: %d channels; must be 1–%d", channels, maxChannels)
	}
	s := &Stretcher{speed: speed, channels: channels}
	s.hs = max(1, int(math.Round(0.010*float64(sampleRate))))
	s.sim = 2 * s.hs
	s.delta = int(math.Round(0.0075 * float64(sampleRate)))
	// A coarse rate of about 8 kHz keeps speech's fundamental and first
	// formants; the box filter is a crude anti-alias filter, good enough to
	// pick the right period before the full-rate refinement.
	s.dec = max(1, int(math.Round(float64(sampleRate)/8000)))
	if s.sim/s.dec < 8 {
		s.dec = 1
	}
	s.ramp = make([]float32, s.hs)
	for i := range s.ramp {
		v := math.Sin(math.Pi * (float64(i) + 0.5) / float64(2*s.hs))
		s.ramp[i] = float32(v * v)
	}
	return s, nil
}

// Latency returns the largest number of input frames (per channel) that the
// Stretcher holds back: after n input frames, Process has emitted at least
// (n − Latency())/speed output frames (rounded down, and never less than 0).
// It is 0 for speed 1.
func (s *Stretcher) Latency() int {
	if s.speed == 1 {
		return 0
	}
	// While segment j+1 waits, (j+1)·Hs frames are out, standing for
	// (j+1)·Hs·speed input frames; the input it waits for exceeds that by at
	// most need(j+1) − (j+1)·Hs·speed, the largest of the three terms below
	// (p_j ≤ a_j + Δ), plus two frames for rounding.
	hs := float64(s.hs)
	l := max(float64(s.delta+s.sim), float64(s.delta+s.hs+s.sim)-hs*s.speed, hs*s.speed)
	return int(math.Ceil(l)) + 2
}

// Process consumes input samples and appends the output that is final so far
// to dst (streaming: state is carried across calls; chunk boundaries are
// inaudible). in may end in the middle of a frame; the rest of that frame
// comes with the next call. Process after Flush appends nothing.
func (s *Stretcher) Process(dst, in []float32) []float32 {
	if s.flushed {
		return dst
	}
	if s.speed == 1 {
		return append(dst, in...)
	}
	if len(s.partial) > 0 {
		k := min(s.channels-len(s.partial), len(in))
		s.partial = append(s.partial, in[:k]...)
		in = in[k:]
		if len(s.partial) < s.channels {
			return dst
		}
		s.appendFrames(s.partial)
		s.partial = s.partial[:0]
	}
	whole := len(in) / s.channels * s.channels
	s.appendFrames(in[:whole])
	s.partial = append(s.partial, in[whole:]...)
	s.n = s.avail
	return s.run(dst, false)
}

// Flush appends the remaining output at end of stream, so that the total is
// round(n/speed) frames for n input frames. An incomplete trailing frame is
// dropped. The Stretcher is finished afterwards.
func (s *Stretcher) Flush(dst []float32) []float32 {
	if s.flushed {
		return dst
	}
	s.flushed = true
	if s.speed == 1 {
		return dst
	}
	s.partial = s.partial[:0]
	// The last segments may compare against (but never copy) frames past
	// the end; they read as silence.
	s.appendFrames(make([]float32, (s.sim+s.delta+s.hs+s.dec)*s.channels))
	dst = s.run(dst, true)
	s.buf, s.mix, s.coarse = nil, nil, nil
	return dst
}

// appendFrames adds whole interleaved frames to the buffers.
func (s *Stretcher) appendFrames(in []float32) {
	if len(in) == 0 {
		return
	}
	s.compact()
	s.buf = append(s.buf, in...)
	c := s.channels
	for i := 0; i < len(in); i += c {
		var m float32
		for _, v := range in[i : i+c] {
			m += v
		}
		// Keep the search signal finite: NaN or Inf would make every score
		// NaN, and huge values would overflow the float32 energies.
		switch {
		case m != m:
			m = 0
		case m > 16:
			m = 16
		case m < -16:
			m = -16
		}
		s.mix = append(s.mix, m)
	}
	s.avail += len(in) / c
	// Block sums for the coarse search; the buffer base is always a
	// multiple of D, so block k of the buffer covers mix[k·D : (k+1)·D].
	for k := len(s.coarse); (k+1)*s.dec <= len(s.mix); k++ {
		var sum float32
		for _, v := range s.mix[k*s.dec : (k+1)*s.dec] {
			sum += v
		}
		s.coarse = append(s.coarse, sum)
	}
}

// compact drops input that no future segment can read, reusing the buffers'
// storage once the dead part is at least as large as the live part.
func (s *Stretcher) compact() {
	// Flush may clamp the search range down to n − L.
	keep := min(s.q, s.nominal(s.seg)-s.delta, s.n-s.sim)
	keep = max(keep, 0) / s.dec * s.dec
	drop := keep - s.base
	if drop <= 0 || drop < len(s.mix)-drop {
		return
	}
	s.buf = s.buf[:copy(s.buf, s.buf[drop*s.channels:])]
	s.mix = s.mix[:copy(s.mix, s.mix[drop:])]
	s.coarse = s.coarse[:copy(s.coarse, s.coarse[drop/s.dec:])]
	s.base = keep
}

// nominal is a_j, the input position that output segment j corresponds to.
func (s *Stretcher) nominal(j int) int {
	return int(math.Round(float64(j*s.hs) * s.speed))
}

// need is the number of input frames segment j waits for before it is
// computed (with q = q_j): the search range plus the similarity window, the
// continuation's similarity window, and enough input that the output does not
// run ahead of n/speed (so Flush never has to take output back).
func (s *Stretcher) need(j, q int) int {
	if j == 0 {
		// Segment 0 is the input itself: nothing to search.
		return int(math.Ceil(float64(s.hs) * max(1, s.speed)))
	}
	hi := s.nominal(j) + s.delta
	end := int(math.Ceil(float64((j+1)*s.hs) * s.speed))
	return max(hi+s.sim, q+s.sim, end)
}

// run emits every segment that is final. With final set the input is
// complete (and padded), and segments continue until round(n/speed) frames
// are out, with the search range clamped to the real input.
func (s *Stretcher) run(dst []float32, final bool) []float32 {
	total := -1
	if final {
		total = max(s.emitted, int(math.Round(float64(s.n)/s.speed)))
	}
	for {
		if final {
			if s.emitted >= total {
				return dst
			}
		} else if s.need(s.seg, s.q) > s.n {
			return dst
		}
		p := 0
		if s.seg > 0 {
			p = s.search(final)
		}
		count := s.hs
		if final {
			count = min(count, total-s.emitted)
		}
		if s.onSegment != nil {
			s.onSegment(s.q, p)
		}
		dst = s.emit(dst, p, count)
		s.emitted += count
		s.q = p + s.hs
		s.seg++
	}
}

// search returns p_j for the current segment.
func (s *Stretcher) search(final bool) int {
	a := s.nominal(s.seg)
	lo, hi := max(0, a-s.delta), a+s.delta
	if final {
		hi = min(hi, max(0, s.n-s.sim))
		lo = min(lo, hi)
	}
	q := s.q
	if s.dec == 1 || hi-lo < 2*s.dec {
		return s.best(s.mix, q-s.base, lo-s.base, hi-s.base, s.sim) + s.base
	}
	// Coarse: a candidate block k stands for p = k·D + r, keeping the
	// target's phase r within its block.
	r := (q - s.base) % s.dec
	tq := (q - s.base) / s.dec
	klo := ceilDiv(lo-s.base-r, s.dec)
	khi := (hi - s.base - r) / s.dec
	k := s.best(s.coarse, tq, klo, khi, s.sim/s.dec)
	p := k*s.dec + r + s.base
	// Fine: the exact sample within one block either side, matching only
	// the Hs frames that will be cross-faded, where alignment matters.
	flo, fhi := max(lo, p-s.dec+1), min(hi, p+s.dec-1)
	return s.best(s.mix, q-s.base, flo-s.base, fhi-s.base, s.hs) + s.base
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return -(-a / b)
	}
	return (a + b - 1) / b
}

// best returns the candidate c in [lo, hi] whose window x[c : c+l] has the
// largest normalized cross-correlation with x[t : t+l]; ties go to the
// earliest. All indices are into x.
func (s *Stretcher) best(x []float32, t, lo, hi, l int) int {
	target := x[t : t+l]
	// The candidates' energies slide: one sample leaves, one enters. In
	// float64, the drift over a few hundred steps is far below float32's
	// resolution of the sums.
	var energy float64
	for _, v := range x[lo : lo+l] {
		energy += float64(v) * float64(v)
	}
	bestC, bestScore := lo, math.Inf(-1)
	for c := lo; ; c++ {
		score := 0.0
		if energy > 1e-30 {
			score = float64(dot(target, x[c:c+l])) / math.Sqrt(energy)
		}
		if score > bestScore {
			bestC, bestScore = c, score
		}
		if c == hi {
			return bestC
		}
		out, in := float64(x[c]), float64(x[c+l])
		energy += in*in - out*out
	}
}

// dot returns Σ a[i]·b[i], with four partial sums so the loop pipelines.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var d0, d1, d2, d3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 += a[i] * b[i]
		d1 += a[i+1] * b[i+1]
		d2 += a[i+2] * b[i+2]
		d3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		d0 += a[i] * b[i]
	}
	return (d0 + d1) + (d2 + d3)
}

// emit appends count frames of segment j: the cross-fade from the
// continuation at q to the input at p. Segment 0 is the input itself.
func (s *Stretcher) emit(dst []float32, p, count int) []float32 {
	c := s.channels
	newer := s.buf[(p-s.base)*c:]
	if s.seg == 0 {
		return append(dst, newer[:count*c]...)
	}
	older := s.buf[(s.q-s.base)*c:]
	for i := 0; i < count; i++ {
		w := s.ramp[i]
		for k := i * c; k < (i+1)*c; k++ {
			dst = append(dst, (1-w)*older[k]+w*newer[k])
		}
	}
	return dst
}
