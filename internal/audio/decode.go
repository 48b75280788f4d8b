package audio

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Defaults and hard bounds for decoding.
const (
	// DefaultMaxInputBytes bounds the encoded input (32 MiB: 30 s of 48 kHz
	// stereo float32 WAV is 11 MiB).
	DefaultMaxInputBytes = 32 << 20
	// DefaultMinDuration and DefaultMaxDuration bound a reference clip.
	DefaultMinDuration = 500 * time.Millisecond
	DefaultMaxDuration = 30 * time.Second
	// MinSampleRate and MaxSampleRate bound the source rate; anything outside
	// is rejected as absurd rather than resampled.
	MinSampleRate = 4000
	MaxSampleRate = 192000
)

// Options control decoding and validation. The zero value gives the defaults.
type Options struct {
	// MaxInputBytes rejects larger inputs before parsing (0: DefaultMaxInputBytes).
	MaxInputBytes int
	// MinDuration is the shortest accepted clip (0: DefaultMinDuration;
	// negative: no minimum beyond "not empty").
	MinDuration time.Duration
	// MaxDuration is the longest accepted clip (0 or negative:
	// DefaultMaxDuration). Decoding of compressed formats stops as soon as it
	// is exceeded, so it also bounds memory.
	MaxDuration time.Duration
	// TargetRate is the rate PrepareReference resamples to (0: ReferenceSampleRate).
	TargetRate int
}

func (o Options) withDefaults() Options {
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = DefaultMaxInputBytes
	}
	if o.MinDuration == 0 {
		o.MinDuration = DefaultMinDuration
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.TargetRate <= 0 {
		o.TargetRate = ReferenceSampleRate
	}
	return o
}

// Decode sniffs the content of data (never a file name), decodes it and
// validates it with the default Options.
func Decode(data []byte) (*Clip, error) { return DecodeWith(data, Options{}) }

// DecodeWith is Decode with explicit limits. Bad input yields an *Error.
func DecodeWith(data []byte, opts Options) (*Clip, error) {
	o := opts.withDefaults()
	if len(data) == 0 {
		return nil, errorf(KindEmpty, "ref_audio is empty")
	}
	if len(data) > o.MaxInputBytes {
		return nil, errorf(KindTooLarge, "ref_audio is %s; the limit is %s", fmtBytes(len(data)), fmtBytes(o.MaxInputBytes))
	}
	var (
		clip *Clip
		err  error
	)
	switch f := sniff(data); f.kind {
	case formatWAV:
		clip, err = decodeWAV(data, &o)
	case formatFLAC:
		clip, err = decodeFLAC(data[f.offset:], &o)
	case formatMP3:
		clip, err = decodeMP3(data[f.offset:], &o)
	default:
		err = f.err
	}
	if err != nil {
		return nil, err
	}
	if clip.Frames() == 0 {
		return nil, errorf(KindEmpty, "ref_audio contains no audio samples")
	}
	if err := o.checkDuration(int64(clip.Frames()), clip.SampleRate); err != nil {
		return nil, err
	}
	return clip, nil
}

// checkFormat validates the header facts every decoder learns first.
func checkFormat(channels, rate int) error {
	switch {
	case channels <= 0:
		return errorf(KindChannels, "ref_audio has 0 channels")
	case channels > 2:
		return errorf(KindChannels, "ref_audio has %d channels; only mono or stereo is supported", channels)
	case rate < MinSampleRate || rate > MaxSampleRate:
		return errorf(KindSampleRate, "ref_audio sample rate %d Hz is outside %d–%d Hz", rate, MinSampleRate, MaxSampleRate)
	}
	return nil
}

