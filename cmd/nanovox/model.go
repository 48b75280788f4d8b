package main

import (
	"context"
	"errors"
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
	f.StringVar(&m.matmul, "matmul", "f32", "arithmetic of the big matrix products: f32 (results match the reference) or bf16 (inputs rounded to bfloat16, AVX512_BF16 dot products: faster batches, results differ slightly; f32 on CPUs without AVX512_BF16)")
}

// dot reports whether the bf16 matrix products are to be used, warning on w
// when they are asked for on a CPU without them.
func (m *modelFlags) dot(w io.Writer) (bool, error) {
	switch m.matmul {
	case "f32", "":
		return false, nil
	case "bf16":
		if m.f32 {
			return false, errors.New("--matmul bf16 and --f32-weights exclude each other")
		}
		if !tensor.HasBF16Dot() {
			fmt.Fprintln(w, "warning: --matmul bf16 needs a CPU with AVX512_BF16; computing in f32")
			return false, nil
		}
		return true, nil
	}
	return false, fmt.Errorf("--matmul %q: want f32 or bf16", m.matmul)
}

// load resolves (hub downloads report progress on w) and loads the model.
func (m *modelFlags) load(ctx context.Context, w io.Writer) (engine.Family, family.Paths, time.Duration, error) {
	dot, err := m.dot(w)
	if err != nil {
		return nil, family.Paths{}, 0, err
	}
	start := time.Now()
	fam, p, err := family.Open(ctx, m.model, m.codec, family.Options{KeepBF16: !m.f32, BF16Dot: dot, Resolve: hubResolver(w)})
	return fam, p, time.Since(start), err
}

// openLogged is open reporting through a structured logger (serve).
func (m *modelFlags) openLogged(ctx context.Context, log *slog.Logger) (engine.Family, error) {
	fam, p, d, err := m.load(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	info := fam.Info()
	log.Info("model loaded", "type", info.ModelType, "lm", p.LM, "codec", p.Codec, "weights_mib", info.WeightBytes>>20, "matmul", info.Matmul, "seconds", round2(d.Seconds()))
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
	fmt.Fprintf(log, "loaded %s (lm %s, codec %s, %.0f MiB of weights, matmul %s) in %.2fs\n", info.ModelType, p.LM, p.Codec, float64(info.WeightBytes)/(1<<20), info.Matmul, d.Seconds())
	return fam, nil
}
