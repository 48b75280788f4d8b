package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/nanovox/nanovox/internal/audio/encode"
)

// speechRequest is the body of POST /v1/audio/speech. Pointer fields tell
// "absent" from "zero".
type speechRequest struct {
	Model                    *string     `json:"model"`
	Input                    *string     `json:"input"`
	Voice                    *voiceField `json:"voice"`
	ResponseFormat           *string     `json:"response_format"`
	Stream                   *bool       `json:"stream"`
	StreamFormat             *string     `json:"stream_format"`
	StreamingInterval        *float64    `json:"streaming_interval"`
	StreamingInitialInterval *float64    `json:"streaming_initial_interval"`
	Speed                    *float64    `json:"speed"`
	Instructions             *string     `json:"instructions"`
	Language                 *string     `json:"language"`
	Seed                     *uint64     `json:"seed"`
	Temperature              *float64    `json:"temperature"`
	TopP                     *float64    `json:"top_p"`
	TopK                     *int        `json:"top_k"`
	RepetitionPenalty        *float64    `json:"repetition_penalty"`
	MaxNewFrames             *int        `json:"max_new_frames"`
	SampleRate               *int        `json:"sample_rate"`
	Bitrate                  *int        `json:"bitrate"`
	Normalize                *bool       `json:"normalize"`
}

// voiceField is either a saved voice's name or an inline reference clip.
type voiceField struct {
	Name string
	// RefAudio is the clip's base64 text: a slice of the request body
	// (clipText), decoded in place by validate.
	RefAudio []byte
	RefText  string
	Inline   bool
}

// inlineVoice is the object form of "voice"; unknown keys are rejected.
type inlineVoice struct {
	RefAudio *clipText `json:"ref_audio"`
	RefText  *string   `json:"ref_text"`
	// ID names a saved voice, OpenAI's custom-voice form {"id": "name"}.
	ID *string `json:"id"`
}

// clipText is a JSON string kept as the bytes between its quotes, a slice
// of the request body: an inline clip is most of a large body, and copying
// it into a Go string (and then stripping and decoding that) tripled the
// memory a request held before it was admitted. A string with escapes
// (rare in base64) is unquoted into a copy.
type clipText []byte

func (c *clipText) takeJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[string]()}
	}
	in := b[1 : len(b)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		*c = in
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*c = []byte(s)
	return nil
}

// UnmarshalJSON lets encoding/json decode a clipText (decodeObjectStream).
func (c *clipText) UnmarshalJSON(b []byte) error {
	return c.takeJSON(bytes.Clone(b))
}

// jsonKind names a JSON value's kind as encoding/json's type errors do.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '"':
		return "string"
	}
	return "number"
}

// UnmarshalJSON lets encoding/json decode a voiceField (decodeObjectStream).
func (v *voiceField) UnmarshalJSON(b []byte) error {
	return v.takeJSON(bytes.Clone(bytes.TrimSpace(b)))
}

// takeJSON decodes the voice; an inline clip's text stays a slice of b.
func (v *voiceField) takeJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &v.Name)
	case len(b) > 0 && b[0] == '{':
		var iv inlineVoice
		if _, err := decodeObject(b, &iv, true); err != nil {
			return prefixParam(err, "voice")
		}
		if iv.ID != nil {
			if iv.RefAudio != nil || iv.RefText != nil {
				return badRequest("voice.id", "invalid_value", "voice.id names a saved voice; it cannot be combined with ref_audio or ref_text")
			}
			v.Name = *iv.ID
			return nil
		}
		if iv.RefAudio == nil {
			return badRequest("voice.ref_audio", "missing_ref_audio", "voice.ref_audio is required when voice is an object (base64 audio of the reference clip), or voice.id for a saved voice")
		}
		v.Inline = true
		v.RefAudio = *iv.RefAudio
		if iv.RefText != nil {
			v.RefText = *iv.RefText
		}
		return nil
	}
	return badRequest("voice", "invalid_type", "voice must be a saved voice name (string) or an object {\"ref_audio\": \"<base64 audio>\"}")
}

// strictDecode decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data, and turns decoding errors into 400s naming the
// parameter.
func strictDecode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "invalid_json", "request body has data after the JSON object")
	}
	return nil
}

// jsonError maps encoding/json errors to API errors.
func jsonError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge("", "request body is larger than the server's limit of %d bytes", mbe.Limit)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badRequest("", "invalid_json", "request body is not valid JSON (at byte %d): %v", se.Offset, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		param := te.Field
		return badRequest(param, "invalid_type", "%s must be %s, not a JSON %s", orBody(param), typeName(te.Type.String()), te.Value)
	}
	if errors.Is(err, io.EOF) {
		return badRequest("", "invalid_json", "request body is empty; send a JSON object")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return badRequest("", "invalid_json", "request body is truncated JSON")
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return badRequest(field, "unknown_parameter", "unknown parameter %q", field)
	}
	return badRequest("", "invalid_json", "request body is not valid JSON: %v", err)
}

