package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// windowCase is one AttendWindows problem: nkeys logical keys stored either
// contiguously (ring 0) or in a ring, row-major or head-major, and per-row
// windows.
type windowCase struct {
	heads, hd, extra int // stride = heads·hd + extra (row-major)
	nkeys            int
	ring, first      int
	headMajor        bool // [heads][rows][hd], heads extra·hd floats apart beyond their rows
	lo, hi           []int
}

func (c *windowCase) d() int      { return c.heads * c.hd }
func (c *windowCase) stride() int { return c.d() + c.extra }

func (c *windowCase) String() string {
	return fmt.Sprintf("heads=%d hd=%d extra=%d headMajor=%v keys=%d ring=%d/%d rows=%d",
		c.heads, c.hd, c.extra, c.headMajor, c.nkeys, c.ring, c.first, len(c.lo))
}

// layout stores logical keys and values k, v [nkeys][d] in the case's
// layout and returns the KV.
func (c *windowCase) layout(k, v []float32) KV {
	d, hd := c.d(), c.hd
	rows := max(c.nkeys, 1)
	if c.ring > 0 {
		rows = c.ring
	}
	kv := KV{Stride: c.stride(), Ring: c.ring, First: c.first}
	if c.headMajor {
		kv.Stride, kv.HeadStride = hd, (rows+c.extra)*hd
	}
	size := (rows-1)*kv.Stride + (c.heads-1)*kv.headStride(hd) + hd
	kv.K, kv.V = make([]float32, size), make([]float32, size)
	for i := range kv.K {
		kv.K[i], kv.V[i] = float32(math.NaN()), float32(math.NaN()) // padding and unused rows must never be read
	}
	for j := range c.nkeys {
		r := kv.row(j)
		for h := range c.heads {
			o := r*kv.Stride + h*kv.headStride(hd)
			copy(kv.K[o:o+hd], k[j*d+h*hd:j*d+(h+1)*hd])
			copy(kv.V[o:o+hd], v[j*d+h*hd:j*d+(h+1)*hd])
		}
	}
	return kv
}

// refWindows is the float64 reference: row i attends keys [lo[i], hi[i]).
func refWindows(q, k, v []float32, c *windowCase, scale float32) []float64 {
	d := c.d()
	out := make([]float64, len(c.lo)*d)
	for i := range c.lo {
		var rows []int
		for j := c.lo[i]; j < c.hi[i]; j++ {
			rows = append(rows, j)
		}
		copy(out[i*d:], refAttend(q[i*d:(i+1)*d], k, v, rows, c.heads, c.hd, d, scale))
	}
	return out
}

func randWindows(r *rand.Rand, nq, nkeys int, causal bool) (lo, hi []int) {
	lo, hi = make([]int, nq), make([]int, nq)
	for i := range nq {
		switch {
		case causal:
			// Consecutive query positions at the end of the keys, with a
			// bounded context, as in a decode step.
			ctx := 1 + r.IntN(nkeys)
			p := nkeys - nq + i
			hi[i] = p + 1
			lo[i] = max(0, p+1-ctx)
			if hi[i] <= 0 {
				lo[i], hi[i] = 0, 0
			}
		case r.IntN(8) == 0:
			lo[i] = r.IntN(nkeys + 1)
			hi[i] = lo[i] // empty
		default:
			a, b := r.IntN(nkeys+1), r.IntN(nkeys+1)
			lo[i], hi[i] = min(a, b), max(a, b)
		}
	}
	return lo, hi
}

