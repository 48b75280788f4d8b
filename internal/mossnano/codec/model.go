// Package codec is MOSS-Audio-Tokenizer-Nano in pure Go: the CNN-free causal
// transformer codec of MOSS-TTS-Nano (48 kHz stereo, 12.5 code frames per
// second, residual LFQ with 16 codebooks of 1024 entries).
//
// A Model is loaded once and is immutable: Encode (waveform → codes) and
// Decode (codes → waveform) may run concurrently. A Decoder holds the state
// of one streaming decode (per transformer a position offset, per layer a
// ring buffer of the last context keys and values) and produces, frame by
// frame, exactly the samples a whole decode of the same frames produces,
// bit for bit. A Batch steps many Decoders together, sharing the row-wise
// matrix products, with the same bits again.
//
// # Waveforms
//
// Waveforms are channel-interleaved float32 at SampleRate: for the stereo
// release, L0 R0 L1 R1 …, so len = frames × SamplesPerFrame × Channels. That
// is the codec's own internal order (upstream flattens [C, T] to [T·C] before
// the first patch and restores channels with n % C), so no reordering is
// needed on either side. Decoded samples are raw model outputs: no clamping.
//
// # Layout of the math
//
// Activations are time-major: a module's input is T rows of D values. A
// PatchedPretransform of size h turns [T][D] into [T/h][D·h] when encoding
// (out[t][c·h+j] = in[t·h+j][c]) and back when decoding; a Transformer is
// input projection → optional sinusoidal embedding → pre-LN layers (causal
// windowed attention with RoPE on interleaved pairs, exact-erf GELU MLP,
// layer scale) → output projection, no biases. The quantizer's weight-normed
// 1×1 convolutions are folded into plain matrices at load time. Attention
// runs through tensor.AttendWindows, whose per-row results do not depend on
// which rows share a call: that is what makes streamed, whole and batched
// decoding agree exactly.
//
// Where the mlx-audio port and the OpenMOSS original differ, this package
// follows OpenMOSS: transformer input/output projections always exist,
// quantizer projections are identities when their dimensions match, and a
// transformer without context_duration uses causal_transformer_context_duration.
package codec

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/nanovox/nanovox/internal/freelist"
	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/weights"
)

// Options tune Load.
type Options struct {
	// KeepBF16 keeps bfloat16 transformer weights as bfloat16 in memory
	// (widened exactly inside the kernels) instead of converting them to
	// float32. Quantizer weights are always float32: weight norm is folded.
	KeepBF16 bool
	// Matmul is the arithmetic of the products (tensor.Matmul). BF16
	// stores the transformer matrices as bfloat16 (rounding float32 ones)
	// and multiplies them with bfloat16 dot products (tensor.PackBF16Dot),
	// holds the decoder's attention keys and values as bfloat16 (half the
	// streaming decoder's memory), and computes every attention's scores and
	// weighted sums as bfloat16 dot products over bfloat16 keys and values
	// (tensor.KV.BF16Scores and BF16Sums, the encoder's too). Int8 quantizes the
	// decoder's transformer matrices to int8, one scale per output row, and
	// their inputs per row at each product (tensor.PackInt8, as the language
	// model's lm.Options.Matmul): half the bytes of bfloat16 and twice its
	// products per instruction, at the error of 8-bit inputs and weights;
	// products stay row-independent, so streaming still equals whole
	// decoding. Everything Int8 does not quantize computes as in BF16 where
	// the CPU has AVX512_BF16 (tensor.Matmul.BF16Dot), in float32 elsewhere.
	// The encoder never uses int8: its codes are discrete and saved voices
	// keep them, and int8 changes far more of them (on the full-size random
	// checkpoint, 40 frames of a test wave: 141 of 640 codes differ from
	// float32's with int8 and bfloat16 attention, 2 with BF16). The
	// quantizer's projections stay float32. BF16 and Int8 imply KeepBF16;
	// results no longer equal the float32 reference.
	Matmul tensor.Matmul
	// f32Attention keeps Int8's attention and other products in float32 on
	// a CPU with AVX512_BF16: what CPUs without it run (tests only).
	f32Attention bool
}

// dot reports whether the products that are not int8 (attention among
// them) are bfloat16 dot products.
func (o Options) dot() bool { return o.Matmul.BF16Dot() && !o.f32Attention }

