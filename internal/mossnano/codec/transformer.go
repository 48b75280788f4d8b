package codec

import (
	"context"
	"math"

	"github.com/nanovox/nanovox/internal/freelist"
	"github.com/nanovox/nanovox/internal/tensor"
)

// work holds the scratch buffers of a transformer pass over up to rows rows.
// One work serves every transformer of a stack: it is sized for the largest.
type work struct {
	h, u, att []float32 // [rows, d]: residual stream, normed input / projection output, attention output
	qkv       []float32 // [rows, 3d]
	ff        []float32 // [min(rows, mlpRows), ff]: the MLP's activations when it runs unblocked
	cos, sin  []float32 // [rows, hd]: RoPE angles of the pass's rows (tensor.RoPE.PairAngles)
	lo, hi    []int     // [rows]: attention windows
	attn      tensor.AttnScratch
	k16, v16  []uint16 // [heads][rows rounded up to even][hd]: a whole pass's keys and values as bfloat16, the values in row pairs (transformer.dot)
	// ctx, when not nil, is checked between layers: a long pass (the
	// encoder over a 30 s clip) stops early once it is done, leaving its
	// output unfinished for the caller to discard.
	ctx context.Context
}

// workSize accumulates the buffer needs of several transformer passes.
type workSize struct {
	rows, rowsD, rowsFF, rowsHD int
}

func (s *workSize) add(t *transformer, rows int) {
	s.rows = max(s.rows, rows)
	s.rowsD = max(s.rowsD, rows*t.d)
	s.rowsFF = max(s.rowsFF, min(rows, mlpRows)*t.ff)
	if t.rope != nil {
		s.rowsHD = max(s.rowsHD, rows*t.hd)
	}
}

func (s *workSize) alloc() work {
	var w work
	s.fit(&w)
	return w
}

// fit sizes w's buffers for s, keeping those already big enough (their
// contents are stale: every pass writes before it reads).
func (s *workSize) fit(w *work) {
	w.h = resize(w.h, s.rowsD)
	w.u = resize(w.u, s.rowsD)
	w.att = resize(w.att, s.rowsD)
	w.qkv = resize(w.qkv, 3*s.rowsD)
	w.ff = resize(w.ff, s.rowsFF)
	w.cos = resize(w.cos, s.rowsHD)
	w.sin = resize(w.sin, s.rowsHD)
	w.lo = resize(w.lo, s.rows)
	w.hi = resize(w.hi, s.rows)
}

// resize returns b with length n, reallocated only if its capacity is
// smaller; the contents are not preserved or cleared.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// passBufs are the buffers of a whole-sequence pass: the transformers'
// scratch and two stage buffers used in turn as input and output.
type passBufs struct {
	w    work
	x, y []float32
}

// span is a run of rows of one stream in a pass: rows [row, row+n) are at
// positions pos … pos+n−1.
type span struct{ row, n, pos int }