func windowCases(r *rand.Rand) []windowCase {
	var cs []windowCase
	shapes := []struct{ heads, hd, extra int }{
		{1, 16, 0}, {4, 64, 0}, {4, 64, 512}, {2, 8, 3}, {3, 24, 5}, {1, 5, 1}, {2, 80, 0}, {1, 1, 0}, {2, 17, 2},
	}
	for si, s := range shapes {
		for _, nq := range []int{1, 3, 8, 16, 17, 40} {
			nkeys := 1 + r.IntN(70)
			c := windowCase{heads: s.heads, hd: s.hd, extra: s.extra, nkeys: nkeys, headMajor: (si+nq)%4 == 1}
			if (si+nq)%3 == 0 {
				c.ring = nkeys + r.IntN(5)
				c.first = r.IntN(c.ring)
			}
			c.lo, c.hi = randWindows(r, nq, nkeys, nq%2 == 1 && nq <= nkeys)
			cs = append(cs, c)
		}
	}
	return cs
}

// runWindows calls AttendWindows on the case and returns out [rows][d].
func runWindows(c *windowCase, q []float32, kv KV, scale float32, sc *AttnScratch) []float32 {
	d := c.d()
	out := make([]float32, len(c.lo)*d)
	for i := range out {
		out[i] = float32(math.NaN()) // must be overwritten
	}
	AttendWindows(out, d, q, d, kv, c.lo, c.hi, AttnShape{Heads: c.heads, HeadDim: c.hd, Scale: scale}, sc)
	return out
}

// TestAttendWindows checks every implementation against the float64
// reference and bit for bit against the portable code, and that the result
// does not depend on the thread count or on parallel chunking.
func TestAttendWindows(t *testing.T) {
	useThreads(t, Threads())
	oldMin := parMinAttend
	t.Cleanup(func() { parMinAttend = oldMin })
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range windowCases(r) {
		d := c.d()
		q, k, v := randVec(r, len(c.lo)*d), randVec(r, c.nkeys*d), randVec(r, c.nkeys*d)
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		want := refWindows(q, k, v, &c, scale)
		kv := c.layout(k, v)
		var generic []float32
		for _, im := range impls() {
			useImpl(t, im)
			var first []float32
			var sc AttnScratch
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				for _, pmin := range []int{0, 1 << 30} {
					parMinAttend = pmin
					got := runWindows(&c, q, kv, scale, &sc)
					for i, g := range got {
						if !(math.Abs(float64(g)-want[i]) <= 3e-6) {
							t.Fatalf("%v %v threads=%d: out[%d] (row %d, window [%d,%d)) = %v, want %v",
								&c, im, threads, i, i/d, c.lo[i/d], c.hi[i/d], g, want[i])
						}
					}
					if first == nil {
						first = got
					} else if !bitsEqual(first, got) {
						t.Fatalf("%v %v: result depends on threads or chunking", &c, im)
					}
				}
			}
			// Every implementation performs the same IEEE operations.
			if generic == nil {
				generic = first
			} else if !bitsEqual(first, generic) {
				t.Fatalf("%v %v: result differs from the portable code's", &c, im)
			}
		}
	}
}

// TestAttendWindowsRowIndependence checks the exactness contract: a row's
// result is bit-identical whether it is computed alone, with any other rows
// in any order (so in any tile and lane), with its keys stored contiguously,
// in a ring wrapped anywhere or with another stride.
func TestAttendWindowsRowIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, c := range windowCases(r) {
		d := c.d()
		nq := len(c.lo)
		q, k, v := randVec(r, nq*d), randVec(r, c.nkeys*d), randVec(r, c.nkeys*d)
		scale := float32(0.3)
		for _, im := range impls() {
			useImpl(t, im)
			all := runWindows(&c, q, c.layout(k, v), scale, nil)
			// Each row alone, in a contiguous unpadded layout.
			for i := range nq {
				one := c
				one.extra, one.ring, one.first, one.headMajor = 0, 0, 0, false
				one.lo, one.hi = c.lo[i:i+1], c.hi[i:i+1]
				got := runWindows(&one, q[i*d:(i+1)*d], one.layout(k, v), scale, nil)
				if !bitsEqual(got, all[i*d:(i+1)*d]) {
					t.Fatalf("%v %v: row %d alone differs from the batch", &c, im, i)
				}
			}
			// A random permutation of the rows, each repeated, in a ring of
			// another size wrapped elsewhere.
			perm := r.Perm(nq)
			perm = append(perm, perm[:nq/2]...)
			mix := c
			mix.ring = c.nkeys + 3
			mix.first = r.IntN(mix.ring)
			mix.extra = c.extra + 7
			mix.headMajor = !c.headMajor
			mix.lo, mix.hi = make([]int, len(perm)), make([]int, len(perm))
			mq := make([]float32, len(perm)*d)
			for n, i := range perm {
				mix.lo[n], mix.hi[n] = c.lo[i], c.hi[i]
				copy(mq[n*d:], q[i*d:(i+1)*d])
			}
			got := runWindows(&mix, mq, mix.layout(k, v), scale, nil)
			for n, i := range perm {
				if !bitsEqual(got[n*d:(n+1)*d], all[i*d:(i+1)*d]) {
					t.Fatalf("%v %v: row %d at position %d of a permuted call differs", &c, im, i, n)
				}
			}
		}
	}
}

