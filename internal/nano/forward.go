package nano

import (
	"github.com/nanovox/nanovox/internal/tensor"
)

// kvCache holds the keys (after RoPE) and values of one sequence for every
// layer of a stack, [layer][pos·H + head·hd + i].
type kvCache struct {
	k, v [][]float32
	n    int // positions filled
	h    int // hidden size
}

func newKVCache(layers, hidden, capacity int) *kvCache {
	c := &kvCache{k: make([][]float32, layers), v: make([][]float32, layers), h: hidden}
	for l := range layers {
		c.k[l] = make([]float32, 0, capacity*hidden)
		c.v[l] = make([]float32, 0, capacity*hidden)
	}
	return c
}

// reset empties the cache, keeping its memory.
func (c *kvCache) reset() {
	for l := range c.k {
		c.k[l] = c.k[l][:0]
		c.v[l] = c.v[l][:0]
	}
	c.n = 0
}

// copyFrom makes c an exact copy of src (same positions), reusing c's memory.
func (c *kvCache) copyFrom(src *kvCache) {
	c.reserve(src.n)
	for l := range c.k {
		c.k[l] = append(c.k[l][:0], src.k[l]...)
		c.v[l] = append(c.v[l][:0], src.v[l]...)
	}
	c.n = src.n
}

// reserve makes room for n positions, at least doubling when it grows:
// fresh memory costs page faults, so it is taken in few, large steps (and
// caches are reused across requests, see Model.cachePool).
func (c *kvCache) reserve(n int) {
	need := n * c.h
	for l := range c.k {
		if cap(c.k[l]) >= need {
			continue
		}
		nc := max(need, 2*cap(c.k[l]))
		k := make([]float32, len(c.k[l]), nc)
		copy(k, c.k[l])
		v := make([]float32, len(c.v[l]), nc)
		copy(v, c.v[l])
		c.k[l], c.v[l] = k, v
	}
}

// bytes returns the memory in use by the cached positions.
func (c *kvCache) bytes() int64 { return int64(2*len(c.k)*c.n*c.h) * 4 }

// seqRows describes the rows of one sequence inside a batched forward: n new
// rows at positions cache.n .. cache.n+n-1.
type seqRows struct {
	cache *kvCache
	n     int
}

// workspace holds the scratch buffers of a forward pass, grown on demand and
// reused across steps.
type workspace struct {
	h, qkv, att, ff []float32
	scores          []float32
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// forward runs stack s over x [R, H] (R = Σ seqs[i].n rows, sequence after
// sequence), appending each sequence's keys/values to its cache. On return x
// holds the final residual stream (before ln_f).
func (m *Model) forward(s *stack, x []float32, seqs []seqRows, ws *workspace) {
	H, I := m.Config.Hidden(), m.Config.Inner()
	hd := m.Config.HeadDim()
	nh := m.Config.GPT2.NHead
	R := 0
	for _, sq := range seqs {
		R += sq.n
		sq.cache.reserve(sq.cache.n + sq.n)
	}
	ws.h = grow(ws.h, R*H)
	ws.qkv = grow(ws.qkv, R*3*H)
	ws.att = grow(ws.att, R*H)
	ws.ff = grow(ws.ff, R*I)
	if s.wpe != nil {
		r := 0
		for _, sq := range seqs {
			for t := range sq.n {
				s.wpe.AddRow(x[(r+t)*H:(r+t+1)*H], sq.cache.n+t)
			}
			r += sq.n
		}
	}
	for l := range s.blocks {
		b := &s.blocks[l]
		// Attention: x += c_proj(attn(ln_1 x)).
		tensor.LayerNorm(ws.h, x, R, b.ln1W, b.ln1B, float32(m.Config.GPT2.LayerNormEpsilon))
		tensor.Linear(ws.qkv, ws.h, R, b.attnW, b.attnB)
		r := 0
		for _, sq := range seqs {
			c := sq.cache
			p0 := c.n
			for t := range sq.n {
				row := ws.qkv[(r+t)*3*H : (r+t+1)*3*H]
				q, k, v := row[:H], row[H:2*H], row[2*H:]
				if m.rope != nil {
					m.rope.Apply(q, p0+t)
					m.rope.Apply(k, p0+t)
				}
				c.k[l] = append(c.k[l], k...)
				c.v[l] = append(c.v[l], v...)
			}
			for t := range sq.n {
				q := ws.qkv[(r+t)*3*H : (r+t)*3*H+H]
				out := ws.att[(r+t)*H : (r+t+1)*H]
				attend(out, q, c.k[l], c.v[l], p0+t+1, nh, hd, b.scale, ws)
			}
			r += sq.n
		}
		tensor.Linear(ws.h, ws.att, R, b.projW, b.projB)
		tensor.Add(x[:R*H], ws.h)
		// MLP: x += fc_out(gelu(fc_in(ln_2 x))).
		tensor.LayerNorm(ws.h, x, R, b.ln2W, b.ln2B, float32(m.Config.GPT2.LayerNormEpsilon))
		tensor.Linear(ws.ff, ws.h, R, b.fcInW, b.fcInB)
		tensor.GELUTanh(ws.ff[:R*I])
		tensor.Linear(ws.h, ws.ff, R, b.fcOutW, b.fcOutB)
		tensor.Add(x[:R*H], ws.h)
	}
	for _, sq := range seqs {
		sq.cache.n += sq.n
	}
}

// attend computes causal multi-head attention of one query row over the first
// nkeys cached positions: out[h] = Σ_j softmax_j(q_h·k_jh·scale) v_jh.
func attend(out, q, keys, vals []float32, nkeys, nh, hd int, scale float32, ws *workspace) {
	ws.scores = grow(ws.scores, nkeys)
	tensor.Attend(out, q, keys, vals, nkeys, nh, hd, nh*hd, scale, ws.scores)
}

// embedRows writes the input embedding of each row into x [rows, H]:
// wte[text] + Σ_c audio_emb[c][code_c] over codes that are not the pad.
func (m *Model) embedRows(x []float32, rows Rows) {
	H, w := m.Config.Hidden(), m.Config.NVQ+1
	n := len(rows) / w
	for i := range n {
		row := rows[i*w : (i+1)*w]
		dst := x[i*H : (i+1)*H]
		m.wte.Row(row[0], dst)
		for c := range m.Config.NVQ {
			if code := row[1+c]; code != m.Config.AudioPadTokenID {
				m.audioEmb[c].AddRow(dst, code)
			}
		}
	}
}