// forward runs the transformer on n rows of x [n, inDim] and writes
// y [n, outDim]. spans place the rows: one span for a whole sequence, one per
// stream when the rows of several streams are decoded together. Everything
// except attention and the positional parts is row-wise, so it runs once over
// all rows; attention runs per span against rings[i] (streaming), or, with
// rings nil, over the rows themselves with the first length rows valid
// (a whole sequence at position 0).
func (t *transformer) forward(y, x []float32, n int, spans []span, w *work, rings []*ringState, length int) {
	d := t.d
	h, u, att, qkv := w.h[:n*d], w.u[:n*d], w.att[:n*d], w.qkv[:3*n*d]
	tensor.Linear(h, x, n, t.inProj, nil) // [n, inDim] → [n, d]
	if t.sin {
		for _, sp := range spans {
			t.addSin(h[sp.row*d:], sp.n, sp.pos)
		}
	}
	hd := t.hd
	if t.rope != nil {
		// The angles of a row serve q and k of every layer.
		for _, sp := range spans {
			for i := range sp.n {
				r := sp.row + i
				t.rope.PairAngles(sp.pos+i, w.cos[r*hd:(r+1)*hd], w.sin[r*hd:(r+1)*hd])
			}
		}
	}
	for l := range t.layers {
		if w.ctx != nil && w.ctx.Err() != nil {
			return
		}
		ly := &t.layers[l]
		// x += ls1 ⊙ out_proj(attn(LN1 x))
		tensor.LayerNorm(u, h, n, ly.n1w, ly.n1b, 1e-5)
		tensor.Linear(qkv, u, n, ly.qkv, nil) // [n, 3d] = q | k | v
		if t.rope != nil {
			tensor.For(n, rowGrain(3*d), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					r := qkv[3*i*d:]
					cs, sn := w.cos[i*hd:(i+1)*hd], w.sin[i*hd:(i+1)*hd]
					t.rope.RotatePairs(r[:d], cs, sn)
					t.rope.RotatePairs(r[d:2*d], cs, sn)
				}
			})
		}
		if rings == nil {
			t.attendWhole(att, qkv, n, length, w)
		} else {
			for s, sp := range spans {
				t.attendRing(att[sp.row*d:], qkv[3*sp.row*d:], sp.n, sp.pos, rings[s], l, w)
			}
		}
		tensor.Linear(u, att, n, ly.out, nil)
		addScaled(h, u, ly.ls1, n, d)
		// x += ls2 ⊙ W2 gelu(W1 LN2 x)
		t.mlp(h, u, att, n, ly, w.ff)
	}
	tensor.Linear(y, h, n, t.outProj, nil) // [n, d] → [n, outDim]
}

// mlpRows is the row block of the MLP in passes with more rows than that:
// each block's whole MLP (norm, both products, GELU, residual) runs on one
// goroutine, the blocks spread over the pool, so that the block's [rows, ff]
// activations (256 KiB) stay in that core's cache between the steps and no
// product waits for the other thread. A whole-sequence pass (encode: 5 s of
// audio is 2000 rows at the first stage) takes this path; so does a decode
// step of many streams (32 rows each at the last stage).
var mlpRows = 64 // tests lower it to block small passes

// ffBufs keeps the [mlpRows, ff] activations of the blocks in flight (as
// many as ever ran at once).
var ffBufs freelist.List[*[]float32]

// mlp computes h += ls2 ⊙ W2 gelu(W1 LN2 h) for n rows, with u and out [n,
// d] as scratch and ff at least [min(n, mlpRows), ff]. Every row's values are
// the same whatever the blocking (the products, norm and GELU are row-wise),
// so a row decoded alone equals the same row in a batch or a whole pass.
func (t *transformer) mlp(h, u, out []float32, n int, ly *layer, ff []float32) {
	d := t.d
	if n <= mlpRows {
		tensor.LayerNorm(u, h, n, ly.n2w, ly.n2b, 1e-5)
		f := ff[:n*t.ff]
		tensor.Linear(f, u, n, ly.ff1, nil)
		tensor.GELUErf(f)
		tensor.Linear(out, f, n, ly.ff2, nil)
		addScaled(h, out, ly.ls2, n, d)
		return
	}
	tensor.For(n, mlpRows, func(lo, hi int) {
		fp, ok := ffBufs.Get()
		if !ok {
			fp = new([]float32)
		}
		defer ffBufs.Put(fp)
		if len(*fp) < mlpRows*t.ff {
			*fp = make([]float32, mlpRows*t.ff)
		}
		// For hands out runs of mlpRows rows, or all of them on one thread.
		for b0 := lo; b0 < hi; b0 += mlpRows {
			b1 := min(b0+mlpRows, hi)
			nb := b1 - b0
			f := (*fp)[:nb*t.ff]
			hb, ub, ob := h[b0*d:b1*d], u[b0*d:b1*d], out[b0*d:b1*d]
			tensor.LayerNorm(ub, hb, nb, ly.n2w, ly.n2b, 1e-5) // below the size it splits at
			tensor.LinearSerial(f, ub, nb, ly.ff1, nil)
			for i := range nb {
				tensor.GELUErf(f[i*t.ff : (i+1)*t.ff]) // a row at a time: never split
			}
			tensor.LinearSerial(ob, f, nb, ly.ff2, nil)
			addScaledRows(hb, ob, ly.ls2, 0, nb, d)
		}
	})
}

