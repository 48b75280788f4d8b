package lm

import (
	"context"

	"github.com/nanovox/nanovox/internal/tensor"
)

// kvCache holds the keys (after RoPE) and values of one sequence for every
// layer of a stack, one tensor.KV block per layer, head-major: head h of
// position p at element (h·cap + p)·hd, so each head's keys are contiguous.
// Both attention kernels read either layout (tensor.KV); for a decode step
// the two measured the same, even with the cache out of the processor's
// caches.
//
// With store tensor.KVBFloat16 (Options.Matmul BF16) the blocks hold
// bfloat16 values, rounded as tensor.RoundBF16 does: half the memory. With
// tensor.KVInt8 (the global stack under Matmul Int8) they hold signed
// bytes, each head of a position quantized with its own scale
// (tensor.QuantizeI8): a quarter of the memory, and of the bytes a decode
// step's attention reads.
type kvCache struct {
	layers []tensor.KV
	store  tensor.KVStore
	n      int // positions filled
	cap    int // positions per head
	nh     int // heads
	hd     int // head size

	// growAhead makes reserve prepare the next, doubled block in the
	// background once seven eighths of cap are in use (a generation's
	// cache; prefix caches are filled once and never grow). ahead delivers
	// that block, aheadCap its capacity; nil when none is on its way.
	growAhead bool
	ahead     chan []tensor.KV
	aheadCap  int
}

func newKVCache(layers, heads, headDim, capacity int, store tensor.KVStore) *kvCache {
	c := &kvCache{layers: make([]tensor.KV, layers), nh: heads, hd: headDim, store: store}
	c.alloc(max(capacity, 1))
	return c
}

// alloc gives every layer room for capacity positions, keeping the filled
// ones. All layers share one allocation, so that it is big enough for huge
// pages (fresh 4 KiB pages cost a fault each on the first write).
func (c *kvCache) alloc(capacity int) {
	c.adopt(tensor.MakeHeadMajorKVs(c.store, len(c.layers), c.nh, capacity, c.hd), capacity)
}

// adopt makes the empty blocks layers, of capacity positions, the cache's,
// with the filled positions copied over.
func (c *kvCache) adopt(layers []tensor.KV, capacity int) {
	if c.n > 0 {
		for l := range layers {
			layers[l].CopyRows(&c.layers[l], c.n, c.nh, c.hd)
		}
	}
	c.layers = layers
	c.cap = capacity
}

// reset empties the cache, keeping its memory. A block prepared for growth
// that has arrived becomes the cache's: a request that ended in the last
// eighth of the capacity leaves the doubled cache it would have grown
// into, so the next request of that length finds room instead of
// allocating and faulting in a block again (without it, at 60-frame
// requests 5 % of bench's CPU goes to that). A block still on its way is
// dropped.
func (c *kvCache) reset() {
	c.n = 0
	if c.ahead != nil {
		select {
		case kvs := <-c.ahead:
			c.adopt(kvs, c.aheadCap)
		default:
		}
		c.ahead = nil
	}
}

// reserve makes room for n positions, at least doubling when it grows:
// fresh memory costs page faults, so it is taken in few, large steps (and
// caches are reused across requests, see Model.cachePool).
//
// With growAhead, the doubled block is allocated and its pages faulted in
// on a goroutine of its own while the last eighth of the current one
// fills (12 frames, about a second, at the usual 96 positions; the block
// takes tens of ms), so that the step that outgrows it only copies the
// rows. Streams started together outgrow their caches in the same step:
// allocated there, each int8 cache cost 3–25 ms (4.7 MB at 192 positions;
// float32 four times the bytes) and 32 such streams stalled that step by
// 266–304 ms. A request that ends just short of growing leaves the
// block to the cache (reset), which the pool keeps for the next request.
func (c *kvCache) reserve(n int) {
	if n > c.cap {
		if c.ahead != nil && c.aheadCap >= n {
			c.adopt(<-c.ahead, c.aheadCap)
		} else {
			c.alloc(max(n, 2*c.cap))
		}
		c.ahead = nil
	}
	if c.growAhead && c.ahead == nil && n > c.cap-c.cap/8 {
		c.prepare(2 * c.cap)
	}
}

// prepare starts allocating and faulting in a block of capacity positions
// for reserve to adopt.
func (c *kvCache) prepare(capacity int) {
	ch := make(chan []tensor.KV, 1) // the goroutine never waits for reserve
	c.ahead, c.aheadCap = ch, capacity
	store, layers, nh, hd := c.store, len(c.layers), c.nh, c.hd
	go func() {
		kvs := tensor.MakeHeadMajorKVs(store, layers, nh, capacity, hd)
		tensor.FaultInKVs(kvs)
		ch <- kvs
	}()
}

// put stores the key and value rows (all heads, [heads·hd]) of position p of
// layer l.
func (c *kvCache) put(l, p int, k, v []float32) {
	kv := &c.layers[l]
	for h := range c.nh {
		kv.Put((h*c.cap+p)*c.hd, k[h*c.hd:(h+1)*c.hd], v[h*c.hd:(h+1)*c.hd])
	}
}

