package mp3

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Default bitrates (bits per second) for speech when NewEncoder gets 0.
const (
	DefaultMonoBitrate   = 64000
	DefaultStereoBitrate = 128000
)

// delay is the encoder's algorithmic delay in samples per channel: the
// analysis/synthesis filterbank pair plus the MDCT overlap. Measured by
// cross-correlation in TestDelay.
const delay = 1057

// maxPending bounds the encoded bytes held back within one Write, so a
// long input is written in pieces instead of growing one buffer.
const maxPending = 32 << 10

// ErrUnsupported is wrapped by NewEncoder's errors for a sample rate,
// channel count or bitrate the format cannot carry, so that callers can
// tell a request they must change (or resample) from an internal fault.
var ErrUnsupported = errors.New("unsupported MP3 parameters")

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("mp3: encoder is closed")

// SupportedRate reports whether sampleRate can be encoded directly: 32000,
// 44100 and 48000 Hz (MPEG-1) and 16000, 22050 and 24000 Hz (MPEG-2 LSF).
// Other rates must be resampled first.
func SupportedRate(sampleRate int) bool {
	_, ok := sfBandLong[sampleRate]
	return ok
}

// SupportedBitrates returns the bitrates (bits per second) accepted at
// sampleRate, or nil for an unsupported rate.
func SupportedBitrates(sampleRate int) []int {
	if !SupportedRate(sampleRate) {
		return nil
	}
	table := &bitratesMPEG1
	if sampleRate < 32000 {
		table = &bitratesLSF
	}
	r := make([]int, 0, 14)
	for _, k := range table[1:] {
		r = append(r, k*1000)
	}
	return r
}

// Encoder is a streaming constant-bitrate MP3 encoder. It is not safe for
// concurrent use.
type Encoder struct {
	w        io.Writer
	channels int
	lsf      bool // MPEG-2 low sampling frequency: one granule per frame
	granules int
	header   [4]byte // header with the padding bit clear
	sideLen  int     // side-info bytes
	// Frame sizes: frameBase bytes, plus one padding byte whenever the
	// accumulated fractional remainder padRem/padDen reaches a whole byte
	// (44.1 and 22.05 kHz).
	frameBase, padRem, padDen, padAcc int

	sfb *[23]int
	q   [2][2]quantizer // [granule][channel]
	// lastGain is the previous frame's common global_gain, where the next
	// frame's search starts.
	lastGain int
	ch       [2]channelState
	lines    [2][2][576]float64 // MDCT lines of the frame being built: [granule][channel]
	gr       granule
	fill     int   // samples per channel waiting in ch[c].pcm[histLen:]
	fed      int64 // input samples per channel so far
	coded    int64 // samples per channel turned into frames so far

	out    []byte // encoded frames not yet written to w
	frame  []byte
	closed bool
	err    error // sticky write error
}

// NewEncoder returns an encoder that writes MP3 to w.
// sampleRate is the input rate in Hz and must satisfy SupportedRate;
// channels is 1 or 2 (stereo is coded as independent left/right channels);
// bitrate is in bits per second, one of SupportedBitrates(sampleRate), or 0
// for DefaultMonoBitrate or DefaultStereoBitrate.
func NewEncoder(w io.Writer, sampleRate, channels, bitrate int) (*Encoder, error) {
	if w == nil {
		return nil, errors.New("mp3: nil writer")
	}
	if !SupportedRate(sampleRate) {
		return nil, fmt.Errorf("mp3: sample rate %d Hz: %w (use 16000, 22050, 24000, 32000, 44100 or 48000)", sampleRate, ErrUnsupported)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("mp3: %d channels: %w (must be 1 or 2)", channels, ErrUnsupported)
	}
	if bitrate == 0 {
		bitrate = DefaultMonoBitrate
		if channels == 2 {
			bitrate = DefaultStereoBitrate
		}
	}
	e := &Encoder{w: w, channels: channels, lsf: sampleRate < 32000, sfb: sfBandLong[sampleRate]}
	table := &bitratesMPEG1
	e.granules = 2
	if e.lsf {
		table = &bitratesLSF
		e.granules = 1
	}
	brIdx := 0
	for i, k := range table {
		if i > 0 && k*1000 == bitrate {
			brIdx = i
		}
	}
	if brIdx == 0 {
		return nil, fmt.Errorf("mp3: bitrate %d bit/s at %d Hz: %w (allowed: %v)", bitrate, sampleRate, ErrUnsupported, SupportedBitrates(sampleRate))
	}

	// Bytes per frame = samples per frame / 8 · bitrate / rate.
	num := 576 * e.granules / 8 * bitrate
	e.frameBase, e.padRem, e.padDen = num/sampleRate, num%sampleRate, sampleRate

	version := byte(3) // MPEG-1
	if e.lsf {
		version = 2
	}
	mode := byte(0) // stereo
	if channels == 1 {
		mode = 3 // single channel
	}
	// sync, version, layer III (01), no CRC (protection bit 1); bitrate,
	// rate, padding (set per frame), private 0; mode, mode extension 0,
	// not copyrighted, original, no emphasis.
	e.header = [4]byte{
		0xFF,
		0xE0 | version<<3 | 1<<1 | 1,
		byte(brIdx)<<4 | byte(rateIndex[sampleRate])<<2,
		mode<<6 | 1<<2,
	}
	switch {
	case !e.lsf && channels == 1:
		e.sideLen = 17
	case !e.lsf:
		e.sideLen = 32
	case channels == 1:
		e.sideLen = 9
	default:
		e.sideLen = 17
	}
	for gr := range e.q {
		for c := range e.q[gr] {
			e.q[gr][c].sfb = e.sfb
			e.q[gr][c].cutoff = cutoffLine(sampleRate, bitrate/channels)
		}
	}
	e.frame = make([]byte, e.frameBase+1)
	e.lastGain = 160 // a typical gain for speech; only a starting point
	return e, nil
}

