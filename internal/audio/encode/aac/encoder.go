package aac

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Default bitrates for speech (bits per second), used when NewEncoder is
// given 0.
const (
	DefaultBitrateMono   = 64000
	DefaultBitrateStereo = 128000
)

// Delay is the encoder delay in samples per channel: the first frame's MDCT
// block is 1024 zeros followed by the first 1024 input samples, so a decoder
// (ffmpeg's included; ADTS carries no priming information) outputs 1024
// samples before the input's first sample.
const Delay = frameLen

// pcmScale maps float samples in [-1, 1] to the 16-bit PCM scale that AAC
// decoders assume for their output.
const pcmScale = 32768

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("aac: encoder is closed")

// SupportedRate reports whether sampleRate has an AAC sampling_frequency_index
// that this encoder supports: 8000, 11025, 12000, 16000, 22050, 24000, 32000,
// 44100, 48000, 64000, 88200 and 96000 Hz. Other rates must be resampled first.
func SupportedRate(sampleRate int) bool { return rateIndex(sampleRate) >= 0 }

func rateIndex(sampleRate int) int {
	for i, r := range sampleRates {
		if r == sampleRate {
			return i
		}
	}
	return -1
}

// BitrateRange returns the bitrates NewEncoder accepts for the given rate and
// channel count: from 8 kbit/s per channel (sampleRate/8 bit/s above 64 kHz,
// so that a frame always holds its side information: 128 bits per channel
// and frame) up to the 6144 bits per channel and frame that the AAC decoder
// buffer allows.
func BitrateRange(sampleRate, channels int) (lo, hi int) {
	return max(8000, sampleRate/8) * channels, 6144 * channels * sampleRate / frameLen
}

// Encoder writes an AAC-LC ADTS stream. It is not safe for concurrent use.
type Encoder struct {
	w        io.Writer
	channels int
	rateIdx  int
	bitrate  int

	m     *mdct
	chans [2]*channel
	cur   [2][frameLen]float64 // pending input per channel, PCM-16 scale
	n     int                  // pending samples per channel
	total int64                // samples per channel written so far

	meanBits  float64 // bits per frame at the target bitrate
	reservoir float64 // bits saved by earlier frames (bounded)
	maxRes    float64

	bw     bitWriter
	out    []byte
	err    error
	closed bool
}

// NewEncoder returns an encoder that writes AAC-LC in ADTS framing to w.
// sampleRate is the input rate in Hz (see SupportedRate); channels is 1 (one
// single_channel_element) or 2 (one channel_pair_element without a common
// window); bitrate is in bits per second, 0 meaning DefaultBitrateMono or
// DefaultBitrateStereo.
func NewEncoder(w io.Writer, sampleRate, channels, bitrate int) (*Encoder, error) {
	idx := rateIndex(sampleRate)
	if idx < 0 {
		return nil, fmt.Errorf("aac: sample rate %d Hz is not supported (want one of %v)", sampleRate, sampleRates)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("aac: %d channels not supported (want 1 or 2)", channels)
	}
	lo, hi := BitrateRange(sampleRate, channels)
	if bitrate == 0 {
		// At 8 to 12 kHz the default exceeds what a frame may hold.
		bitrate = min(DefaultBitrateMono*channels, hi)
	}
	if bitrate < lo || bitrate > hi {
		return nil, fmt.Errorf("aac: bitrate %d bit/s out of range %d–%d for %d Hz, %d channel(s)", bitrate, lo, hi, sampleRate, channels)
	}
	e := &Encoder{
		w:        w,
		channels: channels,
		rateIdx:  idx,
		bitrate:  bitrate,
		m:        newMDCT(2),
		meanBits: float64(bitrate) * frameLen / float64(sampleRate),
	}
	e.maxRes = float64(6144*channels) - e.meanBits
	nb, ath := bandLimits(idx, sampleRate, bitrate/channels)
	for ch := 0; ch < channels; ch++ {
		e.chans[ch] = &channel{nb: nb, offsets: swbOffsets[idx], logATH: ath}
	}
	e.out = make([]byte, 0, 8192)
	e.bw.buf = make([]byte, 0, 8192)
	return e, nil
}

