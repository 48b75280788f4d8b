package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/family"
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
	f.StringVar(&m.matmul, "matmul", "f32", "arithmetic of the big matrix products: f32 (results match the reference), bf16 (inputs rounded to bfloat16, AVX512_BF16 dot products: faster batches, results differ slightly) or int8 (the weights and inputs of the language model's and the codec decoder's products, and the language model's key/value caches, quantized to 8 bits, AVX512_VNNI or AVX-VNNI: fastest, least exact); f32 on CPUs without the instructions")
}

// mode returns the matrix arithmetic to load with ("f32", "bf16" or
// "int8"), warning on w and falling back to f32 when the CPU lacks the
// instructions of the one asked for.
func (m *modelFlags) mode(w io.Writer) (string, error) {
	switch m.matmul {
	case "f32", "":
		return "f32", nil
	case "bf16", "int8":
		if m.f32 {
			return "", fmt.Errorf("--matmul %s and --f32-weights exclude each other", m.matmul)
		}
		if m.matmul == "bf16" && !tensor.HasBF16Dot() {
			fmt.Fprintln(w, "warning: --matmul bf16 needs a CPU with AVX512_BF16; computing in f32")
			return "f32", nil
		}
		if m.matmul == "int8" && !tensor.HasInt8Dot() {
			fmt.Fprintln(w, "warning: --matmul int8 needs a CPU with AVX512_VNNI or AVX-VNNI; computing in f32")
			return "f32", nil
		}
		return m.matmul, nil
	}
	return "", fmt.Errorf("--matmul %q: want f32, bf16 or int8", m.matmul)
}

// load resolves (hub downloads report progress on w) and loads the model.
func (m *modelFlags) load(ctx context.Context, w io.Writer) (engine.Family, family.Paths, time.Duration, error) {
	mode, err := m.mode(w)
	if err != nil {
		return nil, family.Paths{}, 0, err
	}
	start := time.Now()
	fam, p, err := family.Open(ctx, m.model, m.codec, family.Options{KeepBF16: !m.f32, BF16Dot: mode == "bf16", Int8: mode == "int8", Resolve: hubResolver(w)})
	return fam, p, time.Since(start), err
}

// openLogged is open reporting through a structured logger (serve).
func (m *modelFlags) openLogged(ctx context.Context, log *slog.Logger) (engine.Family, error) {
	fam, p, d, err := m.load(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	info := fam.Info()
	log.Info("model loaded", "type", info.ModelType, "lm", p.LM, "codec", p.Codec, "weights_mib", info.WeightBytes>>20, "matmul", info.Matmul, "kernels", tensor.Kernels(), "seconds", round2(d.Seconds()))
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
	fmt.Fprintf(log, "loaded %s (lm %s, codec %s, %.0f MiB of weights, matmul %s, kernels %s) in %.2fs\n", info.ModelType, p.LM, p.Codec, float64(info.WeightBytes)/(1<<20), info.Matmul, tensor.Kernels(), d.Seconds())
	return fam, nil
}