// cutoffLine returns the number of MDCT lines coded: a low-pass that keeps
// low bitrates from spending bits on the top of the spectrum, as encoders
// customarily do. The frequencies are per-channel bitrate guide values.
func cutoffLine(rate, perChannel int) int {
	var hz float64
	switch k := perChannel / 1000; {
	case k <= 8:
		hz = 2500
	case k <= 16:
		hz = 4000
	case k <= 24:
		hz = 5500
	case k <= 32:
		hz = 7500
	case k <= 40:
		hz = 9500
	case k <= 48:
		hz = 11000
	case k <= 56:
		hz = 13000
	case k <= 64:
		hz = 15000
	case k <= 80:
		hz = 16500
	case k <= 96:
		hz = 17500
	case k <= 128:
		hz = 18500
	default:
		hz = 19500
	}
	return min(576, int(math.Ceil(hz/(float64(rate)/2)*576)))
}

// Delay is the number of leading samples per channel that a decoder
// outputs before the input's first sample.
func (e *Encoder) Delay() int { return delay }

// Write encodes interleaved samples (float32, nominal range [-1, 1];
// values outside are clipped, NaN is treated as 0). Every frame completed
// by these samples is written to the underlying writer before Write
// returns.
func (e *Encoder) Write(samples []float32) error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	if len(samples)%e.channels != 0 {
		return fmt.Errorf("mp3: %d samples is not a whole number of %d-channel frames", len(samples), e.channels)
	}
	for len(samples) > 0 {
		n := min(576-e.fill, len(samples)/e.channels)
		for c := 0; c < e.channels; c++ {
			dst := e.ch[c].pcm[histLen+e.fill : histLen+e.fill+n]
			for i := range dst {
				v := samples[i*e.channels+c]
				switch {
				case v > 1:
					v = 1
				case v < -1:
					v = -1
				case v != v: // NaN
					v = 0
				}
				dst[i] = float64(v)
			}
		}
		samples = samples[n*e.channels:]
		e.fill += n
		e.fed += int64(n)
		if e.fill == 576 {
			e.granule()
			if len(e.out) >= maxPending {
				if err := e.writeOut(); err != nil {
					return err
				}
			}
		}
	}
	return e.writeOut()
}

// granule analyzes the buffered 576 samples of every channel and, when a
// frame's granules are complete, codes the frame.
func (e *Encoder) granule() {
	gr := int(e.coded/576) % e.granules
	for c := 0; c < e.channels; c++ {
		e.ch[c].analyze(&e.lines[gr][c])
	}
	e.fill = 0
	e.coded += 576
	if gr == e.granules-1 {
		e.codeFrame()
	}
}