// TestAttendWindowsIsolation puts NaN into keys and values that only some
// rows see: the other rows must be exactly as with clean data.
func TestAttendWindowsIsolation(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const heads, hd, nkeys, nq = 2, 16, 60, 20
	d := heads * hd
	c := windowCase{heads: heads, hd: hd, nkeys: nkeys, lo: make([]int, nq), hi: make([]int, nq)}
	// Causal windows of 30 keys ending at 40…59: key 45 is seen by rows 5…19
	// only (positions 45…59 see it; earlier rows do not), key 12 by rows 0…1.
	for i := range nq {
		c.hi[i] = 40 + i + 1
		c.lo[i] = c.hi[i] - 30
	}
	q, k, v := randVec(r, nq*d), randVec(r, nkeys*d), randVec(r, nkeys*d)
	pk, pv := slices.Clone(k), slices.Clone(v)
	for x := range d {
		pk[45*d+x], pv[45*d+x] = float32(math.NaN()), float32(math.Inf(1))
		pk[12*d+x], pv[12*d+x] = float32(math.Inf(-1)), float32(math.NaN())
	}
	for _, im := range impls() {
		useImpl(t, im)
		clean := runWindows(&c, q, c.layout(k, v), 0.25, nil)
		dirty := runWindows(&c, q, c.layout(pk, pv), 0.25, nil)
		for i := range nq {
			sees := (c.lo[i] <= 45 && 45 < c.hi[i]) || (c.lo[i] <= 12 && 12 < c.hi[i])
			row := dirty[i*d : (i+1)*d]
			if sees {
				if !math.IsNaN(float64(row[0])) {
					t.Errorf("%v: row %d sees a poisoned key but is finite", im, i)
				}
				continue
			}
			if !bitsEqual(row, clean[i*d:(i+1)*d]) {
				t.Fatalf("%v: row %d (window [%d,%d)) is changed by keys it does not see", im, i, c.lo[i], c.hi[i])
			}
		}
	}
}

