package testmodel

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/mossnano/lm"
	"github.com/nanovox/nanovox/internal/weights"
)

func TestLMConfigIsTheRelease(t *testing.T) {
	want, err := os.ReadFile("../../../testdata/real/lm-config.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, _ := LMConfig(Nano100M)
	if !bytes.Equal(got, want) {
		t.Fatal("nano-100m LM config differs from the released config.json")
	}
	if _, err := LMConfig("huge"); err == nil {
		t.Fatal("unknown preset: want error")
	}
	if err := WriteLM(dir, Tiny, "weird", Float32, 1); err == nil {
		t.Fatal("unknown layout: want error")
	}
	if err := WriteLM(dir, Tiny, MLX, "int8", 1); err == nil {
		t.Fatal("unknown dtype: want error")
	}
}

// frames generates a few greedy frames with the model in dir.
func frames(t *testing.T, dir string) [][]int {
	t.Helper()
	m, err := lm.Load(dir, lm.Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) > 0 {
		t.Fatalf("warnings: %v", m.Warnings)
	}
	ref := make([][]int, 6)
	for i := range ref {
		ref[i] = make([]int, m.Config.NVQ)
		for c := range ref[i] {
			ref[i][c] = (i*7 + c*13) % m.Config.AudioCodebookSizes[c]
		}
	}
	p := lm.DefaultParams()
	p.Greedy = true
	p.MaxNewFrames = 5
	p.IgnoreEOS = true
	g, err := m.NewGeneration(ref, nil, "Hello there, a test.", p)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int
	for {
		ev, err := g.Next(context.Background())
		if errors.Is(err, lm.ErrDone) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == lm.EventFrame {
			out = append(out, ev.Frame)
		}
	}
}

func TestLMLayoutsAndDTypes(t *testing.T) {
	for _, dt := range []DType{Float32, BFloat16, Float16} {
		var got [2][][]int
		for i, layout := range []Layout{OpenMOSS, MLX} {
			dir := t.TempDir()
			if err := WriteLM(dir, Tiny, layout, dt, 5); err != nil {
				t.Fatal(err)
			}
			st, err := weights.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			hasTied := st.Has("text_lm_head.weight") && st.Has("local_transformer.wte.weight") && st.Has("audio_lm_heads.0.weight")
			st.Close()
			if hasTied != (layout == OpenMOSS) {
				t.Fatalf("%s: tied copies present = %v", layout, hasTied)
			}
			if _, err := os.Stat(filepath.Join(dir, "model.safetensors.index.json")); (err == nil) != (layout == MLX) {
				t.Fatalf("%s: index presence wrong", layout)
			}
			got[i] = frames(t, dir)
		}
		if len(got[0]) != 5 || !cmp.Equal(got[0], got[1]) {
			t.Fatalf("%s: openmoss and mlx layouts generate differently", dt)
		}
	}
}

// TestNano100M writes the full-size checkpoint (bf16, ~300 MB) and loads it.
func TestNano100M(t *testing.T) {
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("full-size checkpoint; set NANOVOX_LONG_TESTS=1")
	}
	dir := t.TempDir()
	if err := WriteLM(dir, Nano100M, OpenMOSS, BFloat16, 1); err != nil {
		t.Fatal(err)
	}
	st, err := weights.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, name := range st.Names() {
		n += st.Tensor(name).NumElements()
	}
	st.Close()
	// 12·7,087,872 (global) + 7,087,872 (local) + 4·768 (ln_f) + 16384·768 (wte)
	// + 16·1024·768 (audio) + 3 dead/tied copies of 12.58M.
	const want = 13*7087872 + 2*2*768 + 16384*768 + 16*1024*768 + 16384*768 + 16*1024*768 + 16384*768
	if n != want {
		t.Fatalf("parameters %d, want %d", n, want)
	}
	m, err := lm.Load(dir, lm.Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.NVQ != 16 || m.Config.Hidden() != 768 || m.WeightBytes() > 240<<20 {
		t.Fatalf("loaded nvq %d hidden %d, %d weight bytes", m.Config.NVQ, m.Config.Hidden(), m.WeightBytes())
	}
}