// bandLimits returns the number of bands coded (those starting below the
// audio bandwidth chosen for the per-channel bitrate) and the log2 absolute
// threshold per line for each band.
//
// The bandwidth is bitrate/4 Hz per channel (16 kHz at 64 kbit/s), capped at
// 20 kHz and the Nyquist frequency: at low rates the bits are better spent
// below it than on sparse high bands.
func bandLimits(idx, sampleRate, perChannel int) (int, []float64) {
	off := swbOffsets[idx]
	bw := min(float64(perChannel)/4, 20000, float64(sampleRate)/2)
	lineHz := float64(sampleRate) / 2 / frameLen
	nb := 0
	for nb < numSwbLong[idx] && float64(off[nb])*lineHz < bw {
		nb++
	}
	// Energy per line of a full-scale sine after this MDCT: Σ X² = s²·M·N/8
	// with s = 2·32768, M = 1024, N = 2048 (Parseval of the DCT-IV), which is
	// taken as 96 dB SPL and lumped into one line.
	logFull := math.Log2(4 * pcmScale * pcmScale * frameLen * 2 * frameLen / 8.0)
	ath := make([]float64, nb)
	for b := range ath {
		lo := float64(off[b]) * lineHz
		hi := float64(off[b+1]) * lineHz
		db := math.Inf(1)
		for f := lo; f <= hi; f += lineHz {
			db = min(db, athDB(max(f, 20)))
		}
		ath[b] = logFull + (db-96)/10*math.Log2(10)
	}
	return nb, ath
}

// athDB is Terhardt's approximation of the absolute threshold of hearing in
// dB SPL, f in Hz.
func athDB(f float64) float64 {
	k := f / 1000
	return 3.64*math.Pow(k, -0.8) - 6.5*math.Exp(-0.6*(k-3.3)*(k-3.3)) + 1e-3*k*k*k*k
}

// Delay returns the number of leading samples per channel a decoder outputs
// before the first input sample (always Delay, 1024).
func (e *Encoder) Delay() int { return Delay }

// Write encodes interleaved samples (float32, nominal range [-1, 1]; values
// outside are clipped, NaN becomes 0). Every frame completed by these samples
// is written to w, in one Write call, before Write returns.
func (e *Encoder) Write(samples []float32) error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	if len(samples)%e.channels != 0 {
		return fmt.Errorf("aac: %d samples is not a whole number of %d-channel frames", len(samples), e.channels)
	}
	e.out = e.out[:0]
	for i := 0; i < len(samples); i += e.channels {
		for ch := 0; ch < e.channels; ch++ {
			e.cur[ch][e.n] = pcm(samples[i+ch])
		}
		e.n++
		if e.n == frameLen {
			e.encodeFrame()
		}
	}
	return e.emit()
}

func pcm(v float32) float64 {
	switch {
	case v > 1:
		v = 1
	case v < -1:
		v = -1
	case v != v: // NaN
		v = 0
	}
	return float64(v) * pcmScale
}

func (e *Encoder) emit() error {
	if len(e.out) == 0 {
		return nil
	}
	_, err := e.w.Write(e.out)
	e.out = e.out[:0]
	if err != nil {
		e.err = fmt.Errorf("aac: write: %w", err)
	}
	return e.err
}

// Flush writes out everything that can be written without padding. Write
// already writes every completed frame, so Flush has nothing to do.
func (e *Encoder) Flush() error {
	if e.closed {
		return ErrClosed
	}
	return e.err
}