func TestAttendWindowsBadArgs(t *testing.T) {
	kv := KV{K: make([]float32, 32), V: make([]float32, 32), Stride: 8}
	q, out := make([]float32, 16), make([]float32, 16)
	one := AttnShape{Heads: 1, HeadDim: 8, Scale: 1}
	for name, f := range map[string]func(){
		"lo/hi lengths": func() { AttendWindows(out, 8, q, 8, kv, []int{0}, []int{1, 2}, one, nil) },
		"reversed":      func() { AttendWindows(out, 8, q, 8, kv, []int{2}, []int{1}, one, nil) },
		"negative lo":   func() { AttendWindows(out, 8, q, 8, kv, []int{-1}, []int{1}, one, nil) },
		"past keys":     func() { AttendWindows(out, 8, q, 8, kv, []int{0}, []int{5}, one, nil) },
		"short q":       func() { AttendWindows(out, 8, q[:15], 8, kv, []int{0, 0}, []int{1, 1}, one, nil) },
		"short stride":  func() { AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 4}, []int{0}, []int{1}, one, nil) },
		"ring first": func() {
			AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 8, Ring: 4, First: 4}, []int{0}, []int{1}, one, nil)
		},
		"past ring": func() {
			AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 8, Ring: 2}, []int{0}, []int{3}, one, nil)
		},
		"short ring": func() {
			AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 8, Ring: 5}, []int{0}, []int{3}, one, nil)
		},
		"head stride": func() {
			AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 4, HeadStride: 16}, []int{0}, []int{5}, AttnShape{Heads: 2, HeadDim: 4, Scale: 1}, nil)
		},
		"negative head stride": func() {
			AttendWindows(out, 8, q, 8, KV{K: kv.K, V: kv.V, Stride: 4, HeadStride: -4}, []int{0}, []int{1}, AttnShape{Heads: 2, HeadDim: 4, Scale: 1}, nil)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	// Nothing to do is fine.
	AttendWindows(nil, 0, nil, 0, KV{}, nil, nil, AttnShape{Heads: 4, HeadDim: 64, Scale: 1}, nil)
}

// TestAttendWindowsMatchesAttend: for full-precision agreement with the
// one-row kernel (both are exact to rounding, in different orders).
func TestAttendWindowsMatchesAttend(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const heads, hd, nkeys = 4, 64, 300
	d := heads * hd
	q, k, v := randVec(r, d), randVec(r, nkeys*d), randVec(r, nkeys*d)
	for _, im := range impls() {
		useImpl(t, im)
		want := make([]float32, d)
		Attend(want, q, KV{K: k, V: v, Stride: d}, nkeys, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, make([]float32, nkeys))
		got := make([]float32, d)
		AttendWindows(got, d, q, d, KV{K: k, V: v, Stride: d}, []int{0}, []int{nkeys}, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, nil)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Fatalf("%v: out[%d] = %v, Attend %v", im, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkAttendWindows is one decode step's attention at the codec's
// 400 Hz stage (32 rows, 1600-key windows, 4 heads of 64) and a whole
// sequence's rows in tiles, against the one-row kernel.
func BenchmarkAttendWindows(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	const heads, hd, ctx = 4, 64, 1600
	d := heads * hd
	for _, tc := range []struct {
		name  string
		rows  int
		nkeys int
	}{{"step32", 32, ctx + 31}, {"step4", 4, 500 + 3}, {"seq256", 256, ctx + 255}} {
		q := randVec(r, tc.rows*3*d)
		k, v := randVec(r, tc.nkeys*d), randVec(r, tc.nkeys*d)
		lo, hi := make([]int, tc.rows), make([]int, tc.rows)
		ctxN := min(ctx, tc.nkeys-tc.rows+1)
		for i := range lo {
			p := tc.nkeys - tc.rows + i
			hi[i], lo[i] = p+1, p+1-ctxN
		}
		out := make([]float32, tc.rows*d)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t=%d", tc.name, threads), func(b *testing.B) {
				useThreads(b, threads)
				var sc AttnScratch
				b.ReportAllocs()
				for b.Loop() {
					AttendWindows(out, d, q, 3*d, KV{K: k, V: v, Stride: d}, lo, hi, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, &sc)
				}
			})
			// Head-major, as the codec's rings: float32, bfloat16, and
			// bfloat16 with dot-product scores.
			hk, hv := make([]float32, tc.nkeys*d), make([]float32, tc.nkeys*d)
			for j := range tc.nkeys {
				for h := range heads {
					copy(hk[(h*tc.nkeys+j)*hd:(h*tc.nkeys+j+1)*hd], k[j*d+h*hd:])
					copy(hv[(h*tc.nkeys+j)*hd:(h*tc.nkeys+j+1)*hd], v[j*d+h*hd:])
				}
			}
			hk16, hv16 := make([]uint16, len(hk)), make([]uint16, len(hv))
			RoundBF16(hk16, hk)
			RoundBF16(hv16, hv)
			// The same in the pair layout of KV.BF16Sums.
			pairs := pairLayout(k, v, &windowCase{heads: heads, hd: hd, nkeys: tc.nkeys, lo: lo, hi: hi})
			for _, kv := range []struct {
				name string
				kv   KV
			}{
				{"headmajor", KV{K: hk, V: hv, Stride: hd, HeadStride: tc.nkeys * hd}},
				{"headmajor-bf16", KV{K16: hk16, V16: hv16, Stride: hd, HeadStride: tc.nkeys * hd}},
				{"headmajor-dot", KV{K16: hk16, V16: hv16, Stride: hd, HeadStride: tc.nkeys * hd, BF16Scores: true}},
				{"headmajor-dotpv", pairs},
			} {
				b.Run(fmt.Sprintf("%s/%s/t=%d", tc.name, kv.name, threads), func(b *testing.B) {
					useThreads(b, threads)
					var sc AttnScratch
					b.ReportAllocs()
					for b.Loop() {
						AttendWindows(out, d, q, 3*d, kv.kv, lo, hi, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, &sc)
					}
				})
			}
			b.Run(fmt.Sprintf("%s/rowwise/t=%d", tc.name, threads), func(b *testing.B) {
				useThreads(b, threads)
				sc := make([]float32, tc.nkeys)
				for b.Loop() {
					for i := range tc.rows {
						Attend(out[i*d:], q[i*3*d:], KV{K: k[lo[i]*d:], V: v[lo[i]*d:], Stride: d}, hi[i]-lo[i], AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, sc)
					}
				}
			})
		}
	}
}

