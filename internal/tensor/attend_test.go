package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refAttend is the float64 reference of one query row's attention.
func refAttend(q, keys, vals []float32, rows []int, heads, hd, stride int, scale float32) []float64 {
	out := make([]float64, heads*hd)
	for h := range heads {
		s := make([]float64, len(rows))
		mx := math.Inf(-1)
		for j, r := range rows {
			var d float64
			for i := range hd {
				d += float64(q[h*hd+i]) * float64(keys[r*stride+h*hd+i])
			}
			s[j] = d * float64(scale)
			mx = math.Max(mx, s[j])
		}
		var sum float64
		for j := range s {
			s[j] = math.Exp(s[j] - mx)
			sum += s[j]
		}
		for j, r := range rows {
			for i := range hd {
				out[h*hd+i] += s[j] / sum * float64(vals[r*stride+h*hd+i])
			}
		}
	}
	return out
}

var attendShapes = []struct{ heads, hd, extra, nkeys int }{
	{1, 16, 0, 1}, {12, 64, 0, 1000}, {4, 64, 128, 777}, {2, 8, 0, 33}, {3, 24, 5, 17},
	{1, 64, 0, 15}, {2, 128, 0, 40}, {1, 192, 0, 20}, {2, 5, 1, 9}, {12, 64, 0, 0},
}

// kvShapes is attendShapes with keys, plus every head size of the
// weighted-sum kernels.
func kvShapes() []struct{ heads, hd, extra, nkeys int } {
	var shapes []struct{ heads, hd, extra, nkeys int }
	for _, tc := range attendShapes {
		if tc.nkeys > 0 && tc.hd > 0 {
			shapes = append(shapes, tc)
		}
	}
	for hd := 8; hd <= 128; hd += 8 {
		shapes = append(shapes, struct{ heads, hd, extra, nkeys int }{2, hd, 0, 37})
	}
	return shapes
}

// TestAttend checks every implementation against a float64 reference, and
// that results do not depend on the thread count.
func TestAttend(t *testing.T) {
	useThreads(t, Threads()) // restored at the end
	oldMin := parMinAttend
	t.Cleanup(func() { parMinAttend = oldMin })
	r := rand.New(rand.NewPCG(31, 32))
	for _, tc := range attendShapes {
		d := tc.heads * tc.hd
		stride := d + tc.extra
		q := randVec(r, d)
		keys, vals := randVec(r, max(tc.nkeys, 1)*stride), randVec(r, max(tc.nkeys, 1)*stride)
		scale := float32(1 / math.Sqrt(float64(tc.hd)))
		rows := make([]int, tc.nkeys)
		for i := range rows {
			rows[i] = i
		}
		want := refAttend(q, keys, vals, rows, tc.heads, tc.hd, stride, scale)
		for _, im := range impls() {
			useImpl(t, im)
			var first []float32
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				for _, pmin := range []int{0, 1 << 30} {
					parMinAttend = pmin
					out := make([]float32, d)
					for i := range out {
						out[i] = float32(math.NaN()) // must be overwritten
					}
					Attend(out, q, KV{K: keys, V: vals, Stride: stride}, tc.nkeys, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: scale}, make([]float32, tc.nkeys))
					for i, v := range out {
						if math.Abs(float64(v)-want[i]) > 2e-6 {
							t.Fatalf("%+v %v threads=%d: out[%d] = %v, want %v", tc, im, threads, i, v, want[i])
						}
					}
					if first == nil {
						first = out
					} else if !bitsEqual(first, out) {
						t.Fatalf("%+v %v: result depends on threads", tc, im)
					}
				}
			}
		}
	}
}

// TestAttendRing checks that a wrapped ring gives exactly the contiguous
// result, for every wrap position.
func TestAttendRing(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	heads, hd, ring := 4, 64, 50
	stride := heads*hd + 7
	keys, vals := randVec(r, ring*stride), randVec(r, ring*stride)
	q := randVec(r, heads*hd)
	for _, im := range impls() {
		useImpl(t, im)
		for _, nkeys := range []int{1, 17, 49, 50} {
			for first := range ring {
				// Contiguous copy of the attended rows.
				ck, cv := make([]float32, nkeys*stride), make([]float32, nkeys*stride)
				for j := range nkeys {
					src := (first + j) % ring
					copy(ck[j*stride:(j+1)*stride], keys[src*stride:(src+1)*stride])
					copy(cv[j*stride:(j+1)*stride], vals[src*stride:(src+1)*stride])
				}
				want := make([]float32, heads*hd)
				Attend(want, q, KV{K: ck, V: cv, Stride: stride}, nkeys, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, make([]float32, nkeys))
				got := make([]float32, heads*hd)
				Attend(got, q, KV{K: keys, V: vals, Stride: stride, Ring: ring, First: first}, nkeys, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, make([]float32, nkeys))
				if !bitsEqual(got, want) {
					t.Fatalf("%v nkeys=%d first=%d: ring result differs from contiguous", im, nkeys, first)
				}
			}
		}
	}
}

