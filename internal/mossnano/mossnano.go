// Package mossnano is the MOSS-TTS-Nano model family: it registers itself
// with the engine (register.go, with the rules that find a checkpoint's
// language model and codec) and implements engine.Family over the language
// model of package lm and the MOSS-Audio-Tokenizer-Nano codec of package
// codec; package text splits input text as OpenMOSS does, and testmodel
// writes checkpoints in the release's format. Each text chunk's frames are decoded with a fresh
// streaming codec decoder and chunks are joined with the OpenMOSS pauses
// (0.40 s after a chunk of at most four words, 0.24 s otherwise), so
// streamed audio equals the OpenMOSS whole-utterance assembly.
package mossnano

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/freelist"
	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/lm"
	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/textnorm"
)

// Family is a loaded MOSS-TTS-Nano model with its codec.
type Family struct {
	LM     *lm.Model
	Codec  *codec.Model
	name   string
	matmul tensor.Matmul
	// decoders keeps streaming decoders of finished requests: a new
	// decoder's K/V windows (26 MB, 13 with --matmul bf16) cost page faults
	// the first time they are written; a reset one does not.
	decoders freelist.List[*codec.Decoder]
}

// decoder returns a reset streaming decoder.
func (f *Family) decoder() *codec.Decoder {
	if d, ok := f.decoders.Get(); ok {
		return d
	}
	return f.Codec.NewDecoder()
}

// ReleaseIdle implements engine.IdleReleaser: it drops the decoders and
// KV caches kept from finished requests, all but one request's (a decoder,
// its caches, one encode's buffers). Memory the process has handed back
// comes back in 4 KiB pages, faulted in at 1–2.7 ms per MiB on the VMs we
// measured: without them a server that speaks now and then paid that for
// every request (a saved voice's first audio 74–121 ms instead of 44–51
// in f32, bench --cold).
func (f *Family) ReleaseIdle() {
	f.decoders.Keep(1)
	f.LM.ReleaseIdle()
	f.Codec.ReleaseIdle()
}

// Options tune Load.
type Options struct {
	// KeepBF16 keeps bfloat16 weights as bfloat16 in memory.
	KeepBF16 bool
	// Matmul is the arithmetic of the language model's and the codec's
	// products (see lm.Options.Matmul and codec.Options.Matmul); the caller
	// has applied tensor.Matmul.Available.
	Matmul tensor.Matmul
	// Name is reported in Info (defaults to the LM directory).
	Name string
}

// Load loads the language model from lmDir and the codec from codecDir.
func Load(lmDir, codecDir string, opts Options) (*Family, error) {
	m, err := lm.Load(lmDir, lm.Options{KeepBF16: opts.KeepBF16, Matmul: opts.Matmul})
	if err != nil {
		return nil, err
	}
	cd, err := codec.Load(codecDir, codec.Options{KeepBF16: opts.KeepBF16, Matmul: opts.Matmul})
	if err != nil {
		return nil, fmt.Errorf("load codec %s: %w", codecDir, err)
	}
	if cd.NumQuantizers() < m.Config.NVQ {
		return nil, fmt.Errorf("codec %s has %d quantizers; the model needs %d", codecDir, cd.NumQuantizers(), m.Config.NVQ)
	}
	for c, k := range m.Config.AudioCodebookSizes {
		if k != cd.CodebookSize() {
			return nil, fmt.Errorf("codec codebook size %d does not match the model's audio_codebook_sizes[%d] = %d", cd.CodebookSize(), c, k)
		}
	}
	if cd.SampleRate() != m.Config.AudioTokenizerSampleRate {
		return nil, fmt.Errorf("codec sample rate %d does not match the model's audio_tokenizer_sample_rate %d", cd.SampleRate(), m.Config.AudioTokenizerSampleRate)
	}
	name := opts.Name
	if name == "" {
		name = lmDir
	}
	// Build the text normalizer's tables now, not in the first request.
	textnorm.OpenMOSS().Normalize("第1章: 12.5% of $3, 2024-05-06.", textnorm.Auto, textnorm.All)
	return &Family{LM: m, Codec: cd, name: name, matmul: opts.Matmul}, nil
}