// TestExp32 checks the softmax exponential within 1 ulp of float32(e^x) over
// its whole range, 0 below it, and NaN kept.
func TestExp32(t *testing.T) {
	// Every 997th float32 from −0 down to the clamp.
	for b := uint32(0x80000000); b <= math.Float32bits(exp32Lo); b += 997 {
		x := math.Float32frombits(b)
		want := float32(math.Exp(float64(x)))
		if u := ulps(exp32(x), want); u > 1 {
			t.Fatalf("exp32(%v) = %v, want %v (%d ulp)", x, exp32(x), want, u)
		}
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1))} {
		if exp32(x) != 1 {
			t.Errorf("exp32(%v) = %v", x, exp32(x))
		}
	}
	if e := exp32(exp32Lo - 0.01); e != 0 {
		t.Errorf("exp32 below the range = %v, want 0", e)
	}
	if e := exp32(float32(math.NaN())); !math.IsNaN(float64(e)) {
		t.Errorf("exp32(NaN) = %v", e)
	}
}

// TestAttendWindowsBF16 checks bfloat16 keys and values: the result equals,
// bit for bit, the float32 call over the widened values, on every
// implementation, thread count and layout (ring, head-major, strides).
func TestAttendWindowsBF16(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range windowCases(r) {
		d := c.d()
		q, k, v := randVec(r, len(c.lo)*d), randVec(r, c.nkeys*d), randVec(r, c.nkeys*d)
		bf16Exact(k, v)
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		kv := c.layout(k, v) // padding is NaN in both layouts
		kv16 := kv
		kv16.K, kv16.V = nil, nil
		kv16.K16, kv16.V16 = toBF16(kv.K), toBF16(kv.V)
		for _, im := range impls() {
			useImpl(t, im)
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				want := runWindows(&c, q, kv, scale, nil)
				got := runWindows(&c, q, kv16, scale, new(AttnScratch))
				if !bitsEqual(want, got) {
					t.Fatalf("%v %v threads=%d: bfloat16 storage differs from float32 storage of the same values", &c, im, threads)
				}
			}
		}
	}
	// Mixed storage is refused.
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for float32 keys with bfloat16 values")
		}
	}()
	AttendWindows(make([]float32, 4), 4, make([]float32, 4), 4, KV{K: make([]float32, 4), V16: make([]uint16, 4), Stride: 4}, []int{0}, []int{1}, AttnShape{Heads: 1, HeadDim: 4, Scale: 1}, nil)
}

