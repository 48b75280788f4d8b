package audio

import "fmt"

// ErrorKind classifies a problem with user-supplied audio.
type ErrorKind int

// The kinds of *Error. All of them describe bad input (HTTP 400), except
// KindTooLarge, which a server may prefer to report as 413.
const (
	// KindNotAudio: the bytes are not any audio format we recognise.
	KindNotAudio ErrorKind = iota + 1
	// KindUnsupported: a recognised container or codec we do not decode
	// (Ogg, AAC, ADPCM WAV, 64-bit integer PCM, …).
	KindUnsupported
	// KindMalformed: headers or data are corrupt, truncated or inconsistent.
	KindMalformed
	// KindChannels: zero channels, or more than two.
	KindChannels
	// KindSampleRate: a sample rate outside [MinSampleRate, MaxSampleRate].
	KindSampleRate
	// KindNonFinite: a NaN or infinite sample (float WAV).
	KindNonFinite
	// KindEmpty: no input bytes or no audio frames.
	KindEmpty
	// KindDuration: the clip is shorter or longer than the accepted range.
	KindDuration
	// KindTooLarge: the input is larger than Options.MaxInputBytes.
	KindTooLarge
)

var kindNames = [...]string{
	KindNotAudio:    "not_audio",
	KindUnsupported: "unsupported",
	KindMalformed:   "malformed",
	KindChannels:    "channels",
	KindSampleRate:  "sample_rate",
	KindNonFinite:   "non_finite",
	KindEmpty:       "empty",
	KindDuration:    "duration",
	KindTooLarge:    "too_large",
}

// String returns a short snake_case name, usable as an API error code.
func (k ErrorKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a problem with the audio a user supplied. Its message is written
// for that user ("ref_audio has 6 channels; only mono or stereo is
// supported"). Every error this package returns for bad input is an *Error,
// so callers can tell user mistakes from internal faults with errors.As.
type Error struct {
	Kind ErrorKind
	Msg  string
}

// Error returns the user-facing message.
func (e *Error) Error() string { return e.Msg }

func errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
