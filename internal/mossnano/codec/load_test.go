package codec_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
	"github.com/nanovox/nanovox/internal/weights"
)

// writeTiny writes a generated tiny codec into a fresh directory.
func writeTiny(t testing.TB, layout testmodel.Layout, dtype testmodel.DType, seed int64, opts ...testmodel.CodecOption) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "codec")
	if err := testmodel.WriteCodec(dir, testmodel.Tiny, layout, dtype, seed, opts...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// rewrite copies the checkpoint in src into a new directory as a single
// model.safetensors, passing every tensor through edit (which returns the
// tensors to write in its place), and config.json through editConfig.
func rewrite(t testing.TB, src string, edit func(weights.Tensor) []weights.Tensor, editConfig func(string) string) string {
	t.Helper()
	st, err := weights.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []weights.Tensor
	for _, n := range st.Names() {
		tt := *st.Tensor(n)
		tt.Data = slices.Clone(tt.Data)
		tt.Shape = slices.Clone(tt.Shape)
		if edit != nil {
			out = append(out, edit(tt)...)
		} else {
			out = append(out, tt)
		}
	}
	dst := filepath.Join(t.TempDir(), "rewritten")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := weights.WriteSafetensorsFile(filepath.Join(dst, "model.safetensors"), weights.SortedByName(out), nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(cfg)
	if editConfig != nil {
		s = editConfig(s)
	}
	if err := os.WriteFile(filepath.Join(dst, "config.json"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// testFrames returns deterministic random codes for a model.
func testFrames(m *codec.Model, n int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 99))
	frames := make([][]int, n)
	for i := range frames {
		frames[i] = make([]int, m.NumQuantizers())
		for j := range frames[i] {
			frames[i][j] = rng.IntN(m.CodebookSize())
		}
	}
	return frames
}

// testWave returns a deterministic stereo waveform (sines plus noise).
func testWave(m *codec.Model, samples int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]float32, samples*m.Channels())
	for i := range samples {
		for c := range m.Channels() {
			f := 220.0 * float64(c+1)
			out[i*m.Channels()+c] = float32(0.3*math.Sin(2*math.Pi*f*float64(i)/float64(m.SampleRate())) + 0.05*rng.NormFloat64())
		}
	}
	return out
}

type outputs struct {
	codes [][]int
	wav   []float32
}

func run(t testing.TB, dir string, opts codec.Options) outputs {
	t.Helper()
	m, err := codec.Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := m.Encode(testWave(m, 3*m.SamplesPerFrame()+100, 1))
	if err != nil {
		t.Fatal(err)
	}
	wav, err := m.Decode(testFrames(m, 5, 3))
	if err != nil {
		t.Fatal(err)
	}
	return outputs{codes, wav}
}

func sameOutputs(t *testing.T, what string, a, b outputs) {
	t.Helper()
	if !slices.EqualFunc(a.codes, b.codes, slices.Equal) {
		t.Errorf("%s: codes differ", what)
	}
	if !slices.Equal(a.wav, b.wav) {
		d, at := maxAbsDiff(t, a.wav, b.wav)
		t.Errorf("%s: decoded audio differs (max %g at %d)", what, d, at)
	}
}

// TestKeySpellings loads generated checkpoints in every layout, dtype and
// key spelling: the same seed and dtype must give identical results.
func TestKeySpellings(t *testing.T) {
	for _, dt := range []testmodel.DType{testmodel.Float32, testmodel.BFloat16, testmodel.Float16} {
		t.Run(string(dt), func(t *testing.T) {
			openmoss := writeTiny(t, testmodel.OpenMOSS, dt, 11)
			ref := run(t, openmoss, codec.Options{})
			if len(ref.codes) != 3 {
				t.Fatalf("%d frames encoded, want 3", len(ref.codes))
			}
			for i, v := range ref.wav {
				if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 20 {
					t.Fatalf("generated codec decodes sample %d to %g", i, v)
				}
			}
			sameOutputs(t, "mlx", ref, run(t, writeTiny(t, testmodel.MLX, dt, 11), codec.Options{}))
			sameOutputs(t, "weight_g/weight_v", ref, run(t, writeTiny(t, testmodel.OpenMOSS, dt, 11, testmodel.CodecWeightGV()), codec.Options{}))
			sameOutputs(t, "KeepBF16", ref, run(t, openmoss, codec.Options{KeepBF16: true}))
			inProjWeight := rewrite(t, openmoss, func(tt weights.Tensor) []weights.Tensor {
				tt.Name = strings.Replace(tt.Name, ".self_attn.in_projs.0.weight", ".self_attn.in_proj_weight", 1)
				return []weights.Tensor{tt}
			}, nil)
			sameOutputs(t, "in_proj_weight", ref, run(t, inProjWeight, codec.Options{}))
		})
	}
	other := run(t, writeTiny(t, testmodel.OpenMOSS, testmodel.Float32, 12), codec.Options{})
	ref := run(t, writeTiny(t, testmodel.OpenMOSS, testmodel.Float32, 11), codec.Options{})
	if slices.Equal(ref.wav, other.wav) {
		t.Fatal("different seeds decode identically")
	}
}

// TestFoldedWeightNorm accepts quantizer projections stored as plain
// weights and checks the load-time folding W = g·v/‖v‖ against it.
func TestFoldedWeightNorm(t *testing.T) {
	src := writeTiny(t, testmodel.MLX, testmodel.Float32, 21)
	st, err := weights.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	gs := map[string][]float32{}
	for _, n := range st.Names() {
		if p, ok := strings.CutSuffix(n, ".parametrizations.weight.original0"); ok {
			gs[p], err = st.Tensor(n).Float32()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	if len(gs) == 0 {
		t.Fatal("no weight-normed tensors")
	}
	folded := rewrite(t, src, func(tt weights.Tensor) []weights.Tensor {
		if strings.HasSuffix(tt.Name, ".original0") {
			return nil
		}
		p, ok := strings.CutSuffix(tt.Name, ".parametrizations.weight.original1")
		if !ok {
			return []weights.Tensor{tt}
		}
		v, err := tt.Float32()
		if err != nil {
			t.Fatal(err)
		}
		out, in := tt.Shape[0], tt.Shape[1]
		b := make([]byte, 4*len(v))
		for o := range out {
			var ss float64
			for _, x := range v[o*in : (o+1)*in] {
				ss += float64(x) * float64(x)
			}
			for i := range in {
				w := float32(float64(gs[p][o]) * float64(v[o*in+i]) / math.Sqrt(ss))
				binary.LittleEndian.PutUint32(b[4*(o*in+i):], math.Float32bits(w))
			}
		}
		return []weights.Tensor{{Name: p + ".weight", DType: weights.F32, Shape: []int{out, in, 1}, Data: b}}
	}, nil)
	sameOutputs(t, "folded weight", run(t, src, codec.Options{}), run(t, folded, codec.Options{}))
}

func TestLoadErrors(t *testing.T) {
	src := writeTiny(t, testmodel.OpenMOSS, testmodel.Float32, 31)
	drop := func(name string) func(weights.Tensor) []weights.Tensor {
		return func(tt weights.Tensor) []weights.Tensor {
			if tt.Name == name {
				return nil
			}
			return []weights.Tensor{tt}
		}
	}
	reshape := func(name string, shape ...int) func(weights.Tensor) []weights.Tensor {
		return func(tt weights.Tensor) []weights.Tensor {
			if tt.Name == name {
				n := 1
				for _, d := range shape {
					n *= d
				}
				tt.Shape, tt.Data = shape, make([]byte, 4*n)
			}
			return []weights.Tensor{tt}
		}
	}
	zeroRow := func(tt weights.Tensor) []weights.Tensor {
		if tt.Name == "quantizer.quantizers.2.in_proj.parametrizations.weight.original1" {
			clear(tt.Data[:4*tt.Shape[1]])
		}
		return []weights.Tensor{tt}
	}
	tests := []struct {
		name    string
		edit    func(weights.Tensor) []weights.Tensor
		config  func(string) string
		missing string // a name the *weights.MissingError must list
		shape   string // the name of a *weights.ShapeError
		substr  string // else: the error must contain this
	}{
		{name: "missing norm bias", edit: drop("decoder.7.transformer.layers.1.norm2.bias"), missing: "decoder.7.transformer.layers.1.norm2.bias"},
		{name: "missing attention weight", edit: drop("encoder.3.transformer.layers.0.self_attn.in_projs.0.weight"), missing: "encoder.3.transformer.layers.0.self_attn.in_proj.weight"},
		{name: "missing layer scale", edit: drop("encoder.1.transformer.layers.1.layer_scale_2.scale"), missing: "encoder.1.transformer.layers.1.layer_scale_2.scale"},
		{name: "missing codebook", edit: drop("quantizer.quantizers.7.codebook.weight"), missing: "quantizer.quantizers.7.codebook.weight"},
		{name: "missing weight norm g", edit: drop("quantizer.input_proj.parametrizations.weight.original0"), missing: "quantizer.input_proj.weight_g"},
		{name: "missing weight norm v", edit: drop("quantizer.output_proj.parametrizations.weight.original1"), missing: "quantizer.output_proj.weight_v"},
		{name: "missing quantizer bias", edit: drop("quantizer.quantizers.0.out_proj.bias"), missing: "quantizer.quantizers.0.out_proj.bias"},
		{name: "missing output projection", edit: drop("decoder.1.output_proj.weight"), missing: "decoder.1.output_proj.weight"},
		{name: "wrong projection shape", edit: reshape("encoder.3.input_proj.weight", 32, 47), shape: "encoder.3.input_proj.weight"},
		{name: "wrong ffn shape", edit: reshape("decoder.5.transformer.layers.0.linear2.weight", 96, 32), shape: "decoder.5.transformer.layers.0.linear2.weight"},
		{name: "wrong codebook shape", edit: reshape("quantizer.quantizers.1.codebook.weight", 128, 5), shape: "quantizer.quantizers.1.codebook.weight"},
		{name: "wrong g rank", edit: reshape("quantizer.input_proj.parametrizations.weight.original0", 32), shape: "quantizer.input_proj.parametrizations.weight.original0"},
		{name: "zero weight-norm row", edit: zeroRow, substr: "weight norm is undefined"},
		{name: "NaN in config", config: func(s string) string {
			return strings.Replace(s, `"context_duration": 0.07`, `"context_duration": NaN`, 1)
		}, substr: "decoder_kwargs[3].context_duration"},
		{name: "unknown positional embedding", config: func(s string) string {
			return strings.Replace(s, `"positional_embedding": "rope"`, `"positional_embedding": "alibi"`, 1)
		}, substr: "decoder_kwargs[1].positional_embedding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := rewrite(t, src, tc.edit, tc.config)
			_, err := codec.Load(dir, codec.Options{})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			t.Log(err)
			switch {
			case tc.missing != "":
				var me *weights.MissingError
				if !errors.As(err, &me) || !slices.Contains(me.Names, tc.missing) {
					t.Fatalf("want a MissingError listing %q, got %v", tc.missing, err)
				}
			case tc.shape != "":
				var se *weights.ShapeError
				if !errors.As(err, &se) || se.Name != tc.shape {
					t.Fatalf("want a ShapeError for %q, got %v", tc.shape, err)
				}
				if slices.Equal(se.Want, se.Have) {
					t.Fatalf("ShapeError with equal shapes: %v", err)
				}
			default:
				if !strings.Contains(err.Error(), tc.substr) {
					t.Fatalf("error %q does not mention %q", err, tc.substr)
				}
			}
		})
	}
	t.Run("no config", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := codec.Load(dir, codec.Options{}); err == nil || !strings.Contains(err.Error(), "config.json") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no weights", func(t *testing.T) {
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(src, "config.json"))
		os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
		if _, err := codec.Load(dir, codec.Options{}); err == nil {
			t.Fatal("Load without weights succeeded")
		}
	})
}

func TestWeightBytes(t *testing.T) {
	dir := writeTiny(t, testmodel.OpenMOSS, testmodel.BFloat16, 41)
	f32, err := codec.Load(dir, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bf, err := codec.Load(dir, codec.Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := weights.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var params int64
	for _, n := range st.Names() {
		params += int64(st.Tensor(n).NumElements())
	}
	// float32 copies of every parameter, minus the weight-norm g vectors,
	// plus the float64 unit codebooks; bf16 halves the transformer matrices.
	if got := f32.WeightBytes(); got < 4*params-4*1000 || got > 6*params {
		t.Errorf("float32 WeightBytes %d for %d parameters", got, params)
	}
	if bf.WeightBytes() >= f32.WeightBytes() {
		t.Errorf("KeepBF16 WeightBytes %d not below float32 %d", bf.WeightBytes(), f32.WeightBytes())
	}
}
