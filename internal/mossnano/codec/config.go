package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
)

// Module kinds of the encoder and decoder stacks.
const (
	KindPatch       = "PatchedPretransform"
	KindTransformer = "Transformer"
)

// Positional embeddings a Transformer module may use.
const (
	PosRoPE    = "rope"     // rotary embedding on q and k
	PosSin     = "sin"      // sinusoidal embedding added to the input
	PosSinRoPE = "sin_rope" // both
	PosNone    = "none"
)

// Limits that keep a hostile config from asking for absurd allocations.
// The release uses at most d_model 256, 4 layers, context 1600 and 16
// codebooks of 1024.
const (
	maxDim       = 1 << 16
	maxLayers    = 256
	maxModules   = 64
	maxContext   = 1 << 16
	maxQuantizer = 1024
	maxCodebook  = 1 << 20
	maxChannels  = 16
	maxRate      = 1 << 22
)

// Config is a validated MOSS-Audio-Tokenizer config.json (model_type
// "moss-audio-tokenizer"), with the context window of every transformer
// resolved.
type Config struct {
	SampleRate      int     // sampling_rate (alias sample_rate): waveform samples per second per channel
	DownsampleRate  int     // downsample_rate: waveform samples per channel per code frame
	ContextDuration float64 // causal_transformer_context_duration: fallback for modules without context_duration
	Channels        int     // number_channels (alias channels_numbers)
	Interleave      bool    // enable_channel_interleave

	Encoder []Module // encoder_kwargs, in execution order
	Decoder []Module // decoder_kwargs (or reversed_decoder_kwargs inverted), in execution order

	QuantizerType string // "rlfq" or "random_prefix_rlfq"
	Quantizer     QuantizerConfig
}

// Module is one stage of the encoder or decoder.
type Module struct {
	Kind string // KindPatch or KindTransformer

	// PatchedPretransform.
	PatchSize int

	// Transformer.
	InputDim, OutputDim int
	DModel              int
	Heads               int
	Layers              int
	FFDim               int // dim_feedforward
	Causal              bool
	Positional          string // PosRoPE, PosSin, PosSinRoPE or PosNone
	MaxPeriod           float64
	PositionalScale     float64
	HasLayerScale       bool    // layer_scale is not null: layer_scale_{1,2}.scale tensors exist
	LayerScale          float64 // the init value from the config (informational)
	ContextDuration     float64 // seconds
	// FrameRate is the number of positions per second at this module's input
	// (96000 / patch products for the interleaved stereo release).
	FrameRate float64
	// Context is the attention window in positions: key j is visible from
	// query i only if i-j < Context. It is Python's round (half to even) of
	// FrameRate × ContextDuration, as upstream computes it.
	Context int
}

// QuantizerConfig is quantizer_kwargs of a residual LFQ.
type QuantizerConfig struct {
	InputDim      int // encoder output width
	RVQDim        int // residual space
	OutputDim     int // decoder input width
	NumQuantizers int
	CodebookSize  int
	CodebookDim   int
}

// HeadDim returns DModel / Heads.
func (m *Module) HeadDim() int { return m.DModel / m.Heads }

// Contexts returns the attention windows of the encoder's and the decoder's
// transformers, in execution order.
func (c *Config) Contexts() (encoder, decoder []int) {
	for _, m := range c.Encoder {
		if m.Kind == KindTransformer {
			encoder = append(encoder, m.Context)
		}
	}
	for _, m := range c.Decoder {
		if m.Kind == KindTransformer {
			decoder = append(decoder, m.Context)
		}
	}
	return encoder, decoder
}

// FrameRate returns code frames per second (12.5 for the release).
func (c *Config) FrameRate() float64 { return float64(c.SampleRate) / float64(c.DownsampleRate) }

// streamWidth is the number of values per time step the first encoder module
// sees: 1 when channels are interleaved into one stream, else Channels.
func (c *Config) streamWidth() int {
	if c.Interleave && c.Channels > 1 {
		return 1
	}
	return c.Channels
}

