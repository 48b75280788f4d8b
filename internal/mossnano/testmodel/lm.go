package testmodel

import (
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/nanovox/nanovox/internal/mossnano/lm"
	"github.com/nanovox/nanovox/internal/weights"
)

var (
	//go:embed configs/lm-nano-100m.json
	lmConfigNano100M []byte
	//go:embed configs/lm-tiny.json
	lmConfigTiny []byte
	//go:embed configs/tokenizer-nano-100m.model
	tokenizerNano100M []byte
	//go:embed configs/tokenizer-tiny.model
	tokenizerTiny []byte
)

// LMConfig returns the config.json bytes written for a preset.
func LMConfig(p Preset) ([]byte, error) {
	switch p {
	case Tiny:
		return lmConfigTiny, nil
	case Nano100M:
		return lmConfigNano100M, nil
	}
	return nil, fmt.Errorf("testmodel: unknown preset %q (tiny, nano-100m)", p)
}

// Write writes a complete model: dir/lm (language model, tokenizer) and
// dir/codec.
func Write(dir string, preset Preset, layout Layout, dtype DType, seed int64) error {
	if err := WriteLM(filepath.Join(dir, "lm"), preset, layout, dtype, seed); err != nil {
		return err
	}
	return WriteCodec(filepath.Join(dir, "codec"), preset, layout, dtype, seed)
}

// WriteLM writes config.json, tokenizer.model and seeded random weights of a
// MOSS-TTS-Nano language model into dir. The OpenMOSS layout includes the
// tied head copies (equal to the embeddings) and a random dead
// local_transformer.wte, as the release's state dict does; the mlx layout
// omits them and adds a model.safetensors.index.json.
func WriteLM(dir string, preset Preset, layout Layout, dtype DType, seed int64) error {
	cfgBytes, err := LMConfig(preset)
	if err != nil {
		return err
	}
	tok := tokenizerTiny
	if preset == Nano100M {
		tok = tokenizerNano100M
	}
	if layout != OpenMOSS && layout != MLX {
		return fmt.Errorf("testmodel: unknown layout %q (openmoss, mlx)", layout)
	}
	if _, err := storageDType(dtype); err != nil {
		return err
	}
	cfg, err := lm.ParseConfig(cfgBytes, "config.json")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6c6d))
	H, V, I := cfg.Hidden(), cfg.GPT2.VocabSize, cfg.Inner()
	std := 0.02
	var ts []weights.Tensor
	add := func(name string, shape []int, vals []float32) {
		ts = append(ts, encodeTensor(name, shape, vals, dtype))
	}
	normal := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	around := func(n int, center, s float64) []float32 {
		v := normal(n, s)
		for i := range v {
			v[i] += float32(center)
		}
		return v
	}
	wte := normal(V*H, std)
	add("transformer.wte.weight", []int{V, H}, wte)
	emb := make([][]float32, cfg.NVQ)
	for c, k := range cfg.AudioCodebookSizes {
		emb[c] = normal(k*H, std)
		add(fmt.Sprintf("audio_embeddings.%d.weight", c), []int{k, H}, emb[c])
	}
	blocks := func(prefix string, layers int) {
		for i := range layers {
			p := fmt.Sprintf("%s.h.%d.", prefix, i)
			add(p+"ln_1.weight", []int{H}, around(H, 1, 0.05))
			add(p+"ln_1.bias", []int{H}, normal(H, 0.02))
			add(p+"attn.c_attn.weight", []int{3 * H, H}, normal(3*H*H, std))
			add(p+"attn.c_attn.bias", []int{3 * H}, normal(3*H, 0.02))
			add(p+"attn.c_proj.weight", []int{H, H}, normal(H*H, std/math.Sqrt(2*float64(layers))))
			add(p+"attn.c_proj.bias", []int{H}, normal(H, 0.02))
			add(p+"ln_2.weight", []int{H}, around(H, 1, 0.05))
			add(p+"ln_2.bias", []int{H}, normal(H, 0.02))
			add(p+"mlp.fc_in.weight", []int{I, H}, normal(I*H, std))
			add(p+"mlp.fc_in.bias", []int{I}, normal(I, 0.02))
			add(p+"mlp.fc_out.weight", []int{H, I}, normal(H*I, std/math.Sqrt(2*float64(layers))))
			add(p+"mlp.fc_out.bias", []int{H}, normal(H, 0.02))
		}
		add(prefix+".ln_f.weight", []int{H}, around(H, 1, 0.05))
		add(prefix+".ln_f.bias", []int{H}, normal(H, 0.02))
	}
	blocks("transformer", cfg.GPT2.NLayer)
	blocks("local_transformer", cfg.LocalTransformerLayers)
	if layout == OpenMOSS {
		add("text_lm_head.weight", []int{V, H}, wte)
		for c, k := range cfg.AudioCodebookSizes {
			add(fmt.Sprintf("audio_lm_heads.%d.weight", c), []int{k, H}, emb[c])
		}
		add("local_transformer.wte.weight", []int{V, H}, normal(V*H, std))
	}
	ts = weights.SortedByName(ts)
	if err := weights.WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if layout == MLX {
		if err := writeIndex(filepath.Join(dir, "model.safetensors.index.json"), ts, "model.safetensors"); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfgBytes, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tokenizer.model"), tok, 0o644)
}