// Model is a loaded codec. It is immutable and safe for concurrent use.
type Model struct {
	cfg *Config
	enc []stage
	dec []stage
	q   quantizer
	// encBufs keeps Encode's buffers: a 5 s clip needs about 20 MB, and
	// fresh memory on an inline request costs page faults and zeroing
	// (tens of milliseconds). A freelist, not a sync.Pool: a pool emptied
	// by every garbage collection made some encodes twice as slow.
	encBufs freelist.List[*passBufs]
}

// stage is one module of the encoder or decoder: a patch (patch > 0) or a
// transformer.
type stage struct {
	patch int
	tr    *transformer
}

// transformer is a ProjectedTransformer: input_proj, layers, output_proj.
type transformer struct {
	outDim       int
	d, heads, hd int
	ff           int
	causal       bool
	context      int
	scale        float32 // 1/sqrt(head dim)
	rope         *tensor.RoPE
	sin          bool
	sinScale     float32
	maxPeriod    float64
	inProj       *tensor.Mat // [d, inDim]
	outProj      *tensor.Mat // [outDim, d]
	layers       []layer
	// dot (BF16Dot): keys and values are held as bfloat16 (RoundBF16), the
	// values in pairs of positions, and attention computes its scores and
	// weighted sums as bfloat16 dot products (tensor.KV.BF16Scores, BF16Sums).
	// Streaming rings (the decoder's) store them so, half the memory; a
	// whole pass rounds and lays them out the same way, so both agree.
	dot bool
}

type layer struct {
	qkv      *tensor.Mat // [3d, d]: rows q | k | v, heads contiguous
	out      *tensor.Mat // [d, d]
	ff1      *tensor.Mat // [ff, d]
	ff2      *tensor.Mat // [d, ff]
	n1w, n1b []float32
	n2w, n2b []float32
	ls1, ls2 []float32 // nil without layer scale
}

// ReleaseIdle drops the encode buffers kept from finished encodes (and the
// MLP blocks' activations), so that the garbage collector can return their
// memory; the next encode allocates new ones. For a server that has been
// idle a while. It keeps one set of each: the next single request's.
func (m *Model) ReleaseIdle() {
	m.encBufs.Keep(1)
	ffBufs.Keep(1)
}

// IdleBuffers returns how many encode buffer sets are kept for reuse.
func (m *Model) IdleBuffers() int { return m.encBufs.Len() }

// Config returns the model's configuration. It must not be modified.
func (m *Model) Config() *Config { return m.cfg }

// SampleRate returns waveform samples per second per channel (48000).
func (m *Model) SampleRate() int { return m.cfg.SampleRate }

// Channels returns the number of interleaved waveform channels (2).
func (m *Model) Channels() int { return m.cfg.Channels }

// SamplesPerFrame returns waveform samples per channel per code frame (3840).
func (m *Model) SamplesPerFrame() int { return m.cfg.DownsampleRate }

// NumQuantizers returns the number of codebooks (16).
func (m *Model) NumQuantizers() int { return m.cfg.Quantizer.NumQuantizers }

// CodebookSize returns the number of entries per codebook (1024).
func (m *Model) CodebookSize() int { return m.cfg.Quantizer.CodebookSize }

// WeightBytes returns the memory held by the model's weights (including the
// quantizer's folded projections and its unit-normalised float64 codebook
// copies used by Encode).
func (m *Model) WeightBytes() int64 {
	var n int64
	addv := func(v []float32) { n += int64(len(v)) * 4 }
	for _, s := range append(append([]stage(nil), m.enc...), m.dec...) {
		t := s.tr
		if t == nil {
			continue
		}
		n += t.inProj.Bytes() + t.outProj.Bytes()
		for i := range t.layers {
			ly := &t.layers[i]
			n += ly.qkv.Bytes() + ly.out.Bytes() + ly.ff1.Bytes() + ly.ff2.Bytes()
			for _, v := range [][]float32{ly.n1w, ly.n1b, ly.n2w, ly.n2b, ly.ls1, ly.ls2} {
				addv(v)
			}
		}
	}
	wn := func(l *wnLinear) {
		if l != nil {
			n += l.w.Bytes()
			addv(l.bias)
		}
	}
	q := &m.q
	wn(q.inProj)
	wn(q.outProj)
	for i := range q.stages {
		s := &q.stages[i]
		wn(s.inProj)
		wn(s.outProj)
		addv(s.codebook)
		n += int64(len(s.unit)+len(s.unitSq)) * 8
	}
	return n
}

