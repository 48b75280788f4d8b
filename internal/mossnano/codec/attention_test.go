package codec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nanovox/nanovox/internal/tensor"
)

func randSlice(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// naiveAttention is the spec's mask written out in float64: query i sees key
// j iff j < length, i−j < context and (causal) j <= i; rows >= length are 0.
func naiveAttention(qkv []float32, n, length, d, heads, ctx int, causal bool) []float64 {
	hd := d / heads
	out := make([]float64, n*d)
	for i := range min(n, length) {
		for h := range heads {
			var js []int
			var sc []float64
			mx := math.Inf(-1)
			for j := range length {
				if i-j >= ctx || (causal && j > i) {
					continue
				}
				var s float64
				for k := range hd {
					s += float64(qkv[3*i*d+h*hd+k]) * float64(qkv[3*j*d+d+h*hd+k])
				}
				s /= math.Sqrt(float64(hd))
				js, sc = append(js, j), append(sc, s)
				mx = max(mx, s)
			}
			var sum float64
			for k := range sc {
				sc[k] = math.Exp(sc[k] - mx)
				sum += sc[k]
			}
			for k, j := range js {
				for c := range hd {
					out[i*d+h*hd+c] += sc[k] / sum * float64(qkv[3*j*d+2*d+h*hd+c])
				}
			}
		}
	}
	return out
}

// testWork returns scratch for attention over up to rows rows.
func testWork(rows int) *work {
	return &work{lo: make([]int, rows), hi: make([]int, rows)}
}

// testRing returns the streaming state of a one-layer transformer whose
// steps attend in groups of group rows.
func testRing(tr *transformer, group int) *ringState {
	n := tr.context - 1 + group
	return &ringState{ring: n, group: group, heads: tr.heads, hd: tr.hd, layers: []tensor.KV{
		{K: make([]float32, n*tr.d), V: make([]float32, n*tr.d), Stride: tr.hd, HeadStride: n * tr.hd, Ring: n}}}
}

func testTransformer(d, heads, ctx int, causal bool) *transformer {
	return &transformer{d: d, heads: heads, hd: d / heads, context: ctx, causal: causal,
		scale: float32(1 / math.Sqrt(float64(d/heads)))}
}

func TestAttendWholeMask(t *testing.T) {
	const d, heads, n = 8, 2, 12
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		ctx, length int
		causal      bool
	}{
		{3, 12, true}, {3, 9, true}, {1, 12, true}, {100, 7, true},
		{3, 9, false}, {5, 12, false}, {100, 6, false},
	} {
		qkv := randSlice(rng, n*3*d)
		// Rows past length must never be read: poison them.
		for i := tc.length * 3 * d; i < len(qkv); i++ {
			qkv[i] = float32(math.NaN())
		}
		tr := testTransformer(d, heads, tc.ctx, tc.causal)
		att := randSlice(rng, n*d)
		tr.attendWhole(att, qkv, n, tc.length, testWork(n))
		want := naiveAttention(qkv, n, tc.length, d, heads, tc.ctx, tc.causal)
		for i := range att {
			if diff := math.Abs(float64(att[i]) - want[i]); !(diff < 1e-5) {
				t.Fatalf("%+v: att[%d] = %g, want %g", tc, i, att[i], want[i])
			}
		}
	}
}

// TestAttendRingMatchesWhole feeds the same rows through the ring buffers in
// uneven steps, with several group sizes, while the rings wrap: the result
// must be bit-identical to whole-sequence attention.
func TestAttendRingMatchesWhole(t *testing.T) {
	const d, heads, n = 8, 4, 300
	rng := rand.New(rand.NewPCG(2, 2))
	for _, ctx := range []int{1, 2, 5, 16, 64} {
		for _, group := range []int{1, 3, 8} {
			tr := testTransformer(d, heads, ctx, true)
			qkv := randSlice(rng, n*3*d)
			want := make([]float32, n*d)
			tr.attendWhole(want, qkv, n, n, testWork(n))
			rs := testRing(tr, group)
			w := testWork(group)
			got := make([]float32, n*d)
			for step := 1; rs.pos < n; step = step%7 + 1 {
				k := min(step, n-rs.pos)
				tr.attendRing(got[rs.pos*d:], qkv[rs.pos*3*d:], k, rs.pos, rs, 0, w)
				rs.pos += k
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("ctx %d group %d: att[%d] = %g, whole %g", ctx, group, i, got[i], want[i])
				}
			}
		}
	}
}

func TestPatches(t *testing.T) {
	const T, D, h = 6, 3, 2
	in := make([]float32, T*D)
	for i := range in {
		in[i] = float32(i)
	}
	down := make([]float32, len(in))
	patchDown(down, in, T, D, h)
	for tt := range T / h {
		for c := range D {
			for j := range h {
				if got, want := down[tt*D*h+c*h+j], in[(tt*h+j)*D+c]; got != want {
					t.Fatalf("down[%d][%d] = %g, want %g", tt, c*h+j, got, want)
				}
			}
		}
	}
	up := make([]float32, len(in))
	patchUp(up, down, T/h, D*h, h)
	for i := range in {
		if up[i] != in[i] {
			t.Fatalf("patchUp(patchDown(x))[%d] = %g, want %g", i, up[i], in[i])
		}
	}
}

// BenchmarkAttendRing is one frame's attention at the release decoder's
// 400 Hz stage with a full window: 32 rows, d_model 256, 4 heads, 1600 keys.
func BenchmarkAttendRing(b *testing.B) {
	const d, heads, ctx, rows = 256, 4, 1600, 32
	rng := rand.New(rand.NewPCG(3, 3))
	tr := testTransformer(d, heads, ctx, true)
	qkv := randSlice(rng, rows*3*d)
	rs := testRing(tr, rows)
	copy(rs.layers[0].K, randSlice(rng, rs.ring*d))
	copy(rs.layers[0].V, randSlice(rng, rs.ring*d))
	rs.pos = 10 * ctx
	w := testWork(rows)
	att := make([]float32, rows*d)
	b.ReportAllocs()
	for b.Loop() {
		tr.attendRing(att, qkv, rows, rs.pos, rs, 0, w)
		rs.pos += rows
	}
}

func BenchmarkPatchUp(b *testing.B) {
	const T, D, h = 32, 768, 2
	in, out := make([]float32, T*D), make([]float32, T*D)
	for b.Loop() {
		patchUp(out, in, T, D, h)
	}
}
