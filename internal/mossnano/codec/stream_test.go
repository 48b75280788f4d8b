package codec_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
	"github.com/nanovox/nanovox/internal/tensor"
)

// longFrames returns every frame of a fixture's long generation (47–49
// frames: hundreds of rows at the 400 Hz stage, so every ring buffer wraps
// many times with the fixtures' small contexts).
func longFrames(t testing.TB, name string) [][]int {
	var g generationGolden
	readJSON(t, filepath.Join(fixtureDir(name), "golden", "long.json"), &g)
	return g.Frames
}

// streamDecode decodes frames in steps of the given sizes (cycled).
func streamDecode(t testing.TB, d *codec.Decoder, frames [][]int, steps []int) []float32 {
	t.Helper()
	var out []float32
	for i, k := 0, 0; i < len(frames); k++ {
		n := min(steps[k%len(steps)], len(frames)-i)
		var err error
		out, err = d.Step(out, frames[i:i+n])
		if err != nil {
			t.Fatal(err)
		}
		i += n
		if d.Frames() != i {
			t.Fatalf("Frames() = %d after %d frames", d.Frames(), i)
		}
	}
	return out
}

// TestStreamingMatchesWhole: streamed samples equal the whole decode bit for
// bit (every kernel computes a row the same way whatever rows share a call).
func TestStreamingMatchesWhole(t *testing.T) {
	mixed := filepath.Join(t.TempDir(), "mixed")
	if err := testmodel.WriteCodec(mixed, testmodel.Tiny, testmodel.MLX, testmodel.Float32, 5, testmodel.CodecMixedPositional()); err != nil {
		t.Fatal(err)
	}
	mixedModel, err := codec.Load(mixed, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	models := []struct {
		name string
		m    *codec.Model
	}{
		{"tiny-a", fixtureModel(t, "tiny-a")},
		{"tiny-b", fixtureModel(t, "tiny-b")},
		{"generated-mixed", mixedModel},
	}
	frames := longFrames(t, "tiny-a")
	if os.Getenv("NANOVOX_LONG_TESTS") == "" { // NANOVOX_LONG_TESTS=1: the whole golden
		frames = frames[:20] // still hundreds of rows per ring at 400 Hz
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randomSteps := make([]int, 40)
	for i := range randomSteps {
		randomSteps[i] = 1 + rng.IntN(7)
	}
	chunkings := []struct {
		name  string
		steps []int
	}{
		{"1", []int{1}},
		{"2", []int{2}},
		{"3", []int{3}},
		{"all", []int{len(frames)}},
		{"random", randomSteps},
	}
	for _, mm := range models {
		t.Run(mm.name, func(t *testing.T) {
			whole, err := mm.m.Decode(frames)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(frames) * mm.m.SamplesPerFrame() * mm.m.Channels(); len(whole) != want {
				t.Fatalf("whole decode: %d samples, want %d", len(whole), want)
			}
			dec := mm.m.NewDecoder()
			for _, c := range chunkings {
				dec.Reset()
				got := streamDecode(t, dec, frames, c.steps)
				d, at := maxAbsDiff(t, got, whole)
				if d != 0 {
					t.Errorf("steps %s: max abs diff %g at %d", c.name, d, at)
				}
			}
			// A fresh decoder agrees with a reused one.
			got := streamDecode(t, mm.m.NewDecoder(), frames, []int{2})
			if d, at := maxAbsDiff(t, got, whole); d != 0 {
				t.Errorf("fresh decoder: max abs diff %g at %d", d, at)
			}
		})
	}
}

// TestStreamingFewerCodebooks decodes with the first nq codebooks only, whole
// and streamed.
func TestStreamingFewerCodebooks(t *testing.T) {
	m := fixtureModel(t, "tiny-b")
	frames := longFrames(t, "tiny-b")[:20]
	full, err := m.Decode(frames)
	if err != nil {
		t.Fatal(err)
	}
	for _, nq := range []int{1, 3, m.NumQuantizers() - 1} {
		sub := make([][]int, len(frames))
		for i, f := range frames {
			sub[i] = f[:nq]
		}
		whole, err := m.Decode(sub)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := maxAbsDiff(t, whole, full); d == 0 {
			t.Fatalf("nq=%d decodes exactly like all codebooks", nq)
		}
		got := streamDecode(t, m.NewDecoder(), sub, []int{3, 1})
		if d, at := maxAbsDiff(t, got, whole); d != 0 {
			t.Errorf("nq=%d: streamed differs from whole by %g at %d", nq, d, at)
		}
	}
}

// TestStreamingResetMidStream checks that Reset forgets an earlier stream.
func TestStreamingResetMidStream(t *testing.T) {
	m := fixtureModel(t, "tiny-a")
	frames := longFrames(t, "tiny-a")
	want, err := m.Decode(frames[:10])
	if err != nil {
		t.Fatal(err)
	}
	dec := m.NewDecoder()
	streamDecode(t, dec, frames[20:], []int{5})
	dec.Reset()
	if dec.Frames() != 0 {
		t.Fatalf("Frames() = %d after Reset", dec.Frames())
	}
	got := streamDecode(t, dec, frames[:10], []int{1})
	if d, at := maxAbsDiff(t, got, want); d != 0 {
		t.Fatalf("after Reset: max abs diff %g at %d", d, at)
	}
}

func TestDecodeRejectsBadCodes(t *testing.T) {
	m := fixtureModel(t, "tiny-a")
	nq, size := m.NumQuantizers(), m.CodebookSize()
	good := make([]int, nq)
	tooMany := make([]int, nq+1)
	neg := make([]int, nq)
	neg[3] = -1
	big := make([]int, nq)
	big[nq-1] = size
	tests := []struct {
		name   string
		frames [][]int
	}{
		{"empty frame", [][]int{good, {}}},
		{"too many codebooks", [][]int{tooMany}},
		{"negative code", [][]int{good, neg}},
		{"code past codebook", [][]int{big}},
		{"mixed widths", [][]int{good, good[:2]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.Decode(tc.frames); !errors.Is(err, codec.ErrInvalidCodes) {
				t.Errorf("Decode: got %v, want ErrInvalidCodes", err)
			}
			dec := m.NewDecoder()
			prefix := []float32{42}
			out, err := dec.Step(prefix, tc.frames)
			if err == nil {
				t.Fatal("Step accepted bad codes")
			}
			if len(out) != 1 || dec.Frames() != 0 {
				t.Fatalf("a rejected Step changed state: %d samples, %d frames", len(out), dec.Frames())
			}
		})
	}
	// Nothing to decode is not an error.
	out, err := m.Decode(nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("Decode(nil) = %d samples, %v", len(out), err)
	}
}

// TestDecoderBytes checks the decoder's memory: exactly Σ layers ×
// (context − 1 + rows per frame, rounded up to even) × d_model × 2 × 4
// bytes of rings whatever the stream length (a decoder stepped only
// through a Batch has no scratch of its own), plus Step's scratch.
func TestDecoderBytes(t *testing.T) {
	for _, name := range fixtures {
		m := fixtureModel(t, name)
		var full int64
		rows := 1
		for _, mod := range m.Config().Decoder {
			if mod.Kind == codec.KindPatch {
				rows *= mod.PatchSize
				continue
			}
			ring := mod.Context - 1 + rows
			full += int64(mod.Layers*(ring+ring%2)*mod.DModel) * 2 * 4
		}
		d := m.NewDecoder()
		b := m.NewBatch()
		for i, f := range append([][]int{nil}, longFrames(t, name)...) {
			if f != nil {
				if err := b.Step([]*codec.Decoder{d}, [][]int{f}, make([][]float32, 1)); err != nil {
					t.Fatal(err)
				}
			}
			if n := d.Bytes(); n != full {
				t.Fatalf("%s: %d bytes after %d frames, want %d", name, n, i, full)
			}
		}
		if _, err := d.Step(nil, longFrames(t, name)[:1]); err != nil {
			t.Fatal(err)
		}
		if d.Bytes() <= full {
			t.Fatalf("%s: Step's scratch is not counted", name)
		}
	}
}

// TestFastModes decodes with the bfloat16 dot products and bfloat16 rings
// (BF16Dot) and with int8 products on top (Int8): streaming still equals
// whole decoding exactly (the products stay row-independent, and a whole
// pass rounds keys and values as the rings store them), the rings hold half
// a float32 decoder's memory, and the audio is close to the float32 decode
// but not equal to it (the mode is in use). Int8 leaves the encoder as it
// is without it.
func TestFastModes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   codec.Options
		maxRel float64
	}{
		{"bf16", codec.Options{Matmul: tensor.BF16}, 0.03},
		{"int8", codec.Options{Matmul: tensor.Int8}, 0.1},
		{"int8-f32attn", codec.F32Attention(codec.Options{Matmul: tensor.Int8}), 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := codec.Load(filepath.Join(fixtureDir("tiny-a"), "codec"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			frames := longFrames(t, "tiny-a")[:24]
			whole, err := m.Decode(frames)
			if err != nil {
				t.Fatal(err)
			}
			for _, steps := range [][]int{{1}, {3}, {5, 2}} {
				got := streamDecode(t, m.NewDecoder(), frames, steps)
				if d, at := maxAbsDiff(t, got, whole); d != 0 {
					t.Errorf("steps %v: streaming differs from whole by %g at %d", steps, d, at)
				}
			}
			ref := fixtureModel(t, "tiny-a")
			b, b32 := m.NewDecoder().Bytes(), ref.NewDecoder().Bytes()
			if half := codec.UsesBF16Dot(tc.opts); b32 == 0 || half && 2*b != b32 || !half && b != b32 {
				t.Errorf("decoder holds %d bytes, float32 one %d (bfloat16 rings %v)", b, b32, half)
			}
			exact, err := ref.Decode(frames)
			if err != nil {
				t.Fatal(err)
			}
			var diff, norm float64
			for i := range exact {
				d := float64(whole[i]) - float64(exact[i])
				diff += d * d
				norm += float64(exact[i]) * float64(exact[i])
			}
			rel := math.Sqrt(diff / norm)
			t.Logf("relative RMS difference to the float32 decode: %.2e", rel)
			if tc.opts.Matmul == tensor.BF16 && !codec.UsesBF16Dot(tc.opts) {
				// arm64: the bf16 mode leaves the codec in float32
				// (tensor.Matmul.BF16Dot), so its decode is the float32 one.
				if rel != 0 {
					t.Fatalf("relative RMS difference to the float32 decode %g without bfloat16 dot products, want 0", rel)
				}
				return
			}
			if !(rel > 0 && rel < tc.maxRel) {
				t.Fatalf("relative RMS difference to the float32 decode %g, want in (0, %g)", rel, tc.maxRel)
			}
			if tc.opts.Matmul != tensor.Int8 {
				return
			}
			// Int8 leaves the encoder alone: its codes are the ones of the
			// same options without it.
			var o codec.Options
			if codec.UsesBF16Dot(tc.opts) {
				o.Matmul = tensor.BF16
			}
			encRef, err := codec.Load(filepath.Join(fixtureDir("tiny-a"), "codec"), o)
			if err != nil {
				t.Fatal(err)
			}
			wav := testWave(m, 12*m.SamplesPerFrame(), 3)
			got, err := m.Encode(wav)
			if err != nil {
				t.Fatal(err)
			}
			want, err := encRef.Encode(wav)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("Int8 changed the encoder's codes")
			}
		})
	}
}
