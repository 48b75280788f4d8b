package tensor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzLinear checks Linear on fuzzed shapes against the float64 reference,
// and that every row computed alone equals the batched row, with the kernels
// the machine selects (run with -tags purego for the portable ones).
func FuzzLinear(f *testing.F) {
	for _, s := range []struct {
		m, n, k uint8
		bf16    bool
	}{{1, 1, 1, false}, {0, 5, 3, false}, {3, 0, 3, true}, {2, 7, 0, false}, {9, 33, 17, true},
		{17, 255, 255, false}, {40, 32, 16, true}, {1, 31, 1, true}, {8, 64, 64, false}} {
		f.Add(s.m, s.n, s.k, s.bf16, uint64(1))
	}
	f.Fuzz(func(t *testing.T, m8, n8, k8 uint8, bf16 bool, seed uint64) {
		m, n, k := int(m8%48), int(n8), int(k8)
		r := rand.New(rand.NewPCG(seed, 7))
		x := randVec(r, m*k)
		bias := randVec(r, n)
		tm := testMats(r, n, k)[0]
		if bf16 {
			tm = testMats(r, n, k)[1]
		}
		w := tm.mk()
		w.Pack()
		y := make([]float32, m*n)
		Linear(y, x, m, w, bias)
		want := refLinear(x, tm.vals, bias, m, n, k)
		for i, v := range y {
			if math.Abs(float64(v)-want[i]) > 4e-6*(1+float64(k)) {
				t.Fatalf("[%d %d %d]: y[%d] = %v, want %v", m, n, k, i, v, want[i])
			}
		}
		one := make([]float32, n)
		for i := range m {
			Linear(one, x[i*k:(i+1)*k], 1, w, bias)
			if !slices.Equal(one, y[i*n:(i+1)*n]) {
				t.Fatalf("[%d %d %d]: row %d alone differs from the batch", m, n, k, i)
			}
		}
	})
}

// FuzzLinearInt8 checks the int8 Linear on fuzzed shapes and value scales
// (tiny, huge, with a non-finite input) against refInt8 bit for bit, and
// that every row computed alone equals the batched row, on every kernel set
// that runs the layout here.
func FuzzLinearInt8(f *testing.F) {
	for _, s := range []struct {
		m, n, k uint8
		scale   int8
	}{{1, 1, 1, 0}, {0, 5, 3, 0}, {3, 0, 3, 0}, {2, 7, 0, 0}, {9, 33, 17, -120}, {17, 255, 255, 120},
		{40, 32, 16, 0}, {1, 31, 1, 3}, {8, 64, 64, -3}, {5, 40, 70, 127}} {
		f.Add(s.m, s.n, s.k, s.scale, uint64(1))
	}
	f.Fuzz(func(t *testing.T, m8, n8, k8 uint8, scale int8, seed uint64) {
		m, n, k := int(m8%48), int(n8), int(k8)
		r := rand.New(rand.NewPCG(seed, 9))
		x := randVec(r, m*k)
		f := float32(math.Pow(2, float64(scale)))
		for i := range x {
			x[i] *= f
		}
		if scale == 127 && len(x) > 0 {
			x[int(seed%uint64(len(x)))] = float32(math.Inf(1))
		}
		bias := randVec(r, n)
		tm := testMats(r, n, k)[seed%2]
		want := refInt8(x, tm.vals, bias, m, n, k)
		for _, im := range i8Impls() {
			useImpl(t, im)
			w := tm.mk()
			w.PackInt8()
			y := make([]float32, m*n)
			Linear(y, x, m, w, bias)
			for i, v := range y {
				if math.Float32bits(v) != math.Float32bits(want[i]) && !(v != v && want[i] != want[i]) {
					t.Fatalf("%v [%d %d %d] scale 2^%d: y[%d] = %v, want %v", im, m, n, k, scale, i, v, want[i])
				}
			}
			one := make([]float32, n)
			for i := range m {
				Linear(one, x[i*k:(i+1)*k], 1, w, bias)
				for j := range one {
					if math.Float32bits(one[j]) != math.Float32bits(y[i*n+j]) {
						t.Fatalf("%v [%d %d %d]: row %d alone differs from the batch", im, m, n, k, i)
					}
				}
			}
		}
	})
}

