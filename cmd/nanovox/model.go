package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/tensor"
)

// Default model locations: the official Hugging Face repositories.
const (
	defaultModel = "OpenMOSS-Team/MOSS-TTS-Nano-100M"
)

// modelFlags are the flags every command that loads a model shares.
type modelFlags struct {
	model, codec string
	f32          bool
	matmul       string
}

func (m *modelFlags) register(f *pflag.FlagSet) {
	f.StringVar(&m.model, "model", defaultModel, "model directory or Hugging Face repo id (org/name[@revision])")
	f.StringVar(&m.codec, "codec", "", "codec directory or repo id (default: audio_tokenizer/ in the model dir, or the model config's audio_tokenizer_pretrained_name_or_path)")
	f.BoolVar(&m.f32, "f32-weights", false, "widen bfloat16 weights to float32 at load (more memory; same results)")
	f.StringVar(&m.matmul, "matmul", "f32", "arithmetic of the big matrix products: f32 (results match the reference), bf16 (inputs rounded to bfloat16, AVX512_BF16 or arm64 BFDOT dot products: faster batches, results differ slightly) or int8 (the weights and inputs of the language model's and the codec decoder's products, and the language model's key/value caches, quantized to 8 bits, AVX512_VNNI, AVX-VNNI or arm64 SDOT: fastest, least exact); f32 on CPUs without the instructions")
}

// mode returns the matrix arithmetic to load with, warning on w and
// falling back to f32 when the CPU lacks the instructions of the one asked
// for (tensor.Matmul.Available).
func (m *modelFlags) mode(w io.Writer) (tensor.Matmul, error) {
	mode, err := tensor.ParseMatmul(m.matmul)
	if err != nil {
		return tensor.F32, fmt.Errorf("--matmul %q: want f32, bf16 or int8", m.matmul)
	}
	if mode != tensor.F32 && m.f32 {
		return tensor.F32, fmt.Errorf("--matmul %s and --f32-weights exclude each other", mode)
	}
	if got := mode.Available(); got != mode {
		fmt.Fprintf(w, "warning: --matmul %s needs a CPU with %s; computing in %s\n", mode, mode.Requires(), got)
		return got, nil
	}
	return mode, nil
}

// load resolves (hub downloads report progress on w) and loads the model.
func (m *modelFlags) load(ctx context.Context, w io.Writer) (engine.Family, []engine.Part, time.Duration, error) {
	mode, err := m.mode(w)
	if err != nil {
		return nil, nil, 0, err
	}
	start := time.Now()
	fam, parts, err := engine.Open(ctx, m.model, engine.OpenOptions{KeepBF16: !m.f32, Matmul: mode, Codec: m.codec, Resolve: hubResolver(w)})
	return fam, parts, time.Since(start), err
}

// partsAttrs lists a model's directories for the load log line.
func partsAttrs(parts []engine.Part) []any {
	var out []any
	for _, p := range parts {
		out = append(out, strings.ReplaceAll(p.Role, " ", "_"), p.Dir)
	}
	return out
}

// openLogged is open reporting through a structured logger (serve).
func (m *modelFlags) openLogged(ctx context.Context, log *slog.Logger) (engine.Family, error) {
	fam, p, d, err := m.load(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	info := fam.Info()
	attrs := append([]any{"type", info.ModelType}, partsAttrs(p)...)
	log.Info("model loaded", append(attrs, "weights_mib", info.WeightBytes>>20, "matmul", info.Matmul.String(), "kernels", tensor.Kernels(), "seconds", round2(d.Seconds()))...)
	return fam, nil
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// open resolves and loads the model, reporting the time it took to log.
func (m *modelFlags) open(ctx context.Context, log io.Writer) (engine.Family, error) {
	fam, p, d, err := m.load(ctx, log)
	if err != nil {
		return nil, err
	}
	info := fam.Info()
	var dirs []string
	for _, part := range p {
		dirs = append(dirs, part.Role+" "+part.Dir)
	}
	fmt.Fprintf(log, "loaded %s (%s, %.0f MiB of weights, matmul %s, kernels %s) in %.2fs\n", info.ModelType, strings.Join(dirs, ", "), float64(info.WeightBytes)/(1<<20), info.Matmul, tensor.Kernels(), d.Seconds())
	return fam, nil
}
