package codec

import (
	"errors"
	"fmt"

	"github.com/nanovox/nanovox/internal/tensor"
)

// DefaultChunkFrames is how many frames a Decoder pushes through the stack
// at once; larger steps are split. It bounds the decoder's scratch buffers,
// which are sized by the largest step so far.
const DefaultChunkFrames = 4

// Decoder is the streaming decoder of one stream: it accepts code frames in
// steps of any size and returns, for each step, exactly the samples that a
// whole Decode of all frames so far produces for those frames (the decoder
// is causal, every attention window is bounded, and every kernel computes a
// row the same way whatever rows it is computed with).
//
// State per stream, separate from the shared Model: for every decoder
// transformer the absolute position of the next row, and for every layer a
// ring buffer, head-major, of the most recent keys and values (post-RoPE):
// the context − 1 rows every future row may still see, plus room for the
// rows of one frame, which are stored together and then attend together.
// Reset keeps them; patches are stateless. For the release that is Σ layers
// × (context − 1 + rows per frame) × d_model × 2 (K and V) × 4 bytes =
// (4·503 + 2·807 + 2·1215 + 4·1631) × 256 × 8 B = 25.8 MB per stream, the
// least an exact float32 decoder can keep (every stored key is visible to
// the next frame). NewDecoder allocates it at once and nothing is ever
// copied; memory fresh from the OS is only backed by RAM as the stream
// writes it (about 10 MB after 2 s, 22 MB after 5 s, all of it after 10 s;
// huge pages are requested where the kernel allows, to save the faults),
// so reusing decoders (Reset) across requests saves the page faults too.
// Step's scratch adds 0.5 MB (1.8 MB once a 4-frame step was taken); a
// decoder stepped only through a Batch has none. Bytes reports the total.
//
// Cost per frame (release config): one frame is 4, 8, 16 and 32 rows at the
// four decoder transformers (50/100/200/400 Hz). The row-wise work (LayerNorm,
// q|k|v, out_proj, MLP, projections) is ≈ 0.17 G multiply-adds per frame and
// attention ≈ 0.13 G at full windows; the rows of a frame share one pass
// over each layer's keys and values (tensor.AttendWindows).
//
// Several streams' steps run together through a Batch, which does the
// row-wise work of all of them in shared matrix products and gives every
// stream exactly what its own Step would.
//
// A Decoder is not safe for concurrent use; use one per stream.
type Decoder struct {
	m      *Model
	trs    []ringState // per decoder stage; zero for patches
	frames int
	sc     stepScratch
	one    [1]*Decoder
	counts [1]int
}

// ringState is the streaming state of one decoder transformer: per layer,
// a tensor.KV ring of keys and values, head-major (Stride hd, HeadStride
// ring·hd) so that a head's keys are contiguous, float32, or bfloat16 with
// the values in row pairs (transformer.dot: BF16Scores and BF16Sums).
// Position p is in row p % ring.
type ringState struct {
	pos       int // absolute position of the next row
	ring      int // rows per ring: context − 1 + group rounded up to even (ringRows)
	group     int // rows attended together (one frame's rows)
	heads, hd int
	layers    []tensor.KV
}

// ringRows returns the rows of a ring for a transformer stepped group rows
// at a time: every key a group sees fits, and the count is even, so that
// value pairs (tensor.KV.BF16Sums) never straddle the wrap.
func ringRows(t *transformer, group int) int {
	n := t.context - 1 + group
	return n + n%2
}

// store writes the key and value of position p (rows of heads·hd) into
// layer l's ring.
func (rs *ringState) store(l, p int, k, v []float32) {
	kv, hd := &rs.layers[l], rs.hd
	slot := p % rs.ring
	for h := range rs.heads {
		kv.Put((h*rs.ring+slot)*hd, k[h*hd:(h+1)*hd], v[h*hd:(h+1)*hd])
	}
}

