package encode

import (
	"fmt"
	"io"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/audio/tsm"
)

// OutputOptions describe how the model's audio becomes what a client asked
// for.
type OutputOptions struct {
	Format Format
	// InRate and InChannels describe the samples given to Write (the
	// model's: 48 kHz, stereo for MOSS-TTS-Nano).
	InRate, InChannels int
	// Channels is 1 (the input's channels averaged) or 2 (InChannels must
	// be 2).
	Channels int
	// SampleRate is the rate asked for (0: InRate); the format may encode
	// at a higher one (Format.EncodeRate).
	SampleRate int
	// Bitrate of the lossy formats (0: the codec's default for speech).
	Bitrate int
	// Speed changes the tempo without changing the pitch (0 or 1:
	// unchanged; MinSpeed–MaxSpeed).
	Speed float64
}

// Output converts and encodes the model's audio as it is generated:
// channels, then speed (tsm.Stretcher: pitch kept, about 30 ms held back),
// then sample rate (audio.StreamResampler, equal to resampling the whole
// signal), then the format's Encoder. Write never holds back more than
// these few milliseconds and the codec's frame.
type Output struct {
	enc        Encoder
	inChannels int
	channels   int
	rate       int
	stretch    *tsm.Stretcher           // nil at speed 1
	rs         []*audio.StreamResampler // one per output channel; nil at the input rate
	mono, tmp  []float32
	fast       []float32
	planes     [2][]float32
	inter      []float32
	closed     bool
}

// NewOutput returns an Output writing to w.
func NewOutput(w io.Writer, o OutputOptions) (*Output, error) {
	if o.InRate <= 0 || (o.InChannels != 1 && o.InChannels != 2) {
		return nil, fmt.Errorf("output: bad input %d Hz, %d channels", o.InRate, o.InChannels)
	}
	if o.Channels != 1 && (o.Channels != 2 || o.InChannels != 2) {
		return nil, fmt.Errorf("output: %d channels from %d", o.Channels, o.InChannels)
	}
	want := o.SampleRate
	if want == 0 {
		want = o.InRate
	}
	if want < MinSampleRate || want > MaxSampleRate {
		return nil, fmt.Errorf("output: sample rate %d Hz outside [%d, %d]", want, MinSampleRate, MaxSampleRate)
	}
	rate := o.Format.EncodeRate(want)
	enc, err := NewEncoder(w, o.Format, Options{SampleRate: rate, Channels: o.Channels, Bitrate: o.Bitrate})
	if err != nil {
		return nil, err
	}
	out := &Output{enc: enc, inChannels: o.InChannels, channels: o.Channels, rate: rate}
	if o.Speed != 0 && o.Speed != 1 {
		if out.stretch, err = tsm.New(o.InRate, o.Channels, o.Speed); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	if rate != o.InRate {
		r, err := audio.NewResampler(o.InRate, rate)
		if err != nil {
			return nil, err
		}
		for range o.Channels {
			out.rs = append(out.rs, audio.NewStreamResampler(r))
		}
	}
	return out, nil
}

// The sample rates an Output accepts.
const (
	MinSampleRate = 8000
	MaxSampleRate = 48000
)

// SampleRate is the rate the audio is encoded at.
func (o *Output) SampleRate() int { return o.rate }

// Write converts and encodes interleaved samples of the input format.
func (o *Output) Write(samples []float32) error {
	if o.closed {
		return fmt.Errorf("output: write after Close")
	}
	return o.encode(samples, false)
}

// Flush writes what the encoder can write without padding.
func (o *Output) Flush() error { return o.enc.Flush() }

// Close encodes the remaining audio and the format's trailer.
func (o *Output) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	if err := o.encode(nil, true); err != nil {
		return err
	}
	return o.enc.Close()
}

func (o *Output) encode(samples []float32, final bool) error {
	x := samples
	if o.channels == 1 && o.inChannels == 2 {
		o.mono = audio.Downmix(o.mono[:0], samples)
		x = o.mono
	}
	if o.stretch != nil {
		o.fast = o.stretch.Process(o.fast[:0], x)
		if final {
			o.fast = o.stretch.Flush(o.fast)
		}
		x = o.fast
	}
	if o.rs == nil {
		if len(x) == 0 {
			return nil
		}
		return o.enc.Write(x)
	}
	// Resample each channel, then interleave.
	for c := range o.channels {
		src := x
		if o.channels == 2 {
			o.tmp = o.tmp[:0]
			for i := c; i < len(x); i += 2 {
				o.tmp = append(o.tmp, x[i])
			}
			src = o.tmp
		}
		o.planes[c] = o.rs[c].Process(o.planes[c][:0], src)
		if final {
			o.planes[c] = o.rs[c].Flush(o.planes[c])
		}
	}
	y := o.planes[0]
	if o.channels == 2 {
		o.inter = audio.Interleave(o.inter[:0], o.planes[0], o.planes[1])
		y = o.inter
	}
	if len(y) == 0 {
		return nil
	}
	return o.enc.Write(y)
}