// kv returns layer l's keys and values for the attention kernels.
func (c *kvCache) kv(l int) tensor.KV { return c.layers[l] }

// bytes returns the memory in use by the cached positions.
func (c *kvCache) bytes() int64 {
	return int64(2*len(c.layers)) * int64(c.n*c.nh) * int64(c.store.HeadBytes(c.hd))
}

// seqRows describes the rows of one sequence inside a batched forward: n new
// rows stored at cache.n .. cache.n+n-1. With pre set, the sequence is pre's
// positions followed by cache's: the rows are at positions pre.n+cache.n …
// and attend over all of pre (shared and read-only) before cache.
//
// pend is the number of rows the same pass appends to pre, as an earlier
// sequence of its own, before this sequence's rows: a request without a
// shared prefix computes its prefix in the pass that starts its first
// chunk, so that the stack's weights are read once for both (pre.n counts
// those rows only once the pass is over).
type seqRows struct {
	cache *kvCache
	pre   *kvCache
	n     int
	pend  int
}

// base returns the position of the sequence's first cached row.
func (sq *seqRows) base() int {
	if sq.pre == nil {
		return 0
	}
	return sq.pre.n + sq.pend
}

// workspace holds the scratch buffers of a forward pass, grown on demand and
// reused across steps.
type workspace struct {
	x, h, qkv, att, ff []float32
	scores             []float32
	prompts            []promptRows
	rowSeq             []int32     // the sequence of each row of the pass
	seqFirst           []int32     // the pass row of each sequence's first row
	rowScores          [][]float32 // attendPrompts' scores, per chunk
	lo, hi             []int
	attn               tensor.AttnScratch
	// qkv0, when not nil, holds for each row of the pass its layer 0
	// q|k|v before RoPE (ln_1 and c_attn already applied), from
	// Model.localQKV: the pass copies them instead of computing them.
	qkv0 [][]float32
	// ctx, when not nil, is checked between layers: a prefill of a long
	// prompt stops early once it is done, leaving the cache unfinished for
	// the caller to discard.
	ctx context.Context
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		// A quarter more: the buffers that grow step after step (the
		// attention scores, by one key per step) then reallocate rarely.
		return tensor.MakeHuge(n + n/4)[:n]
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
				s.wpe.AddRow(x[(r+t)*H:(r+t+1)*H], sq.base()+sq.cache.n+t)
			}
			r += sq.n
		}
	}
	ws.rowSeq, ws.seqFirst = ws.rowSeq[:0], ws.seqFirst[:0]
	for i, sq := range seqs {
		ws.seqFirst = append(ws.seqFirst, int32(len(ws.rowSeq)))
		for range sq.n {
			ws.rowSeq = append(ws.rowSeq, int32(i))
		}
	}
	// Decode rows after a shared prefix (saved voices) are batched like
	// prompt rows when a step has several: one spread of rows over the
	// pool per layer instead of one head-parallel call per row.
	prefixed := 0
	for _, sq := range seqs {
		if sq.pre != nil && sq.n == 1 {
			prefixed++
		}
	}
	for l := range s.blocks {
		if ws.ctx != nil && ws.ctx.Err() != nil {
			return
		}
		b := &s.blocks[l]
		// Attention: x += c_proj(attn(ln_1 x)).
		if l == 0 && ws.qkv0 != nil {
			for r, row := range ws.qkv0 {
				copy(ws.qkv[r*3*H:(r+1)*3*H], row)
			}
		} else {
			tensor.LayerNorm(ws.h, x, R, b.ln1W, b.ln1B, float32(m.Config.GPT2.LayerNormEpsilon))
			tensor.Linear(ws.qkv, ws.h, R, b.attnW, b.attnB)
		}
		m.cacheRows(l, seqs, ws)
		r := 0
		ws.prompts = ws.prompts[:0]
		for i, sq := range seqs {
			c := sq.cache
			p0, base := c.n, sq.base()
			switch {
			case sq.pre != nil && sq.n == 1 && prefixed < batchPrefixedRows:
				// After a shared prefix: the row attends over all of it,
				// then over its own rows up to itself.
				ws.scores = grow(ws.scores, tensor.AttendKVScratch(base+p0+1, hd))
				tensor.AttendKV2(ws.att[r*H:], ws.qkv[r*3*H:], sq.pre.kv(l), base, c.kv(l), p0+1, tensor.AttnShape{Heads: nh, HeadDim: hd, Scale: b.scale}, ws.scores)
			case sq.pre != nil:
				// A prompt after a shared prefix, or a decode row when the
				// step has several: the same attention row by row, after
				// this loop, with every such row of the step.
				ws.prompts = append(ws.prompts, promptRows{seq: i, row: r})
			case sq.n == 1:
				// Causal: row t sees positions 0 … p0+t. A decode step's
				// single row takes the per-head kernel (vectorised over the
				// head dimension); prompts take the multi-query one
				// (vectorised over rows, each tile of rows reading the keys
				// once). Which one a row gets depends only on its own
				// sequence, never on the batch.
				ws.scores = grow(ws.scores, tensor.AttendKVScratch(p0+1, hd))
				tensor.Attend(ws.att[r*H:], ws.qkv[r*3*H:], c.kv(l), p0+1, tensor.AttnShape{Heads: nh, HeadDim: hd, Scale: b.scale}, ws.scores)
			default:
				ws.lo, ws.hi = ws.lo[:0], ws.hi[:0]
				for t := range sq.n {
					ws.lo = append(ws.lo, 0)
					ws.hi = append(ws.hi, p0+t+1)
				}
				tensor.AttendWindows(ws.att[r*H:], H, ws.qkv[r*3*H:], 3*H, c.kv(l), ws.lo, ws.hi, tensor.AttnShape{Heads: nh, HeadDim: hd, Scale: b.scale}, &ws.attn)
			}
			r += sq.n
		}
		if len(ws.prompts) > 0 {
			m.attendPrompts(l, b.scale, seqs, ws)
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

// cacheRowsGrain is the rows per chunk when a pass caches its rows in
// parallel (a prompt's prefill); passes of fewer rows (decode steps) cache
// them on the calling goroutine.
const cacheRowsGrain = 16

// cacheRows applies the rotary embedding to the queries and keys of layer
// l's rows in ws.qkv and stores each row's key and value in its sequence's
// cache (after the positions already cached). Rows are independent: a long
// pass spreads them over the pool.
func (m *Model) cacheRows(l int, seqs []seqRows, ws *workspace) {
	r := len(ws.rowSeq)
	if r < 2*cacheRowsGrain {
		m.cacheRowRange(l, seqs, ws, 0, r)
		return
	}
	sq := seqs // only this copy escapes with the closure
	tensor.For(r, cacheRowsGrain, func(lo, hi int) { m.cacheRowRange(l, sq, ws, lo, hi) })
}

// cacheRowRange is cacheRows for the pass rows [lo, hi).
func (m *Model) cacheRowRange(l int, seqs []seqRows, ws *workspace, lo, hi int) {
	H := m.Config.Hidden()
	for r := lo; r < hi; r++ {
		i := ws.rowSeq[r]
		sq := &seqs[i]
		p := sq.cache.n + r - int(ws.seqFirst[i])
		row := ws.qkv[r*3*H : (r+1)*3*H]
		q, k, v := row[:H], row[H:2*H], row[2*H:]
		if m.rope != nil {
			m.rope.Apply(q, sq.base()+p)
			m.rope.Apply(k, sq.base()+p)
		}
		sq.cache.put(l, p, k, v)
	}
}

// promptRows is a sequence of a forward pass whose rows are a prompt after
// a shared prefix: seqs[seq], its first row at row of the pass.
type promptRows struct{ seq, row int }

// attendPrompts computes layer l's attention of the rows of ws.prompts (their
// keys and values already cached), each row over its prefix and its own
// rows up to itself, as a decode step's row. One row is too little work to
// split by heads, so the rows of all such sequences are spread over the
// pool together: a step that starts new requests is mostly these.
func (m *Model) attendPrompts(l int, scale float32, seqs []seqRows, ws *workspace) {
	H, hd, nh := m.Config.Hidden(), m.Config.HeadDim(), m.Config.GPT2.NHead
	total, need := 0, 0
	for _, p := range ws.prompts {
		sq := &seqs[p.seq]
		total += sq.n
		need = max(need, tensor.AttendKVScratch(sq.base()+sq.cache.n+sq.n, hd))
	}
	chunks := min(total, promptChunks)
	grain := (total + chunks - 1) / chunks
	for len(ws.rowScores) < chunks {
		ws.rowScores = append(ws.rowScores, nil)
	}
	tensor.For(total, grain, func(lo, hi int) {
		sc := &ws.rowScores[lo/grain]
		*sc = grow(*sc, need)
		first := 0 // flat index of the current sequence's first row
		for _, p := range ws.prompts {
			sq := &seqs[p.seq]
			for t := max(lo-first, 0); t < min(hi-first, sq.n); t++ {
				r, p0 := p.row+t, sq.cache.n
				tensor.AttendKV2(ws.att[r*H:], ws.qkv[r*3*H:], sq.pre.kv(l), sq.base(), sq.cache.kv(l), p0+t+1, tensor.AttnShape{Heads: nh, HeadDim: hd, Scale: scale}, *sc)
			}
			first += sq.n
		}
	})
}

// batchPrefixedRows is from how many decode rows after a prefix a step
// attends them with attendPrompts. Either way each row's result is the
// same AttendKV2 call's.
const batchPrefixedRows = 2

// promptChunks is how many chunks attendPrompts cuts its rows into: a few
// per thread, for balance.
const promptChunks = 8

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