// TestWidenBF16 checks the vector widening against the definition on every
// implementation, with lengths off the vector widths.
func TestWidenBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 100} {
		src := make([]uint16, n)
		for i := range src {
			src[i] = uint16(r.Uint32())
		}
		for _, im := range impls() {
			useImpl(t, im)
			dst := make([]float32, n+1)
			dst[n] = 42
			WidenBF16(dst[:n], src)
			for i, s := range src {
				if math.Float32bits(dst[i]) != uint32(s)<<16 {
					t.Fatalf("%v n=%d: [%d] = %08x, want %08x", im, n, i, math.Float32bits(dst[i]), uint32(s)<<16)
				}
			}
			if dst[n] != 42 {
				t.Fatalf("%v n=%d: wrote past the end", im, n)
			}
		}
	}
}

// TestAttendWindowsEveryKernel reaches every weighted-sum kernel (each
// group size, masked and unmasked, every tile width) and both scores
// kernels of each width, with float32 and bfloat16 storage: head sizes
// 1…16 put a group of exactly that size first, and staggered windows give
// every tile a run of keys all rows see as well as masked edges. Each
// implementation must match the portable code bit for bit.
func TestAttendWindowsEveryKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	const nkeys = 40
	for hd := 1; hd <= 16; hd++ {
		for _, nq := range []int{3, 8, 12, 16, 20, 32} {
			c := windowCase{heads: 2, hd: hd, nkeys: nkeys, headMajor: nq%2 == 0}
			c.lo, c.hi = make([]int, nq), make([]int, nq)
			for i := range nq {
				c.lo[i], c.hi[i] = i/3, nkeys-(nq-1-i)/3
			}
			d := c.d()
			q, k, v := randVec(r, nq*d), randVec(r, nkeys*d), randVec(r, nkeys*d)
			bf16Exact(k, v)
			kv := c.layout(k, v)
			kv16 := KV{K16: toBF16(kv.K), V16: toBF16(kv.V), Stride: kv.Stride, HeadStride: kv.HeadStride}
			useImpl(t, implGeneric)
			want := runWindows(&c, q, kv, 0.3, nil)
			for _, im := range impls()[1:] {
				useImpl(t, im)
				for name, x := range map[string]KV{"f32": kv, "bf16": kv16} {
					if got := runWindows(&c, q, x, 0.3, nil); !bitsEqual(got, want) {
						t.Fatalf("%v %v %s: differs from the portable code", &c, im, name)
					}
				}
			}
		}
	}
}