// Info implements engine.Family.
func (f *Family) Info() engine.Info {
	return engine.Info{
		Name:            f.name,
		ModelType:       lm.ModelType,
		SampleRate:      f.Codec.SampleRate(),
		Channels:        f.Codec.Channels(),
		SamplesPerFrame: f.Codec.SamplesPerFrame(),
		CodesPerFrame:   f.LM.Config.NVQ,
		WeightBytes:     f.LM.WeightBytes() + f.Codec.WeightBytes(),
		Matmul:          f.matmul,
	}
}

// DefaultParams implements engine.Family with the OpenMOSS defaults.
func (f *Family) DefaultParams() engine.Params {
	d := lm.DefaultParams()
	return engine.Params{
		Temperature:       d.AudioTemperature,
		TopP:              d.AudioTopP,
		TopK:              d.AudioTopK,
		RepetitionPenalty: d.RepetitionPenalty,
		MaxFrames:         d.MaxNewFrames,
		MaxTextTokens:     d.MaxTextTokens,
		Normalize:         true, // as OpenMOSS's infer.py and app.py
	}
}

// EncodeReference implements engine.Family.
func (f *Family) EncodeReference(ctx context.Context, pcm []float32) (*engine.Voice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	codes, err := f.Codec.EncodeContext(ctx, pcm)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		return nil, &engine.InputError{Msg: "ref_audio: " + err.Error()}
	}
	if len(codes) == 0 {
		return nil, &engine.InputError{Msg: "ref_audio is shorter than one codec frame"}
	}
	n := f.LM.Config.NVQ
	for i := range codes {
		codes[i] = codes[i][:n:n]
	}
	return &engine.Voice{Codes: codes}, nil
}

// NewPrefix implements engine.Family.
func (f *Family) NewPrefix(ctx context.Context, v *engine.Voice) (engine.Prefix, error) {
	p, err := f.LM.NewPrefixContext(ctx, v.Codes)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return p, nil
}

func lmParams(p engine.Params) lm.Params {
	n := lm.DefaultParams()
	n.Greedy = p.Greedy
	n.AudioTemperature = p.Temperature
	n.AudioTopP = p.TopP
	n.AudioTopK = p.TopK
	n.RepetitionPenalty = p.RepetitionPenalty
	n.MaxNewFrames = p.MaxFrames
	n.MaxTextTokens = p.MaxTextTokens
	n.Seed = p.Seed
	n.IgnoreEOS = p.IgnoreEOS
	return n
}

func mapErr(err error) error {
	var ie *lm.InputError
	if errors.As(err, &ie) {
		return &engine.InputError{Msg: ie.Msg}
	}
	return err
}

// job is one request: the LM generation plus a streaming codec decoder.
type job struct {
	f      *Family
	gen    *lm.Generation
	dec    *codec.Decoder
	chunks []string
	buf    []float32
}

func (j *job) Chunks() []string { return j.chunks }
func (j *job) Done() bool       { return j.gen.Done() }

func (j *job) InputTokens() int {
	n := 0
	for _, c := range j.gen.Chunks() {
		n += len(c.TokenIDs)
	}
	return n
}