func orBody(param string) string {
	if param == "" {
		return "the request body"
	}
	return param
}

func typeName(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "float64":
		return "a number"
	case "int", "uint64":
		return "an integer"
	case "server.speechRequest", "server.inlineVoice", "server.clipText":
		return "a JSON object"
	}
	return "of type " + goType
}

// prefixParam qualifies the param of a nested object's error.
func prefixParam(err error, prefix string) error {
	var ae *apiError
	if errors.As(err, &ae) {
		c := *ae
		if c.Param != nil {
			p := prefix + "." + *c.Param
			c.Param = &p
			c.Message = strings.Replace(c.Message, *ae.Param, p, 1)
		} else {
			c.Param = &prefix
		}
		return &c
	}
	return err
}

// validated is a speech request checked against the server's limits.
type validated struct {
	input       string
	voiceName   string
	refAudio    []byte // decoded base64 (in the body's buffer), inline voices only
	format      encode.Format
	sampleRate  int     // asked for; the format may encode higher
	bitrate     int     // 0: the codec's default
	speed       float64 // 1: unchanged
	noNormalize bool    // "normalize": false
	stream      bool
	sse         bool
	firstFrames int
	chunkFrames int
	seed        *uint64
	temperature *float64
	topP        *float64
	topK        *int
	repPenalty  *float64
	maxFrames   *int
}

// Limits bound what one request may ask for.
type Limits struct {
	MaxInputChars int
	MaxBodyBytes  int64
	MaxNewFrames  int
}

const frameSeconds = 0.08 // 3840 samples at 48 kHz

