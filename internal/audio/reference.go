package audio

import "time"

// ReferenceSampleRate is the codec's rate (MOSS-Audio-Tokenizer-Nano, 48 kHz).
const ReferenceSampleRate = 48000

// Reference is a reference clip ready for the codec encoder: stereo at
// TargetRate, planar.
type Reference struct {
	// SampleRate is Options.TargetRate (48 kHz by default).
	SampleRate int
	// Samples holds [left, right], equal lengths. A mono source appears in
	// both (two separate copies, as torch's repeat makes).
	Samples [2][]float32

	// Facts about the source, for logs and APIs.
	SourceRate     int
	SourceChannels int
	SourceFrames   int
	SourceFormat   string
}

// Frames returns the number of samples per channel.
func (r *Reference) Frames() int { return len(r.Samples[0]) }

// Duration returns the source duration (frames / rate).
func (r *Reference) Duration() time.Duration {
	return framesDuration(int64(r.SourceFrames), r.SourceRate)
}

// Interleaved returns L, R, L, R, … in a new slice.
func (r *Reference) Interleaved() []float32 {
	return Interleave(nil, r.Samples[0], r.Samples[1])
}

// PrepareReference does what the reference pipeline's
// _load_reference_audio does: decode (sniffing the content), validate,
// resample each channel to opts.TargetRate with torchaudio's resampler, and
// make it stereo (mono repeated). Bad input yields an *Error.
func PrepareReference(data []byte, opts Options) (*Reference, error) {
	o := opts.withDefaults()
	clip, err := DecodeWith(data, o)
	if err != nil {
		return nil, err
	}
	return ReferenceFromClip(clip, o.TargetRate)
}

// ReferenceFromClip resamples a decoded (and validated) clip to rate and
// makes it stereo.
func ReferenceFromClip(clip *Clip, rate int) (*Reference, error) {
	if err := checkFormat(clip.Channels(), clip.SampleRate); err != nil {
		return nil, err
	}
	for _, ch := range clip.Samples[1:] {
		if len(ch) != clip.Frames() {
			return nil, errorf(KindMalformed, "ref_audio channels have different lengths")
		}
	}
	rs, err := NewResampler(clip.SampleRate, rate)
	if err != nil {
		return nil, err
	}
	ref := &Reference{
		SampleRate:     rate,
		SourceRate:     clip.SampleRate,
		SourceChannels: clip.Channels(),
		SourceFrames:   clip.Frames(),
		SourceFormat:   clip.Format,
	}
	ref.Samples[0] = rs.Resample(nil, clip.Samples[0])
	if clip.Channels() == 1 {
		ref.Samples[1] = append([]float32(nil), ref.Samples[0]...)
	} else {
		ref.Samples[1] = rs.Resample(nil, clip.Samples[1])
	}
	return ref, nil
}
