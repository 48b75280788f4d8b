package codec

import (
	"math"

	"github.com/nanovox/nanovox/internal/tensor"
)

// work holds the scratch buffers of a transformer pass over up to rows rows.
// One work serves every transformer of a stack: it is sized for the largest.
type work struct {
	h, u, att []float32 // [rows, d]: residual stream, normed input / projection output, attention output
	qkv       []float32 // [rows, 3d]
	ff        []float32 // [ffRows, ff]
	ffRows    int       // rows per MLP block
	scores    []float32 // one attention row
}

// workSize accumulates the buffer needs of several transformer passes.
type workSize struct {
	rowsD, rowsFF, ffRows, keys int
}

func (s *workSize) add(t *transformer, rows, keys, ffRows int) {
	s.rowsD = max(s.rowsD, rows*t.d)
	fr := min(rows, ffRows)
	s.ffRows = max(s.ffRows, fr)
	s.rowsFF = max(s.rowsFF, fr*t.ff)
	s.keys = max(s.keys, keys)
}

func (s *workSize) alloc() work {
	return work{
		h:      make([]float32, s.rowsD),
		u:      make([]float32, s.rowsD),
		att:    make([]float32, s.rowsD),
		qkv:    make([]float32, 3*s.rowsD),
		ff:     make([]float32, s.rowsFF),
		ffRows: max(s.ffRows, 1),
		scores: make([]float32, s.keys),
	}
}

// attendFunc fills att [n, d] for layer l from qkv [n, 3d] whose q and k
// parts are already rotated.
type attendFunc func(l int, att, qkv []float32, n int)

// forward runs the transformer on n rows of x [n, inDim] at positions
// pos0 … pos0+n−1 and writes y [n, outDim]. Everything except attention is
// row-wise (so rows of many streams could share one Linear call); attention
// is delegated to attend, which knows where the keys live (the same rows for
// a whole pass, a ring buffer for streaming).
func (t *transformer) forward(y, x []float32, n, pos0 int, w *work, attend attendFunc) {
	d := t.d
	h, u, att, qkv := w.h[:n*d], w.u[:n*d], w.att[:n*d], w.qkv[:3*n*d]
	tensor.Linear(h, x, n, t.inProj, nil) // [n, inDim] → [n, d]
	if t.sin {
		t.addSin(h, n, pos0)
	}
	for l := range t.layers {
		ly := &t.layers[l]
		// x += ls1 ⊙ out_proj(attn(LN1 x))
		tensor.LayerNorm(u, h, n, ly.n1w, ly.n1b, 1e-5)
		tensor.Linear(qkv, u, n, ly.qkv, nil) // [n, 3d] = q | k | v
		if t.rope != nil {
			for i := range n {
				r := qkv[3*i*d:]
				t.rope.Apply(r[:d], pos0+i)
				t.rope.Apply(r[d:2*d], pos0+i)
			}
		}
		attend(l, att, qkv, n)
		tensor.Linear(u, att, n, ly.out, nil)
		addScaled(h, u, ly.ls1, n, d)
		// x += ls2 ⊙ W2 gelu(W1 LN2 x), in row blocks to bound the [rows, ff] buffer
		tensor.LayerNorm(u, h, n, ly.n2w, ly.n2b, 1e-5)
		for r0 := 0; r0 < n; r0 += w.ffRows {
			nb := min(w.ffRows, n-r0)
			f := w.ff[:nb*t.ff]
			tensor.Linear(f, u[r0*d:], nb, ly.ff1, nil)
			tensor.GELUErf(f)
			tensor.Linear(att[r0*d:], f, nb, ly.ff2, nil)
		}
		addScaled(h, att, ly.ls2, n, d)
	}
	tensor.Linear(y, h, n, t.outProj, nil) // [n, d] → [n, outDim]
}

// addScaled computes h += s ⊙ x row by row (s nil: h += x).
func addScaled(h, x, s []float32, n, d int) {
	if s == nil {
		tensor.Add(h[:n*d], x)
		return
	}
	for i := range n {
		hr, xr := h[i*d:(i+1)*d], x[i*d:(i+1)*d]
		for k, v := range xr {
			hr[k] += s[k] * v
		}
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
func (t *transformer) attendWhole(att, qkv []float32, n, length int, scores []float32) {
	d, hd := t.d, t.hd
	for i := range n {
		a := att[i*d : (i+1)*d]
		if i >= length {
			clear(a)
			continue
		}
		lo := max(0, i-t.context+1)
		hi := length
		if t.causal {
			hi = i + 1
		}
		tensor.Attend(a, qkv[3*i*d:3*i*d+d], qkv[3*lo*d+d:], qkv[3*lo*d+2*d:], hi-lo, t.heads, hd, 3*d, t.scale, scores)
	}
}

// attendRing is causal attention for n new rows at positions pos0…pos0+n−1
// with keys and values kept in ring buffers kr, vr [context, d] (position p in
// slot p % context). Each row's key and value are stored before the row
// attends, so the visible window max(0, p−context+1)…p is always exactly the
// last context entries written, whatever n is.
func (t *transformer) attendRing(att, qkv []float32, n, pos0 int, kr, vr, scores []float32) {
	d, hd, ctx := t.d, t.hd, t.context
	for i := range n {
		p := pos0 + i
		r := qkv[3*i*d:]
		slot := p % ctx
		copy(kr[slot*d:(slot+1)*d], r[d:2*d])
		copy(vr[slot*d:(slot+1)*d], r[2*d:3*d])
		lo := max(0, p-ctx+1)
		cnt := p - lo + 1
		first := lo % ctx
		tensor.AttendRing(att[i*d:(i+1)*d], r[:d], kr, vr, ctx, first, cnt, t.heads, hd, d, t.scale, scores)
	}
}

// patchDown is the encoder's PatchedPretransform: [T, D] → [T/h, D·h] with
// out[t][c·h+j] = in[t·h+j][c] (upstream reshape(b, d, T/h, h).permute).
func patchDown(out, in []float32, T, D, h int) {
	if D == 1 {
		copy(out, in[:T])
		return
	}
	for t := range T / h {
		o := out[t*D*h : (t+1)*D*h]
		for j := range h {
			src := in[(t*h+j)*D : (t*h+j+1)*D]
			for c, v := range src {
				o[c*h+j] = v
			}
		}
	}
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
