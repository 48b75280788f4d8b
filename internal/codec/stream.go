package codec

// DefaultChunkFrames is how many frames a Decoder pushes through the stack
// at once; larger steps are split. It sizes the decoder's scratch buffers.
const DefaultChunkFrames = 4

// Decoder is the streaming decoder of one stream: it accepts code frames in
// steps of any size and returns, for each step, exactly the samples that a
// whole Decode of all frames so far would produce for those frames (the
// decoder is causal and every attention window is bounded).
//
// State per stream, separate from the shared Model: for every decoder
// transformer the absolute position of the next row, and for every layer a
// ring buffer of the last context keys and values (post-RoPE). Patches are
// stateless. All buffers are allocated by NewDecoder and reused by every
// Step; memory does not grow with stream length. For the release that is
// Σ layers × context × d_model × 2 (K and V) × 4 bytes =
// (4·500 + 2·800 + 2·1200 + 4·1600) × 256 × 8 B ≈ 25 MB per stream, plus
// well under 1 MB of scratch.
//
// Cost per frame (release config): one frame is 4, 8, 16 and 32 rows at the
// four decoder transformers (50/100/200/400 Hz). The row-wise work (LayerNorm,
// q|k|v, out_proj, MLP, projections) is ≈ 0.17 G multiply-adds per frame and
// attention is ≈ 0.13 G at full windows (each row scores and mixes up to
// context keys per layer: 16×500 + 16×800 + 32×1200 + 128×1600 key rows of
// 256), about 0.3 G multiply-adds per frame in all.
//
// Batching: everything in a step except attention and the positional parts
// (RoPE angles, sinusoidal embedding) is row-wise and independent of the
// stream state, so a later pass can concatenate the rows of many Decoders at
// each stage, run every Linear once over all of them, and dispatch only the
// positional parts and attendRing (with each stream's ring and offset) per
// stream — what upstream's MossAudioTokenizerDecodeSession does with slots.
//
// A Decoder is not safe for concurrent use; use one per stream.
type Decoder struct {
	m      *Model
	chunk  int
	trs    []ringState // per decoder stage; zero for patches
	frames int

	w            work
	a, b         []float32 // activations, ping-pong
	emb, row, zq []float32 // quantizer decode scratch
}

// ringState is the streaming state of one decoder transformer.
type ringState struct {
	pos  int         // absolute position of the next row
	k, v [][]float32 // per layer [context, d]; position p in slot p % context
}

// NewDecoder returns a streaming decoder positioned at the start of a stream.
func (m *Model) NewDecoder() *Decoder {
	d := &Decoder{m: m, chunk: DefaultChunkFrames, trs: make([]ringState, len(m.dec))}
	q := &m.q
	F := d.chunk
	d.emb = make([]float32, F*q.rvq)
	d.row = make([]float32, F*q.cd)
	d.zq = make([]float32, F*q.rvq)
	var ws workSize
	act := F * q.out
	rows, width := F, q.out
	for i, s := range m.dec {
		if s.patch > 0 {
			rows, width = rows*s.patch, width/s.patch
			act = max(act, rows*width)
			continue
		}
		t := s.tr
		ws.add(t, rows, t.context, rows)
		act = max(act, rows*t.outDim)
		width = t.outDim
		rs := &d.trs[i]
		rs.k = make([][]float32, len(t.layers))
		rs.v = make([][]float32, len(t.layers))
		for l := range t.layers {
			rs.k[l] = make([]float32, t.context*t.d)
			rs.v[l] = make([]float32, t.context*t.d)
		}
	}
	d.w = ws.alloc()
	d.a = make([]float32, act)
	d.b = make([]float32, act)
	return d
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
		n := min(len(frames), d.chunk)
		dst = d.step(dst, frames[:n])
		frames = frames[n:]
	}
	return dst, nil
}

func (d *Decoder) step(dst []float32, frames [][]int) []float32 {
	m := d.m
	n := len(frames)
	x, y := d.a, d.b
	m.q.decode(x, frames, d.emb, d.row, d.zq)
	rows, width := n, m.q.out
	for i, s := range m.dec {
		if s.patch > 0 {
			patchUp(y, x, rows, width, s.patch)
			x, y = y, x
			rows, width = rows*s.patch, width/s.patch
			continue
		}
		t, rs := s.tr, &d.trs[i]
		pos0 := rs.pos
		t.forward(y, x, rows, pos0, &d.w, func(l int, att, qkv []float32, n int) {
			t.attendRing(att, qkv, n, pos0, rs.k[l], rs.v[l], d.w.scores)
		})
		rs.pos += rows
		x, y = y, x
		width = t.outDim
	}
	d.frames += n
	return append(dst, x[:rows*width]...)
}
