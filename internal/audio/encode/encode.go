// Package encode writes nanovox's output audio in the formats clients ask
// for — MP3, Ogg Opus, AAC (ADTS), FLAC, WAV and raw PCM — one streaming
// Encoder interface over the codec packages below it, and Output, which turns
// the model's audio (48 kHz, mono or stereo) into the requested channels,
// speed and sample rate before encoding, chunk by chunk as it is generated.
package encode

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/audio/encode/aac"
	"github.com/nanovox/nanovox/internal/audio/encode/flac"
	"github.com/nanovox/nanovox/internal/audio/encode/mp3"
	"github.com/nanovox/nanovox/internal/audio/encode/opus"
	"github.com/nanovox/nanovox/internal/audio/tsm"
)

// Format is an output audio format.
type Format uint8

// The formats, in OpenAI's response_format names.
const (
	MP3 Format = iota
	Opus
	AAC
	FLAC
	WAV
	PCM
)

var formatInfo = [...]struct {
	name, contentType, ext string
}{
	MP3:  {"mp3", "audio/mpeg", ".mp3"},
	Opus: {"opus", "audio/ogg", ".opus"},
	AAC:  {"aac", "audio/aac", ".aac"},
	FLAC: {"flac", "audio/flac", ".flac"},
	WAV:  {"wav", "audio/wav", ".wav"},
	PCM:  {"pcm", "audio/pcm", ".pcm"},
}

// Formats lists every format, in the order of the constants.
func Formats() []Format { return []Format{MP3, Opus, AAC, FLAC, WAV, PCM} }

// ParseFormat reads a format name (mp3, opus, aac, flac, wav, pcm).
func ParseFormat(s string) (Format, error) {
	for f, in := range formatInfo {
		if s == in.name {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("format %q is not supported (mp3, opus, aac, flac, wav, pcm)", s)
}

// FormatForPath picks the format from a file name's extension: .mp3, .opus
// or .ogg, .aac, .flac, .wav, .pcm or .raw.
func FormatForPath(path string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mp3":
		return MP3, true
	case ".opus", ".ogg":
		return Opus, true
	case ".aac":
		return AAC, true
	case ".flac":
		return FLAC, true
	case ".wav":
		return WAV, true
	case ".pcm", ".raw":
		return PCM, true
	}
	return 0, false
}

func (f Format) String() string {
	if int(f) < len(formatInfo) {
		return formatInfo[f].name
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ContentType is the format's HTTP media type.
func (f Format) ContentType() string { return formatInfo[f].contentType }

// Ext is the format's usual file extension, with the dot.
func (f Format) Ext() string { return formatInfo[f].ext }

// Lossless reports whether decoding gives back the 16-bit samples exactly.
func (f Format) Lossless() bool { return f == FLAC || f == WAV || f == PCM }

// rates lists the sample rates a codec encodes, ascending; nil means any.
func (f Format) rates() []int {
	switch f {
	case MP3: // MPEG-1 and MPEG-2 LSF
		return []int{16000, 22050, 24000, 32000, 44100, 48000}
	case Opus:
		return []int{8000, 12000, 16000, 24000, 48000}
	case AAC: // the sampling_frequency_index rates up to 48 kHz
		return []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}
	}
	return nil
}

// EncodeRate returns the sample rate the format is encoded at when rate is
// asked for: rate itself where the codec supports it, else the lowest
// supported rate above it (the highest if there is none), so audio is never
// band-limited below what was asked.
func (f Format) EncodeRate(rate int) int {
	rs := f.rates()
	if rs == nil || slices.Contains(rs, rate) {
		return rate
	}
	for _, r := range rs {
		if r > rate {
			return r
		}
	}
	return rs[len(rs)-1]
}

// An Encoder encodes interleaved float32 samples (nominal range [-1, 1]) as
// they arrive. Write writes every frame or page its samples complete; Flush
// also writes what can be written without padding (used after each
// streamed chunk); Close encodes the rest, writes any trailer, and does not
// close the destination.
type Encoder interface {
	Write(samples []float32) error
	Flush() error
	Close() error
}

// Options describe the audio an Encoder receives.
type Options struct {
	SampleRate, Channels int
	// Bitrate in bits per second for the lossy formats; 0 means the codec
	// package's default for speech.
	Bitrate int
}

// NewEncoder returns an encoder of f writing to w. The sample rate must be
// one the format encodes (EncodeRate returns it unchanged).
func NewEncoder(w io.Writer, f Format, o Options) (Encoder, error) {
	if o.Channels != 1 && o.Channels != 2 {
		return nil, fmt.Errorf("encode %s: %d channels (want 1 or 2)", f, o.Channels)
	}
	if o.SampleRate <= 0 || f.EncodeRate(o.SampleRate) != o.SampleRate {
		return nil, fmt.Errorf("encode %s: sample rate %d Hz is not supported", f, o.SampleRate)
	}
	switch f {
	case MP3:
		return mp3.NewEncoder(w, o.SampleRate, o.Channels, mp3Bitrate(o.SampleRate, o.Bitrate))
	case Opus:
		return opus.NewEncoder(w, o.SampleRate, o.Channels, o.Bitrate)
	case AAC:
		return aac.NewEncoder(w, o.SampleRate, o.Channels, o.Bitrate)
	case FLAC:
		return flac.NewEncoder(w, o.SampleRate, o.Channels, 0)
	case WAV:
		ww, err := audio.NewWAVWriter(w, o.SampleRate, o.Channels)
		if err != nil {
			return nil, err
		}
		return wavEncoder{ww}, nil
	case PCM:
		return &pcmEncoder{w: w}, nil
	}
	return nil, fmt.Errorf("encode: format %s is not supported", f)
}

// wavEncoder adapts audio.WAVWriter: the header's sizes are patched at
// Close when the destination can be rewritten (a file, a Buffer), and say
// "unknown" on a stream.
type wavEncoder struct{ w *audio.WAVWriter }

func (e wavEncoder) Write(s []float32) error { return e.w.WriteSamples(s) }
func (e wavEncoder) Flush() error            { return nil }
func (e wavEncoder) Close() error            { return e.w.Close() }

// pcmEncoder writes raw 16-bit little-endian samples.
type pcmEncoder struct {
	w   io.Writer
	buf []byte
}

func (e *pcmEncoder) Write(s []float32) error {
	e.buf = audio.AppendPCM16(e.buf[:0], s)
	_, err := e.w.Write(e.buf)
	return err
}
func (e *pcmEncoder) Flush() error { return nil }
func (e *pcmEncoder) Close() error { return nil }

// Buffer is an in-memory io.WriteSeeker (and io.WriterAt), so that a
// buffered WAV response carries its exact sizes: audio.WAVWriter patches
// its header through it at Close.
type Buffer struct {
	b   []byte
	pos int
}

// Write writes p at the current position, overwriting what is there and
// growing the buffer past its end.
func (b *Buffer) Write(p []byte) (int, error) {
	n := copy(b.b[b.pos:], p)
	b.b = append(b.b, p[n:]...)
	b.pos += len(p)
	return len(p), nil
}

// Seek sets the position of the next Write.
func (b *Buffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(b.pos)
	case io.SeekEnd:
		base = int64(len(b.b))
	default:
		return int64(b.pos), fmt.Errorf("encode: seek whence %d", whence)
	}
	if base+offset < 0 || base+offset > int64(len(b.b)) {
		return int64(b.pos), fmt.Errorf("encode: seek to %d outside %d bytes", base+offset, len(b.b))
	}
	b.pos = int(base + offset)
	return int64(b.pos), nil
}

// WriteAt overwrites bytes already written.
func (b *Buffer) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(b.b)) {
		return 0, fmt.Errorf("encode: WriteAt [%d, %d) outside %d bytes", off, off+int64(len(p)), len(b.b))
	}
	return copy(b.b[off:], p), nil
}

