package lm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nanovox/nanovox/internal/freelist"
	"github.com/nanovox/nanovox/internal/spm"
	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/weights"
)

// block is one GPT-2 block: pre-LN attention and MLP, Linear weights [out, in].
type block struct {
	ln1W, ln1B []float32 // [H]
	attnW      *tensor.Mat
	attnB      []float32 // [3H, H], [3H]: rows q | k | v, heads contiguous
	projW      *tensor.Mat
	projB      []float32 // [H, H], [H]
	ln2W, ln2B []float32 // [H]
	fcInW      *tensor.Mat
	fcInB      []float32 // [I, H], [I]
	fcOutW     *tensor.Mat
	fcOutB     []float32 // [H, I], [H]
	scale      float32   // attention softmax scale
}

// stack is a GPT-2 decoder without token embeddings (inputs are embeddings).
type stack struct {
	blocks     []block
	lnfW, lnfB []float32
	wpe        *tensor.Mat // absolute positions only; nil with RoPE
}

// Model is a loaded MOSS-TTS-Nano language model: the global transformer, the
// local transformer, the embeddings (which double as output heads) and the
// tokenizer. A Model is immutable after Load and safe for concurrent use; all
// per-request state lives in a Generation.
type Model struct {
	Config *Config
	Tok    *spm.Model
	Dir    string
	// Warnings lists unexpected tensors that were ignored at load.
	Warnings []string

	wte      *tensor.Mat   // [V, H]; also the text head
	audioEmb []*tensor.Mat // [K_c, H]; also the audio heads
	global   stack
	local    stack
	rope     *tensor.RoPE
	template template
	// head holds the global stack's keys and values of the prompt's head
	// (template.head, the rows before the reference), the same for every
	// voice: a prefill copies them instead of computing them again.
	head *kvCache
	// localQKV[c] (c = 0 … n_vq−1), in the f32 mode, holds the local
	// transformer's layer-0 q|k|v (before RoPE) of every input its
	// position c+1 can have: the slot token's embedding at c = 0 (one
	// row), code k of codebook c−1 at row k after that (buildLocalQKV).
	localQKV [][]float32
	// cachePool holds the KV caches of finished generations (their memory
	// is faulted in: reusing it is cheaper than fresh memory).
	cachePool freelist.List[*kvCache]
	// wsPool holds the scratch of NewPrefix calls.
	wsPool freelist.List[*workspace]
	// globalKV and localKV: how the two stacks' KV caches store values
	// (bfloat16 with Options.Matmul BF16, the global stack's int8 and
	// the local's bfloat16 with Int8).
	globalKV, localKV tensor.KVStore
}

// Options tunes Load.
type Options struct {
	// KeepBF16 keeps bfloat16 weights as bfloat16 in memory (kernels widen
	// them exactly); otherwise every weight is stored as float32.
	KeepBF16 bool
	// Matmul is the arithmetic of the products (tensor.Matmul). BF16
	// stores the matrices of both transformers and the audio heads as
	// bfloat16 (rounding float32 ones) and multiplies them with bfloat16 dot
	// products (tensor.PackBF16Dot): inputs rounded to bfloat16, float32
	// accumulation, about twice the throughput of batched steps on CPUs with
	// AVX512_BF16; the KV caches hold bfloat16 too (half their memory).
	// Int8 quantizes the same matrices to int8, each output row with its
	// own scale, and multiplies them by inputs quantized per row at run time
	// (tensor.PackInt8: W8A8, as ONNX Runtime's dynamic quantization): half
	// the bytes of bfloat16 weights, so the products of a single stream's
	// step (which reads every weight once per frame) and of batched steps
	// take about half the time on CPUs with AVX512_VNNI or AVX-VNNI. The
	// global transformer's KV caches (the voice prefixes included) hold int8
	// too, each head of a position with its own scale (a quarter of
	// float32's memory and of the bytes a step's attention reads); the local
	// transformer's hold bfloat16. Both modes' results differ from the
	// float32 reference (Int8's far more) and imply KeepBF16.
	Matmul tensor.Matmul
}

// Unloaded reports whether a tensor of the release's checkpoint is never
// loaded: the tied copies of the heads (the embeddings are the heads) and
// the OpenMOSS layout's dead local wte.
func Unloaded(name string) bool {
	return name == "text_lm_head.weight" || name == "local_transformer.wte.weight" ||
		strings.HasPrefix(name, "audio_lm_heads.")
}

// LoadError is a checkpoint that cannot be loaded (missing file, key, bad shape, bad config).
type LoadError struct {
	Dir string
	Err error
}