// Prepare implements engine.Family.
func (f *Family) Prepare(ctx context.Context, v *engine.Voice, prefix engine.Prefix, text string, p engine.Params) (engine.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var np *lm.Prefix
	if prefix != nil {
		var ok bool
		if np, ok = prefix.(*lm.Prefix); !ok {
			return nil, fmt.Errorf("mossnano: foreign prefix %T", prefix)
		}
	}
	var ref [][]int
	if v != nil {
		ref = v.Codes
	}
	if p.Normalize {
		text = textnorm.OpenMOSS().Normalize(text, textnorm.Auto, textnorm.All)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	gen, err := f.LM.NewGenerationContext(ctx, ref, np, text, lmParams(p))
	if err != nil {
		return nil, mapErr(err)
	}
	j := &job{f: f, gen: gen, dec: f.decoder()}
	for _, c := range gen.Chunks() {
		j.chunks = append(j.chunks, c.Text)
	}
	return j, nil
}

// Close implements engine.Family.
func (f *Family) Close() error { return nil }

// stepper implements engine.Pipeline: Generate runs the language model
// (its own scratch in st), Render the codec (its own scratch in batch), so
// the engine can decode one step's frames while it generates the next.
type stepper struct {
	f    *Family
	st   *lm.Stepper
	gens []*lm.Generation

	// One batched codec step for every stream that produced a frame.
	batch  *codec.Batch
	decs   []*codec.Decoder
	frames [][]int
	bufs   [][]float32
	which  []int // job index of each batch entry
}

// frameBatch is what Generate hands to Render.
type frameBatch struct {
	jobs []*job
	evs  []lm.Event
}

// NewStepper implements engine.Family.
func (f *Family) NewStepper() engine.Stepper {
	return &stepper{f: f, st: f.LM.NewStepper(), batch: f.Codec.NewBatch()}
}

// Step implements engine.Stepper.
func (s *stepper) Step(jobs []engine.Job) ([]engine.Output, error) {
	g, err := s.Generate(jobs)
	if err != nil {
		return nil, err
	}
	return s.Render(g)
}

// Generate implements engine.Pipeline: the next frame (or chunk end) of
// every job.
func (s *stepper) Generate(jobs []engine.Job) (any, error) {
	g := &frameBatch{jobs: make([]*job, len(jobs))}
	s.gens = s.gens[:0]
	for i, j := range jobs {
		jj, ok := j.(*job)
		if !ok || jj.f != s.f {
			return nil, fmt.Errorf("mossnano: job %T is not from this family", j)
		}
		g.jobs[i] = jj
		s.gens = append(s.gens, jj.gen)
	}
	evs, err := s.st.Step(s.gens)
	if err != nil {
		return nil, err
	}
	g.evs = evs
	return g, nil
}

// Render implements engine.Pipeline: decodes the generated frames with one
// batched codec step and turns chunk ends into the pauses between chunks.
func (s *stepper) Render(generated any) ([]engine.Output, error) {
	g, ok := generated.(*frameBatch)
	if !ok {
		return nil, fmt.Errorf("mossnano: Render of %T", generated)
	}
	jobs, evs := g.jobs, g.evs
	s.decs, s.frames, s.bufs, s.which = s.decs[:0], s.frames[:0], s.bufs[:0], s.which[:0]
	for i, ev := range evs {
		if ev.Kind == lm.EventFrame {
			j := jobs[i]
			s.decs = append(s.decs, j.dec)
			s.frames = append(s.frames, ev.Frame)
			s.bufs = append(s.bufs, j.buf[:0])
			s.which = append(s.which, i)
		}
	}
	if len(s.decs) > 0 {
		if err := s.batch.Step(s.decs, s.frames, s.bufs); err != nil {
			return nil, fmt.Errorf("mossnano: decode frames: %w", err)
		}
	}
	for k, i := range s.which {
		jobs[i].buf = s.bufs[k]
	}
	outs := make([]engine.Output, len(jobs))
	sr := float64(s.f.Codec.SampleRate())
	ch := s.f.Codec.Channels()
	for i, ev := range evs {
		j := jobs[i]
		o := engine.Output{Chunk: ev.Chunk}
		switch ev.Kind {
		case lm.EventFrame:
			o.Samples = j.buf
			o.Frame = ev.Frame
		case lm.EventChunkEnd:
			o.ChunkEnd = true
			o.Done = ev.Last
			j.dec.Reset()
			if ev.Last {
				f := s.f
				f.decoders.Put(j.dec) // reuse its memory (already faulted in) for the next request
				j.dec = nil
			}
			if n := int(math.Round(sr * ev.Pause)); n > 0 {
				j.buf = slices.Grow(j.buf[:0], n*ch)[:n*ch]
				clear(j.buf)
				o.Samples = j.buf
			}
		}
		outs[i] = o
	}
	return outs, nil
}