// NewDecoder returns a streaming decoder positioned at the start of a stream.
func (m *Model) NewDecoder() *Decoder {
	d := &Decoder{m: m, trs: make([]ringState, len(m.dec))}
	// All rings in one allocation (per element type), so that huge pages
	// can back it.
	size, size16, rows := 0, 0, 1
	for _, s := range m.dec {
		if s.patch > 0 {
			rows *= s.patch
			continue
		}
		n := 2 * len(s.tr.layers) * ringRows(s.tr, rows) * s.tr.d
		if s.tr.dot {
			size16 += n
		} else {
			size += n
		}
	}
	mem, mem16 := tensor.MakeHuge(size), tensor.MakeHuge16(size16)
	rows = 1
	for i, s := range m.dec {
		if s.patch > 0 {
			rows *= s.patch
			continue
		}
		t := s.tr
		rs := ringState{ring: ringRows(t, rows), group: rows, heads: t.heads, hd: t.hd}
		n := rs.ring * t.d
		for range t.layers {
			kv := tensor.KV{Stride: t.hd, HeadStride: rs.ring * t.hd, Ring: rs.ring, BF16Scores: t.dot, BF16Sums: t.dot}
			if t.dot {
				kv.K16, kv.V16 = mem16[:n:n], mem16[n:2*n:2*n]
				mem16 = mem16[2*n:]
			} else {
				kv.K, kv.V = mem[:n:n], mem[n:2*n:2*n]
				mem = mem[2*n:]
			}
			rs.layers = append(rs.layers, kv)
		}
		d.trs[i] = rs
	}
	// Fault the rings' pages in now, on the caller's goroutine (a
	// request's preparation), rather than in the decode steps that first
	// write them: streams started together would take every page fault of
	// their rings (26 MiB each in f32) in the one step that renders their
	// first frames.
	for i := range d.trs {
		tensor.FaultInKVs(d.trs[i].layers)
	}
	d.one[0] = d
	return d
}

// Bytes returns the memory the decoder holds: its key/value rings and its
// scratch buffers, which Step sizes by the largest step so far (a decoder
// stepped only through a Batch has none).
func (d *Decoder) Bytes() int64 {
	var n int64
	for i := range d.trs {
		for _, kv := range d.trs[i].layers {
			n += int64(len(kv.K)+len(kv.V))*4 + int64(len(kv.K16)+len(kv.V16))*2
		}
	}
	return n + d.sc.bytes()
}

// Frames returns the number of frames decoded since NewDecoder or Reset.
func (d *Decoder) Frames() int { return d.frames }

// Reset returns the decoder to the start of a new stream, keeping its
// buffers. It is O(1): stale ring entries are never read again because only
// positions below each transformer's offset are visible.
func (d *Decoder) Reset() {
	for i := range d.trs {
		d.trs[i].pos = 0
	}
	d.frames = 0
}

// Step decodes frames (each of nq codes, the same nq for all, 1 <= nq <=
// NumQuantizers) and appends their frames × SamplesPerFrame × Channels
// interleaved samples to dst. Invalid codes return an error before any state
// changes.
func (d *Decoder) Step(dst []float32, frames [][]int) ([]float32, error) {
	if err := d.m.q.checkFrames(frames); err != nil {
		return dst, err
	}
	for len(frames) > 0 {
		n := min(len(frames), DefaultChunkFrames)
		d.sc.size(d.m, n)
		d.counts[0] = n
		out := d.m.step(d.one[:], d.counts[:], frames[:n], &d.sc)
		dst = append(dst, out...)
		frames = frames[n:]
	}
	return dst, nil
}

// stepScratch holds the buffers of decoder steps over up to frames frames
// (of one stream or several).
type stepScratch struct {
	frames       int
	w            work
	a, b         []float32 // activations, ping-pong
	emb, row, zq []float32 // quantizer decode scratch
	spans        []span
	rings        []*ringState
}

// bytes returns the memory held by the scratch buffers.
func (sc *stepScratch) bytes() int64 {
	w := &sc.w
	f := len(w.h) + len(w.u) + len(w.att) + len(w.qkv) + len(w.ff) + len(w.cos) + len(w.sin) +
		len(sc.a) + len(sc.b) + len(sc.emb) + len(sc.row) + len(sc.zq) + w.attn.Floats()
	return int64(f)*4 + int64(len(w.lo)+len(w.hi))*8
}

// size makes the scratch hold steps of up to frames frames.
func (sc *stepScratch) size(m *Model, frames int) {
	if frames <= sc.frames {
		return
	}
	q := &m.q
	sc.frames = frames
	sc.emb = make([]float32, frames*q.rvq)
	sc.row = make([]float32, frames*q.cd)
	sc.zq = make([]float32, frames*q.rvq)
	var ws workSize
	act := frames * q.out
	rows, width := frames, q.out
	for _, s := range m.dec {
		if s.patch > 0 {
			rows, width = rows*s.patch, width/s.patch
			act = max(act, rows*width)
			continue
		}
		ws.add(s.tr, rows)
		act = max(act, rows*s.tr.outDim)
		width = s.tr.outDim
	}
	sc.w = ws.alloc()
	sc.a = make([]float32, act)
	sc.b = make([]float32, act)
}

