package tensor

import "math"

// RoPE applies rotary position embeddings to interleaved pairs (2i, 2i+1) of
// each head, the convention of both MOSS-TTS-Nano and its codec:
//
//	y[2i]   = x[2i]·cos(p·f_i) − x[2i+1]·sin(p·f_i)
//	y[2i+1] = x[2i+1]·cos(p·f_i) + x[2i]·sin(p·f_i),   f_i = base^(−2i/headDim)
//
// Angles are computed in float64. The cos/sin of positions below the table
// size are precomputed once; later positions are computed on the fly. A RoPE
// is immutable after NewRoPE and safe for concurrent use.
type RoPE struct {
	HeadDim int
	invFreq []float64
	table   int
	cos     []float32 // [pos][headDim/2]
	sin     []float32
}

// NewRoPE returns a RoPE for heads of size headDim with the given base (max
// period), with a table for positions [0, table).
func NewRoPE(headDim int, base float64, table int) *RoPE {
	half := headDim / 2
	r := &RoPE{HeadDim: headDim, invFreq: make([]float64, half), table: table}
	for i := range half {
		r.invFreq[i] = math.Pow(base, -float64(2*i)/float64(headDim))
	}
	r.cos = make([]float32, table*half)
	r.sin = make([]float32, table*half)
	for p := range table {
		r.angles(p, r.cos[p*half:(p+1)*half], r.sin[p*half:(p+1)*half])
	}
	return r
}

func (r *RoPE) angles(pos int, cos, sin []float32) {
	for i, f := range r.invFreq {
		s, c := math.Sincos(float64(pos) * f)
		cos[i] = float32(c)
		sin[i] = float32(s)
	}
}

// Apply rotates x, which holds whole heads of HeadDim values, for position pos.
func (r *RoPE) Apply(x []float32, pos int) {
	half := len(r.invFreq)
	if pos < r.table {
		r.Rotate(x, r.cos[pos*half:(pos+1)*half], r.sin[pos*half:(pos+1)*half])
		return
	}
	var cbuf, sbuf [256]float32
	var cs, sn []float32
	if half <= len(cbuf) {
		cs, sn = cbuf[:half], sbuf[:half]
	} else {
		cs, sn = make([]float32, half), make([]float32, half)
	}
	r.angles(pos, cs, sn)
	r.Rotate(x, cs, sn)
}

// PairAngles writes the angles of position pos in the pair form of
// RotatePairs (HeadDim values each): c[2i] = c[2i+1] = cos θ_i, s[2i] =
// −sin θ_i, s[2i+1] = sin θ_i.
func (r *RoPE) PairAngles(pos int, c, s []float32) {
	half := len(r.invFreq)
	c, s = c[:2*half], s[:2*half]
	var cbuf, sbuf [256]float32
	cs, sn := cbuf[:], sbuf[:]
	if half > len(cbuf) {
		cs, sn = make([]float32, half), make([]float32, half)
	}
	r.Angles(pos, cs, sn)
	for i := range half {
		c[2*i], c[2*i+1] = cs[i], cs[i]
		s[2*i], s[2*i+1] = -sn[i], sn[i]
	}
}

// RotatePairs is Rotate with the angles of PairAngles, bit for bit: each
// value is the sum of two rounded products, x[2i]·c[2i] + x[2i+1]·s[2i] and
// x[2i+1]·c[2i+1] + x[2i]·s[2i+1] (a·cos + b·(−sin) is a·cos − b·sin
// exactly). The vector kernels rotate a whole head per pass.
func (r *RoPE) RotatePairs(x, c, s []float32) {
	hd := r.HeadDim
	heads := len(x) / max(hd, 1)
	if heads == 0 {
		return
	}
	c, s = c[:hd], s[:hd]
	if ropePairsSIMD(x[:heads*hd], c, s, heads) {
		return
	}
	for h := range heads {
		v := x[h*hd : (h+1)*hd]
		for i := 0; i+1 < hd; i += 2 {
			a, b := v[i], v[i+1]
			v[i] = float32(a*c[i]) + float32(b*s[i])
			v[i+1] = float32(b*c[i+1]) + float32(a*s[i+1])
		}
	}
}

// Angles writes the cosines and sines (HeadDim/2 each) of position pos, for
// Rotate: Apply(x, pos) is Rotate(x, cos, sin) with these, bit for bit.
// Callers rotating several vectors at one position compute them once.
func (r *RoPE) Angles(pos int, cos, sin []float32) {
	half := len(r.invFreq)
	cos, sin = cos[:half], sin[:half]
	if pos < r.table {
		copy(cos, r.cos[pos*half:(pos+1)*half])
		copy(sin, r.sin[pos*half:(pos+1)*half])
		return
	}
	r.angles(pos, cos, sin)
}

// Rotate rotates x, which holds whole heads of HeadDim values, by the
// angles of one position from Angles.
func (r *RoPE) Rotate(x, cos, sin []float32) {
	half := len(r.invFreq)
	cs, sn := cos[:half], sin[:half]
	for h := 0; h+r.HeadDim <= len(x); h += r.HeadDim {
		v := x[h : h+r.HeadDim]
		for i := range half {
			// Products rounded before the sums (float32(…)), as in
			// RotatePairs: Go may fuse a*b-c into one FMA on arm64.
			a, b := v[2*i], v[2*i+1]
			v[2*i] = float32(a*cs[i]) - float32(b*sn[i])
			v[2*i+1] = float32(b*cs[i]) + float32(a*sn[i])
		}
	}
}
