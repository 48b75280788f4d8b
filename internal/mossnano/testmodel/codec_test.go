package testmodel

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/weights"
)

func TestCodecConfigNano100MIsTheReleasedFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "real", "codec-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []DType{Float32, BFloat16, Float16} {
		got, err := CodecConfig(Nano100M, dt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: CodecConfig(Nano100M) differs from testdata/real/codec-config.json", dt)
		}
	}
}

// TestWriteCodecNano100M writes the full-size checkpoint, counts its
// parameters against the model card's 21,969,664 and loads it (about a
// second).
func TestWriteCodecNano100M(t *testing.T) {
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("full-size checkpoint; set NANOVOX_LONG_TESTS=1")
	}
	dir := t.TempDir()
	if err := WriteCodec(dir, Nano100M, OpenMOSS, Float32, 1); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cfg, codecConfigNano100M) {
		t.Fatal("written config.json is not the released file")
	}
	st, err := weights.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var params int
	for _, n := range st.Names() {
		params += st.Tensor(n).NumElements()
	}
	st.Close()
	if params != 21969664 {
		t.Fatalf("%d parameters, want 21,969,664", params)
	}
	m, err := codec.Load(dir, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumQuantizers() != 16 || m.CodebookSize() != 1024 || m.SamplesPerFrame() != 3840 || m.Channels() != 2 {
		t.Fatalf("loaded geometry nq %d cb %d spf %d ch %d", m.NumQuantizers(), m.CodebookSize(), m.SamplesPerFrame(), m.Channels())
	}
}

func TestWriteCodecTinyLayouts(t *testing.T) {
	tests := []struct {
		layout  Layout
		dtype   DType
		opts    []CodecOption
		files   []string
		st      weights.DType
		present []string
		absent  []string
	}{
		{
			OpenMOSS, BFloat16, nil,
			[]string{"config.json", "model.safetensors.index.json", "model-00001-of-00001.safetensors"},
			weights.BF16,
			[]string{
				"encoder.1.transformer.layers.0.self_attn.in_projs.0.weight",
				"decoder.7.transformer.layers.1.self_attn.out_projs.0.weight",
				"decoder.1.transformer.layers.0.linear1.weight",
				"encoder.3.transformer.layers.0.linear2.weight",
				"quantizer.input_proj.parametrizations.weight.original0",
				"quantizer.quantizers.7.out_proj.parametrizations.weight.original1",
			},
			[]string{"encoder.1.transformer.layers.0.self_attn.in_proj.weight", "decoder.1.transformer.layers.0.ffn.0.weight"},
		},
		{
			OpenMOSS, Float32, []CodecOption{CodecWeightGV()},
			[]string{"config.json", "model.safetensors.index.json", "model-00001-of-00001.safetensors"},
			weights.F32,
			[]string{"quantizer.output_proj.weight_g", "quantizer.quantizers.0.in_proj.weight_v"},
			[]string{"quantizer.output_proj.parametrizations.weight.original0"},
		},
		{
			MLX, Float16, nil,
			[]string{"config.json", "model.safetensors"},
			weights.F16,
			[]string{
				"encoder.1.transformer.layers.0.self_attn.in_proj.weight",
				"decoder.7.transformer.layers.1.self_attn.out_proj.weight",
				"decoder.1.transformer.layers.0.ffn.0.weight",
				"encoder.3.transformer.layers.0.ffn.2.weight",
				"quantizer.quantizers.3.codebook.weight",
			},
			[]string{"encoder.1.transformer.layers.0.linear1.weight", "model.safetensors.index.json"},
		},
	}
	for _, tc := range tests {
		t.Run(string(tc.layout)+"-"+string(tc.dtype), func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteCodec(dir, Tiny, tc.layout, tc.dtype, 7, tc.opts...); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("missing %s: %v", f, err)
				}
			}
			st, err := weights.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, n := range tc.present {
				if !st.Has(n) {
					t.Errorf("missing tensor %s", n)
				}
			}
			for _, n := range tc.absent {
				if st.Has(n) {
					t.Errorf("unexpected tensor %s", n)
				}
				if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
					t.Errorf("unexpected file %s", n)
				}
			}
			for _, n := range st.Names() {
				if dt := st.Tensor(n).DType; dt != tc.st {
					t.Fatalf("%s is %s, want %s", n, dt, tc.st)
				}
			}
			cfg, err := codec.LoadConfig(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Quantizer.NumQuantizers != 8 || cfg.Quantizer.CodebookSize != 128 {
				t.Fatalf("tiny codec has %d codebooks of %d, want 8 of 128", cfg.Quantizer.NumQuantizers, cfg.Quantizer.CodebookSize)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
			if !strings.Contains(string(b), `"dtype": "`+string(tc.dtype)+`"`) {
				t.Errorf("config.json does not record dtype %s", tc.dtype)
			}
		})
	}
}

func TestWriteCodecDeterministic(t *testing.T) {
	read := func(seed int64) []byte {
		dir := t.TempDir()
		if err := WriteCodec(dir, Tiny, MLX, Float32, seed); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read(3), read(3), read(4)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed wrote different weights")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds wrote the same weights")
	}
}

func TestWriteCodecMixedPositional(t *testing.T) {
	b, err := CodecConfig(Tiny, Float32, CodecMixedPositional())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := codec.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range append(cfg.Encoder, cfg.Decoder...) {
		if m.Kind == codec.KindTransformer {
			got = append(got, m.Positional)
			if m.PositionalScale != 0.5 {
				t.Errorf("positional_scale %v, want 0.5", m.PositionalScale)
			}
		}
	}
	want := "sin sin_rope rope none sin sin_rope rope none"
	if strings.Join(got, " ") != want {
		t.Fatalf("positional embeddings %q, want %q", got, want)
	}
}

func TestWriteCodecErrors(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCodec(dir, "huge", MLX, Float32, 1); err == nil {
		t.Error("unknown preset accepted")
	}
	if err := WriteCodec(dir, Tiny, "onnx", Float32, 1); err == nil {
		t.Error("unknown layout accepted")
	}
	if err := WriteCodec(dir, Tiny, MLX, "int8", 1); err == nil {
		t.Error("unknown dtype accepted")
	}
}