// step decodes counts[s] frames for each decoder decs[s] (frames holds them
// in that order, already checked) and returns the samples of all of them in
// the same order, in a scratch buffer valid until the next step. The rows of
// all streams go through every stage together; only the positional parts and
// attention are per stream.
func (m *Model) step(decs []*Decoder, counts []int, frames [][]int, sc *stepScratch) []float32 {
	n := len(frames)
	x, y := sc.a, sc.b
	m.q.decode(x, frames, sc.emb, sc.row, sc.zq)
	rows, width, perFrame := n, m.q.out, 1
	for i, s := range m.dec {
		if s.patch > 0 {
			patchUp(y, x, rows, width, s.patch)
			x, y = y, x
			rows, width, perFrame = rows*s.patch, width/s.patch, perFrame*s.patch
			continue
		}
		t := s.tr
		sc.spans, sc.rings = sc.spans[:0], sc.rings[:0]
		row := 0
		for k, d := range decs {
			rs := &d.trs[i]
			nr := counts[k] * perFrame
			sc.spans = append(sc.spans, span{row: row, n: nr, pos: rs.pos})
			sc.rings = append(sc.rings, rs)
			row += nr
		}
		t.forward(y, x, rows, sc.spans, &sc.w, sc.rings, 0)
		for k, d := range decs {
			d.trs[i].pos += counts[k] * perFrame
		}
		x, y = y, x
		width = t.outDim
	}
	for k, d := range decs {
		d.frames += counts[k]
	}
	return x[:rows*width]
}

// Batch steps many streams' Decoders together: each Step decodes one frame
// per decoder with every row-wise product (projections, LayerNorm, q|k|v,
// out_proj, MLP, quantizer) computed once over the rows of all streams, and
// only the positional parts and attention per stream. Each stream gets
// bit for bit what its own Decoder.Step would give. A Batch owns the scratch
// buffers of the steps and reuses them; it is not safe for concurrent use.
type Batch struct {
	m      *Model
	sc     stepScratch
	counts []int
	seen   map[*Decoder]struct{}
}

// NewBatch returns a Batch for decoders of m.
func (m *Model) NewBatch() *Batch { return &Batch{m: m, seen: map[*Decoder]struct{}{}} }

// ErrBatch is wrapped by the errors of Batch.Step for arguments that do not
// fit together (lengths, foreign or repeated decoders).
var ErrBatch = errors.New("codec: invalid batch")

// Step decodes frames[i] (one frame of codes) with decs[i] for every i and
// appends its SamplesPerFrame × Channels samples to dst[i]. Frames may use
// different numbers of codebooks. Invalid codes or arguments return an error
// before any state changes.
func (b *Batch) Step(decs []*Decoder, frames [][]int, dst [][]float32) error {
	if len(frames) != len(decs) || len(dst) != len(decs) {
		return fmt.Errorf("%w: %d decoders, %d frames, %d outputs", ErrBatch, len(decs), len(frames), len(dst))
	}
	clear(b.seen)
	for i, d := range decs {
		if d == nil || d.m != b.m {
			return fmt.Errorf("%w: decoder %d is not a decoder of this model", ErrBatch, i)
		}
		if _, dup := b.seen[d]; dup {
			return fmt.Errorf("%w: decoder %d appears twice", ErrBatch, i)
		}
		b.seen[d] = struct{}{}
		if err := b.m.q.checkFrames(frames[i : i+1]); err != nil {
			return fmt.Errorf("decoder %d: %w", i, err)
		}
	}
	if len(decs) == 0 {
		return nil
	}
	b.sc.size(b.m, len(decs))
	b.counts = b.counts[:0]
	for range decs {
		b.counts = append(b.counts, 1)
	}
	out := b.m.step(decs, b.counts, frames, &b.sc)
	per := len(out) / len(decs)
	for i := range decs {
		dst[i] = append(dst[i], out[i*per:(i+1)*per]...)
	}
	return nil
}
