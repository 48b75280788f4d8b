package codec

import (
	"fmt"
	"math"

	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/weights"
)

// quantizer is the residual LFQ: input_proj (input → rvq), num_quantizers
// stages each with in_proj (rvq → codebook_dim), a codebook and out_proj
// (codebook_dim → rvq), then output_proj (rvq → output). Projections whose
// dimensions match are identities (nil), as OpenMOSS builds them.
type quantizer struct {
	in, rvq, out, cd, size int
	inProj, outProj        *wnLinear
	stages                 []lfq
}

type lfq struct {
	inProj, outProj *wnLinear
	codebook        []float32 // [size, cd], raw rows (decode uses these)
	unit            []float64 // [size, cd], rows scaled to unit length (encode search)
	unitSq          []float64 // [size], squared norms of unit rows (1, or 0 for a zero row)
}

func (q *quantizer) load(st *weights.Store, c *QuantizerConfig) error {
	q.in, q.rvq, q.out, q.cd, q.size = c.InputDim, c.RVQDim, c.OutputDim, c.CodebookDim, c.CodebookSize
	var err error
	if q.in != q.rvq {
		if q.inProj, err = loadWN(st, "quantizer.input_proj", q.rvq, q.in); err != nil {
			return err
		}
	}
	if q.rvq != q.out {
		if q.outProj, err = loadWN(st, "quantizer.output_proj", q.out, q.rvq); err != nil {
			return err
		}
	}
	q.stages = make([]lfq, c.NumQuantizers)
	for j := range q.stages {
		s := &q.stages[j]
		p := fmt.Sprintf("quantizer.quantizers.%d.", j)
		if q.rvq != q.cd {
			if s.inProj, err = loadWN(st, p+"in_proj", q.cd, q.rvq); err != nil {
				return err
			}
			if s.outProj, err = loadWN(st, p+"out_proj", q.rvq, q.cd); err != nil {
				return err
			}
		}
		if s.codebook, err = st.F32([]int{q.size, q.cd}, p+"codebook.weight"); err != nil {
			return err
		}
		// F.normalize: row / max(‖row‖, 1e-12).
		s.unit = make([]float64, q.size*q.cd)
		s.unitSq = make([]float64, q.size)
		for k := range q.size {
			row := s.codebook[k*q.cd : (k+1)*q.cd]
			u := s.unit[k*q.cd : (k+1)*q.cd]
			inv := 1 / math.Max(norm64(row), 1e-12)
			var sq float64
			for i, x := range row {
				u[i] = float64(x) * inv
				sq += u[i] * u[i]
			}
			s.unitSq[k] = sq
		}
	}
	return nil
}

func norm64(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// encode quantizes n valid rows of x [n, in] and writes codes[t][j].
//
// Upstream masks rows t >= length (residual·mask before each stage, update
// ·mask after) and then truncates the codes to length; the masked rows
// influence nothing that is kept, so only the n = length valid rows are
// passed here. Distances are computed in float64 on unit vectors:
// argmin |e|² − 2e·c + |c|² with the first index winning ties, which is
// upstream's argmax of the negated distance.
func (q *quantizer) encode(codes [][]int, x []float32, n int) {
	if n == 0 {
		return
	}
	residual := make([]float32, n*q.rvq)
	q.inProj.apply(residual, x, n)
	ze := make([]float32, n*q.cd)
	row := make([]float32, n*q.cd)
	zq := make([]float32, n*q.rvq)
	unit := make([]float64, n*q.cd) // each frame's normalised vector
	for j := range q.stages {
		s := &q.stages[j]
		s.inProj.apply(ze, residual, n)
		// Frames are independent within a stage: searched in parallel.
		tensor.For(n, max(1, 8192/(q.size*q.cd)), func(lo, hi int) {
			for t := lo; t < hi; t++ {
				e := unit[t*q.cd : (t+1)*q.cd]
				z := ze[t*q.cd : (t+1)*q.cd]
				inv := 1 / math.Max(norm64(z), 1e-12)
				var ee float64
				for i, v := range z {
					e[i] = float64(v) * inv
					ee += e[i] * e[i]
				}
				best, bestD := 0, math.Inf(1)
				for k := range q.size {
					u := s.unit[k*q.cd : (k+1)*q.cd]
					var dot float64
					for i, v := range e {
						dot += v * u[i]
					}
					dist := ee - 2*dot + s.unitSq[k]
					if dist < bestD {
						best, bestD = k, dist
					}
				}
				codes[t][j] = best
				copy(row[t*q.cd:(t+1)*q.cd], s.codebook[best*q.cd:(best+1)*q.cd])
			}
		})
		// The raw (not normalised) codebook row goes through out_proj.
		s.outProj.apply(zq, row, n)
		for i := range residual {
			residual[i] -= zq[i]
		}
	}
}

// decode writes the decoder input y [n, out] for n frames:
// output_proj(Σ_{j<nq} out_proj_j(codebook_j[code_j])), summed in codebook
// order as upstream, with each frame's own nq (its first nq codebooks). emb
// [n, rvq], row [n, cd] and zq [n, rvq] are scratch.
func (q *quantizer) decode(y []float32, frames [][]int, emb, row, zq []float32) {
	n := len(frames)
	if n == 0 {
		return
	}
	emb = emb[:n*q.rvq]
	clear(emb)
	maxNQ := 0
	for _, f := range frames {
		maxNQ = max(maxNQ, len(f))
	}
	for j := range maxNQ {
		s := &q.stages[j]
		m := 0 // frames with a code for codebook j
		for _, f := range frames {
			if len(f) > j {
				copy(row[m*q.cd:(m+1)*q.cd], s.codebook[f[j]*q.cd:(f[j]+1)*q.cd])
				m++
			}
		}
		s.outProj.apply(zq, row, m)
		m = 0
		for t, f := range frames {
			if len(f) > j {
				e, z := emb[t*q.rvq:(t+1)*q.rvq], zq[m*q.rvq:(m+1)*q.rvq]
				for i, v := range z {
					e[i] += v
				}
				m++
			}
		}
	}
	q.outProj.apply(y, emb, n)
}

// checkFrames validates codes before any state changes: every frame has the
// same number nq of codes, 1 <= nq <= NumQuantizers, each in [0, size).
func (q *quantizer) checkFrames(frames [][]int) error {
	for t, f := range frames {
		if len(f) == 0 || len(f) > len(q.stages) {
			return fmt.Errorf("%w: frame %d has %d codes, want 1..%d", ErrInvalidCodes, t, len(f), len(q.stages))
		}
		if len(f) != len(frames[0]) {
			return fmt.Errorf("%w: frame %d has %d codes but frame 0 has %d; frames decoded together must use the same codebooks", ErrInvalidCodes, t, len(f), len(frames[0]))
		}
		for j, c := range f {
			if c < 0 || c >= q.size {
				return fmt.Errorf("%w: frame %d codebook %d: code %d outside [0, %d)", ErrInvalidCodes, t, j, c, q.size)
			}
		}
	}
	return nil
}
