package lm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// ModelType is the config.json model_type of the MOSS-TTS-Nano family.
const ModelType = "moss_tts_nano"

// GPT2Config is the "gpt2_config" block of config.json: the global
// transformer's hyper-parameters (the local transformer copies them with
// n_layer = local_transformer_layers).
type GPT2Config struct {
	VocabSize                  int      `json:"vocab_size"`
	NPositions                 int      `json:"n_positions"`
	NEmbd                      int      `json:"n_embd"`
	NLayer                     int      `json:"n_layer"`
	NHead                      int      `json:"n_head"`
	NInner                     *int     `json:"n_inner"` // null → 4·n_embd
	ActivationFunction         string   `json:"activation_function"`
	LayerNormEpsilon           float64  `json:"layer_norm_epsilon"`
	PositionEmbeddingType      string   `json:"position_embedding_type"`
	RopeBase                   *float64 `json:"rope_base"`
	ScaleAttnWeights           *bool    `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx bool     `json:"scale_attn_by_inverse_layer_idx"`
	TieWordEmbeddings          *bool    `json:"tie_word_embeddings"`
}

// Config is the MOSS-TTS-Nano config.json. Field names are the released ones;
// the Python class defaults (n_vq 8, Qwen token ids, ...) are never used: a
// field the release sets but the file lacks is an error.
type Config struct {
	ModelType                 string     `json:"model_type"`
	GPT2                      GPT2Config `json:"gpt2_config"`
	NVQ                       int        `json:"n_vq"`
	AudioVocabSize            int        `json:"audio_vocab_size"`
	AudioCodebookSizes        []int      `json:"audio_codebook_sizes"`
	AudioPadTokenID           int        `json:"audio_pad_token_id"`
	PadTokenID                int        `json:"pad_token_id"`
	IMStartTokenID            int        `json:"im_start_token_id"`
	IMEndTokenID              int        `json:"im_end_token_id"`
	AudioStartTokenID         int        `json:"audio_start_token_id"`
	AudioEndTokenID           int        `json:"audio_end_token_id"`
	AudioUserSlotTokenID      int        `json:"audio_user_slot_token_id"`
	AudioAssistantSlotTokenID int        `json:"audio_assistant_slot_token_id"`
	LocalTransformerLayers    int        `json:"local_transformer_layers"`
	AudioTokenizerType        string     `json:"audio_tokenizer_type"`
	AudioTokenizerPath        string     `json:"audio_tokenizer_pretrained_name_or_path"`
	AudioTokenizerSampleRate  int        `json:"audio_tokenizer_sample_rate"`
}

// Hidden returns n_embd.
func (c *Config) Hidden() int { return c.GPT2.NEmbd }

// Inner returns the MLP width (n_inner, or 4·n_embd when null).
func (c *Config) Inner() int {
	if c.GPT2.NInner != nil && *c.GPT2.NInner > 0 {
		return *c.GPT2.NInner
	}
	return 4 * c.GPT2.NEmbd
}

// HeadDim returns n_embd / n_head.
func (c *Config) HeadDim() int { return c.GPT2.NEmbd / c.GPT2.NHead }

// RopeBase returns gpt2_config.rope_base (10000 when absent, as upstream).
func (c *Config) RopeBase() float64 {
	if c.GPT2.RopeBase != nil {
		return *c.GPT2.RopeBase
	}
	return 10000
}

// AttnScale returns the attention softmax scale of layer idx.
func (c *Config) AttnScale(layer int) float32 {
	s := 1.0
	if c.GPT2.ScaleAttnWeights == nil || *c.GPT2.ScaleAttnWeights {
		s /= math.Sqrt(float64(c.HeadDim()))
	}
	if c.GPT2.ScaleAttnByInverseLayerIdx {
		s /= float64(layer + 1)
	}
	return float32(s)
}

// ConfigError is a config.json that cannot describe a loadable model.
type ConfigError struct {
	Path string
	Msg  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Msg) }

// PeekModelType returns the model_type of a config.json without validating the rest.
func PeekModelType(data []byte) (string, error) {
	var v struct {
		ModelType string `json:"model_type"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return "", err
	}
	return v.ModelType, nil
}

// LoadConfig reads and validates config.json.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, path)
}

