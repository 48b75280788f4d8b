package lm

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Params are the decoding parameters of one request.
type Params struct {
	// Greedy disables sampling (upstream do_sample=False): argmax everywhere,
	// the repetition penalty still applies, as upstream.
	Greedy bool

	TextTemperature float64
	TextTopK        int
	TextTopP        float64

	AudioTemperature  float64
	AudioTopK         int
	AudioTopP         float64
	RepetitionPenalty float64

	// MaxNewFrames caps the frames generated per text chunk (upstream
	// max_new_frames).
	MaxNewFrames int
	// FrameCapBase and FramesPerToken add a runaway guard per chunk: a chunk
	// of n text tokens stops after FrameCapBase + FramesPerToken·n frames
	// (when that is below MaxNewFrames). FramesPerToken 0 disables the guard.
	FrameCapBase   int
	FramesPerToken float64

	// MaxTextTokens is the sentence-chunking budget (tokens per chunk).
	MaxTextTokens int

	// Seed seeds the request's random generator: the same seed, text and
	// reference give the same frames.
	Seed uint64

	// IgnoreEOS keeps generating until MaxNewFrames even when the model picks
	// audio-end (benchmarks use it for a fixed frame count).
	IgnoreEOS bool
}

// DefaultParams returns the OpenMOSS infer.py / runtime defaults (also
// mlx-audio's): sampling on, text temperature 1.0, top-k 50, top-p 1.0;
// audio temperature 0.8, top-p 0.95, top-k 25, repetition penalty 1.2;
// 375 frames per chunk, 75 text tokens per chunk; plus nanovox's runaway
// guard (2 s + 0.64 s per text token).
func DefaultParams() Params {
	return Params{
		TextTemperature:   1.0,
		TextTopK:          50,
		TextTopP:          1.0,
		AudioTemperature:  0.8,
		AudioTopK:         25,
		AudioTopP:         0.95,
		RepetitionPenalty: 1.2,
		MaxNewFrames:      375,
		FrameCapBase:      25,
		FramesPerToken:    8,
		MaxTextTokens:     75,
	}
}

// Validate checks that the parameters are usable.
func (p *Params) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !p.Greedy && !(p.TextTemperature > 0 && finite(p.TextTemperature)):
		return fmt.Errorf("text temperature must be positive and finite, is %v", p.TextTemperature)
	case !p.Greedy && !(p.AudioTemperature > 0 && finite(p.AudioTemperature)):
		return fmt.Errorf("temperature must be positive and finite, is %v", p.AudioTemperature)
	case !(p.AudioTopP > 0 && p.AudioTopP <= 1), !(p.TextTopP > 0 && p.TextTopP <= 1):
		return fmt.Errorf("top_p must be in (0, 1], is %v", p.AudioTopP)
	case p.AudioTopK < 0 || p.TextTopK < 0:
		return fmt.Errorf("top_k must not be negative, is %d", p.AudioTopK)
	case !(p.RepetitionPenalty > 0 && finite(p.RepetitionPenalty)):
		return fmt.Errorf("repetition penalty must be positive and finite, is %v", p.RepetitionPenalty)
	case p.MaxNewFrames <= 0:
		return fmt.Errorf("max new frames must be positive, is %d", p.MaxNewFrames)
	case p.MaxTextTokens <= 0:
		return fmt.Errorf("max text tokens must be positive, is %d", p.MaxTextTokens)
	case p.FrameCapBase < 0 || !(p.FramesPerToken >= 0 && finite(p.FramesPerToken)):
		return fmt.Errorf("frame cap parameters must not be negative")
	}
	return nil
}

// chunkFrameCap returns the frame limit of a chunk of n text tokens.
func (p *Params) chunkFrameCap(n int) int {
	limit := p.MaxNewFrames
	if p.FramesPerToken > 0 && !p.IgnoreEOS {
		c := p.FrameCapBase + int(math.Ceil(p.FramesPerToken*float64(n)))
		if c < limit {
			limit = c
		}
	}
	return limit
}

