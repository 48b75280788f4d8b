package codec

import (
	"context"
	"fmt"
	"math"
)

// Encode turns a channel-interleaved waveform at SampleRate (len a multiple
// of Channels) into codes [frames][NumQuantizers], frames = samples per
// channel / SamplesPerFrame rounded down: the trailing partial frame is
// dropped, as upstream does. Fewer than SamplesPerFrame samples per channel
// give zero frames. Samples must be finite.
//
// The math follows upstream batch_encode exactly: right-pad to a multiple of
// SamplesPerFrame, flatten the channels into one stream, then run the encoder
// while tracking the valid length of every module (patches divide it,
// rounding down); attention never looks at keys at or past the valid length,
// padded query rows are zeroed, and the quantizer masks rows past it.
func (m *Model) Encode(pcm []float32) ([][]int, error) {
	return m.EncodeContext(context.Background(), pcm)
}

// EncodeContext is Encode that returns ctx's error once ctx is done,
// checked between the encoder's stages: a long clip takes a while to
// encode, and a request whose client left should not hold its slot.
func (m *Model) EncodeContext(ctx context.Context, pcm []float32) ([][]int, error) {
	c := m.cfg
	if len(pcm)%c.Channels != 0 {
		return nil, fmt.Errorf("codec: encode: %d samples are not a whole number of %d-channel sample frames", len(pcm), c.Channels)
	}
	for i, v := range pcm {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("codec: encode: sample %d is %v", i, v)
		}
	}
	T := len(pcm) / c.Channels
	frames := T / c.DownsampleRate
	if frames == 0 {
		return [][]int{}, nil
	}
	padded := (T + c.DownsampleRate - 1) / c.DownsampleRate * c.DownsampleRate

	// The interleaved waveform is already the codec's internal stream:
	// [padded·C, 1] when channels are interleaved, [padded, C] otherwise.
	width := c.streamWidth()
	rows := padded * c.Channels / width
	length := T * c.Channels / width
	b, ok := m.encBufs.Get()
	if !ok {
		b = new(passBufs)
	}
	defer m.encBufs.Put(b)
	b.w.ctx = ctx
	defer func() { b.w.ctx = nil }()
	b.x = resize(b.x, padded*c.Channels)
	x := b.x
	clear(x[copy(x, pcm):])

	var ws workSize
	{
		r := rows
		for _, s := range m.enc {
			if s.patch > 0 {
				r /= s.patch
				continue
			}
			ws.add(s.tr, r)
		}
	}
	ws.fit(&b.w)
	whole := []span{{row: 0, n: 0, pos: 0}}

	// x is b.x; each stage writes b.y, then the two swap.
	for _, s := range m.enc {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.patch > 0 {
			b.y = resize(b.y, len(x))
			patchDown(b.y, x, rows, width, s.patch)
			b.x, b.y = b.y, b.x
			x, rows, width, length = b.x, rows/s.patch, width*s.patch, length/s.patch
			continue
		}
		t := s.tr
		b.y = resize(b.y, rows*t.outDim)
		whole[0].n = rows
		t.forward(b.y, x, rows, whole, &b.w, nil, length)
		b.x, b.y = b.y, b.x
		x, width = b.x, t.outDim
	}
	if err := ctx.Err(); err != nil {
		return nil, err // a stage stopped early
	}
	if length != frames {
		// Guaranteed by the config's patch product check.
		return nil, fmt.Errorf("codec: encode: internal error: %d valid rows for %d frames", length, frames)
	}
	nq := m.cfg.Quantizer.NumQuantizers
	flat := make([]int, frames*nq)
	codes := make([][]int, frames)
	for t := range codes {
		codes[t] = flat[t*nq : (t+1)*nq : (t+1)*nq]
	}
	m.q.encode(codes, x, frames)
	return codes, nil
}

// Decode turns codes [frames][nq] into a channel-interleaved waveform of
// frames × SamplesPerFrame × Channels raw samples (no clamping). All frames
// must have the same nq, 1 <= nq <= NumQuantizers: with nq below
// NumQuantizers the first nq codebooks are used, as upstream does.
//
// Decode processes the whole sequence at once (the reference path); a
// Decoder produces the same samples incrementally.
func (m *Model) Decode(frames [][]int) ([]float32, error) {
	if err := m.q.checkFrames(frames); err != nil {
		return nil, err
	}
	n := len(frames)
	if n == 0 {
		return []float32{}, nil
	}
	q := &m.q
	x := make([]float32, n*q.out)
	q.decode(x, frames, make([]float32, n*q.rvq), make([]float32, n*q.cd), make([]float32, n*q.rvq))

	var ws workSize
	{
		r := n
		for _, s := range m.dec {
			if s.patch > 0 {
				r *= s.patch
				continue
			}
			ws.add(s.tr, r)
		}
	}
	w := ws.alloc()
	whole := []span{{row: 0, n: 0, pos: 0}}

	rows, width := n, q.out
	for _, s := range m.dec {
		if s.patch > 0 {
			y := make([]float32, len(x))
			patchUp(y, x, rows, width, s.patch)
			x, rows, width = y, rows*s.patch, width/s.patch
			continue
		}
		t := s.tr
		y := make([]float32, rows*t.outDim)
		whole[0].n = rows
		t.forward(y, x, rows, whole, &w, nil, rows)
		x, width = y, t.outDim
	}
	// x is [samples, streamWidth]: interleaved channels either way.
	return x, nil
}