// TestAttendHeadMajor checks that a head-major cache (with room beyond the
// used rows) gives bit for bit what Attend gives on the position-major copy, for
// every implementation and thread count.
func TestAttendHeadMajor(t *testing.T) {
	useThreads(t, Threads())
	oldMin := parMinAttend
	t.Cleanup(func() { parMinAttend = oldMin })
	r := rand.New(rand.NewPCG(35, 36))
	for _, tc := range sampleShapes(attendShapes) {
		d := tc.heads * tc.hd
		capacity := tc.nkeys + 3
		hk, hv := randVec(r, max(tc.heads*capacity*tc.hd, 1)), randVec(r, max(tc.heads*capacity*tc.hd, 1))
		pk, pv := make([]float32, max(tc.nkeys, 1)*d), make([]float32, max(tc.nkeys, 1)*d)
		for j := range tc.nkeys {
			for h := range tc.heads {
				copy(pk[j*d+h*tc.hd:j*d+(h+1)*tc.hd], hk[(h*capacity+j)*tc.hd:])
				copy(pv[j*d+h*tc.hd:j*d+(h+1)*tc.hd], hv[(h*capacity+j)*tc.hd:])
			}
		}
		q := randVec(r, d)
		kv := KV{K: hk, V: hv, Stride: max(tc.hd, 1), HeadStride: max(capacity*tc.hd, 1)}
		for _, im := range impls() {
			useImpl(t, im)
			want := make([]float32, d)
			Attend(want, q, KV{K: pk, V: pv, Stride: d}, tc.nkeys, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, tc.nkeys))
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				for _, pmin := range []int{0, 1 << 30} {
					parMinAttend = pmin
					got := make([]float32, d)
					Attend(got, q, kv, tc.nkeys, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, tc.nkeys))
					if !bitsEqual(got, want) {
						t.Fatalf("%+v %v threads=%d: head-major result differs from Attend", tc, im, threads)
					}
					// The same rows split in two blocks of different
					// capacities (a shared prefix and a stream's own rows).
					for _, na := range []int{0, 1, tc.nkeys / 2, tc.nkeys} {
						na = min(na, tc.nkeys)
						nb := tc.nkeys - na
						bcap := nb + 5
						bk, bv := make([]float32, tc.heads*bcap*tc.hd), make([]float32, tc.heads*bcap*tc.hd)
						for j := range nb {
							for h := range tc.heads {
								copy(bk[(h*bcap+j)*tc.hd:(h*bcap+j+1)*tc.hd], hk[(h*capacity+na+j)*tc.hd:])
								copy(bv[(h*bcap+j)*tc.hd:(h*bcap+j+1)*tc.hd], hv[(h*capacity+na+j)*tc.hd:])
							}
						}
						got2 := make([]float32, d)
						AttendKV2(got2, q, kv, na, KV{K: bk, V: bv, Stride: tc.hd, HeadStride: bcap * tc.hd}, nb, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, tc.nkeys))
						if !bitsEqual(got2, want) {
							t.Fatalf("%+v %v threads=%d split %d+%d: two-block result differs from Attend", tc, im, threads, na, nb)
						}
					}
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Attend with a short cache did not panic")
		}
	}()
	Attend(make([]float32, 8), make([]float32, 8), KV{K: make([]float32, 10), V: make([]float32, 10), Stride: 4, HeadStride: 5}, 3, AttnShape{Heads: 2, HeadDim: 4, Scale: 1}, make([]float32, 3))
}