// TestAttendWindowsBF16Scores checks the dot-product scores (KV.BF16Scores): every
// implementation (the VDPBF16PS kernels of each tile width, the portable
// score loop under the AVX2 tiles, the portable rows) bit for bit the
// same, on row-major, head-major and ring layouts, blocks of keys of every
// size, head sizes up to 66; and close to the float32 scores (the queries
// lose their low 16 bits).
func TestAttendWindowsBF16Scores(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(51, 52))
	differ := false
	defer func() {
		if !differ {
			t.Error("the dot-product scores never changed a result: not in use")
		}
	}()
	for _, hd := range []int{2, 4, 8, 64, 66} {
		for _, nkeys := range []int{1, 5, 37} {
			for _, nq := range []int{3, 8, 12, 16, 20, 32, 40} {
				c := windowCase{heads: 2, hd: hd, nkeys: nkeys, headMajor: nq%2 == 0, extra: nq % 3}
				if nq%3 == 0 {
					c.ring = nkeys + r.IntN(5)
					c.first = r.IntN(c.ring)
				}
				c.lo, c.hi = randWindows(r, nq, nkeys, nq%2 == 1 && nq <= nkeys)
				d := c.d()
				q, k, v := randVec(r, nq*d), randVec(r, nkeys*d), randVec(r, nkeys*d)
				bf16Exact(k, v)
				kv := c.layout(k, v)
				dot := KV{K16: toBF16(kv.K), V16: toBF16(kv.V), Stride: kv.Stride,
					HeadStride: kv.HeadStride, Ring: kv.Ring, First: kv.First, BF16Scores: true}
				scale := float32(1 / math.Sqrt(float64(hd)))
				useImpl(t, implGeneric)
				want := runWindows(&c, q, dot, scale, nil)
				exact := runWindows(&c, q, kv, scale, nil)
				for i := range want {
					if math.Abs(float64(want[i]-exact[i])) > 0.02*(1+math.Abs(float64(exact[i]))) {
						t.Fatalf("%v: out[%d] = %v, float32 scores give %v", &c, i, want[i], exact[i])
					}
					differ = differ || want[i] != exact[i]
				}
				for _, im := range impls()[1:] {
					useImpl(t, im)
					for _, threads := range []int{1, 2} {
						SetThreads(threads)
						if got := runWindows(&c, q, dot, scale, new(AttnScratch)); !bitsEqual(got, want) {
							t.Fatalf("%v %v threads=%d: differs from the portable code", &c, im, threads)
						}
					}
				}
			}
		}
	}
	for _, tc := range []struct {
		kv KV
		hd int
	}{
		{KV{K: make([]float32, 4), V: make([]float32, 4), Stride: 4, BF16Scores: true}, 4},
		{KV{K16: make([]uint16, 3), V16: make([]uint16, 3), Stride: 3, BF16Scores: true}, 3},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("BF16Scores with %d-wide heads, bf16 %v: no panic", tc.hd, tc.kv.bf16())
				}
			}()
			AttendWindows(make([]float32, tc.hd), tc.hd, make([]float32, tc.hd), tc.hd, tc.kv, []int{0}, []int{1}, AttnShape{Heads: 1, HeadDim: tc.hd, Scale: 1}, nil)
		}()
	}
}

// pairLayout stores logical keys and values k, v [nkeys][d] head-major with
// the values in row pairs (KV.BF16Sums), keys j at rows (first+j) mod ring (an
// even ring) or j (rows rounded up to even). Rows no window's pairs reach
// hold NaN (they must never be read); the other key of an edge pair holds a
// finite value, as the contract asks.
func pairLayout(k, v []float32, c *windowCase) KV {
	d, hd := c.d(), c.hd
	rows := c.nkeys + c.nkeys%2
	if c.ring > 0 {
		rows = c.ring
	}
	rows = max(rows, 2)
	kv := KV{Stride: hd, HeadStride: (rows + c.extra) * hd, Ring: c.ring, First: c.first, BF16Scores: true, BF16Sums: true}
	size := (c.heads-1)*kv.HeadStride + rows*hd
	kv.K16, kv.V16 = make([]uint16, size), make([]uint16, size)
	for i := range kv.K16 {
		kv.K16[i], kv.V16[i] = 0x7fc0, 0x7fc0
	}
	partner := make(map[int]bool) // rows reached as the other key of a pair
	for i := range c.lo {
		if c.lo[i] < c.hi[i] {
			partner[kv.row(c.lo[i])^1] = true
			partner[kv.row(c.hi[i]-1)^1] = true
		}
	}
	for r := range partner {
		for h := range c.heads {
			for e := range hd {
				kv.V16[h*kv.HeadStride+(r&^1)*hd+2*e+r%2] = F32ToBF16(float32(r%7) - 3)
			}
		}
	}
	for j := range c.nkeys {
		r := kv.row(j)
		for h := range c.heads {
			o := h * kv.HeadStride
			for e := range hd {
				kv.K16[o+r*hd+e] = F32ToBF16(k[j*d+h*hd+e])
				kv.V16[o+(r&^1)*hd+2*e+r%2] = F32ToBF16(v[j*d+h*hd+e])
			}
		}
	}
	return kv
}

