package testmodel

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/weights"
)

var (
	// The released MOSS-Audio-Tokenizer-Nano config.json, byte for byte.
	//go:embed configs/codec-nano-100m.json
	codecConfigNano100M []byte
	// The tiny fixture codec: the real 9+9 module structure at toy widths.
	//go:embed configs/codec-tiny.json
	codecConfigTiny []byte
)

// CodecOption adjusts WriteCodec.
type CodecOption func(*codecOptions)

type codecOptions struct {
	weightGV bool
	mixedPos bool
}

// CodecWeightGV spells the quantizer's weight norm as weight_g / weight_v
// (the older PyTorch spelling, remapped by the OpenMOSS load hook) instead of
// parametrizations.weight.original0 / original1.
func CodecWeightGV() CodecOption { return func(o *codecOptions) { o.weightGV = true } }

// CodecMixedPositional gives the Tiny preset's transformers, on each side in
// execution order, the positional embeddings sin, sin_rope, rope and none
// with positional_scale 0.5 (the tiny-b fixture's variant). Ignored for
// Nano100M, whose config is the released file.
func CodecMixedPositional() CodecOption { return func(o *codecOptions) { o.mixedPos = true } }

// CodecConfig returns the config.json bytes WriteCodec writes. For Nano100M
// it is exactly the released file, whatever the dtype.
func CodecConfig(p Preset, dtype DType, opts ...CodecOption) ([]byte, error) {
	var o codecOptions
	for _, f := range opts {
		f(&o)
	}
	return codecConfigBytes(p, dtype, &o)
}

func codecConfigBytes(p Preset, dtype DType, o *codecOptions) ([]byte, error) {
	if _, err := storageDType(dtype); err != nil {
		return nil, err
	}
	switch p {
	case Nano100M:
		return codecConfigNano100M, nil
	case Tiny:
	default:
		return nil, fmt.Errorf("testmodel: unknown preset %q (tiny, nano-100m)", p)
	}
	var cfg map[string]any
	if err := json.Unmarshal(codecConfigTiny, &cfg); err != nil {
		return nil, fmt.Errorf("testmodel: embedded tiny codec config: %w", err)
	}
	cfg["dtype"] = string(dtype)
	if o.mixedPos {
		for _, side := range []string{"encoder_kwargs", "decoder_kwargs"} {
			mods, _ := cfg[side].([]any)
			kinds := []string{codec.PosSin, codec.PosSinRoPE, codec.PosRoPE, codec.PosNone}
			k := 0
			for _, m := range mods {
				mm, _ := m.(map[string]any)
				if mm["module_type"] != codec.KindTransformer {
					continue
				}
				mm["positional_embedding"] = kinds[k%len(kinds)]
				mm["positional_scale"] = 0.5
				k++
			}
		}
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteCodec writes config.json and seeded random weights of a
// MOSS-Audio-Tokenizer-Nano checkpoint into dir.
//
// Layout OpenMOSS writes model.safetensors.index.json +
// model-00001-of-00001.safetensors with the legacy key names (in_projs.0,
// out_projs.0, linear1, linear2) and parametrizations.weight.original0/1
// (or weight_g/weight_v with CodecWeightGV); layout MLX writes
// model.safetensors with the module names (in_proj, out_proj, ffn.0, ffn.2).
// The values depend only on preset, dtype and seed, never on the layout or
// key spelling, so every layout of one seed decodes identically.
//
// Scales: linear weights N(0, 1/fan_in); LayerNorm weight 1 ± 0.1, bias
// ± 0.05; layer scale the config's value times U[0.5, 1.5) (0.01 for the
// release); weight-normed projections with g = ‖v‖·U[0.5, 1.5) and bias
// N(0, 0.02²); codebooks N(0, 1/num_quantizers) so the summed embedding has
// unit scale and decoded audio stays bounded. Storage conversion rounds to
// nearest even.
func WriteCodec(dir string, preset Preset, layout Layout, dtype DType, seed int64, opts ...CodecOption) error {
	var o codecOptions
	for _, f := range opts {
		f(&o)
	}
	if layout != OpenMOSS && layout != MLX {
		return fmt.Errorf("testmodel: unknown layout %q (openmoss, mlx)", layout)
	}
	cfgBytes, err := codecConfigBytes(preset, dtype, &o)
	if err != nil {
		return err
	}
	cfg, err := codec.ParseConfig(cfgBytes)
	if err != nil {
		return fmt.Errorf("testmodel: %w", err)
	}
	g := &codecGen{
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x636f646563)), // "codec"
		dtype:  dtype,
		layout: layout,
		wgv:    o.weightGV,
	}
	g.stack("encoder", cfg.Encoder)
	g.quantizer(&cfg.Quantizer)
	g.stack("decoder", cfg.Decoder)

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("testmodel: %w", err)
	}
	ts := weights.SortedByName(g.ts)
	switch layout {
	case OpenMOSS:
		const shard = "model-00001-of-00001.safetensors"
		if err := weights.WriteSafetensorsFile(filepath.Join(dir, shard), ts, map[string]string{"format": "pt"}); err != nil {
			return err
		}
		if err := writeIndex(filepath.Join(dir, "model.safetensors.index.json"), ts, shard); err != nil {
			return err
		}
	case MLX:
		if err := weights.WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "mlx"}); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), cfgBytes, 0o644)
}

