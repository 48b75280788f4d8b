package lm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nanovox/nanovox/internal/mossnano/text"
	"github.com/nanovox/nanovox/internal/tensor"
)

// InputError is a request the model cannot serve as given (empty text, bad
// parameters, reference codes outside the codebooks). Callers map it to a
// client error.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// EventKind tells what a generation step produced.
type EventKind int

const (
	// EventFrame carries one frame of n_vq audio codes.
	EventFrame EventKind = iota
	// EventChunkEnd marks the end of a text chunk; Pause is the silence
	// (seconds) the OpenMOSS assembly puts after it, 0 after the last chunk.
	EventChunkEnd
)

// Event is the outcome of one step of a Generation.
type Event struct {
	Kind  EventKind
	Chunk int
	// Frame holds the codes of an EventFrame; the slice belongs to the caller.
	Frame []int
	Pause float64
	// Last is set on the final EventChunkEnd of the generation.
	Last bool
}

type genState int

const (
	stateStartChunk genState = iota
	stateDecoding
	stateDone
)

// Generation is the state of one request: its text chunks, the reference,
// the KV caches and the random generator. It advances one frame per step,
// either alone (Next) or stepped together with others (Stepper.Step).
// A Generation is not safe for concurrent use.
type Generation struct {
	m      *Model
	params Params
	ref    [][]int
	prefix *Prefix
	chunks []text.Chunk

	chunk  int
	state  genState
	pre    *kvCache // global, the prompt prefix: prefix.cache, or computed at the first chunk; read-only
	cache  *kvCache // global, the positions after the prefix; reset per chunk
	ownPre bool     // pre belongs to this generation (back to the pool at the end)
	local  *kvCache // local, reset per frame
	seen   [][]bool // [channel][code]: codes generated in this chunk
	frames int      // frames generated in the current chunk
	cap    int      // frame limit of the current chunk
	last   []int    // codes of the previous frame
	smp    *sampler
	own    *Stepper

	// per-step scratch (positions inside the batch)
	g []float32
}

// Chunks returns the text chunks the generation speaks, in order.
func (g *Generation) Chunks() []text.Chunk { return g.chunks }

// Done reports whether the generation has produced its last event.
func (g *Generation) Done() bool { return g.state == stateDone }

// Prefix is the KV cache of a reference's prompt prefix (everything before the
// target text). It is immutable once computed and can be shared by any number
// of generations with the same reference.
type Prefix struct {
	ref   [][]int
	cache *kvCache
}

// Rows returns the number of prompt rows the prefix covers.
func (p *Prefix) Rows() int { return p.cache.n }

// Bytes returns the memory held by the prefix cache.
func (p *Prefix) Bytes() int64 { return p.cache.bytes() }

// NewPrefix computes the prompt prefix of a reference once.
func (m *Model) NewPrefix(ref [][]int) (*Prefix, error) {
	return m.NewPrefixContext(context.Background(), ref)
}

// NewPrefixContext is NewPrefix that returns ctx's error once ctx is done,
// checked between the transformer's layers: the prefill of a long
// reference takes a while, and a request whose client left should not
// hold its slot for it.
func (m *Model) NewPrefixContext(ctx context.Context, ref [][]int) (*Prefix, error) {
	if err := m.checkRef(ref); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), m.prefixLen(ref), m.globalKV)
	m.prefill(ctx, c, ref)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Prefix{ref: cloneFrames(ref), cache: c}, nil
}

// prefill computes the prompt prefix of ref into the empty cache c. When
// ctx is done it stops early and c is unfinished.
//
// The prompt's head (the rows before the reference) is the same for every
// voice: its keys and values are copied from m.head, computed once at
// load, and only the reference's rows and the rows after them go through
// the stack (14 of the release's 133 rows for a 5 s clip are saved). The
// cache holds the same bits as a prefill of every row: each product
// computes a row the same way whatever rows share the call (tensor.Linear),
// and so does the causal attention (tensor.AttendWindows, which every row
// of a pass of more than one row takes: the rows after the reference are
// never fewer than len(template.afterRef) ≥ 1, plus one per reference frame).
func (m *Model) prefill(ctx context.Context, c *kvCache, ref [][]int) {
	m.forwardRows(ctx, c, m.startPrefill(c, ref, nil))
}