// sampler draws tokens the way upstream's _sample_next_token does:
// repetition penalty, then (when sampling) temperature, top-k (ties at the
// threshold kept), top-p (smallest prefix of the descending order whose mass
// reaches p, at least one token), then a categorical draw.
type sampler struct {
	rng   *rand.Rand
	cand  []int // the candidates of a draw, in index order
	idx   []int
	top   []float32
	probs []float64
}

func newSampler(seed uint64) *sampler {
	return &sampler{rng: rand.New(rand.NewPCG(seed, 0x6e616e6f766f78))}
}

// penalize applies the repetition penalty to logits of previously seen codes.
func penalize(logits []float32, seen []bool, penalty float32) {
	if penalty == 1 {
		return
	}
	for i, s := range seen {
		if s {
			if logits[i] < 0 {
				logits[i] *= penalty
			} else {
				logits[i] /= penalty
			}
		}
	}
}

// errNonFinite is pick's error for a NaN or infinite logit.
var errNonFinite = errors.New("non-finite logits during generation")

// pick returns the chosen index of logits (scaled by the temperature in
// place; top-p marks the tokens it drops with −Inf).
func (s *sampler) pick(logits []float32, greedy bool, temperature float64, topK int, topP float64) (int, error) {
	if greedy {
		best := 0
		for i, v := range logits {
			if v-v != 0 { // NaN or ±Inf
				return 0, errNonFinite
			}
			if v > logits[best] {
				best = i
			}
		}
		return best, nil
	}
	n := len(logits)
	// Scores in float32 like upstream, then probabilities in float64. One
	// pass scales the scores and keeps the top-k threshold: the k-th
	// largest score (ties at the threshold kept, as upstream's
	// masked_fill(scores < threshold)), from a sorted buffer of the k best
	// values: O(n) comparisons for small k, no sort of all n.
	inv := float32(1 / temperature)
	negInf := float32(math.Inf(-1))
	useK := topK > 0 && topK < n
	top := s.top[:0]
	for i, v := range logits {
		if v-v != 0 {
			return 0, errNonFinite
		}
		v *= inv
		logits[i] = v
		if !useK || len(top) == topK && v <= top[topK-1] {
			continue
		}
		j := len(top)
		if j < topK {
			top = append(top, v)
		} else {
			j = topK - 1
		}
		for j > 0 && top[j-1] < v {
			top[j] = top[j-1]
			j--
		}
		top[j] = v
	}
	s.top = top
	th := negInf
	if useK {
		th = top[topK-1]
	}
	// The candidates, in index order: the tokens top-k keeps that a
	// temperature did not overflow to −Inf. Everything below works on them
	// only (the other scores are left as they are: their probability is 0).
	cand := s.cand[:0]
	for i, v := range logits {
		if v >= th && v != negInf {
			cand = append(cand, i)
		}
	}
	if topP > 0 && topP < 1 && len(cand) > 0 {
		// Smallest prefix of the descending order whose mass exceeds p.
		s.idx = append(s.idx[:0], cand...)
		slices.SortStableFunc(s.idx, func(a, b int) int { return cmp.Compare(logits[b], logits[a]) }) // descending
		mx := float64(logits[s.idx[0]])
		var z float64
		for _, i := range s.idx {
			z += math.Exp(float64(logits[i]) - mx)
		}
		var cum float64
		remove := false
		for _, i := range s.idx {
			if remove {
				logits[i] = negInf
				continue
			}
			cum += math.Exp(float64(logits[i])-mx) / z
			if cum > topP {
				remove = true // this token stays; all later ones go
			}
		}
		kept := cand[:0]
		for _, i := range cand {
			if logits[i] != negInf {
				kept = append(kept, i)
			}
		}
		cand = kept
	}
	s.cand = cand
	// Categorical draw over the candidates in index order.
	mx := negInf
	for _, i := range cand {
		mx = max(mx, logits[i])
	}
	if cap(s.probs) < len(cand) {
		s.probs = make([]float64, n)
	}
	p := s.probs[:len(cand)]
	var z float64
	for j, i := range cand {
		p[j] = math.Exp(float64(logits[i] - mx))
		z += p[j]
	}
	u := s.rng.Float64() * z
	last := 0
	for j, w := range p {
		if w == 0 {
			continue
		}
		last = cand[j]
		if u < w {
			return cand[j], nil
		}
		u -= w
	}
	return last, nil
}