// codecGen draws tensors in a fixed order from one PCG stream.
type codecGen struct {
	rng    *rand.Rand
	dtype  DType
	layout Layout
	wgv    bool
	ts     []weights.Tensor
}

func (g *codecGen) normal(n int, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(g.rng.NormFloat64() * std)
	}
	return v
}

func (g *codecGen) add(name string, shape []int, vals []float32) {
	g.ts = append(g.ts, encodeTensor(name, shape, vals, g.dtype))
}

// linear adds a bias-free [out, in] weight with N(0, 1/in) entries.
func (g *codecGen) linear(name string, out, in int) {
	g.add(name, []int{out, in}, g.normal(out*in, 1/math.Sqrt(float64(in))))
}

func (g *codecGen) stack(side string, mods []codec.Module) {
	for i := range mods {
		m := &mods[i]
		if m.Kind != codec.KindTransformer {
			continue
		}
		p := fmt.Sprintf("%s.%d.", side, i)
		d := m.DModel
		g.linear(p+"input_proj.weight", d, m.InputDim)
		for l := range m.Layers {
			lp := fmt.Sprintf("%stransformer.layers.%d.", p, l)
			qkv, out, ff1, ff2 := "self_attn.in_proj.weight", "self_attn.out_proj.weight", "ffn.0.weight", "ffn.2.weight"
			if g.layout == OpenMOSS {
				qkv, out, ff1, ff2 = "self_attn.in_projs.0.weight", "self_attn.out_projs.0.weight", "linear1.weight", "linear2.weight"
			}
			g.linear(lp+qkv, 3*d, d)
			g.linear(lp+out, d, d)
			for _, n := range []string{"norm1", "norm2"} {
				w := g.normal(d, 0.1)
				for k := range w {
					w[k]++
				}
				g.add(lp+n+".weight", []int{d}, w)
				g.add(lp+n+".bias", []int{d}, g.normal(d, 0.05))
			}
			g.linear(lp+ff1, m.FFDim, d)
			g.linear(lp+ff2, d, m.FFDim)
			if m.HasLayerScale {
				for _, n := range []string{"layer_scale_1.scale", "layer_scale_2.scale"} {
					s := make([]float32, d)
					for k := range s {
						s[k] = float32(m.LayerScale * (0.5 + g.rng.Float64()))
					}
					g.add(lp+n, []int{d}, s)
				}
			}
		}
		g.linear(p+"output_proj.weight", m.OutputDim, d)
	}
}

// wn adds a weight-normed kernel-1 Conv1d: g [out,1,1], v [out,in,1], bias [out].
func (g *codecGen) wn(prefix string, out, in int) {
	v := g.normal(out*in, 1/math.Sqrt(float64(in)))
	gg := make([]float32, out)
	for o := range out {
		var ss float64
		for _, x := range v[o*in : (o+1)*in] {
			ss += float64(x) * float64(x)
		}
		gg[o] = float32(math.Sqrt(ss) * (0.5 + g.rng.Float64()))
	}
	gName, vName := ".parametrizations.weight.original0", ".parametrizations.weight.original1"
	if g.wgv {
		gName, vName = ".weight_g", ".weight_v"
	}
	g.add(prefix+gName, []int{out, 1, 1}, gg)
	g.add(prefix+vName, []int{out, in, 1}, v)
	g.add(prefix+".bias", []int{out}, g.normal(out, 0.02))
}

// quantizer adds the residual LFQ, with projections only where OpenMOSS
// builds them (dimensions differ).
func (g *codecGen) quantizer(q *codec.QuantizerConfig) {
	if q.InputDim != q.RVQDim {
		g.wn("quantizer.input_proj", q.RVQDim, q.InputDim)
	}
	if q.RVQDim != q.OutputDim {
		g.wn("quantizer.output_proj", q.OutputDim, q.RVQDim)
	}
	for j := range q.NumQuantizers {
		p := fmt.Sprintf("quantizer.quantizers.%d.", j)
		if q.RVQDim != q.CodebookDim {
			g.wn(p+"in_proj", q.CodebookDim, q.RVQDim)
			g.wn(p+"out_proj", q.RVQDim, q.CodebookDim)
		}
		g.add(p+"codebook.weight", []int{q.CodebookSize, q.CodebookDim},
			g.normal(q.CodebookSize*q.CodebookDim, 1/math.Sqrt(float64(q.NumQuantizers))))
	}
}
