package audio

import (
	"fmt"
	"math"
	"slices"
)

// Resampler parameters: torchaudio.functional.resample's defaults
// (resampling_method "sinc_interp_hann"), which the reference pipeline uses.
const (
	lowpassFilterWidth = 6
	rolloff            = 0.99
)

// Resampler converts a signal from one sample rate to another with
// torchaudio's band-limited sinc interpolation (_get_sinc_resample_kernel +
// _apply_sinc_resample_kernel). With g = gcd(in, out), orig = in/g and
// new = out/g, output sample m = k·new + j is
//
//	y[m] = Σ_idx x[k·orig + idx] · K[j][idx],   idx ∈ [-width, width+orig)
//
// with x zero outside the input (torchaudio pads width before and
// width+orig after), and the output has ceil(new·n/orig) samples.
//
// The kernel is computed in float64 with torchaudio's operation order and
// rounded to float32, as torchaudio.transforms.Resample does. (The
// functional form computes it directly in the waveform's dtype, float32,
// which differs by float32 rounding noise, about 1e-7.) Taps whose argument
// torchaudio clamps to ±lowpass_filter_width are dropped: their float64 value
// is below 1e-48, which is exactly 0 in float32, so each of the new phases
// keeps only its ~2·width contiguous non-zero taps (polyphase form).
//
// Accumulation: torchaudio's conv1d accumulates in float32 in an
// implementation-defined order. Resample accumulates each output in float64
// and rounds once, so it agrees with a float64 evaluation of the same float32
// kernel to within half a float32 ulp and with torchaudio to within
// torchaudio's own float32 rounding noise.
//
// A Resampler is immutable and safe for concurrent use.
type Resampler struct {
	inRate, outRate int
	orig, new       int // rates divided by their gcd
	phases          []resamplePhase
}

type resamplePhase struct {
	start int       // input offset of taps[0] relative to k·orig
	taps  []float32 // contiguous non-zero kernel values
}

// NewResampler builds the kernel for inRate → outRate. Both rates must be
// positive; the kernel has out/gcd phases, so rates with a tiny gcd (e.g.
// 44101 → 48000) cost more to set up (still ~1 MB for MaxSampleRate inputs).
func NewResampler(inRate, outRate int) (*Resampler, error) {
	if inRate <= 0 || outRate <= 0 || inRate > 1<<24 || outRate > 1<<24 {
		return nil, fmt.Errorf("resample %d Hz to %d Hz: rates must be in (0, 2^24]", inRate, outRate)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{inRate: inRate, outRate: outRate, orig: inRate / g, new: outRate / g}
	if inRate == outRate {
		return r, nil
	}
	orig, nw := float64(r.orig), float64(r.new)
	lpw := float64(lowpassFilterWidth)
	baseFreq := math.Min(orig, nw) * rolloff
	width := int(math.Ceil(lpw * orig / baseFreq))
	scale := baseFreq / orig
	r.phases = make([]resamplePhase, r.new)
	for j := range r.phases {
		// Only idx with |t| < lpw, t = (idx/orig - j/new)·baseFreq, can be
		// non-zero; scan that window (with a margin) instead of all
		// 2·width+orig positions.
		center := orig * float64(j) / nw
		reach := orig * lpw / baseFreq
		lo := max(-width, int(math.Floor(center-reach))-1)
		hi := min(width+r.orig-1, int(math.Ceil(center+reach))+1)
		var taps []float32
		start := 0
		for idx := lo; idx <= hi; idx++ {
			// Same operations, in the same order, as torchaudio:
			// t = (-j/new + idx/orig) * base_freq, clamp, window, sinc.
			t := (-float64(j)/nw + float64(idx)/orig) * baseFreq
			if t <= -lpw || t >= lpw {
				continue // clamped: |value| < 1e-48, zero in float32
			}
			c := math.Cos(t * math.Pi / lpw / 2)
			window := c * c
			t *= math.Pi
			k := 1.0
			if t != 0 {
				k = math.Sin(t) / t
			}
			if taps == nil {
				start = idx
			}
			// Taps inside the window are contiguous, so idx-start indexes them.
			taps = append(taps, float32(k*(window*scale)))
		}
		r.phases[j] = resamplePhase{start: start, taps: taps}
	}
	return r, nil
}

// InRate returns the input rate the Resampler was built for.
func (r *Resampler) InRate() int { return r.inRate }

// OutRate returns the output rate the Resampler was built for.
func (r *Resampler) OutRate() int { return r.outRate }

// OutputLen returns ceil(out·n/in) reduced by the gcd, torchaudio's
// target_length (exact integer arithmetic; no drift for any length).
func (r *Resampler) OutputLen(n int) int {
	if n <= 0 {
		return 0
	}
	return int((int64(r.new)*int64(n) + int64(r.orig) - 1) / int64(r.orig))
}

// Resample appends the resampled src to dst and returns it. Equal rates
// copy src unchanged (torchaudio returns the input).
func (r *Resampler) Resample(dst, src []float32) []float32 {
	if r.inRate == r.outRate {
		return append(dst, src...)
	}
	total := r.OutputLen(len(src))
	if total == 0 {
		return dst
	}
	// Zero-pad the input so that every output is a plain dot product:
	// lead zeros before it for the earliest tap, and zeros after it up to
	// the last tap the last output frame reads.
	lead, reach := 0, 0
	for _, p := range r.phases {
		lead = max(lead, -p.start)
		reach = max(reach, p.start+len(p.taps))
	}
	lastFrame := (total - 1) / r.new
	x := make([]float32, lead+max(len(src), lastFrame*r.orig+reach))
	copy(x[lead:], src)

	base := len(dst)
	dst = slices.Grow(dst, total)[:base+total]
	out := dst[base:]
	m := 0
	for k := 0; m < total; k++ {
		off := lead + k*r.orig
		phases := r.phases[:min(r.new, total-m)]
		for j := range phases {
			p := &phases[j]
			out[m+j] = float32(dot(p.taps, x[off+p.start:]))
		}
		m += len(phases)
	}
	return dst
}

// dot is the hot loop: Σ taps[i]·x[i] with four independent float64
// accumulators.
func dot(taps, x []float32) float64 {
	x = x[:len(taps)]
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(taps); i += 4 {
		t, v := taps[i:i+4:i+4], x[i:i+4:i+4]
		a0 += float64(t[0]) * float64(v[0])
		a1 += float64(t[1]) * float64(v[1])
		a2 += float64(t[2]) * float64(v[2])
		a3 += float64(t[3]) * float64(v[3])
	}
	for ; i < len(taps); i++ {
		a0 += float64(taps[i]) * float64(x[i])
	}
	return (a0 + a1) + (a2 + a3)
}

// Resample converts src from inRate to outRate; see Resampler.
func Resample(src []float32, inRate, outRate int) ([]float32, error) {
	r, err := NewResampler(inRate, outRate)
	if err != nil {
		return nil, err
	}
	return r.Resample(nil, src), nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