// interleaveFactor is how many internal time steps one waveform sample time
// becomes.
func (c *Config) interleaveFactor() int {
	if c.Interleave && c.Channels > 1 {
		return c.Channels
	}
	return 1
}

// LoadConfig reads and validates a config.json file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("codec: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ConfigError reports an invalid or unsupported config value.
type ConfigError struct {
	Field string // e.g. "decoder_kwargs[3].num_heads"
	Msg   string
}

func (e *ConfigError) Error() string { return "codec config: " + e.Field + ": " + e.Msg }

func cfgErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// jsonNum is a JSON number that also accepts Python's json spellings NaN,
// Infinity and -Infinity (rewritten by pythonLiterals), so that validation
// can name the offending field instead of failing in the JSON decoder.
type jsonNum float64

const (
	nanSentinel    = "\x00NaN"
	infSentinel    = "\x00Infinity"
	negInfSentinel = "\x00-Infinity"
)

func (n *jsonNum) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case nanSentinel:
			*n = jsonNum(math.NaN())
		case infSentinel:
			*n = jsonNum(math.Inf(1))
		case negInfSentinel:
			*n = jsonNum(math.Inf(-1))
		default:
			return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[float64]()}
		}
		return nil
	}
	if string(b) == "true" || string(b) == "false" {
		return &json.UnmarshalTypeError{Value: "bool", Type: reflect.TypeFor[float64]()}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			// 1e999: Python reads it as inf; validation reports it.
			*n = jsonNum(f)
			return nil
		}
		return &json.UnmarshalTypeError{Value: "value " + string(b), Type: reflect.TypeFor[float64]()}
	}
	*n = jsonNum(f)
	return nil
}

// pythonLiterals rewrites the bare tokens NaN, Infinity and -Infinity that
// Python's json module writes (outside strings) into sentinel strings.
func pythonLiterals(b []byte) []byte {
	if !bytes.ContainsAny(b, "NI") {
		return b
	}
	var out []byte
	inStr, esc := false, false
	last := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			continue
		}
		var tok, rep string
		switch {
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			tok, rep = "NaN", nanSentinel
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			tok, rep = "Infinity", infSentinel
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			tok, rep = "-Infinity", negInfSentinel
		default:
			continue
		}
		q, _ := json.Marshal(rep)
		out = append(out, b[last:i]...)
		out = append(out, q...)
		i += len(tok) - 1
		last = i + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

type rawModule struct {
	ModuleType          *string  `json:"module_type"`
	PatchSize           *jsonNum `json:"patch_size"`
	InputDimension      *jsonNum `json:"input_dimension"`
	OutputDimension     *jsonNum `json:"output_dimension"`
	DModel              *jsonNum `json:"d_model"`
	NumHeads            *jsonNum `json:"num_heads"`
	NumLayers           *jsonNum `json:"num_layers"`
	DimFeedforward      *jsonNum `json:"dim_feedforward"`
	Causal              *bool    `json:"causal"`
	Norm                *string  `json:"norm"`
	PositionalEmbedding *string  `json:"positional_embedding"`
	MaxPeriod           *jsonNum `json:"max_period"`
	PositionalScale     *jsonNum `json:"positional_scale"`
	Gating              *string  `json:"gating"`
	LayerScale          *jsonNum `json:"layer_scale"`
	ContextDuration     *jsonNum `json:"context_duration"`
}

type rawQuantizer struct {
	InputDim      *jsonNum `json:"input_dim"`
	RVQDim        *jsonNum `json:"rvq_dim"`
	OutputDim     *jsonNum `json:"output_dim"`
	NumQuantizers *jsonNum `json:"num_quantizers"`
	CodebookSize  *jsonNum `json:"codebook_size"`
	CodebookDim   *jsonNum `json:"codebook_dim"`
	QuantizerType *string  `json:"quantizer_type"`
}