// frameGains chooses every granule's global_gain for a frame of budget
// main-data bits. First one gain for the whole frame, the finest that fits,
// which spreads the noise evenly over the frame's granules and channels;
// then, in order, each granule lowers its own gain into the bits the
// others left unused.
func (e *Encoder) frameGains(budget int) [2][2]int {
	var gains [2][2]int
	g := &e.gr
	for gr := 0; gr < e.granules; gr++ {
		for c := 0; c < e.channels; c++ {
			e.q[gr][c].prepare(&e.lines[gr][c])
		}
	}
	// fits reports whether gain, used everywhere, fits the frame; it
	// returns the bits used.
	fits := func(gain int) (int, bool) {
		total := 0
		for gr := 0; gr < e.granules; gr++ {
			for c := 0; c < e.channels; c++ {
				q := &e.q[gr][c]
				if q.silent() {
					continue
				}
				b := q.bits(max(gain, q.lo), g)
				if b > 4095 { // part2_3_length has 12 bits
					return 0, false
				}
				total += b
			}
		}
		return total, total <= budget
	}
	// Find the boundary by galloping from the previous frame's gain
	// (speech changes level slowly, so this takes fewer trials than a
	// plain binary search), then bisecting. 255 codes in-range input as
	// zeros, so it always fits.
	lo, hi := 0, 255
	g0 := min(max(e.lastGain, 0), 255)
	if _, ok := fits(g0); ok {
		hi = g0
		for step := 1; hi > 0; step *= 2 {
			t := max(hi-step, 0)
			if _, ok := fits(t); !ok {
				lo = t + 1
				break
			}
			hi = t
		}
	} else {
		lo = g0 + 1
		for step := 1; lo < 255; step *= 2 {
			t := min(lo+step, 255)
			if _, ok := fits(t); ok {
				hi = t
				break
			}
			lo = t + 1
		}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if _, ok := fits(mid); ok {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	e.lastGain = hi
	used, _ := fits(hi)
	spare := budget - used
	for gr := 0; gr < e.granules; gr++ {
		for c := 0; c < e.channels; c++ {
			q := &e.q[gr][c]
			gain := max(hi, q.lo)
			gains[gr][c] = gain
			if q.silent() || spare <= 0 || gain == q.lo {
				continue
			}
			// Lower the gain step by step while the spare bits last; the
			// spare is usually a few steps' worth.
			b := q.bits(gain, g)
			for gain > q.lo {
				nb := q.bits(gain-1, g)
				if nb > min(4095, b+spare) {
					break
				}
				gain--
				spare -= nb - b
				b = nb
			}
			gains[gr][c] = gain
		}
	}
	return gains
}

// codeFrame quantizes and writes the frame whose granules are in e.lines.
func (e *Encoder) codeFrame() {
	size := e.frameBase
	pad := byte(0)
	if e.padAcc += e.padRem; e.padAcc >= e.padDen {
		e.padAcc -= e.padDen
		size++
		pad = 1
	}
	f := e.frame[:size]
	clear(f)
	copy(f, e.header[:])
	f[2] |= pad << 1

	// Side info goes after the header, main data after the side info; the
	// quantizer's bit counts fill in side info written after main data.
	side := bitWriter{buf: f[4 : 4+e.sideLen]}
	main := bitWriter{buf: f[4+e.sideLen:]}
	if e.lsf {
		side.put(0, 8) // main_data_begin: no bit reservoir
		side.put(0, e.channels)
	} else {
		side.put(0, 9)
		side.put(0, 7-2*e.channels) // private bits: 5 mono, 3 stereo
		side.put(0, 4*e.channels)   // scfsi
	}
	gains := e.frameGains(len(main.buf) * 8)
	g := &e.gr
	for gr := 0; gr < e.granules; gr++ {
		for c := 0; c < e.channels; c++ {
			e.q[gr][c].finish(gains[gr][c], g)
			start := main.pos
			main.writeHuffman(g, e.sfb)
			if main.pos-start != g.part23 {
				// The bit counter and the writer disagree: a bug, not an
				// input problem. Stop rather than emit a corrupt frame.
				e.err = fmt.Errorf("mp3: internal error: granule wrote %d bits, counted %d", main.pos-start, g.part23)
				return
			}

			side.put(uint32(g.part23), 12)
			side.put(uint32(g.bigValues), 9)
			side.put(uint32(g.globalGain), 8)
			if e.lsf {
				side.put(0, 9) // scalefac_compress: no scalefactors
			} else {
				side.put(0, 4)
			}
			side.put(0, 1) // window_switching_flag: long blocks only
			for _, t := range g.table {
				side.put(uint32(t), 5)
			}
			side.put(uint32(g.region0), 4)
			side.put(uint32(g.region1), 3)
			if !e.lsf {
				side.put(0, 1) // preflag
			}
			side.put(0, 1) // scalefac_scale
			if g.count1B {
				side.put(1, 1)
			} else {
				side.put(0, 1)
			}
		}
	}
	e.out = append(e.out, f...)
}

func (e *Encoder) writeOut() error {
	if len(e.out) == 0 {
		return nil
	}
	_, err := e.w.Write(e.out)
	e.out = e.out[:0]
	if err != nil {
		e.err = fmt.Errorf("mp3: write: %w", err)
	}
	return e.err
}

// Flush writes any completed frames not yet written. Write already writes
// every frame it completes, so Flush only reports a pending write error;
// an MP3 stream has no partial-frame state that could be flushed early.
func (e *Encoder) Flush() error {
	if e.closed || e.err != nil {
		return e.err
	}
	return e.writeOut()
}

// Close pads the input with silence until every input sample, delayed by
// Delay, is inside a complete frame (and the stream has at least two
// frames, which ffmpeg needs to recognize it), writes those frames, and
// does not close the underlying writer. The stream has no trailer (no ID3 or Xing
// tag), so encoded streams can be concatenated.
func (e *Encoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	frameLen := int64(576 * e.granules)
	// ffmpeg cannot open a file of a single frame (its probe looks for a
	// second header), so even the shortest stream gets two.
	need := max(e.fed+delay, 2*frameLen)
	for e.fill > 0 || e.coded < need || e.coded%frameLen != 0 {
		for c := 0; c < e.channels; c++ {
			clear(e.ch[c].pcm[histLen+e.fill:])
		}
		e.fill = 576
		e.granule()
	}
	return e.writeOut()
}