func intervalFrames(sec float64) int {
	return max(1, int(math.Ceil(sec/frameSeconds-1e-9)))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// policy is what a request is validated against: the server's limits and
// defaults.
type policy struct {
	Limits
	modelOK func(string) bool
	// format and sampleRate are used when a request names none.
	format     encode.Format
	sampleRate int
	// defaultVoice is the saved voice of requests that send none.
	defaultVoice string
	// modelRate is the model's output rate, which sampleRate 0 means.
	modelRate int
}

// validate checks every field, in the order they are documented in
// docs/api.md, and returns the first problem: a 400 (404 for an unknown
// model) naming the parameter.
func (r *speechRequest) validate(pol policy) (*validated, error) {
	lim, modelOK := pol.Limits, pol.modelOK
	v := &validated{format: pol.format, sampleRate: pol.sampleRate, speed: 1, firstFrames: 1, chunkFrames: intervalFrames(0.5)}
	if r.Model != nil && !modelOK(*r.Model) {
		return nil, notFound("model", "model_not_found", "model %q is not served here; GET /v1/models lists the models", *r.Model)
	}
	if r.Input == nil {
		return nil, badRequest("input", "missing_input", "input is required: the text to speak")
	}
	in := strings.TrimSpace(*r.Input)
	if in == "" {
		return nil, badRequest("input", "empty_input", "input is empty")
	}
	if n := utf8.RuneCountInString(in); n > lim.MaxInputChars {
		return nil, badRequest("input", "input_too_long", "input has %d characters; the limit is %d", n, lim.MaxInputChars)
	}
	v.input = in
	if r.Voice == nil && pol.defaultVoice != "" {
		r.Voice = &voiceField{Name: pol.defaultVoice}
	}
	if r.Voice == nil {
		return nil, badRequest("voice", "missing_voice", "voice is required: a saved voice name or {\"ref_audio\": \"<base64 audio>\"}")
	}
	if r.Voice.Inline {
		b, err := decodeBase64InPlace(r.Voice.RefAudio)
		if err != nil {
			return nil, badRequest("voice.ref_audio", "invalid_base64", "voice.ref_audio is not valid base64: %v", err)
		}
		if len(b) == 0 {
			return nil, badRequest("voice.ref_audio", "empty_ref_audio", "voice.ref_audio is empty")
		}
		v.refAudio = b
	} else {
		if strings.TrimSpace(r.Voice.Name) == "" {
			return nil, badRequest("voice", "missing_voice", "voice is empty: give a saved voice name or {\"ref_audio\": \"<base64 audio>\"}")
		}
		v.voiceName = r.Voice.Name
	}
	if r.ResponseFormat != nil {
		f, err := encode.ParseFormat(strings.ToLower(strings.TrimSpace(*r.ResponseFormat)))
		if err != nil {
			return nil, badRequest("response_format", "unsupported_format", "response_format %q is not supported; supported: mp3, opus, aac, flac, wav, pcm", *r.ResponseFormat)
		}
		v.format = f
	}
	if r.SampleRate != nil {
		if sr := *r.SampleRate; sr < encode.MinSampleRate || sr > encode.MaxSampleRate {
			return nil, badRequest("sample_rate", "invalid_value", "sample_rate must be in [%d, %d] Hz, is %d", encode.MinSampleRate, encode.MaxSampleRate, sr)
		}
		v.sampleRate = *r.SampleRate
	}
	if r.Bitrate != nil {
		rate := v.sampleRate
		if rate == 0 {
			rate = pol.modelRate
		}
		lo, hi, ok := encode.BitrateRange(v.format, rate, 1)
		if !ok {
			return nil, badRequest("bitrate", "invalid_value", "bitrate applies to mp3, opus and aac, not %s", v.format)
		}
		if b := *r.Bitrate; b < lo || b > hi {
			return nil, badRequest("bitrate", "invalid_value", "bitrate for %s must be in [%d, %d] bits/s, is %d", v.format, lo, hi, b)
		}
		v.bitrate = *r.Bitrate
	}
	if r.StreamFormat != nil {
		switch strings.ToLower(*r.StreamFormat) {
		case "audio":
		case "sse":
			v.sse = true
		default:
			return nil, badRequest("stream_format", "unsupported_stream_format", "stream_format %q is not supported; supported: audio, sse", *r.StreamFormat)
		}
	}
	if r.Stream != nil {
		v.stream = *r.Stream
	}
	if v.sse {
		if r.Stream != nil && !*r.Stream {
			return nil, badRequest("stream", "invalid_value", "stream_format \"sse\" streams; it cannot be combined with stream: false")
		}
		v.stream = true
	}
	for _, iv := range []struct {
		name string
		val  *float64
		dst  *int
	}{{"streaming_interval", r.StreamingInterval, &v.chunkFrames}, {"streaming_initial_interval", r.StreamingInitialInterval, &v.firstFrames}} {
		if iv.val == nil {
			continue
		}
		if !(*iv.val > 0 && *iv.val <= 10) {
			return nil, badRequest(iv.name, "invalid_value", "%s must be in (0, 10] seconds, is %v", iv.name, *iv.val)
		}
		*iv.dst = intervalFrames(*iv.val)
	}
	if r.Speed != nil {
		if sp := *r.Speed; !(sp >= encode.MinSpeed && sp <= encode.MaxSpeed) {
			return nil, badRequest("speed", "invalid_value", "speed must be in [%g, %g], is %v", encode.MinSpeed, encode.MaxSpeed, sp)
		}
		v.speed = *r.Speed
	}
	// instructions is accepted and ignored: MOSS-TTS-Nano takes its style
	// from the reference clip (the handler lists it in X-Ignored-Parameters).
	if r.Language != nil {
		if l := strings.ToLower(strings.TrimSpace(*r.Language)); l != "" && l != "auto" {
			return nil, badRequest("language", "unsupported_value", "language %q is not supported: only \"auto\" (the model speaks the language of the input)", *r.Language)
		}
	}
	v.noNormalize = r.Normalize != nil && !*r.Normalize
	v.seed = r.Seed
	// Ranges are checked by engine.Params.Validate once the overrides are
	// applied to the model's defaults (Server.engineRequest).
	v.temperature, v.topP, v.topK, v.repPenalty = r.Temperature, r.TopP, r.TopK, r.RepetitionPenalty
	if r.MaxNewFrames != nil {
		if n := *r.MaxNewFrames; n < 1 || n > lim.MaxNewFrames {
			return nil, badRequest("max_new_frames", "invalid_value", "max_new_frames must be in [1, %d], is %d", lim.MaxNewFrames, n)
		}
		v.maxFrames = r.MaxNewFrames
	}
	return v, nil
}

// decodeBase64 is decodeBase64InPlace on a copy of s.
func decodeBase64(s string) ([]byte, error) { return decodeBase64InPlace([]byte(s)) }

// decodeBase64InPlace accepts standard or URL-safe base64, padded or not, with
// optional whitespace and an optional data: URI prefix. It decodes in place:
// the result overwrites the front of b (the request body's buffer), so a
// clip costs no memory beyond the body it came in.
func decodeBase64InPlace(b []byte) ([]byte, error) {
	if bytes.HasPrefix(b, []byte("data:")) {
		i := bytes.IndexByte(b, ',')
		if i < 0 || !bytes.HasSuffix(b[:i], []byte(";base64")) {
			return nil, fmt.Errorf("data URI must be base64 (data:audio/...;base64,...)")
		}
		b = b[i+1:]
	}
	n := 0
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			b[n] = c
			n++
		}
	}
	b = bytes.TrimRight(b[:n], "=")
	enc := base64.RawStdEncoding
	if bytes.ContainsAny(b, "-_") {
		enc = base64.RawURLEncoding
	}
	// Block by block through a small buffer: the output of a block (3/4 of
	// its input) always ends before the next block's input starts.
	const block = 4096 // a multiple of 4
	var tmp [block / 4 * 3]byte
	out := 0
	for i := 0; i < len(b); i += block {
		m, err := enc.Decode(tmp[:], b[i:min(i+block, len(b))])
		if err != nil {
			var ce base64.CorruptInputError
			if errors.As(err, &ce) {
				return nil, ce + base64.CorruptInputError(i)
			}
			return nil, err
		}
		out += copy(b[out:], tmp[:m])
	}
	return b[:out], nil
}