// Load reads config.json and the weights of a codec checkpoint directory in
// any published layout: OpenMOSS's (sharded, with an index, and the legacy
// names self_attn.in_projs.0 and linear1) or mlx-community's (one file, the
// module names self_attn.in_proj and ffn.0); weight-normed projections may
// come as parametrizations.weight.original0/1. Every
// tensor the config implies is checked for presence and shape; errors name
// the key and both shapes.
func Load(dir string, opts Options) (*Model, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	st, err := weights.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("codec: %w", err)
	}
	m, err := build(cfg, st, opts)
	cerr := st.Close()
	if err != nil {
		return nil, fmt.Errorf("codec %s: %w", dir, err)
	}
	if cerr != nil {
		return nil, fmt.Errorf("codec %s: %w", dir, cerr)
	}
	return m, nil
}

func build(cfg *Config, st *weights.Store, opts Options) (*Model, error) {
	m := &Model{cfg: cfg}
	var err error
	encOpts := opts // see Options.Matmul: the encoder never uses int8
	encOpts.Matmul = tensor.F32
	if opts.dot() {
		encOpts.Matmul = tensor.BF16
	}
	if m.enc, err = loadStages(st, "encoder", cfg.Encoder, encOpts); err != nil {
		return nil, err
	}
	if err = m.q.load(st, &cfg.Quantizer); err != nil {
		return nil, err
	}
	if m.dec, err = loadStages(st, "decoder", cfg.Decoder, opts); err != nil {
		return nil, err
	}
	return m, nil
}

func loadStages(st *weights.Store, side string, mods []Module, opts Options) ([]stage, error) {
	out := make([]stage, len(mods))
	for i := range mods {
		mc := &mods[i]
		if mc.Kind == KindPatch {
			out[i].patch = mc.PatchSize
			continue
		}
		t, err := loadTransformer(st, fmt.Sprintf("%s.%d", side, i), mc, opts)
		if err != nil {
			return nil, err
		}
		t.dot = opts.dot()
		out[i].tr = t
	}
	return out, nil
}

func loadTransformer(st *weights.Store, prefix string, mc *Module, opts Options) (*transformer, error) {
	d, ff := mc.DModel, mc.FFDim
	t := &transformer{
		outDim: mc.OutputDim,
		d:      d, heads: mc.Heads, hd: mc.HeadDim(), ff: ff,
		causal: mc.Causal, context: mc.Context,
		scale:     float32(1 / math.Sqrt(float64(mc.HeadDim()))),
		maxPeriod: mc.MaxPeriod,
		sin:       mc.Positional == PosSin || mc.Positional == PosSinRoPE,
		sinScale:  float32(mc.PositionalScale),
	}
	if mc.Positional == PosRoPE || mc.Positional == PosSinRoPE {
		// Positions past the table are computed on the fly from the same
		// float64 angles (a few sincos per row: cheap next to the row's matmuls).
		t.rope = tensor.NewRoPE(t.hd, mc.MaxPeriod, 1024)
	}
	bf := opts.KeepBF16 || opts.Matmul != tensor.F32 || opts.dot()
	var err error
	if t.inProj, err = st.Mat(d, mc.InputDim, bf, prefix+".input_proj.weight"); err != nil {
		return nil, err
	}
	if t.outProj, err = st.Mat(mc.OutputDim, d, bf, prefix+".output_proj.weight"); err != nil {
		return nil, err
	}
	t.layers = make([]layer, mc.Layers)
	for l := range t.layers {
		p := fmt.Sprintf("%s.transformer.layers.%d.", prefix, l)
		ly := &t.layers[l]
		if ly.qkv, err = st.Mat(3*d, d, bf, p+"self_attn.in_proj.weight", p+"self_attn.in_projs.0.weight", p+"self_attn.in_proj_weight"); err != nil {
			return nil, err
		}
		if ly.out, err = st.Mat(d, d, bf, p+"self_attn.out_proj.weight", p+"self_attn.out_projs.0.weight"); err != nil {
			return nil, err
		}
		if ly.ff1, err = st.Mat(ff, d, bf, p+"ffn.0.weight", p+"linear1.weight"); err != nil {
			return nil, err
		}
		if ly.ff2, err = st.Mat(d, ff, bf, p+"ffn.2.weight", p+"linear2.weight"); err != nil {
			return nil, err
		}
		type vec struct {
			dst  *[]float32
			name string
		}
		vecs := []vec{{&ly.n1w, "norm1.weight"}, {&ly.n1b, "norm1.bias"}, {&ly.n2w, "norm2.weight"}, {&ly.n2b, "norm2.bias"}}
		if mc.HasLayerScale {
			vecs = append(vecs, vec{&ly.ls1, "layer_scale_1.scale"}, vec{&ly.ls2, "layer_scale_2.scale"})
		}
		for _, v := range vecs {
			if *v.dst, err = st.F32([]int{d}, p+v.name); err != nil {
				return nil, err
			}
		}
	}
	// Pack for the SIMD kernels (in place; a no-op on the portable path).
	dot := opts.dot()
	pack := func(w *tensor.Mat) {
		switch {
		case opts.Matmul == tensor.Int8 && w.PackInt8():
		case dot:
			w.PackAs(tensor.BF16)
		default:
			w.Pack()
		}
	}
	pack(t.inProj)
	pack(t.outProj)
	for l := range t.layers {
		ly := &t.layers[l]
		pack(ly.qkv)
		pack(ly.out)
		pack(ly.ff1)
		pack(ly.ff2)
	}
	return t, nil
}