// maxFrames is the largest frame count within MaxDuration at rate.
func (o *Options) maxFrames(rate int) int64 {
	hi, lo := bits.Mul64(uint64(o.MaxDuration), uint64(rate))
	if hi >= 1e9 {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, 1e9)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// cmpDuration compares frames/rate with d exactly: -1, 0 or +1.
func cmpDuration(frames int64, rate int, d time.Duration) int {
	ah, al := bits.Mul64(uint64(frames), 1e9)
	bh, bl := bits.Mul64(uint64(d), uint64(rate))
	switch {
	case ah != bh:
		if ah < bh {
			return -1
		}
		return 1
	case al < bl:
		return -1
	case al > bl:
		return 1
	}
	return 0
}

// checkDuration applies the bounds in frames: a clip of exactly MinDuration
// or MaxDuration is accepted.
func (o *Options) checkDuration(frames int64, rate int) error {
	short := o.MinDuration > 0 && cmpDuration(frames, rate, o.MinDuration) < 0
	long := cmpDuration(frames, rate, o.MaxDuration) > 0
	if !short && !long {
		return nil
	}
	return errorf(KindDuration, "ref_audio is %s s; must be %s", fmtSeconds(frames, rate, short, o), o.rangeText())
}

// errTooLong reports a stream that passed MaxDuration before its end.
func (o *Options) errTooLong() error {
	return errorf(KindDuration, "ref_audio is longer than %s s; must be %s", secs(o.MaxDuration), o.rangeText())
}

func (o *Options) rangeText() string {
	if o.MinDuration <= 0 {
		return "at most " + secs(o.MaxDuration) + " s"
	}
	return secs(o.MinDuration) + "–" + secs(o.MaxDuration) + " s"
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// fmtSeconds prints frames/rate with two decimals, or more when two would
// make an out-of-range value look in range (29.999 s is not "30.00 s") or a
// non-empty clip look empty.
func fmtSeconds(frames int64, rate int, short bool, o *Options) string {
	v := float64(frames) / float64(rate)
	for prec := 2; ; prec++ {
		s := strconv.FormatFloat(v, 'f', prec, 64)
		p, _ := strconv.ParseFloat(s, 64)
		if prec >= 9 || (short && p < o.MinDuration.Seconds() && (p > 0 || v == 0)) || (!short && p > o.MaxDuration.Seconds()) {
			return s
		}
	}
}

func fmtBytes(n int) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	if n >= 1<<10 {
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

type formatKind int

const (
	formatUnknown formatKind = iota
	formatWAV
	formatFLAC
	formatMP3
)

type sniffed struct {
	kind   formatKind
	offset int   // where the FLAC/MP3 stream starts (after ID3v2 tags)
	err    error // for formatUnknown: why
}

// sniff identifies the container from magic bytes. It names formats we
// recognise but do not decode, so the user learns what to convert.
func sniff(data []byte) sniffed {
	has := func(off int, magic string) bool {
		return len(data) >= off+len(magic) && string(data[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "RIFF") || has(0, "RIFX") || has(0, "RF64") || has(0, "BW64"):
		if has(8, "WAVE") {
			return sniffed{kind: formatWAV}
		}
		if len(data) < 12 {
			return sniffed{err: errorf(KindMalformed, "ref_audio is a truncated RIFF file (%d bytes)", len(data))}
		}
		return sniffed{err: errorf(KindUnsupported, "ref_audio is a RIFF file of type %q, not WAVE audio", printable(data[8:12]))}
	case has(0, "fLaC"):
		return sniffed{kind: formatFLAC}
	}
	off := skipID3v2(data)
	if off < 0 {
		return sniffed{err: errorf(KindMalformed, "ref_audio has a truncated ID3 tag")}
	}
	if off > 0 {
		if bytes.HasPrefix(data[off:], []byte("fLaC")) {
			return sniffed{kind: formatFLAC, offset: off}
		}
		// Some taggers pad after the tag; look a little further for a frame.
		end := min(len(data), off+4096)
		for i := off; i+4 <= end; i++ {
			if data[i] != 0xFF {
				continue
			}
			if h, ok := parseMP3Header(data[i:]); ok {
				if h.layer != 3 {
					return sniffed{err: errorf(KindUnsupported, "ref_audio is MPEG layer %d audio; only MP3 (layer III) is supported", h.layer)}
				}
				return sniffed{kind: formatMP3, offset: i}
			}
		}
		return sniffed{err: errorf(KindNotAudio, "ref_audio has an ID3 tag but no MP3 or FLAC audio after it")}
	}
	if h, ok := parseMP3Header(data); ok && mp3Confirmed(data, h) {
		if h.layer != 3 {
			return sniffed{err: errorf(KindUnsupported, "ref_audio is MPEG layer %d audio; only MP3 (layer III) is supported", h.layer)}
		}
		return sniffed{kind: formatMP3}
	}
	for _, k := range knownUnsupported {
		if has(k.off, k.magic) {
			return sniffed{err: errorf(KindUnsupported, "ref_audio is %s, which is not supported; use WAV, FLAC or MP3", k.name)}
		}
	}
	if len(data) >= 2 && data[0] == 0xFF && data[1]&0xF6 == 0xF0 {
		return sniffed{err: errorf(KindUnsupported, "ref_audio is AAC (ADTS), which is not supported; use WAV, FLAC or MP3")}
	}
	for _, p := range []string{"UklGR", "UklGW", "ZkxhQ", "SUQz", "data:"} {
		if has(0, p) {
			return sniffed{err: errorf(KindNotAudio, "ref_audio looks like base64 text or a data URL, not raw audio bytes; decode it first")}
		}
	}
	return sniffed{err: errorf(KindNotAudio, "ref_audio is not a recognised audio file; supported formats are WAV, FLAC and MP3")}
}

var knownUnsupported = []struct {
	off         int
	magic, name string
}{
	{0, "OggS", "Ogg (Vorbis/Opus/FLAC-in-Ogg)"},
	{0, "FORM", "AIFF"},
	{4, "ftyp", "MP4/M4A"},
	{0, "\x1a\x45\xdf\xa3", "WebM/Matroska"},
	{0, "#!AMR", "AMR"},
	{0, "caff", "Core Audio (CAF)"},
	{0, "wvpk", "WavPack"},
	{0, "MAC ", "Monkey's Audio"},
	{0, ".snd", "Sun/NeXT AU"},
	{0, "MThd", "MIDI"},
	{0, "\x30\x26\xb2\x75\x8e\x66\xcf\x11", "ASF/WMA"},
	{0, "riff", "Sony Wave64"},
}

// skipID3v2 returns the offset just past any leading ID3v2 tags, 0 if there
// are none, or -1 if a tag's declared size runs past the data. It never
// allocates from the declared size (unlike go-mp3's own tag skipping).
func skipID3v2(data []byte) int {
	off := 0
	for len(data)-off >= 10 && string(data[off:off+3]) == "ID3" {
		h := data[off:]
		if h[6]|h[7]|h[8]|h[9] >= 0x80 {
			return -1 // not a synchsafe size
		}
		size := int(h[6])<<21 | int(h[7])<<14 | int(h[8])<<7 | int(h[9])
		next := off + 10 + size
		if h[5]&0x10 != 0 { // footer present
			next += 10
		}
		if next > len(data) {
			return -1
		}
		off = next
	}
	if off == 0 && len(data) < 10 && bytes.HasPrefix(data, []byte("ID3")) {
		return -1
	}
	return off
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
