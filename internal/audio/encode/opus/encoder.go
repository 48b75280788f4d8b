package opus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/thesyncim/gopus"
)

const (
	// DefaultBitrateMono is the bitrate, in bits per second, that NewEncoder
	// uses for mono when asked for 0: inside the 28–40 kbit/s that RFC 7587
	// §3.1.1 gives for fullband speech, where libopus codes speech in
	// fullband hybrid mode (at 12 kbit/s it falls back to wideband SILK).
	DefaultBitrateMono = 32000
	// DefaultBitrateStereo is the default for stereo: twice the mono rate, so
	// each channel keeps the mono quality.
	DefaultBitrateStereo = 64000
	// MinBitrate and MaxBitrate bound the bitrate argument of NewEncoder: the
	// range RFC 6716 §2.1.1 gives for Opus (6 to 510 kbit/s).
	MinBitrate = 6000
	MaxBitrate = 510000
)

const (
	frameMillis = 20                         // one Opus packet per 20 ms frame
	frame48k    = 48000 * frameMillis / 1000 // granule positions count 48 kHz samples
	maxPacket   = 4000                       // ample for any Opus packet (RFC 6716 allows 1275 bytes per frame)

	// pagePackets is how many packets Write collects before it ends a page by
	// itself: 1 s of audio keeps the page overhead near 2 % at 32 kbit/s, and a
	// streaming server that wants lower latency calls Flush.
	pagePackets = 1000 / frameMillis
)

// ErrClosed is returned by Write, Flush and Close after Close.
var ErrClosed = errors.New("opus: encoder is closed")

// SupportedRate reports whether NewEncoder accepts sampleRate: the five rates
// Opus encodes natively, 8, 12, 16, 24 and 48 kHz. Resample anything else to
// 48 kHz first.
func SupportedRate(sampleRate int) bool {
	switch sampleRate {
	case 8000, 12000, 16000, 24000, 48000:
		return true
	}
	return false
}

// Encoder writes an Ogg Opus stream (RFC 7845). It is not safe for concurrent
// use.
type Encoder struct {
	w        io.Writer
	enc      *gopus.Encoder
	rate     int
	channels int
	preSkip  int // OpusHead pre-skip, in 48 kHz samples
	lookIn   int // encoder lookahead, in input-rate samples per channel

	frame   []float32 // one frame of interleaved input being filled
	fill    int       // values in frame
	packet  []byte    // encoder output, reused
	page    pageWriter
	inLen   int64 // input samples per channel accepted so far
	packets int64 // packets encoded so far

	headersDone bool
	closed      bool
	err         error // first write error; the stream is unusable after it
}

// NewEncoder returns an encoder that writes Ogg Opus to w. sampleRate is the
// input rate in Hz and must satisfy SupportedRate; channels is 1 or 2
// (interleaved left, right); bitrate is in bits per second within
// [MinBitrate, MaxBitrate], or 0 for DefaultBitrateMono or
// DefaultBitrateStereo. Nothing is written until the first frame is complete
// or Flush or Close is called.
func NewEncoder(w io.Writer, sampleRate, channels, bitrate int) (*Encoder, error) {
	if !SupportedRate(sampleRate) {
		return nil, fmt.Errorf("opus: sample rate %d Hz is not supported; use 8000, 12000, 16000, 24000 or 48000", sampleRate)
	}
	if channels != 1 && channels != 2 {
		return nil, fmt.Errorf("opus: %d channels; only 1 or 2 are supported", channels)
	}
	if bitrate == 0 {
		bitrate = DefaultBitrateMono
		if channels == 2 {
			bitrate = DefaultBitrateStereo
		}
	}
	if bitrate < MinBitrate || bitrate > MaxBitrate {
		return nil, fmt.Errorf("opus: bitrate %d bit/s is outside %d–%d", bitrate, MinBitrate, MaxBitrate)
	}
	// ApplicationAudio, not VoIP: on our speech clips it codes the same
	// bandwidth at the same rate with a closer waveform (it prefers hybrid and
	// CELT over SILK-only), and it is what opusenc and ffmpeg default to.
	enc, err := gopus.NewEncoder(gopus.EncoderConfig{
		SampleRate:  sampleRate,
		Channels:    channels,
		Application: gopus.ApplicationAudio,
	})
	if err != nil {
		return nil, fmt.Errorf("opus: new encoder: %w", err)
	}
	if err := enc.SetBitrate(bitrate); err != nil {
		return nil, fmt.Errorf("opus: set bitrate %d: %w", bitrate, err)
	}
	// We only ever encode speech; saying so keeps libopus' speech/music
	// detector from steering a voice into music-tuned mode decisions.
	if err := enc.SetSignal(gopus.SignalVoice); err != nil {
		return nil, fmt.Errorf("opus: set signal: %w", err)
	}
	frameLen := sampleRate * frameMillis / 1000
	e := &Encoder{
		w:        w,
		enc:      enc,
		rate:     sampleRate,
		channels: channels,
		lookIn:   enc.Lookahead(),
		// The lookahead scales exactly with the rate (2.5 ms + 4 ms), so this
		// is 312 at every supported rate.
		preSkip: enc.Lookahead() * 48000 / sampleRate,
		frame:   make([]float32, frameLen*channels),
		packet:  make([]byte, maxPacket),
	}
	// A random serial number lets two of our files be chained (concatenated)
	// into one valid Ogg physical stream, as RFC 3533 requires distinct serials.
	e.page.serial = rand.Uint32()
	return e, nil
}