// wnLinear is a weight-normalised kernel-1 Conv1d folded into y = x·Wᵀ + b.
type wnLinear struct {
	w    *tensor.Mat // float32 [out, in]
	bias []float32
}

// loadWN loads prefix as a weight-normed 1×1 convolution. Accepted spellings:
// parametrizations.weight.original0/1 (g, v), weight_g/weight_v, or an
// already folded weight. W = g·v/‖v‖ with the norm over every dim but 0,
// computed in float64.
func loadWN(st *weights.Store, prefix string, out, in int) (*wnLinear, error) {
	gNames := []string{prefix + ".parametrizations.weight.original0", prefix + ".weight_g"}
	vNames := []string{prefix + ".parametrizations.weight.original1", prefix + ".weight_v"}
	l := &wnLinear{}
	hasG := st.Has(gNames[0]) || st.Has(gNames[1])
	switch {
	case hasG:
		g, err := st.F32([]int{out, 1, 1}, gNames...)
		if err != nil {
			return nil, err
		}
		v, err := st.Mat(out, in, false, vNames...)
		if err != nil {
			return nil, err
		}
		w := make([]float32, out*in)
		for o := range out {
			row := v.F32[o*in : (o+1)*in]
			var ss float64
			for _, x := range row {
				ss += float64(x) * float64(x)
			}
			norm := math.Sqrt(ss)
			if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
				return nil, fmt.Errorf("tensor %q: row %d has norm %v; weight norm is undefined", vNames[0], o, norm)
			}
			s := float64(g[o]) / norm
			for i, x := range row {
				w[o*in+i] = float32(float64(x) * s)
			}
		}
		l.w = tensor.NewF32(out, in, w)
	case st.Has(prefix + ".weight"):
		w, err := st.Mat(out, in, false, prefix+".weight")
		if err != nil {
			return nil, err
		}
		l.w = w
	default:
		return nil, &weights.MissingError{Names: append(gNames, prefix+".weight")}
	}
	var err error
	if l.bias, err = st.F32([]int{out}, prefix+".bias"); err != nil {
		return nil, err
	}
	l.w.Pack()
	return l, nil
}

// apply computes y[n, out] = x[n, in]·Wᵀ + b; a nil wnLinear is the identity.
func (l *wnLinear) apply(y, x []float32, n int) {
	if l == nil {
		copy(y, x)
		return
	}
	tensor.Linear(y, x, n, l.w, l.bias)
}

// ErrInvalidCodes is wrapped by the errors of Decode and Decoder.Step for
// codes the model cannot decode (wrong count per frame, out of range).
var ErrInvalidCodes = errors.New("codec: invalid codes")