// TestAttendKVBF16 checks bfloat16 caches in AttendKV2: each block may be
// float32 or bfloat16, and the result is bit for bit that of float32 blocks
// holding the widened values, on every implementation and thread count.
func TestAttendKVBF16(t *testing.T) {
	useThreads(t, Threads())
	r := rand.New(rand.NewPCG(37, 38))
	for _, tc := range kvShapes() {
		d := tc.heads * tc.hd
		na := tc.nkeys / 3
		nb := tc.nkeys - na
		mk := func(n int) (KV, KV) {
			capacity := n + 2
			k, v := randVec(r, tc.heads*capacity*tc.hd), randVec(r, tc.heads*capacity*tc.hd)
			bf16Exact(k, v)
			f := KV{K: k, V: v, Stride: tc.hd, HeadStride: capacity * tc.hd}
			b := KV{K16: toBF16(k), V16: toBF16(v), Stride: tc.hd, HeadStride: capacity * tc.hd}
			return f, b
		}
		af, ab := mk(na)
		bf, bb := mk(nb)
		q := randVec(r, d)
		for _, im := range impls() {
			useImpl(t, im)
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				want := make([]float32, d)
				AttendKV2(want, q, af, na, bf, nb, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, tc.nkeys))
				for _, c := range []struct {
					name string
					a, b KV
				}{{"both", ab, bb}, {"prefix only", ab, bf}, {"own only", af, bb}} {
					got := make([]float32, d)
					AttendKV2(got, q, c.a, na, c.b, nb, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, tc.nkeys))
					if !bitsEqual(got, want) {
						t.Fatalf("%+v %v threads=%d %s: bfloat16 blocks differ from float32 ones", tc, im, threads, c.name)
					}
				}
			}
		}
	}
}

// TestAttnScoresPosition checks that a key's score does not depend on how
// many keys are scored with it or where it sits (blocked vs single path).
func TestAttnScoresPosition(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, hd := range []int{16, 64, 80} {
		n, stride := 70, hd+3
		q, k := randVec(r, hd), randVec(r, n*stride)
		for _, im := range impls() {
			useImpl(t, im)
			all := make([]float32, n)
			attnScores(all, q, k, stride, 0.3, nil)
			for start := range n {
				for _, cnt := range []int{1, 5, 16, 33} {
					if start+cnt > n {
						continue
					}
					part := make([]float32, cnt)
					attnScores(part, q, k[start*stride:], stride, 0.3, nil)
					if !bitsEqual(part, all[start:start+cnt]) {
						t.Fatalf("hd=%d %v: scores of keys [%d,%d) depend on the batch", hd, im, start, start+cnt)
					}
				}
			}
		}
	}
}

func TestAttendBadArgs(t *testing.T) {
	out, q := make([]float32, 8), make([]float32, 8)
	k, v := make([]float32, 16), make([]float32, 16)
	one := AttnShape{Heads: 1, HeadDim: 8, Scale: 1}
	for name, f := range map[string]func(){
		"short keys":   func() { Attend(out, q, KV{K: k[:15], V: v, Stride: 8}, 2, one, make([]float32, 2)) },
		"short scores": func() { Attend(out, q, KV{K: k, V: v, Stride: 8}, 2, one, make([]float32, 1)) },
		"ring first":   func() { Attend(out, q, KV{K: k, V: v, Stride: 8, Ring: 2, First: 2}, 1, one, make([]float32, 2)) },
		"ring keys":    func() { Attend(out, q, KV{K: k, V: v, Stride: 8, Ring: 2}, 3, one, make([]float32, 3)) },
		"bf16 ring": func() {
			Attend(out, q, KV{K16: make([]uint16, 16), V16: make([]uint16, 16), Stride: 8, Ring: 2}, 1, one, make([]float32, 2))
		},
		"head-major ring": func() {
			Attend(out, q, KV{K: k, V: v, Stride: 4, HeadStride: 8, Ring: 2}, 1, AttnShape{Heads: 2, HeadDim: 4, Scale: 1}, make([]float32, 2))
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic for inconsistent arguments", name)
				}
			}()
			f()
		}()
	}
}