type rawConfig struct {
	SamplingRate          *jsonNum      `json:"sampling_rate"`
	SampleRate            *jsonNum      `json:"sample_rate"`
	DownsampleRate        *jsonNum      `json:"downsample_rate"`
	ContextDuration       *jsonNum      `json:"causal_transformer_context_duration"`
	NumberChannels        *jsonNum      `json:"number_channels"`
	ChannelsNumbers       *jsonNum      `json:"channels_numbers"`
	Interleave            *bool         `json:"enable_channel_interleave"`
	EncoderKwargs         *[]rawModule  `json:"encoder_kwargs"`
	DecoderKwargs         *[]rawModule  `json:"decoder_kwargs"`
	ReversedDecoderKwargs *[]rawModule  `json:"reversed_decoder_kwargs"`
	QuantizerType         *string       `json:"quantizer_type"`
	QuantizerKwargs       *rawQuantizer `json:"quantizer_kwargs"`
}

// intField converts an optional JSON number to an int in [lo, hi].
func intField(v *jsonNum, field string, def, lo, hi int) (int, error) {
	if v == nil {
		return def, nil
	}
	f := float64(*v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, cfgErr(field, "%v is not a finite number", f)
	}
	if f != math.Trunc(f) {
		return 0, cfgErr(field, "%v is not an integer", f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, cfgErr(field, "%v is outside [%d, %d]", f, lo, hi)
	}
	return int(f), nil
}

func requiredInt(v *jsonNum, field string, lo, hi int) (int, error) {
	if v == nil {
		return 0, cfgErr(field, "missing")
	}
	return intField(v, field, 0, lo, hi)
}

// floatField converts an optional JSON number, requiring it finite (and
// positive when positive is set).
func floatField(v *jsonNum, field string, def float64, positive bool) (float64, error) {
	if v == nil {
		return def, nil
	}
	f := float64(*v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, cfgErr(field, "%v is not a finite number", f)
	}
	if positive && f <= 0 {
		return 0, cfgErr(field, "%v must be positive", f)
	}
	return f, nil
}

// ParseConfig parses and validates the bytes of a codec config.json. Missing
// optional fields take the upstream defaults (OpenMOSS
// MossAudioTokenizerConfig and module constructors); a Transformer without
// context_duration uses causal_transformer_context_duration.
func ParseConfig(data []byte) (*Config, error) {
	var raw rawConfig
	if err := json.Unmarshal(pythonLiterals(data), &raw); err != nil {
		return nil, fmt.Errorf("codec config: %w", err)
	}
	c := &Config{Interleave: true}
	var err error
	if raw.SamplingRate != nil && raw.SampleRate != nil && *raw.SamplingRate != *raw.SampleRate {
		return nil, cfgErr("sample_rate", "%v disagrees with sampling_rate %v", float64(*raw.SampleRate), float64(*raw.SamplingRate))
	}
	sr, srName := raw.SamplingRate, "sampling_rate"
	if sr == nil {
		sr, srName = raw.SampleRate, "sample_rate"
	}
	if c.SampleRate, err = intField(sr, srName, 48000, 1, maxRate); err != nil {
		return nil, err
	}
	if c.DownsampleRate, err = intField(raw.DownsampleRate, "downsample_rate", 3840, 1, maxRate); err != nil {
		return nil, err
	}
	if c.ContextDuration, err = floatField(raw.ContextDuration, "causal_transformer_context_duration", 10.0, true); err != nil {
		return nil, err
	}
	ch, chName := raw.NumberChannels, "number_channels"
	if ch == nil {
		ch, chName = raw.ChannelsNumbers, "channels_numbers"
	}
	if c.Channels, err = intField(ch, chName, 2, 1, maxChannels); err != nil {
		return nil, err
	}
	if raw.Interleave != nil {
		c.Interleave = *raw.Interleave
	}

	if raw.EncoderKwargs == nil {
		return nil, cfgErr("encoder_kwargs", "missing")
	}
	if c.Encoder, err = parseModules(*raw.EncoderKwargs, "encoder_kwargs", c.ContextDuration); err != nil {
		return nil, err
	}
	switch {
	case raw.DecoderKwargs != nil:
		if c.Decoder, err = parseModules(*raw.DecoderKwargs, "decoder_kwargs", c.ContextDuration); err != nil {
			return nil, err
		}
	case raw.ReversedDecoderKwargs != nil:
		// Upstream builds the decoder by reversing the list and swapping each
		// transformer's input and output dimensions.
		rev := *raw.ReversedDecoderKwargs
		mods, err := parseModules(rev, "reversed_decoder_kwargs", c.ContextDuration)
		if err != nil {
			return nil, err
		}
		for i, j := 0, len(mods)-1; i < j; i, j = i+1, j-1 {
			mods[i], mods[j] = mods[j], mods[i]
		}
		for i := range mods {
			mods[i].InputDim, mods[i].OutputDim = mods[i].OutputDim, mods[i].InputDim
		}
		c.Decoder = mods
	default:
		return nil, cfgErr("decoder_kwargs", "missing")
	}

	if err := c.parseQuantizer(&raw); err != nil {
		return nil, err
	}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseModules(raws []rawModule, list string, fallbackDuration float64) ([]Module, error) {
	if len(raws) == 0 {
		return nil, cfgErr(list, "is empty")
	}
	if len(raws) > maxModules {
		return nil, cfgErr(list, "has %d modules, more than %d", len(raws), maxModules)
	}
	mods := make([]Module, len(raws))
	for i := range raws {
		r := &raws[i]
		f := func(name string) string { return fmt.Sprintf("%s[%d].%s", list, i, name) }
		m := &mods[i]
		if r.ModuleType == nil {
			return nil, cfgErr(f("module_type"), "missing")
		}
		m.Kind = *r.ModuleType
		var err error
		switch m.Kind {
		case KindPatch:
			if m.PatchSize, err = requiredInt(r.PatchSize, f("patch_size"), 1, maxRate); err != nil {
				return nil, err
			}
			continue
		case KindTransformer:
		default:
			return nil, cfgErr(f("module_type"), "unknown module type %q (want %s or %s)", m.Kind, KindPatch, KindTransformer)
		}
		if m.InputDim, err = requiredInt(r.InputDimension, f("input_dimension"), 1, maxDim); err != nil {
			return nil, err
		}
		if m.OutputDim, err = requiredInt(r.OutputDimension, f("output_dimension"), 1, maxDim); err != nil {
			return nil, err
		}
		if m.DModel, err = requiredInt(r.DModel, f("d_model"), 1, maxDim); err != nil {
			return nil, err
		}
		if m.Heads, err = requiredInt(r.NumHeads, f("num_heads"), 1, maxDim); err != nil {
			return nil, err
		}
		if m.Layers, err = requiredInt(r.NumLayers, f("num_layers"), 0, maxLayers); err != nil {
			return nil, err
		}
		if m.FFDim, err = intField(r.DimFeedforward, f("dim_feedforward"), 2048, 1, maxDim); err != nil {
			return nil, err
		}
		if r.Causal != nil {
			m.Causal = *r.Causal
		}
		if r.Norm != nil && *r.Norm != "layer_norm" {
			return nil, cfgErr(f("norm"), "unsupported norm %q (only layer_norm)", *r.Norm)
		}
		if r.Gating != nil && *r.Gating != "none" {
			return nil, cfgErr(f("gating"), "unsupported gating %q (only none)", *r.Gating)
		}
		m.Positional = PosSin // upstream StreamingTransformer default
		if r.PositionalEmbedding != nil {
			m.Positional = *r.PositionalEmbedding
		}
		switch m.Positional {
		case PosRoPE, PosSin, PosSinRoPE, PosNone:
		default:
			return nil, cfgErr(f("positional_embedding"), "unknown positional embedding %q (want rope, sin, sin_rope or none)", m.Positional)
		}
		if m.MaxPeriod, err = floatField(r.MaxPeriod, f("max_period"), 10000, true); err != nil {
			return nil, err
		}
		if m.PositionalScale, err = floatField(r.PositionalScale, f("positional_scale"), 1.0, false); err != nil {
			return nil, err
		}
		if r.LayerScale != nil {
			m.HasLayerScale = true
			if m.LayerScale, err = floatField(r.LayerScale, f("layer_scale"), 0, false); err != nil {
				return nil, err
			}
		}
		if m.ContextDuration, err = floatField(r.ContextDuration, f("context_duration"), fallbackDuration, true); err != nil {
			return nil, err
		}
		if m.DModel%m.Heads != 0 {
			return nil, cfgErr(f("num_heads"), "%d heads do not divide d_model %d", m.Heads, m.DModel)
		}
		if (m.Positional == PosRoPE || m.Positional == PosSinRoPE) && m.HeadDim()%2 != 0 {
			return nil, cfgErr(f("positional_embedding"), "rope needs an even head dimension, d_model %d / %d heads is %d", m.DModel, m.Heads, m.HeadDim())
		}
		if (m.Positional == PosSin || m.Positional == PosSinRoPE) && (m.DModel%2 != 0 || m.DModel < 4) {
			return nil, cfgErr(f("positional_embedding"), "sinusoidal embedding needs an even d_model >= 4, have %d", m.DModel)
		}
	}
	return mods, nil
}

func (c *Config) parseQuantizer(raw *rawConfig) error {
	c.QuantizerType = "rlfq"
	if raw.QuantizerType != nil {
		c.QuantizerType = *raw.QuantizerType
	}
	q := &c.Quantizer
	if raw.QuantizerKwargs == nil {
		// The config class's default quantizer_kwargs.
		*q = QuantizerConfig{InputDim: 768, RVQDim: 512, OutputDim: 768, NumQuantizers: 32, CodebookSize: 1024, CodebookDim: 8}
	} else {
		k := raw.QuantizerKwargs
		// quantizer_kwargs.quantizer_type wins over the top-level field, as upstream.
		if k.QuantizerType != nil {
			c.QuantizerType = *k.QuantizerType
		}
		var err error
		if q.InputDim, err = intField(k.InputDim, "quantizer_kwargs.input_dim", 1024, 1, maxDim); err != nil {
			return err
		}
		// rvq_dim / output_dim: `x or input_dim` upstream, so 0 and null mean input_dim.
		if q.RVQDim, err = intField(k.RVQDim, "quantizer_kwargs.rvq_dim", 0, 0, maxDim); err != nil {
			return err
		}
		if q.RVQDim == 0 {
			q.RVQDim = q.InputDim
		}
		if q.OutputDim, err = intField(k.OutputDim, "quantizer_kwargs.output_dim", 0, 0, maxDim); err != nil {
			return err
		}
		if q.OutputDim == 0 {
			q.OutputDim = q.InputDim
		}
		if q.NumQuantizers, err = intField(k.NumQuantizers, "quantizer_kwargs.num_quantizers", 32, 1, maxQuantizer); err != nil {
			return err
		}
		if q.CodebookSize, err = intField(k.CodebookSize, "quantizer_kwargs.codebook_size", 1024, 1, maxCodebook); err != nil {
			return err
		}
		if q.CodebookDim, err = intField(k.CodebookDim, "quantizer_kwargs.codebook_dim", 8, 1, maxDim); err != nil {
			return err
		}
	}
	switch c.QuantizerType {
	case "rlfq", "random_prefix_rlfq":
	default:
		return cfgErr("quantizer_type", "unsupported quantizer %q (only rlfq)", c.QuantizerType)
	}
	return nil
}

// resolve checks that the stacks fit together and computes the frame rate
// and context window of every transformer, in the order and float64
// arithmetic of upstream MossAudioTokenizerModel.__init__.
func (c *Config) resolve() error {
	factor := c.interleaveFactor()
	rate := float64(c.SampleRate * factor)
	width := c.streamWidth()
	product := 1
	for i := range c.Encoder {
		m := &c.Encoder[i]
		f := func(name string) string { return fmt.Sprintf("encoder_kwargs[%d].%s", i, name) }
		m.FrameRate = rate
		switch m.Kind {
		case KindPatch:
			if product > maxRate*maxChannels/m.PatchSize {
				return cfgErr(f("patch_size"), "patch sizes multiply past %d", maxRate*maxChannels)
			}
			product *= m.PatchSize
			width *= m.PatchSize
			if width > maxDim {
				return cfgErr(f("patch_size"), "makes the stream %d values wide, more than %d", width, maxDim)
			}
			rate /= float64(m.PatchSize)
		case KindTransformer:
			if m.InputDim != width {
				return cfgErr(f("input_dimension"), "is %d but the previous module outputs %d values per step", m.InputDim, width)
			}
			if err := m.setContext(f("context_duration")); err != nil {
				return err
			}
			width = m.OutputDim
		}
	}
	if want := c.DownsampleRate * factor; product != want {
		return cfgErr("encoder_kwargs", "patch sizes multiply to %d, want downsample_rate × interleaved channels = %d", product, want)
	}
	q := &c.Quantizer
	if q.InputDim != width {
		return cfgErr("quantizer_kwargs.input_dim", "is %d but the encoder outputs %d", q.InputDim, width)
	}

	width = q.OutputDim
	product = 1
	for i := range c.Decoder {
		m := &c.Decoder[i]
		f := func(name string) string { return fmt.Sprintf("decoder_kwargs[%d].%s", i, name) }
		m.FrameRate = rate
		switch m.Kind {
		case KindPatch:
			if width%m.PatchSize != 0 {
				return cfgErr(f("patch_size"), "%d does not divide the %d values per step of the previous module", m.PatchSize, width)
			}
			if product > maxRate*maxChannels/m.PatchSize {
				return cfgErr(f("patch_size"), "patch sizes multiply past %d", maxRate*maxChannels)
			}
			product *= m.PatchSize
			width /= m.PatchSize
			rate *= float64(m.PatchSize)
		case KindTransformer:
			if m.InputDim != width {
				return cfgErr(f("input_dimension"), "is %d but the previous module outputs %d values per step", m.InputDim, width)
			}
			if !m.Causal {
				return cfgErr(f("causal"), "decoder transformers must be causal (streaming decode depends on it)")
			}
			if err := m.setContext(f("context_duration")); err != nil {
				return err
			}
			width = m.OutputDim
		}
	}
	if want := c.DownsampleRate * factor; product != want {
		return cfgErr("decoder_kwargs", "patch sizes multiply to %d, want downsample_rate × interleaved channels = %d", product, want)
	}
	if want := c.streamWidth(); width != want {
		return cfgErr("decoder_kwargs", "the decoder ends with %d values per step, want %d", width, want)
	}
	return nil
}

func (m *Module) setContext(field string) error {
	// Python: int(round(current_frame_rate * context_duration)), half to even.
	ctx := math.RoundToEven(m.FrameRate * m.ContextDuration)
	if ctx < 1 {
		return cfgErr(field, "%v s at %v positions/s is a window of %v positions; need at least 1", m.ContextDuration, m.FrameRate, ctx)
	}
	if ctx > maxContext {
		return cfgErr(field, "%v s at %v positions/s is a window of %v positions, more than %d", m.ContextDuration, m.FrameRate, ctx, maxContext)
	}
	m.Context = int(ctx)
	return nil
}