// startPrefill copies the prompt's head into the empty cache c and appends
// to rows the rows that must go through the stack after it to complete
// ref's prefix (see prefill).
func (m *Model) startPrefill(c *kvCache, ref [][]int, rows Rows) Rows {
	h := m.head
	c.reserve(h.n)
	for l := range c.layers {
		c.layers[l].CopyRows(&h.layers[l], h.n, h.nh, h.hd)
	}
	c.n = h.n
	rows = m.appendAudioRows(rows, m.Config.AudioUserSlotTokenID, ref)
	return m.appendTextRows(rows, m.template.afterRef)
}

// prefillHead computes the keys and values of the prompt's head, which
// every prefill starts from.
func (m *Model) prefillHead() *kvCache {
	n := len(m.template.head)
	c := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), n, m.globalKV)
	m.forwardRows(context.Background(), c, m.appendTextRows(nil, m.template.head))
	return c
}

// forwardRows runs the global stack over rows after c's cached positions,
// appending their keys and values to c. When ctx is done it stops early
// and c is unfinished.
func (m *Model) forwardRows(ctx context.Context, c *kvCache, rows Rows) {
	n := len(rows) / (m.Config.NVQ + 1)
	// The scratch of earlier prefills is reused: its memory is faulted in.
	ws, ok := m.wsPool.Get()
	if !ok {
		ws = new(workspace)
	}
	defer m.wsPool.Put(ws)
	ws.ctx = ctx
	defer func() { ws.ctx = nil }()
	ws.x = grow(ws.x, n*m.Config.Hidden())
	m.embedRows(ws.x, rows)
	m.forward(&m.global, ws.x, []seqRows{{cache: c, n: n}}, ws)
}

func cloneFrames(f [][]int) [][]int {
	out := make([][]int, len(f))
	for i := range f {
		out[i] = append([]int(nil), f[i]...)
	}
	return out
}

// NewGeneration prepares a voice-clone request: ref holds the reference
// clip's codes [frames][≥n_vq]; prefix, if not nil, must have been computed
// from the same ref and saves its prefill.
func (m *Model) NewGeneration(ref [][]int, prefix *Prefix, input string, p Params) (*Generation, error) {
	return m.NewGenerationContext(context.Background(), ref, prefix, input, p)
}

// NewGenerationContext is NewGeneration that returns ctx's error once ctx
// is done: splitting a long input takes time, and a request whose client
// left should not finish it.
func (m *Model) NewGenerationContext(ctx context.Context, ref [][]int, prefix *Prefix, input string, p Params) (*Generation, error) {
	if err := p.Validate(); err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	if strings.TrimSpace(input) == "" {
		return nil, &InputError{Msg: "text is empty"}
	}
	if prefix != nil {
		ref = prefix.ref // validated when the prefix was made
	} else if err := m.checkRef(ref); err != nil {
		return nil, err
	}
	chunks, err := text.SplitContext(ctx, m.Tok, input, p.MaxTextTokens)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &InputError{Msg: err.Error()}
	}
	if len(chunks) == 0 {
		return nil, &InputError{Msg: "text is empty"}
	}
	g := &Generation{m: m, params: p, ref: ref, prefix: prefix, chunks: chunks, smp: newSampler(p.Seed)}
	if prefix != nil {
		g.pre = prefix.cache
	}
	maxText := 0
	for _, c := range chunks {
		maxText = max(maxText, len(c.TokenIDs))
	}
	// Room for the text and a few seconds of frames after the shared
	// prefix; the cache grows only for requests that run longer, so memory
	// follows use.
	capacity := maxText + len(m.template.tail) + min(p.MaxNewFrames, 64) + 1
	g.cache = m.getCache(capacity, true)
	g.local = newKVCache(m.Config.LocalTransformerLayers, m.Config.GPT2.NHead, m.Config.HeadDim(), m.Config.NVQ+1, m.localKV)
	g.seen = make([][]bool, m.Config.NVQ)
	for c, k := range m.Config.AudioCodebookSizes {
		g.seen[c] = make([]bool, k)
	}
	return g, nil
}

// getCache returns an empty global KV cache with room for n positions,
// reusing one from a finished generation when possible. A generation's
// cache grows ahead of need (kvCache.growAhead); a prefix's is filled
// once.
func (m *Model) getCache(n int, growAhead bool) *kvCache {
	c, ok := m.cachePool.Get()
	if !ok {
		c = newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), n, m.globalKV)
		// Take the page faults now: a generation's cache is made while
		// its request is prepared, off the frame steps that would
		// otherwise fault its pages in position by position.
		tensor.FaultInKVs(c.layers)
	}
	c.growAhead = growAhead
	c.reserve(n)
	return c
}