func BenchmarkAttend(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name                     string
		heads, hd, nkeys, stride int
	}{
		{"lm", 12, 64, 1000, 768},
		{"codec", 4, 64, 1000, 768},
	} {
		keys, vals := randVec(r, tc.nkeys*tc.stride), randVec(r, tc.nkeys*tc.stride)
		q := randVec(r, tc.heads*tc.hd)
		out := make([]float32, tc.heads*tc.hd)
		sc := make([]float32, tc.nkeys)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/h=%d/keys=%d/t=%d", tc.name, tc.heads, tc.nkeys, threads), func(b *testing.B) {
				useThreads(b, threads)
				b.SetBytes(int64(2 * tc.nkeys * tc.heads * tc.hd * 4))
				for b.Loop() {
					Attend(out, q, KV{K: keys, V: vals, Stride: tc.stride}, tc.nkeys, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, sc)
				}
			})
		}
	}
}

// i8Block quantizes the keys and values of n rows (heads × hd, random) into
// a head-major int8 block of capacity n+2 rows, and returns it with the
// float32 block of its dequantized values, k·ks rounded to float32.
func i8Block(r *rand.Rand, n, heads, hd int) (i8, f32 KV) {
	capacity := n + 2
	k, v := randVec(r, heads*capacity*hd), randVec(r, heads*capacity*hd)
	i8 = KV{K8: make([]int8, len(k)), V8: make([]int8, len(v)), KS: make([]float32, heads*capacity), VS: make([]float32, heads*capacity), Stride: hd, HeadStride: capacity * hd}
	f32 = KV{K: k, V: v, Stride: hd, HeadStride: capacity * hd}
	for o := 0; o < len(k); o += hd {
		i8.KS[o/hd] = QuantizeI8(i8.K8[o:o+hd], k[o:o+hd])
		i8.VS[o/hd] = QuantizeI8(i8.V8[o:o+hd], v[o:o+hd])
		dequantRow(k[o:o+hd], i8.K8[o:o+hd], i8.KS[o/hd])
		dequantRow(v[o:o+hd], i8.V8[o:o+hd], i8.VS[o/hd])
	}
	return i8, f32
}

// TestAttendKVInt8 checks int8 blocks in AttendKV2: on every implementation
// the result is within float32 rounding of the float64 attention over the
// dequantized values (the int8 arithmetic scales each score and weight
// instead of each element), independent of threads and of the block split
// point's storage (a float32 prefix with an int8 own block, say); and
// AttendWindows over an int8 block gives exactly its result over the
// dequantized float32 block.
func TestAttendKVInt8(t *testing.T) {
	useThreads(t, Threads())
	oldMin := parMinAttend
	t.Cleanup(func() { parMinAttend = oldMin })
	r := rand.New(rand.NewPCG(63, 64))
	for _, tc := range sampleShapes(kvShapes()) {
		d := tc.heads * tc.hd
		na := tc.nkeys / 3
		nb := tc.nkeys - na
		ai, af := i8Block(r, na, tc.heads, tc.hd)
		bi, bf := i8Block(r, nb, tc.heads, tc.hd)
		q := randVec(r, d)
		// The float64 reference over the dequantized rows, row-major.
		keys, vals := make([]float32, tc.nkeys*d), make([]float32, tc.nkeys*d)
		rows := make([]int, tc.nkeys)
		for j := range tc.nkeys {
			rows[j] = j
			blk, jj := af, j
			if j >= na {
				blk, jj = bf, j-na
			}
			for h := range tc.heads {
				o := h*blk.HeadStride + jj*tc.hd
				copy(keys[j*d+h*tc.hd:], blk.K[o:o+tc.hd])
				copy(vals[j*d+h*tc.hd:], blk.V[o:o+tc.hd])
			}
		}
		ref := refAttend(q, keys, vals, rows, tc.heads, tc.hd, d, 0.125)
		for _, im := range impls() {
			useImpl(t, im)
			var first []float32
			for _, threads := range []int{1, 2} {
				SetThreads(threads)
				for _, pmin := range []int{0, 1 << 30} {
					parMinAttend = pmin
					for _, c := range []struct {
						name string
						a, b KV
					}{{"both", ai, bi}, {"own only", af, bi}, {"prefix only", ai, bf}} {
						got := make([]float32, d+1)
						got[d] = 42
						AttendKV2(got[:d], q, c.a, na, c.b, nb, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, make([]float32, AttendKVScratch(tc.nkeys, tc.hd)))
						if got[d] != 42 {
							t.Fatalf("%+v %v: wrote past the output", tc, im)
						}
						got = got[:d]
						for i, w := range ref {
							if math.Abs(float64(got[i])-w) > 2e-6*(1+math.Abs(w)) {
								t.Fatalf("%+v %v threads=%d %s: out[%d] = %v, float64 reference %v", tc, im, threads, c.name, i, got[i], w)
							}
						}
						if c.name != "both" {
							continue
						}
						if first == nil {
							first = got
						} else if !bitsEqual(got, first) {
							t.Fatalf("%+v %v threads=%d parMin=%d: result depends on the threads", tc, im, threads, pmin)
						}
					}
				}
			}
			// A prompt's rows over one int8 block through AttendWindows.
			lo, hi := make([]int, nb), make([]int, nb)
			qs := randVec(r, nb*d)
			for i := range nb {
				hi[i] = i + 1
			}
			want, got := make([]float32, nb*d), make([]float32, nb*d)
			AttendWindows(want, d, qs, d, bf, lo, hi, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, nil)
			AttendWindows(got, d, qs, d, bi, lo, hi, AttnShape{Heads: tc.heads, HeadDim: tc.hd, Scale: 0.125}, nil)
			if !bitsEqual(got, want) {
				t.Fatalf("%+v %v: AttendWindows over int8 differs from the dequantized float32 block", tc, im)
			}
		}
	}
}