// Close encodes the buffered remainder padded with silence plus one frame
// that completes the last samples' overlap, so a decoder outputs every input
// sample. It does not close w. An encoder that never received a sample
// writes nothing.
func (e *Encoder) Close() error {
	if e.closed {
		return ErrClosed
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	if e.total == 0 && e.n == 0 {
		return nil
	}
	e.out = e.out[:0]
	if e.n > 0 {
		e.padFrame()
		e.encodeFrame()
	}
	e.padFrame()
	e.encodeFrame()
	return e.emit()
}

func (e *Encoder) padFrame() {
	for ch := 0; ch < e.channels; ch++ {
		clear(e.cur[ch][e.n:])
	}
	e.n = frameLen
}

// encodeFrame encodes the 1024 pending samples per channel as one ADTS frame
// appended to e.out.
func (e *Encoder) encodeFrame() {
	e.total += int64(e.n)
	e.n = 0
	for ch := 0; ch < e.channels; ch++ {
		e.chans[ch].analyze(e.m, e.cur[ch][:])
	}
	// Fixed bits: ADTS header 56, element id and tag 7 (+1 common_window in a
	// CPE), ID_END 3, and up to 7 bits of byte alignment.
	fixed := 56 + 7 + 3 + 7
	if e.channels == 2 {
		fixed++
	}
	budget := e.meanBits + e.reservoir/2
	budget = min(budget, float64(6144*e.channels)) - float64(fixed)
	lr := e.search(int(budget))
	e.plan(lr)

	// Assemble: raw_data_block = element, ID_END, byte alignment.
	w := &e.bw
	w.buf = w.buf[:0]
	w.acc, w.nbits = 0, 0
	if e.channels == 1 {
		w.put(0, 3) // ID_SCE
		w.put(0, 4) // element_instance_tag
		e.chans[0].write(w)
	} else {
		w.put(1, 3) // ID_CPE
		w.put(0, 4)
		w.put(0, 1) // common_window = 0
		e.chans[0].write(w)
		e.chans[1].write(w)
	}
	w.put(7, 3) // ID_END
	w.align()
	n := 7 + len(w.buf)
	e.out = appendADTS(e.out, e.rateIdx, e.channels, n)
	e.out = append(e.out, w.buf...)
	e.reservoir = min(e.reservoir+e.meanBits-float64(8*n), e.maxRes)
}

// search finds by bisection the smallest log2 noise-to-masker ratio whose
// frame fits budget bits; bits fall as the ratio grows, and at the upper end
// of the range no band is coded, so the result always fits a budget of at
// least the frame's side information.
func (e *Encoder) search(budget int) float64 {
	hi := math.Inf(-1)
	for ch := 0; ch < e.channels; ch++ {
		hi = max(hi, e.chans[ch].zeroAt)
	}
	if math.IsInf(hi, -1) { // digital silence
		return 0
	}
	hi += 0.01
	lo := hi - searchRange
	for i := 0; i < searchSteps; i++ {
		mid := (lo + hi) / 2
		if e.plan(mid) <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func (e *Encoder) plan(lr float64) int {
	bits := 0
	for ch := 0; ch < e.channels; ch++ {
		bits += e.chans[ch].plan(lr)
	}
	return bits
}

// appendADTS appends the 7-byte ADTS header (ISO/IEC 14496-3 1.A.2.2) of an
// AAC-LC frame of n bytes including the header: MPEG-4, no CRC, buffer
// fullness 0x7FF (variable rate), one raw data block.
func appendADTS(dst []byte, rateIdx, channels, n int) []byte {
	h := uint64(0xFFF)          // syncword
	h = h<<1 | 0                // ID: MPEG-4
	h = h<<2 | 0                // layer
	h = h<<1 | 1                // protection_absent
	h = h<<2 | 1                // profile_ObjectType: AAC LC (object type 2) − 1
	h = h<<4 | uint64(rateIdx)  // sampling_frequency_index
	h = h<<1 | 0                // private_bit
	h = h<<3 | uint64(channels) // channel_configuration
	h = h<<4 | 0                // original_copy, home, copyright_identification_bit/start
	h = h<<13 | uint64(n)       // aac_frame_length
	h = h<<11 | 0x7FF           // adts_buffer_fullness
	h = h<<2 | 0                // number_of_raw_data_blocks_in_frame − 1
	for shift := 48; shift >= 0; shift -= 8 {
		dst = append(dst, byte(h>>shift))
	}
	return dst
}