// ParseConfig parses and validates a config.json body; path is used in errors.
func ParseConfig(data []byte, path string) (*Config, error) {
	bad := func(format string, a ...any) error {
		return &ConfigError{Path: path, Msg: fmt.Sprintf(format, a...)}
	}
	// Decode into a generic map first so that missing required fields are
	// detected instead of silently becoming zero.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		if bytes.Contains(data, []byte("NaN")) || bytes.Contains(data, []byte("Infinity")) {
			return nil, bad("has a NaN or Infinity value, which no valid config contains (%v)", err)
		}
		return nil, bad("not a JSON object: %v", err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, bad("%v", err)
	}
	if c.ModelType != ModelType {
		return nil, bad("model_type %q is not %q", c.ModelType, ModelType)
	}
	for _, f := range []string{"gpt2_config", "n_vq", "audio_pad_token_id", "im_start_token_id", "im_end_token_id",
		"audio_start_token_id", "audio_end_token_id", "audio_user_slot_token_id", "audio_assistant_slot_token_id",
		"local_transformer_layers"} {
		if _, ok := raw[f]; !ok {
			return nil, bad("missing field %q", f)
		}
	}
	var graw map[string]json.RawMessage
	if err := json.Unmarshal(raw["gpt2_config"], &graw); err != nil {
		return nil, bad("gpt2_config: %v", err)
	}
	for _, f := range []string{"vocab_size", "n_embd", "n_layer", "n_head", "layer_norm_epsilon", "activation_function"} {
		if _, ok := graw[f]; !ok {
			return nil, bad("missing field gpt2_config.%s", f)
		}
	}
	g := &c.GPT2
	switch {
	case g.VocabSize <= 0:
		return nil, bad("gpt2_config.vocab_size must be positive, is %d", g.VocabSize)
	case g.NEmbd <= 0 || g.NHead <= 0 || g.NEmbd%g.NHead != 0:
		return nil, bad("gpt2_config.n_embd (%d) must be a positive multiple of n_head (%d)", g.NEmbd, g.NHead)
	case (g.NEmbd/g.NHead)%2 != 0:
		return nil, bad("head dim %d must be even for rotary embeddings", g.NEmbd/g.NHead)
	case g.NLayer <= 0:
		return nil, bad("gpt2_config.n_layer must be positive, is %d", g.NLayer)
	case g.NInner != nil && *g.NInner < 0:
		return nil, bad("gpt2_config.n_inner must be positive, is %d", *g.NInner)
	case !(g.LayerNormEpsilon > 0) || math.IsInf(g.LayerNormEpsilon, 0):
		return nil, bad("gpt2_config.layer_norm_epsilon must be a positive finite number, is %v", g.LayerNormEpsilon)
	case g.ActivationFunction != "gelu_new" && g.ActivationFunction != "gelu_pytorch_tanh" && g.ActivationFunction != "gelu":
		return nil, bad("gpt2_config.activation_function %q is not supported (gelu_new, gelu_pytorch_tanh, gelu)", g.ActivationFunction)
	}
	if g.PositionEmbeddingType == "" {
		g.PositionEmbeddingType = "absolute"
	}
	if g.PositionEmbeddingType != "rope" && g.PositionEmbeddingType != "absolute" {
		return nil, bad("gpt2_config.position_embedding_type %q is not supported (rope, absolute)", g.PositionEmbeddingType)
	}
	if g.PositionEmbeddingType == "absolute" && g.NPositions <= 0 {
		return nil, bad("gpt2_config.n_positions must be positive for absolute positions")
	}
	if g.RopeBase != nil && (!(*g.RopeBase > 1) || math.IsInf(*g.RopeBase, 0)) {
		return nil, bad("gpt2_config.rope_base must be a finite number > 1, is %v", *g.RopeBase)
	}
	if c.NVQ <= 0 || c.NVQ > 64 {
		return nil, bad("n_vq must be in 1..64, is %d", c.NVQ)
	}
	if c.LocalTransformerLayers <= 0 {
		return nil, bad("local_transformer_layers must be positive, is %d", c.LocalTransformerLayers)
	}
	if len(c.AudioCodebookSizes) == 0 {
		if c.AudioVocabSize <= 0 {
			return nil, bad("audio_codebook_sizes or audio_vocab_size is required")
		}
		for range c.NVQ {
			c.AudioCodebookSizes = append(c.AudioCodebookSizes, c.AudioVocabSize)
		}
	}
	if len(c.AudioCodebookSizes) != c.NVQ {
		return nil, bad("audio_codebook_sizes has %d entries, n_vq is %d", len(c.AudioCodebookSizes), c.NVQ)
	}
	for i, k := range c.AudioCodebookSizes {
		if k <= 0 {
			return nil, bad("audio_codebook_sizes[%d] must be positive, is %d", i, k)
		}
		if c.AudioPadTokenID >= 0 && c.AudioPadTokenID < k {
			return nil, bad("audio_pad_token_id %d collides with codebook %d of size %d", c.AudioPadTokenID, i, k)
		}
	}
	for name, id := range map[string]int{
		"pad_token_id": c.PadTokenID, "im_start_token_id": c.IMStartTokenID, "im_end_token_id": c.IMEndTokenID,
		"audio_start_token_id": c.AudioStartTokenID, "audio_end_token_id": c.AudioEndTokenID,
		"audio_user_slot_token_id": c.AudioUserSlotTokenID, "audio_assistant_slot_token_id": c.AudioAssistantSlotTokenID,
	} {
		if id < 0 || id >= g.VocabSize {
			return nil, bad("%s %d is outside the vocabulary (0..%d)", name, id, g.VocabSize-1)
		}
	}
	if c.AudioAssistantSlotTokenID == c.AudioEndTokenID {
		return nil, bad("audio_assistant_slot_token_id and audio_end_token_id must differ")
	}
	if c.AudioTokenizerSampleRate == 0 {
		c.AudioTokenizerSampleRate = 48000
	}
	return &c, nil
}
