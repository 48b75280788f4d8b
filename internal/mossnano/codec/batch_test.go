package codec_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
)

func mixedModel(t testing.TB) *codec.Model {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mixed")
	if err := testmodel.WriteCodec(dir, testmodel.Tiny, testmodel.MLX, testmodel.Float32, 5, testmodel.CodecMixedPositional()); err != nil {
		t.Fatal(err)
	}
	m, err := codec.Load(dir, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBatchMatchesStep steps streams at different positions (fresh, with
// grown and wrapped rings, reset, with fewer codebooks) through a Batch, with
// the batch's membership and order changing from step to step, and checks
// every stream's samples bit for bit against a twin Decoder stepped alone.
func TestBatchMatchesStep(t *testing.T) {
	models := []struct {
		name string
		m    *codec.Model
	}{
		{"tiny-a", fixtureModel(t, "tiny-a")},
		{"tiny-b", fixtureModel(t, "tiny-b")},
		{"generated-mixed", mixedModel(t)},
	}
	frames := longFrames(t, "tiny-a")
	for _, mm := range models {
		t.Run(mm.name, func(t *testing.T) {
			m := mm.m
			rng := rand.New(rand.NewPCG(7, 8))
			const streams = 6
			type stream struct {
				batched, alone *codec.Decoder
				next           int // index into frames
				nq             int
			}
			ss := make([]*stream, streams)
			for i := range ss {
				s := &stream{batched: m.NewDecoder(), alone: m.NewDecoder(), nq: m.NumQuantizers()}
				if i == 3 {
					s.nq = 3 // fewer codebooks than the others
				}
				// Different histories: stream i starts i·7 frames in.
				pre := frames[:i*7]
				if i == 3 {
					pre = truncate(pre, s.nq)
				}
				if _, err := s.batched.Step(nil, pre); err != nil {
					t.Fatal(err)
				}
				if _, err := s.alone.Step(nil, pre); err != nil {
					t.Fatal(err)
				}
				s.next = i * 7
				ss[i] = s
			}
			b := m.NewBatch()
			for step := range 40 {
				// A random subset in random order.
				var decs []*codec.Decoder
				var fr [][]int
				var members []*stream
				for _, k := range rng.Perm(streams) {
					if rng.IntN(4) == 0 {
						continue
					}
					s := ss[k]
					if step == 20 && k == 1 {
						s.batched.Reset()
						s.alone.Reset()
						s.next = 0
					}
					f := frames[s.next%len(frames)][:s.nq]
					s.next++
					decs = append(decs, s.batched)
					fr = append(fr, f)
					members = append(members, s)
				}
				dst := make([][]float32, len(decs))
				for i := range dst {
					dst[i] = []float32{42} // appended to
				}
				if err := b.Step(decs, fr, dst); err != nil {
					t.Fatal(err)
				}
				for i, s := range members {
					want, err := s.alone.Step([]float32{42}, fr[i:i+1])
					if err != nil {
						t.Fatal(err)
					}
					if !bitsEqual(dst[i], want) {
						d, at := maxAbsDiff(t, dst[i], want)
						t.Fatalf("step %d, stream at frame %d: batched differs from alone by %g at %d", step, s.next-1, d, at)
					}
					if s.batched.Frames() != s.alone.Frames() {
						t.Fatalf("Frames() %d, alone %d", s.batched.Frames(), s.alone.Frames())
					}
				}
			}
		})
	}
}

func truncate(frames [][]int, nq int) [][]int {
	out := make([][]int, len(frames))
	for i, f := range frames {
		out[i] = f[:nq]
	}
	return out
}

func bitsEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestBatchErrors: bad arguments are rejected before any state changes.
func TestBatchErrors(t *testing.T) {
	m := fixtureModel(t, "tiny-a")
	other := fixtureModel(t, "tiny-b")
	nq := m.NumQuantizers()
	good := make([]int, nq)
	bad := make([]int, nq)
	bad[2] = m.CodebookSize()
	d1, d2 := m.NewDecoder(), m.NewDecoder()
	b := m.NewBatch()
	tests := []struct {
		name   string
		decs   []*codec.Decoder
		frames [][]int
		dst    [][]float32
		want   error
	}{
		{"lengths", []*codec.Decoder{d1, d2}, [][]int{good}, make([][]float32, 2), codec.ErrBatch},
		{"dst length", []*codec.Decoder{d1}, [][]int{good}, nil, codec.ErrBatch},
		{"foreign decoder", []*codec.Decoder{d1, other.NewDecoder()}, [][]int{good, good}, make([][]float32, 2), codec.ErrBatch},
		{"nil decoder", []*codec.Decoder{d1, nil}, [][]int{good, good}, make([][]float32, 2), codec.ErrBatch},
		{"repeated decoder", []*codec.Decoder{d1, d2, d1}, [][]int{good, good, good}, make([][]float32, 3), codec.ErrBatch},
		{"bad code", []*codec.Decoder{d1, d2}, [][]int{good, bad}, make([][]float32, 2), codec.ErrInvalidCodes},
		{"empty frame", []*codec.Decoder{d1, d2}, [][]int{good, {}}, make([][]float32, 2), codec.ErrInvalidCodes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := b.Step(tc.decs, tc.frames, tc.dst)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if d1.Frames() != 0 || d2.Frames() != 0 {
				t.Fatal("a rejected step changed a decoder")
			}
			for _, o := range tc.dst {
				if len(o) != 0 {
					t.Fatal("a rejected step wrote samples")
				}
			}
		})
	}
	// An empty batch is a no-op.
	if err := b.Step(nil, nil, nil); err != nil {
		t.Fatal(err)
	}
}