// putCache empties a finished generation's cache and keeps it for the
// next (its memory is faulted in): emptied first, so that a cache waiting
// in the pool holds no block on its way (kvCache.reset).
func (m *Model) putCache(c *kvCache) {
	c.reset()
	m.cachePool.Put(c)
}

// Next advances the generation by one step on its own. It returns
// context.Canceled (or the context's error) without doing work when ctx is
// done, and io.EOF-like ErrDone after the last event.
func (g *Generation) Next(ctx context.Context) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	if g.state == stateDone {
		return Event{}, ErrDone
	}
	if g.own == nil {
		g.own = g.m.NewStepper()
	}
	evs, err := g.own.Step([]*Generation{g})
	if err != nil {
		return Event{}, err
	}
	return evs[0], nil
}

// ErrDone is returned by Next after the generation's last event.
var ErrDone = errors.New("nano: generation done")

// Stepper advances many generations by one frame each with batched math:
// one global forward over all their new rows, then the local transformer for
// all of them together. Its scratch buffers are reused across steps. A
// Stepper is not safe for concurrent use; results are identical to stepping
// each generation alone.
type Stepper struct {
	m        *Model
	gws, lws workspace
	x, lx, h []float32
	logits   []float32
	rows     Rows

	// per-step bookkeeping, reused
	active, cont       []*Generation
	activeIdx, contIdx []int
	seqs, lseqs        []seqRows
	pass               []seqRows // the global pass's sequences: own prefixes, then seqs
	pend               []int     // rows of each active generation's own prefix in this pass

	budget  *frameBudget // nil except in the per-frame budget benchmark
	noTable bool         // compute what localQKV holds (a benchmark's A/B)
	qkv0    [][]float32

	// One codebook's sampling for every continuing generation
	// (sampleCodes); sampleFn is s.sampleRange, made once so that handing
	// it to the pool does not allocate.
	sc       sampleCall
	sampleFn func(lo, hi int)
}

// sampleCall is what sampleRange needs of one codebook's sampling: the
// continuing generations, their logits (k per generation), the codebook
// and where each pick goes.
type sampleCall struct {
	cont   []*Generation
	logits []float32
	k, c   int
	codes  [][]int
	errs   []error
}

// sampleGrain is how many generations one pool task samples (a pick over
// a 1024-code head takes about 7 µs). Up to eight sample on the caller
// alone: with four per task, eight int8 streams sampled slower (1.0–1.7
// against 0.8–1.2 ms a step), their one-row products leaving the pool's
// helper asleep; from sixteen streams on, the tasks halve the phase
// (FrameBudget/step-16 sample-ms: int8 1.7 → 1.1–1.4, f32 1.9–3.1 →
// 1.6–1.7).
const sampleGrain = 8

// NewStepper returns a Stepper for m.
func (m *Model) NewStepper() *Stepper {
	s := &Stepper{m: m}
	s.sampleFn = s.sampleRange
	return s
}