// FuzzAttendRing checks that the ring form equals the contiguous form bit
// for bit and stays close to the float64 reference.
func FuzzAttendRing(f *testing.F) {
	f.Add(uint8(1), uint8(16), uint8(1), uint8(1), uint8(0), uint64(1))
	f.Add(uint8(4), uint8(64), uint8(50), uint8(49), uint8(13), uint64(2))
	f.Add(uint8(2), uint8(5), uint8(3), uint8(0), uint8(2), uint64(3))
	f.Add(uint8(3), uint8(24), uint8(40), uint8(40), uint8(39), uint64(4))
	f.Fuzz(func(t *testing.T, heads8, hd8, ring8, n8, first8 uint8, seed uint64) {
		heads, hd, ring := int(heads8%6)+1, int(hd8%130)+1, int(ring8%70)+1
		nkeys, first := int(n8)%(ring+1), int(first8)%ring
		stride := heads*hd + int(seed%3)
		r := rand.New(rand.NewPCG(seed, 9))
		keys, vals := randVec(r, ring*stride), randVec(r, ring*stride)
		q := randVec(r, heads*hd)
		rows := make([]int, nkeys)
		ck, cv := make([]float32, max(nkeys, 1)*stride), make([]float32, max(nkeys, 1)*stride)
		for j := range rows {
			rows[j] = (first + j) % ring
			copy(ck[j*stride:(j+1)*stride], keys[rows[j]*stride:])
			copy(cv[j*stride:(j+1)*stride], vals[rows[j]*stride:])
		}
		scale := float32(1 / math.Sqrt(float64(hd)))
		got := make([]float32, heads*hd)
		Attend(got, q, KV{K: keys, V: vals, Stride: stride, Ring: ring, First: first}, nkeys, AttnShape{Heads: heads, HeadDim: hd, Scale: scale}, make([]float32, nkeys))
		want := make([]float32, heads*hd)
		Attend(want, q, KV{K: ck, V: cv, Stride: stride}, nkeys, AttnShape{Heads: heads, HeadDim: hd, Scale: scale}, make([]float32, nkeys))
		if !bitsEqual(got, want) {
			t.Fatalf("ring differs from contiguous")
		}
		ref := refAttend(q, keys, vals, rows, heads, hd, stride, scale)
		for i, v := range got {
			if math.Abs(float64(v)-ref[i]) > 1e-5 {
				t.Fatalf("out[%d] = %v, want %v", i, v, ref[i])
			}
		}
	})
}

// FuzzAttendWindows checks AttendWindows on fuzzed shapes, windows and
// layouts: every row equals the same row computed alone (in a plain
// contiguous layout) bit for bit, and stays close to the float64 reference.
func FuzzAttendWindows(f *testing.F) {
	f.Add(uint8(1), uint8(16), uint8(1), uint8(1), uint8(0), false, uint64(1))
	f.Add(uint8(4), uint8(64), uint8(33), uint8(70), uint8(13), true, uint64(2))
	f.Add(uint8(2), uint8(5), uint8(17), uint8(3), uint8(2), false, uint64(3))
	f.Add(uint8(3), uint8(24), uint8(40), uint8(40), uint8(0), true, uint64(4))
	f.Add(uint8(1), uint8(1), uint8(9), uint8(0), uint8(0), false, uint64(5)) // no keys at all
	f.Fuzz(func(t *testing.T, heads8, hd8, nq8, nkeys8, ring8 uint8, headMajor bool, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 9))
		c := windowCase{heads: int(heads8%5) + 1, hd: int(hd8%80) + 1, extra: int(seed % 3), nkeys: int(nkeys8 % 90), headMajor: headMajor}
		nq := int(nq8 % 50)
		if ring8%3 == 1 && c.nkeys > 0 {
			c.ring = c.nkeys + int(ring8%7)
			c.first = int(seed>>8) % c.ring
		}
		c.lo, c.hi = randWindows(r, nq, max(c.nkeys, 0), nq8%2 == 1 && nq <= c.nkeys)
		if c.nkeys == 0 {
			clear(c.lo)
			clear(c.hi)
		}
		d := c.d()
		q, k, v := randVec(r, nq*d), randVec(r, c.nkeys*d), randVec(r, c.nkeys*d)
		scale := float32(1 / math.Sqrt(float64(c.hd)))
		got := runWindows(&c, q, c.layout(k, v), scale, nil)
		want := refWindows(q, k, v, &c, scale)
		for i, g := range got {
			if !(math.Abs(float64(g)-want[i]) <= 3e-6) {
				t.Fatalf("%v: out[%d] = %v, want %v", &c, i, g, want[i])
			}
		}
		for i := range nq {
			one := c
			one.extra, one.ring, one.first, one.headMajor = 0, 0, 0, false
			one.lo, one.hi = c.lo[i:i+1], c.hi[i:i+1]
			alone := runWindows(&one, q[i*d:(i+1)*d], one.layout(k, v), scale, nil)
			if !bitsEqual(alone, got[i*d:(i+1)*d]) {
				t.Fatalf("%v: row %d alone differs", &c, i)
			}
		}
	})
}