// TestAttendWindowsBF16Sums checks the dot-product weighted sums (KV.BF16Sums):
// every implementation (the pair kernels of each tile width and group
// size, masked and not, the portable pair code under the AVX2 tiles, the
// portable rows) and thread count bit for bit the same; each row the same
// alone as in its tile (odd window starts, empty windows, rings with an odd
// first row and wraps); NaN in rows no pair reaches never read; and close
// to the dot-product scores with float32 sums (the probabilities lose their
// low 16 bits).
func TestAttendWindowsBF16Sums(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(53, 54))
	differ := false
	defer func() {
		if !differ {
			t.Error("the dot-product weighted sums never changed a result: not in use")
		}
	}()
	for _, hd := range []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 34, 64} {
		for _, nkeys := range []int{1, 6, 37, 300} {
			for _, nq := range []int{3, 8, 12, 16, 20, 32, 40} {
				c := windowCase{heads: 2, hd: hd, nkeys: nkeys, headMajor: true, extra: nq % 3}
				if nq%3 != 1 {
					c.ring = nkeys + nkeys%2 + 2*r.IntN(3)
					c.first = r.IntN(c.ring)
				}
				c.lo, c.hi = randWindows(r, nq, nkeys, nq%2 == 1 && nq <= nkeys)
				d := c.d()
				q, k, v := randVec(r, nq*d), randVec(r, nkeys*d), randVec(r, nkeys*d)
				bf16Exact(k, v)
				pv := pairLayout(k, v, &c)
				scale := float32(1 / math.Sqrt(float64(hd)))
				useImpl(t, implGeneric)
				want := runWindows(&c, q, pv, scale, nil)
				dotOnly := runWindows(&c, q, KV{K16: toBF16(c.layout(k, v).K), V16: toBF16(c.layout(k, v).V), Stride: hd,
					HeadStride: c.layout(k, v).HeadStride, Ring: c.ring, First: c.first, BF16Scores: true}, scale, nil)
				for i := range want {
					if math.Abs(float64(want[i]-dotOnly[i])) > 0.02*(1+math.Abs(float64(dotOnly[i]))) {
						t.Fatalf("%v: out[%d] = %v, float32 sums give %v", &c, i, want[i], dotOnly[i])
					}
					differ = differ || want[i] != dotOnly[i]
				}
				for _, im := range impls() {
					useImpl(t, im)
					for _, threads := range []int{1, 2} {
						SetThreads(threads)
						if got := runWindows(&c, q, pv, scale, new(AttnScratch)); !bitsEqual(got, want) {
							t.Fatalf("%v %v threads=%d: differs from the portable code", &c, im, threads)
						}
					}
					// Row by row: the tile never changes a row.
					for i := range nq {
						one := c
						one.lo, one.hi = c.lo[i:i+1], c.hi[i:i+1]
						got := runWindows(&one, q[i*d:(i+1)*d], pv, scale, nil)
						if !bitsEqual(got, want[i*d:(i+1)*d]) {
							t.Fatalf("%v %v: row %d alone differs from its tile's", &c, im, i)
						}
					}
				}
			}
		}
	}
	// Layouts the pairs cannot use are refused.
	for name, kv := range map[string]KV{
		"no BF16Scores": {K16: make([]uint16, 16), V16: make([]uint16, 16), Stride: 4, HeadStride: 8, BF16Sums: true},
		"row-major":     {K16: make([]uint16, 16), V16: make([]uint16, 16), Stride: 8, BF16Scores: true, BF16Sums: true},
		"odd ring":      {K16: make([]uint16, 24), V16: make([]uint16, 24), Stride: 4, HeadStride: 12, Ring: 3, BF16Scores: true, BF16Sums: true},
		"odd rows":      {K16: make([]uint16, 12), V16: make([]uint16, 12), Stride: 4, HeadStride: 6, BF16Scores: true, BF16Sums: true},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			AttendWindows(make([]float32, 8), 8, make([]float32, 8), 8, kv, []int{0}, []int{1}, AttnShape{Heads: 2, HeadDim: 4, Scale: 1}, nil)
		}()
	}
}