// Delay returns 0. The encoder's lookahead (312 samples at 48 kHz, 6.5 ms) is
// stored as the pre-skip in OpusHead, and RFC 7845 §4.2 requires decoders to
// drop it; ffmpeg, libopusfile and browsers do. Likewise the final page's
// granule position trims the silence that pads the last frame, so a decoder
// outputs exactly the samples that were written.
func (e *Encoder) Delay() int { return 0 }

// Write encodes interleaved samples; values outside [-1, 1] are clipped and
// NaN becomes 0. len(samples) must be a multiple of the channel count. Pages
// completed by these samples (every second of audio) are written before Write
// returns.
func (e *Encoder) Write(samples []float32) error {
	if err := e.usable(); err != nil {
		return err
	}
	if len(samples)%e.channels != 0 {
		return fmt.Errorf("opus: write of %d samples is not a whole number of %d-channel frames", len(samples), e.channels)
	}
	e.inLen += int64(len(samples) / e.channels)
	for len(samples) > 0 {
		dst := e.frame[e.fill:]
		n := min(len(dst), len(samples))
		for i, v := range samples[:n] {
			switch {
			case v != v: // NaN
				v = 0
			case v > 1:
				v = 1
			case v < -1:
				v = -1
			}
			dst[i] = v
		}
		e.fill += n
		samples = samples[n:]
		if e.fill == len(e.frame) {
			if err := e.encodeFrame(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush writes the headers if they are not out yet and ends the current page,
// so that everything encoded so far reaches w. Samples of an incomplete frame
// stay buffered: an Opus frame cannot be coded without padding it. Flush
// writes nothing when no packet is pending.
func (e *Encoder) Flush() error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := e.writeHeaders(); err != nil {
		return err
	}
	if e.page.n == 0 {
		return nil
	}
	return e.fail(e.page.flush(e.w, 0, e.packets*frame48k))
}

// Close pads the input with silence until the encoder has coded every input
// sample (the last frame plus the lookahead), writes the last page with the
// end-of-stream flag and a granule position that trims the padding, and does
// not close the underlying writer.
func (e *Encoder) Close() error {
	if err := e.usable(); err != nil {
		return err
	}
	e.closed = true
	// Each packet consumes one frame of input, and the decoder's output lags
	// the input by the lookahead, so the last input sample is decoded once
	// packets*frameLen >= inLen+lookIn. This is always at least one more
	// packet than Write produced, so the last page is never empty.
	frameLen := int64(len(e.frame) / e.channels)
	need := (e.inLen + int64(e.lookIn) + frameLen - 1) / frameLen
	for e.packets < need {
		clear(e.frame[e.fill:])
		e.fill = len(e.frame)
		if err := e.encodeFrame(); err != nil {
			return err
		}
	}
	end := int64(e.preSkip) + e.inLen*48000/int64(e.rate)
	return e.fail(e.page.flush(e.w, flagEOS, end))
}

// encodeFrame codes the full frame buffer into one packet and adds it to the
// pending page, writing pages that are full.
func (e *Encoder) encodeFrame() error {
	if err := e.writeHeaders(); err != nil {
		return err
	}
	e.fill = 0
	n, err := e.enc.Encode(e.frame, e.packet)
	if err != nil {
		return e.fail(fmt.Errorf("opus: encode frame %d: %w", e.packets, err))
	}
	if n == 0 {
		// Only DTX or encoder buffering yield no packet; we use neither, and a
		// missing packet would shift every later granule position.
		return e.fail(fmt.Errorf("opus: encoder returned no packet for frame %d", e.packets))
	}
	if !e.page.fits(n) {
		if err := e.fail(e.page.flush(e.w, 0, e.packets*frame48k)); err != nil {
			return err
		}
	}
	e.page.add(e.packet[:n])
	e.packets++
	if e.page.n >= pagePackets {
		return e.fail(e.page.flush(e.w, 0, e.packets*frame48k))
	}
	return nil
}

// writeHeaders writes the two header pages RFC 7845 §3 requires, each on a
// page of its own, once.
func (e *Encoder) writeHeaders() error {
	if e.headersDone {
		return nil
	}
	e.headersDone = true

	// OpusHead, RFC 7845 §5.1. Channel mapping family 0 covers mono and
	// stereo (left, right) without a mapping table.
	head := make([]byte, 0, 19)
	head = append(head, "OpusHead"...)
	head = append(head, 1, byte(e.channels))
	head = binary.LittleEndian.AppendUint16(head, uint16(e.preSkip))
	head = binary.LittleEndian.AppendUint32(head, uint32(e.rate))
	head = binary.LittleEndian.AppendUint16(head, 0) // output gain
	head = append(head, 0)                           // channel mapping family
	e.page.add(head)
	if err := e.fail(e.page.flush(e.w, flagBOS, 0)); err != nil {
		return err
	}

	// OpusTags, RFC 7845 §5.2: a vendor string and no user comments.
	const vendor = "nanovox (gopus)"
	tags := make([]byte, 0, 16+len(vendor))
	tags = append(tags, "OpusTags"...)
	tags = binary.LittleEndian.AppendUint32(tags, uint32(len(vendor)))
	tags = append(tags, vendor...)
	tags = binary.LittleEndian.AppendUint32(tags, 0)
	e.page.add(tags)
	return e.fail(e.page.flush(e.w, 0, 0))
}

func (e *Encoder) usable() error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return ErrClosed
	}
	return nil
}

// fail records the first error, after which the stream is broken: a page was
// half written or a packet lost, so nothing more may be appended.
func (e *Encoder) fail(err error) error {
	if err != nil && e.err == nil {
		e.err = err
	}
	return err
}