func (e *LoadError) Error() string { return fmt.Sprintf("load model %s: %v", e.Dir, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads a MOSS-TTS-Nano checkpoint directory (config.json, weights,
// tokenizer.model) in the OpenMOSS or mlx-community layout.
func Load(dir string, opts Options) (*Model, error) {
	m, err := load(dir, opts)
	if err != nil {
		return nil, &LoadError{Dir: dir, Err: err}
	}
	return m, nil
}

func load(dir string, opts Options) (*Model, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	tokPath := filepath.Join(dir, "tokenizer.model")
	if _, err := os.Stat(tokPath); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	tok, err := spm.Load(tokPath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", tokPath, err)
	}
	if tok.VocabSize() > cfg.GPT2.VocabSize {
		return nil, fmt.Errorf("tokenizer has %d pieces, more than gpt2_config.vocab_size %d", tok.VocabSize(), cfg.GPT2.VocabSize)
	}
	st, err := weights.Open(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	m := &Model{Config: cfg, Tok: tok, Dir: dir}
	H, V := cfg.Hidden(), cfg.GPT2.VocabSize
	var errs []error
	mat := func(rows, cols int, names ...string) *tensor.Mat {
		w, err := st.Mat(rows, cols, opts.KeepBF16 || opts.Matmul != tensor.F32, names...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return w
	}
	vec := func(n int, names ...string) []float32 {
		v, err := st.F32([]int{n}, names...)
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	m.wte = mat(V, H, "transformer.wte.weight")
	for c, k := range cfg.AudioCodebookSizes {
		m.audioEmb = append(m.audioEmb, mat(k, H, fmt.Sprintf("audio_embeddings.%d.weight", c)))
	}
	loadStack := func(prefix string, layers, positions int) stack {
		var s stack
		I := cfg.Inner()
		for i := range layers {
			p := fmt.Sprintf("%s.h.%d.", prefix, i)
			s.blocks = append(s.blocks, block{
				ln1W:   vec(H, p+"ln_1.weight"),
				ln1B:   vec(H, p+"ln_1.bias"),
				attnW:  mat(3*H, H, p+"attn.c_attn.weight"),
				attnB:  vec(3*H, p+"attn.c_attn.bias"),
				projW:  mat(H, H, p+"attn.c_proj.weight"),
				projB:  vec(H, p+"attn.c_proj.bias"),
				ln2W:   vec(H, p+"ln_2.weight"),
				ln2B:   vec(H, p+"ln_2.bias"),
				fcInW:  mat(I, H, p+"mlp.fc_in.weight"),
				fcInB:  vec(I, p+"mlp.fc_in.bias"),
				fcOutW: mat(H, I, p+"mlp.fc_out.weight"),
				fcOutB: vec(H, p+"mlp.fc_out.bias"),
				scale:  cfg.AttnScale(i),
			})
		}
		s.lnfW = vec(H, prefix+".ln_f.weight")
		s.lnfB = vec(H, prefix+".ln_f.bias")
		if cfg.GPT2.PositionEmbeddingType == "absolute" {
			s.wpe = mat(positions, H, prefix+".wpe.weight")
		}
		return s
	}
	m.global = loadStack("transformer", cfg.GPT2.NLayer, cfg.GPT2.NPositions)
	m.local = loadStack("local_transformer", cfg.LocalTransformerLayers, cfg.NVQ+1)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Tied head copies and the dead local wte of the OpenMOSS layout are
	// ignored: the embeddings are the heads.
	for _, n := range st.Unused() {
		if !Unloaded(n) {
			m.Warnings = append(m.Warnings, fmt.Sprintf("ignored unexpected tensor %q", n))
		}
	}
	// Pack the matrices the kernels multiply by (in place; no-op on the
	// portable path). wte stays row-addressable for embedding lookups and the
	// two-row text head.
	switch opts.Matmul {
	case tensor.Int8:
		m.globalKV, m.localKV = tensor.KVInt8, tensor.KVBFloat16
	case tensor.BF16:
		m.globalKV, m.localKV = tensor.KVBFloat16, tensor.KVBFloat16
	}
	pack := func(w *tensor.Mat) { w.PackAs(opts.Matmul) }
	for _, e := range m.audioEmb {
		// Also the audio heads: packed for the products. In the int8 mode
		// (the fast one) the embedding lookups, 32 per stream and frame,
		// read a row index instead of the panels: ≈ 3 µs → 0.8 µs each
		// with cold caches, for 12 MiB; the float modes keep their memory.
		pack(e)
		if opts.Matmul == tensor.Int8 {
			e.IndexRows()
		}
	}
	for _, s := range []*stack{&m.global, &m.local} {
		for i := range s.blocks {
			b := &s.blocks[i]
			pack(b.attnW)
			pack(b.projW)
			pack(b.fcInW)
			pack(b.fcOutW)
		}
	}
	if cfg.GPT2.PositionEmbeddingType == "rope" {
		m.rope = tensor.NewRoPE(cfg.HeadDim(), cfg.RopeBase(), 4096)
	}
	m.template, err = newTemplate(cfg, tok)
	if err != nil {
		return nil, err
	}
	m.head = m.prefillHead()
	if opts.Matmul == tensor.F32 && !m.local.blocks[0].attnW.IsBF16() {
		// Float32 weights only: the table (float32, 142 MB for the
		// release) costs about as much memory as the local weights it
		// saves reading ×5 in float32, but bfloat16 weights read half as
		// many bytes for the same table.
		m.localQKV = m.buildLocalQKV()
	}
	return m, nil
}

// ReleaseIdle drops the KV caches and scratch kept from finished
// generations, so that the garbage collector can return their memory; the
// next requests allocate new ones. For a server that has been idle a while.
// It keeps what one request uses (idleKeepCaches, one NewPrefix scratch):
// a server that speaks now and then would otherwise fault in a stream's
// memory for every request.
func (m *Model) ReleaseIdle() {
	m.cachePool.Keep(idleKeepCaches)
	m.wsPool.Keep(1)
}

// idleKeepCaches is the KV caches ReleaseIdle keeps: a request's
// generation cache and, for an inline clip, its own prefix's.
const idleKeepCaches = 2

// IdleBuffers returns how many KV caches and scratch sets are kept for
// reuse.
func (m *Model) IdleBuffers() int { return m.cachePool.Len() + m.wsPool.Len() }

// WeightBytes returns the memory held by the model's weights, the local
// transformer's lookup table included (buildLocalQKV).
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, t := range m.localQKV {
		n += int64(len(t)) * 4
	}
	add := func(w *tensor.Mat) {
		if w != nil {
			n += w.Bytes()
		}
	}
	addv := func(v []float32) { n += int64(len(v)) * 4 }
	add(m.wte)
	for _, e := range m.audioEmb {
		add(e)
	}
	for _, s := range []*stack{&m.global, &m.local} {
		for i := range s.blocks {
			b := &s.blocks[i]
			add(b.attnW)
			add(b.projW)
			add(b.fcInW)
			add(b.fcOutW)
			for _, v := range [][]float32{b.ln1W, b.ln1B, b.attnB, b.projB, b.ln2W, b.ln2B, b.fcInB, b.fcOutB} {
				addv(v)
			}
		}
		addv(s.lnfW)
		addv(s.lnfB)
		add(s.wpe)
	}
	return n
}

// localEmbedding writes into dst the local transformer's input at position
// c+1, before its position embedding: the audio slot token's embedding for
// c = 0, code of codebook c−1 after that (code is unused for c = 0).
func (m *Model) localEmbedding(dst []float32, c, code int) {
	if c == 0 {
		m.wte.Row(m.Config.AudioAssistantSlotTokenID, dst)
	} else {
		m.audioEmb[c-1].Row(code, dst)
	}
}

// buildLocalQKV computes Model.localQKV. Of the local transformer's n_vq+1
// steps per frame only the first sees the global stack's output; the
// others see an embedding from a small set (the slot token, then one code
// of the previous codebook), so their first product, ln_1 then c_attn
// (a quarter of the layer's weights, read from memory at every step), can
// be looked up instead: a row of 9 KB instead of 7 MB read per step.
// Each row is what the step computes, bit for bit: the same embedding row
// plus the same position embedding, the same row-wise LayerNorm, and a
// product that computes a row the same way whatever rows share the call
// (tensor.Linear).
func (m *Model) buildLocalQKV() [][]float32 {
	cfg := m.Config
	H := cfg.Hidden()
	b := &m.local.blocks[0]
	out := make([][]float32, cfg.NVQ)
	for c := range cfg.NVQ {
		k := 1
		if c > 0 {
			k = cfg.AudioCodebookSizes[c-1]
		}
		x := make([]float32, k*H)
		for code := range k {
			row := x[code*H : (code+1)*H]
			m.localEmbedding(row, c, code)
			if m.local.wpe != nil {
				m.local.wpe.AddRow(row, c+1)
			}
		}
		h := make([]float32, k*H)
		tensor.LayerNorm(h, x, k, b.ln1W, b.ln1B, float32(cfg.GPT2.LayerNormEpsilon))
		out[c] = tensor.MakeHuge(k * 3 * H)
		tensor.Linear(out[c], h, k, b.attnW, b.attnB)
	}
	return out
}