// interleave writes the pair layout of two rows: dst[2c] = a[c],
// dst[2c+1] = b[c].
func interleave(dst, a, b []uint16) {
	dst = dst[:2*len(a)]
	b = b[:len(a)]
	for c, x := range a {
		dst[2*c], dst[2*c+1] = x, b[c]
	}
}

// rowGrain is how many rows of width floats make one run of tensor.For in
// the row-wise loops of a whole-sequence pass (about 32 KiB each): small
// passes (a decode step) stay on the calling goroutine.
func rowGrain(width int) int { return max(8192/max(width, 1), 1) }

// addScaled computes h += s ⊙ x row by row (s nil: h += x).
func addScaled(h, x, s []float32, n, d int) {
	if s == nil {
		tensor.Add(h[:n*d], x)
		return
	}
	tensor.For(n, rowGrain(d), func(lo, hi int) { addScaledRows(h, x, s, lo, hi, d) })
}

// addScaledRows is addScaled for rows [lo, hi), on the calling goroutine.
func addScaledRows(h, x, s []float32, lo, hi, d int) {
	if s == nil {
		tensor.Add(h[lo*d:hi*d], x[lo*d:hi*d])
		return
	}
	for i := lo; i < hi; i++ {
		tensor.AddMul(h[i*d:(i+1)*d], s, x[i*d:(i+1)*d])
	}
}

// addSin adds positional_scale · [cos(p/mp^(k/(half−1))), sin(…)], k < half,
// to each row (upstream create_sin_embedding), computed in float64.
func (t *transformer) addSin(h []float32, n, pos0 int) {
	d := t.d
	half := d / 2
	sc := float64(t.sinScale)
	for i := range n {
		p := float64(pos0 + i)
		row := h[i*d : (i+1)*d]
		for k := range half {
			s, c := math.Sincos(p / math.Pow(t.maxPeriod, float64(k)/float64(half-1)))
			row[k] += float32(sc * c)
			row[half+k] += float32(sc * s)
		}
	}
}