// TestAttendKVInt8BadLayouts checks that int8 blocks the kernels cannot
// read are refused.
func TestAttendKVInt8BadLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	good, _ := i8Block(r, 4, 2, 8)
	for _, c := range []struct {
		name string
		mod  func(kv *KV)
	}{
		{"row-major", func(kv *KV) { kv.Stride, kv.HeadStride = 16, 8 }},
		{"overlapping heads", func(kv *KV) { kv.HeadStride = 16 }},
		{"no value scales", func(kv *KV) { kv.VS = nil }},
		{"short key scales", func(kv *KV) { kv.KS = kv.KS[:6] }},
		{"short values", func(kv *KV) { kv.V8 = kv.V8[:40] }},
		{"float32 values too", func(kv *KV) { kv.V = make([]float32, 100) }},
		{"ring", func(kv *KV) { kv.Ring = 6 }},
	} {
		for _, call := range []string{"AttendKV2", "AttendWindows"} {
			kv := good
			c.mod(&kv)
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with %s: no panic", call, c.name)
					}
				}()
				out, q := make([]float32, 16), make([]float32, 16)
				if call == "AttendKV2" {
					AttendKV2(out, q, kv, 4, KV{}, 0, AttnShape{Heads: 2, HeadDim: 8, Scale: 1}, make([]float32, 300))
				} else {
					AttendWindows(out, 16, q, 16, kv, []int{0}, []int{4}, AttnShape{Heads: 2, HeadDim: 8, Scale: 1}, nil)
				}
			}()
		}
	}
}

// BenchmarkAttendKV is a decode step's attention of the language model
// (12 heads × 64, an 80-row voice prefix then 220 own rows) over float32,
// bfloat16 and int8 caches, hot (one cache) and cold (96 caches, the 8
// streams × 12 layers of a batched step, cycled through: 21–85 MB).
func BenchmarkAttendKV(b *testing.B) {
	const heads, hd, na, nb = 12, 64, 80, 220
	r := rand.New(rand.NewPCG(3, 3))
	q := randVec(r, heads*hd)
	out := make([]float32, heads*hd)
	sc := make([]float32, AttendKVScratch(na+nb, hd))
	for _, store := range []string{"f32", "bf16", "int8"} {
		for _, ncache := range []int{1, 96} {
			type pair struct{ a, b KV }
			caches := make([]pair, ncache)
			for i := range caches {
				ai, af := i8Block(r, na, heads, hd)
				bi, bf := i8Block(r, nb, heads, hd)
				switch store {
				case "f32":
					caches[i] = pair{af, bf}
				case "bf16":
					caches[i] = pair{KV{K16: toBF16(af.K), V16: toBF16(af.V), Stride: hd, HeadStride: af.HeadStride}, KV{K16: toBF16(bf.K), V16: toBF16(bf.V), Stride: hd, HeadStride: bf.HeadStride}}
				default:
					caches[i] = pair{ai, bi}
				}
			}
			b.Run(fmt.Sprintf("%s/caches=%d", store, ncache), func(b *testing.B) {
				useThreads(b, 1)
				i := 0
				for b.Loop() {
					c := &caches[i%ncache]
					AttendKV2(out, q, c.a, na, c.b, nb, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, sc)
					i++
				}
			})
		}
	}
}