// sampleCodes picks codebook c's code of each continuing generation from
// its row of logits (k codes each), after its repetition penalty, into
// codes[i][c]. Each generation samples with its own sampler and history,
// so the picks do not depend on how the generations are spread over the
// pool; the error is the first generation's in order, as in a serial loop.
func (s *Stepper) sampleCodes(cont []*Generation, logits []float32, k, c int, codes [][]int) error {
	n := len(cont)
	errs := slices.Grow(s.sc.errs[:0], n)[:n]
	s.sc = sampleCall{cont: cont, logits: logits, k: k, c: c, codes: codes, errs: errs}
	tensor.For(n, sampleGrain, s.sampleFn)
	s.sc = sampleCall{errs: errs[:0]} // drop the references to this step's generations
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sampleRange samples generations [lo, hi) of s.sc.
func (s *Stepper) sampleRange(lo, hi int) {
	sc := &s.sc
	for i := lo; i < hi; i++ {
		g := sc.cont[i]
		lg := sc.logits[i*sc.k : (i+1)*sc.k]
		penalize(lg, g.seen[sc.c], float32(g.params.RepetitionPenalty))
		p := &g.params
		sc.codes[i][sc.c], sc.errs[i] = g.smp.pick(lg, p.Greedy, p.AudioTemperature, p.AudioTopK, p.AudioTopP)
	}
}

// Step advances every generation (none may be Done) by one step and returns
// one event per generation, in order.
func (s *Stepper) Step(gens []*Generation) ([]Event, error) {
	m := s.m
	cfg := m.Config
	H, W := cfg.Hidden(), cfg.NVQ+1
	eps := float32(cfg.GPT2.LayerNormEpsilon)
	evs := make([]Event, len(gens))
	bud := s.budget
	bud.start()
	defer bud.lap(phaseGlue)

	// 1. Chunks that reached their frame limit end without compute (the
	//    upstream loop simply runs out).
	active, activeIdx := s.active[:0], s.activeIdx[:0]
	defer func() { s.active, s.activeIdx = active[:0], activeIdx[:0] }()
	for i, g := range gens {
		if g.state == stateDone {
			return nil, fmt.Errorf("nano: step of a finished generation")
		}
		if g.state == stateDecoding && g.frames >= g.cap {
			evs[i] = g.endChunk()
			continue
		}
		active = append(active, g)
		activeIdx = append(activeIdx, i)
	}
	if len(active) == 0 {
		return evs, nil
	}

	// 2. Global transformer over each generation's new rows. A generation
	//    without a shared prefix computes its own, once for all its
	//    chunks, in the same pass as its first chunk's rows: the prefix's
	//    rows go first, as a sequence of their own whose keys and values
	//    fill pre, and the chunk's rows attend over them as over a shared
	//    prefix. Every row is computed as in a pass of its own (products
	//    row by row, the same attention kernels as NewPrefix and a
	//    prompt after a prefix use), so the cache and the frames are the
	//    bits of a separate prefill; the weights are read once instead of
	//    twice, and the pass's products have more rows to share them.
	s.rows = s.rows[:0]
	s.pass = s.pass[:0]
	s.pend = slices.Grow(s.pend[:0], len(active))[:len(active)]
	for i, g := range active {
		s.pend[i] = 0
		if g.state == stateStartChunk && g.pre == nil {
			g.pre = m.getCache(m.prefixLen(g.ref), false)
			g.ownPre = true
			n0 := len(s.rows)
			s.rows = m.startPrefill(g.pre, g.ref, s.rows)
			s.pend[i] = (len(s.rows) - n0) / W
			s.pass = append(s.pass, seqRows{cache: g.pre, n: s.pend[i]})
		}
	}
	P := len(s.rows) / W // rows of own prefixes, before the steps' rows
	seqs := slices.Grow(s.seqs[:0], len(active))[:len(active)]
	s.seqs = seqs
	for i, g := range active {
		n0 := len(s.rows)
		if g.state == stateStartChunk {
			g.startChunk()
			s.rows = m.appendChunkRows(s.rows, g.chunks[g.chunk].TokenIDs)
		} else {
			s.rows = append(s.rows, cfg.AudioAssistantSlotTokenID)
			s.rows = append(s.rows, g.last...)
		}
		seqs[i] = seqRows{cache: g.cache, pre: g.pre, n: (len(s.rows) - n0) / W, pend: s.pend[i]}
	}
	s.pass = append(s.pass, seqs...)
	R := len(s.rows) / W
	s.x = grow(s.x, R*H)
	m.embedRows(s.x, s.rows)
	bud.lap(phaseGlue)
	m.forward(&m.global, s.x, s.pass, &s.gws)
	bud.lap(phaseGlobal)

	// g_i = ln_f(last row of sequence i): the input of the local transformer.
	n := len(active)
	s.lx = grow(s.lx, n*H)
	r := P
	for i, sq := range seqs {
		r += sq.n
		tensor.LayerNorm(s.lx[i*H:(i+1)*H], s.x[(r-1)*H:r*H], 1, m.global.lnfW, m.global.lnfB, eps)
	}

	// 3. Local transformer position 0: the text decision (slot vs end).
	lseqs := slices.Grow(s.lseqs[:0], n)[:n]
	s.lseqs = lseqs
	for i, g := range active {
		g.local.reset()
		lseqs[i] = seqRows{cache: g.local, n: 1}
	}
	s.h = grow(s.h, n*H)
	bud.lap(phaseGlue)
	m.forward(&m.local, s.lx, lseqs, &s.lws)
	tensor.LayerNorm(s.h, s.lx, n, m.local.lnfW, m.local.lnfB, eps)
	bud.lap(phaseLocal)
	var two [2]float32
	cand := []int{cfg.AudioAssistantSlotTokenID, cfg.AudioEndTokenID}
	cont, contIdx := s.cont[:0], s.contIdx[:0]
	defer func() { s.cont, s.contIdx = cont[:0], contIdx[:0] }()
	for i, g := range active {
		tensor.LinearRows(two[:], s.h[i*H:(i+1)*H], 1, m.wte, cand)
		bud.lap(phaseHeads)
		p := &g.params
		topK := p.TextTopK
		choice, err := g.smp.pick(two[:], p.Greedy, p.TextTemperature, topK, p.TextTopP)
		if err != nil {
			return nil, err
		}
		bud.lap(phaseSample)
		if choice != 0 && !p.IgnoreEOS {
			evs[activeIdx[i]] = g.endChunk()
			continue
		}
		cont = append(cont, g)
		contIdx = append(contIdx, activeIdx[i])
	}
	if len(cont) == 0 {
		return evs, nil
	}

	// 4. The n_vq codes, one local position each, fed back through the
	//    codebook embeddings. Continuing generations keep their local caches.
	n = len(cont)
	lseqs = lseqs[:0]
	for _, g := range cont {
		lseqs = append(lseqs, seqRows{cache: g.local, n: 1})
	}
	// The codes belong to the caller (events): one block for the step.
	flat := make([]int, n*cfg.NVQ)
	codes := make([][]int, n)
	for i := range codes {
		codes[i] = flat[i*cfg.NVQ : (i+1)*cfg.NVQ : (i+1)*cfg.NVQ]
	}
	for c := range cfg.NVQ {
		table := m.localQKV != nil && !s.noTable
		s.qkv0 = s.qkv0[:0]
		for i := range cont {
			code := 0 // the previous codebook's code; row 0 of the table at c = 0
			if c > 0 {
				code = codes[i][c-1]
			}
			m.localEmbedding(s.lx[i*H:(i+1)*H], c, code)
			if table {
				s.qkv0 = append(s.qkv0, m.localQKV[c][code*3*H:(code+1)*3*H])
			}
		}
		if table {
			s.lws.qkv0 = s.qkv0
		}
		bud.lap(phaseGlue)
		m.forward(&m.local, s.lx[:n*H], lseqs, &s.lws)
		s.lws.qkv0 = nil
		tensor.LayerNorm(s.h, s.lx, n, m.local.lnfW, m.local.lnfB, eps)
		bud.lap(phaseLocal)
		K := cfg.AudioCodebookSizes[c]
		s.logits = grow(s.logits, n*K)
		tensor.Linear(s.logits, s.h, n, m.audioEmb[c], nil)
		bud.lap(phaseHeads)
		if err := s.sampleCodes(cont, s.logits, K, c, codes); err != nil {
			return nil, err
		}
		bud.lap(phaseSample)
	}
	for i, g := range cont {
		for c, code := range codes[i] {
			g.seen[c][code] = true
		}
		g.last = append(g.last[:0], codes[i]...)
		g.frames++
		g.state = stateDecoding
		evs[contIdx[i]] = Event{Kind: EventFrame, Chunk: g.chunk, Frame: codes[i]}
	}
	return evs, nil
}

// startChunk resets the per-chunk state (fresh KV cache, repetition history).
func (g *Generation) startChunk() {
	g.cache.reset()
	for _, s := range g.seen {
		clear(s)
	}
	g.frames = 0
	g.cap = g.params.chunkFrameCap(len(g.chunks[g.chunk].TokenIDs))
	g.state = stateDecoding
}

// endChunk finishes the current chunk and returns its event.
func (g *Generation) endChunk() Event {
	ev := Event{Kind: EventChunkEnd, Chunk: g.chunk}
	if g.chunk == len(g.chunks)-1 {
		ev.Last = true
		g.state = stateDone
		g.m.putCache(g.cache)
		g.cache = nil
		if g.ownPre {
			g.m.putCache(g.pre)
		}
		g.pre = nil
	} else {
		ev.Pause = g.chunks[g.chunk].PauseAfter
		g.chunk++
		g.state = stateStartChunk
	}
	return ev
}