// attendWhole is attention over a whole sequence of n rows (positions 0…n−1)
// of which the first length are valid: query i sees key j iff j < length,
// i−j < context and, when causal, j <= i. Rows i >= length are set to zero,
// as upstream does before out_proj (so padded rows stay finite).
func (t *transformer) attendWhole(att, qkv []float32, n, length int, w *work) {
	d := t.d
	m := min(n, length)
	lo, hi := w.lo[:m], w.hi[:m]
	for i := range m {
		lo[i] = max(0, i-t.context+1)
		hi[i] = length
		if t.causal {
			hi[i] = i + 1
		}
	}
	if m > 0 {
		kv := tensor.KV{K: qkv[d:], V: qkv[2*d:], Stride: 3 * d}
		if t.dot {
			// Keys and values rounded and laid out as a streaming ring
			// stores them: head-major, the values in row pairs (rows
			// rounded up to even; an odd last row's partner is zero).
			hd, me := t.hd, m+m%2
			w.k16, w.v16 = resize(w.k16, me*d), resize(w.v16, me*d)
			k16, v16 := w.k16, w.v16
			tensor.For(me/2, rowGrain(4*d), func(a, b int) {
				var stack [3 * 512]uint16
				tmp := stack[:]
				if 3*d > len(tmp) {
					tmp = make([]uint16, 3*d)
				}
				kr, v0, v1 := tmp[:d], tmp[d:2*d], tmp[2*d:3*d]
				for p := a; p < b; p++ {
					i := 2 * p
					tensor.RoundBF16(v0, qkv[(3*i+2)*d:(3*i+3)*d])
					if i+1 < m {
						tensor.RoundBF16(v1, qkv[(3*i+5)*d:(3*i+6)*d])
					} else {
						clear(v1)
					}
					for r := i; r < min(i+2, m); r++ {
						tensor.RoundBF16(kr, qkv[(3*r+1)*d:(3*r+2)*d])
						for h := range t.heads {
							copy(k16[h*me*hd+r*hd:][:hd], kr[h*hd:])
						}
					}
					for h := range t.heads {
						interleave(v16[h*me*hd+i*hd:][:2*hd], v0[h*hd:(h+1)*hd], v1[h*hd:(h+1)*hd])
					}
				}
			})
			kv = tensor.KV{K16: k16, V16: v16, Stride: hd, HeadStride: me * hd, BF16Scores: true, BF16Sums: true}
		}
		tensor.AttendWindows(att, d, qkv, 3*d, kv, lo, hi, tensor.AttnShape{Heads: t.heads, HeadDim: t.hd, Scale: t.scale}, &w.attn)
	}
	clear(att[m*d : n*d])
}

// attendRing is causal attention for n new rows at positions pos0…pos0+n−1
// whose keys and values join the stream's ring buffers for layer l. The rows
// go in groups small enough that the ring holds every key a group sees:
// a group's keys and values are stored, then the group attends.
func (t *transformer) attendRing(att, qkv []float32, n, pos0 int, rs *ringState, l int, w *work) {
	d, ctx := t.d, t.context
	kv := rs.layers[l]
	for i0 := 0; i0 < n; i0 += rs.group {
		i1 := min(i0+rs.group, n)
		p0 := pos0 + i0
		for i := i0; i < i1; i++ {
			r := qkv[3*i*d:]
			rs.store(l, pos0+i, r[d:2*d], r[2*d:3*d])
		}
		// Logical key j is position base+j.
		base := max(0, p0-ctx+1)
		lo, hi := w.lo[:i1-i0], w.hi[:i1-i0]
		for i := range lo {
			p := p0 + i
			lo[i] = max(0, p-ctx+1) - base
			hi[i] = p + 1 - base
		}
		kv.First = base % rs.ring
		tensor.AttendWindows(att[i0*d:], d, qkv[3*i0*d:], 3*d, kv, lo, hi, tensor.AttnShape{Heads: t.heads, HeadDim: t.hd, Scale: t.scale}, &w.attn)
	}
}

// patchDown is the encoder's PatchedPretransform: [T, D] → [T/h, D·h] with
// out[t][c·h+j] = in[t·h+j][c] (upstream reshape(b, d, T/h, h).permute).
func patchDown(out, in []float32, T, D, h int) {
	if D == 1 {
		copy(out, in[:T])
		return
	}
	tensor.For(T/h, rowGrain(D*h), func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o := out[t*D*h : (t+1)*D*h]
			for j := range h {
				src := in[(t*h+j)*D : (t*h+j+1)*D]
				for c, v := range src {
					o[c*h+j] = v
				}
			}
		}
	})
}

// patchUp is the decoder's PatchedPretransform: [T, D] → [T·h, D/h] with
// out[t·h+j][c] = in[t][c·h+j].
func patchUp(out, in []float32, T, D, h int) {
	if D == h {
		copy(out, in[:T*D])
		return
	}
	dc := D / h
	for t := range T {
		src := in[t*D : (t+1)*D]
		for j := range h {
			o := out[(t*h+j)*dc : (t*h+j+1)*dc]
			for c := range o {
				o[c] = src[c*h+j]
			}
		}
	}
}