// Bytes returns what was written.
func (b *Buffer) Bytes() []byte { return b.b }

// Len returns the number of bytes written.
func (b *Buffer) Len() int { return len(b.b) }

// Reset empties the buffer, keeping its memory.
func (b *Buffer) Reset() { b.b, b.pos = b.b[:0], 0 }

// The speed range of Output (OpenAI's).
const (
	MinSpeed = tsm.MinSpeed
	MaxSpeed = tsm.MaxSpeed
)

// BitrateRange returns the bitrates (bits per second) a lossy format
// accepts at a sample rate and channel count; ok is false for the lossless
// ones, which have none to set. An MP3 bitrate in the range is rounded to the
// nearest standard one.
func BitrateRange(f Format, rate, channels int) (lo, hi int, ok bool) {
	switch f {
	case MP3:
		rate = f.EncodeRate(rate)
		bs := mp3.SupportedBitrates(rate)
		return bs[0], bs[len(bs)-1], true
	case Opus:
		return opus.MinBitrate, opus.MaxBitrate, true
	case AAC:
		lo, hi := aac.BitrateRange(f.EncodeRate(rate), channels)
		return lo, hi, true
	}
	return 0, 0, false
}

// mp3Bitrate rounds a bitrate to the nearest standard MP3 one at rate (0
// stays 0: the default).
func mp3Bitrate(rate, bitrate int) int {
	if bitrate == 0 {
		return 0
	}
	best := 0
	for _, b := range mp3.SupportedBitrates(rate) {
		if best == 0 || abs(b-bitrate) < abs(best-bitrate) {
			best = b
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
