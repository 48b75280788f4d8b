package lm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/tensor"
)

func sampledParams(seed uint64) Params {
	p := DefaultParams()
	p.Seed = seed
	p.MaxNewFrames = 30
	return p
}

// collect runs a generation alone and returns its frames per chunk.
func collect(t *testing.T, g *Generation) [][][]int {
	t.Helper()
	out := [][][]int{nil}
	for {
		ev, err := g.Next(context.Background())
		if errors.Is(err, ErrDone) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == EventFrame {
			out[len(out)-1] = append(out[len(out)-1], ev.Frame)
		} else if !ev.Last {
			out = append(out, nil)
		}
	}
}

// TestBatchedEqualsAlone steps generations together and alone, every other
// one after a shared prefix, with the float32 products, with the bfloat16 dot products and with the int8 ones
// (whose results are row-independent too): every frame must be the same.
func TestBatchedEqualsAlone(t *testing.T) {
	// Two threads whatever the machine: nine generations then sample in
	// three pool tasks (sampleGrain), whose picks must not depend on it.
	old := tensor.Threads()
	tensor.SetThreads(2)
	t.Cleanup(func() { tensor.SetThreads(old) })
	for _, o := range []struct {
		name string
		opts Options
	}{{"f32", Options{KeepBF16: true}}, {"bf16dot", Options{Matmul: tensor.BF16}}, {"int8", Options{Matmul: tensor.Int8}}} {
		t.Run(o.name, func(t *testing.T) { testBatchedEqualsAlone(t, o.opts) })
	}
}

func testBatchedEqualsAlone(t *testing.T, opts Options) {
	m, err := Load(filepath.Join("../../../testdata/tiny-a/lm"), opts)
	if err != nil {
		t.Fatal(err)
	}
	ref := readGolden(t, "tiny-a", "canonical.json").RefCodes
	// Every other generation after a shared prefix, as with a saved voice:
	// its decode rows are attended as a batch when a step has several.
	pre, err := m.NewPrefix(ref)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Hello world. This is a tiny test.", "Another voice speaks here, slowly.", "短い文です。", "One more: the quick brown fox jumps over the lazy dog near the river bank.",
		"Five.", "Six voices at once, each with its own seed.", "这是第七个。", "Eight: numbers like 42 and 7.", "Nine, the last of the batch."}
	mk := func() []*Generation {
		var gens []*Generation
		for i, txt := range texts {
			p := sampledParams(uint64(100 + i))
			p.MaxTextTokens = 12
			if i == 1 {
				p.Greedy = true
			}
			r, pr := ref, (*Prefix)(nil)
			if i%2 == 1 {
				r, pr = nil, pre
			}
			g, err := m.NewGeneration(r, pr, txt, p)
			if err != nil {
				t.Fatal(err)
			}
			gens = append(gens, g)
		}
		return gens
	}
	var alone [][][][]int
	for _, g := range mk() {
		alone = append(alone, collect(t, g))
	}
	// Step all together; a generation leaves the batch when done.
	gens := mk()
	batched := make([][][][]int, len(gens))
	for i := range batched {
		batched[i] = [][][]int{nil}
	}
	st := m.NewStepper()
	for {
		var live []*Generation
		var idx []int
		for i, g := range gens {
			if !g.Done() {
				live = append(live, g)
				idx = append(idx, i)
			}
		}
		if len(live) == 0 {
			break
		}
		evs, err := st.Step(live)
		if err != nil {
			t.Fatal(err)
		}
		for k, ev := range evs {
			i := idx[k]
			if ev.Kind == EventFrame {
				batched[i][len(batched[i])-1] = append(batched[i][len(batched[i])-1], ev.Frame)
			} else if !ev.Last {
				batched[i] = append(batched[i], nil)
			}
		}
	}
	if diff := cmp.Diff(alone, batched); diff != "" {
		t.Fatalf("batched differs from alone (-alone +batched):\n%s", diff)
	}
}

// TestPrefixEqualsFullPrompt: a shared prefix gives the frames of the full
// prompt, with float32, bfloat16 and int8 products and caches (the prefix
// cache then holds bfloat16, half the bytes, or int8 with scales).
func TestPrefixEqualsFullPrompt(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		for _, opts := range []Options{{KeepBF16: true}, {Matmul: tensor.BF16}, {Matmul: tensor.Int8}} {
			m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), opts)
			if err != nil {
				t.Fatal(err)
			}
			testPrefixEqualsFullPrompt(t, m, fixture, opts.Matmul != tensor.F32)
		}
	}
}

func testPrefixEqualsFullPrompt(t *testing.T, m *Model, fixture string, dot bool) {
	g := readGolden(t, fixture, "long.json")
	pre, err := m.NewPrefix(g.RefCodes)
	if err != nil {
		t.Fatal(err)
	}
	// Bytes per cached value: float32, bfloat16, or a byte plus a float32
	// scale per head.
	size := map[tensor.KVStore]float64{tensor.KVFloat32: 4, tensor.KVBFloat16: 2, tensor.KVInt8: 1 + 4/float64(m.Config.HeadDim())}[m.globalKV]
	if rows := pre.Rows(); rows != len(m.PrefixRows(g.RefCodes))/(m.Config.NVQ+1) ||
		float64(pre.Bytes()) != 2*float64(m.Config.GPT2.NLayer*rows*m.Config.Hidden())*size {
		t.Fatalf("prefix rows %d bytes %d", pre.Rows(), pre.Bytes())
	}
	for _, p := range []Params{goldenParams(g, 20), sampledParams(7)} {
		a, err := m.NewGeneration(g.RefCodes, nil, g.Text, p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.NewGeneration(nil, pre, g.Text, p)
		if err != nil {
			t.Fatal(err)
		}
		fa, fb := collect(t, a), collect(t, b)
		if diff := cmp.Diff(fa, fb); diff != "" {
			t.Errorf("%s greedy=%v kv16=%v: prefix changes frames (-full +prefix):\n%s", fixture, p.Greedy, dot, diff)
		}
	}
}

func TestSeededSampling(t *testing.T) {
	m := loadFixture(t, "tiny-b")
	ref := readGolden(t, "tiny-b", "canonical.json").RefCodes
	run := func(seed uint64) [][][]int {
		g, err := m.NewGeneration(ref, nil, "Hello world. This is a tiny test.", sampledParams(seed))
		if err != nil {
			t.Fatal(err)
		}
		return collect(t, g)
	}
	a, b, c := run(1), run(1), run(2)
	if !cmp.Equal(a, b) {
		t.Fatal("same seed gave different frames")
	}
	if cmp.Equal(a, c) {
		t.Fatal("different seeds gave identical frames")
	}
}

func TestFrameCapAndIgnoreEOS(t *testing.T) {
	m := loadFixture(t, "tiny-a")
	g := readGolden(t, "tiny-a", "canonical.json")
	// Runaway guard: a cap below the natural length cuts the chunk.
	p := goldenParams(g, 75)
	p.FrameCapBase, p.FramesPerToken = 0, 0.1 // ceil(0.1·n) frames
	gen, err := m.NewGeneration(g.RefCodes, nil, g.Text, p)
	if err != nil {
		t.Fatal(err)
	}
	n := len(gen.Chunks()[0].TokenIDs)
	want := int(math.Ceil(0.1 * float64(n)))
	frames := collect(t, gen)
	if len(frames[0]) != want || want >= len(g.Frames) {
		t.Fatalf("capped chunk has %d frames, want %d (natural %d)", len(frames[0]), want, len(g.Frames))
	}
	if !cmp.Equal(frames[0], g.Frames[:want]) {
		t.Fatal("capped frames are not a prefix of the uncapped ones")
	}
	// IgnoreEOS runs to MaxNewFrames.
	p = goldenParams(g, 75)
	p.IgnoreEOS = true
	p.MaxNewFrames = 9
	gen, _ = m.NewGeneration(g.RefCodes, nil, g.Text, p)
	frames = collect(t, gen)
	if len(frames[0]) != 9 || !cmp.Equal(frames[0][:len(g.Frames)], g.Frames) {
		t.Fatalf("IgnoreEOS gave %d frames", len(frames[0]))
	}
}

func TestCancelBetweenFrames(t *testing.T) {
	m := loadFixture(t, "tiny-a")
	ref := readGolden(t, "tiny-a", "canonical.json").RefCodes
	gen, err := m.NewGeneration(ref, nil, "Hello world.", sampledParams(3))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := gen.Next(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := gen.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel: %v", err)
	}
}

func TestGenerationInputErrors(t *testing.T) {
	m := loadFixture(t, "tiny-a")
	ref := readGolden(t, "tiny-a", "canonical.json").RefCodes
	bad := [][]int{{0, 0, 0, 0, 0, 0, 0, 128}}
	short := [][]int{{1, 2, 3}}
	tests := []struct {
		name string
		ref  [][]int
		text string
		p    func(*Params)
		want string
	}{
		{"empty text", ref, "   ", nil, "text is empty"},
		{"no reference", nil, "hi", nil, "no audio frames"},
		{"code out of range", bad, "hi", nil, "outside codebook"},
		{"short frame", short, "hi", nil, "has 3 codes"},
		{"zero temperature", ref, "hi", func(p *Params) { p.AudioTemperature = 0 }, "temperature"},
		{"nan temperature", ref, "hi", func(p *Params) { p.AudioTemperature = math.NaN() }, "temperature"},
		{"top_p zero", ref, "hi", func(p *Params) { p.AudioTopP = 0 }, "top_p"},
		{"negative top_k", ref, "hi", func(p *Params) { p.AudioTopK = -1 }, "top_k"},
		{"zero penalty", ref, "hi", func(p *Params) { p.RepetitionPenalty = 0 }, "penalty"},
		{"zero max frames", ref, "hi", func(p *Params) { p.MaxNewFrames = 0 }, "max new frames"},
		{"zero text budget", ref, "hi", func(p *Params) { p.MaxTextTokens = 0 }, "max text tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			if tc.p != nil {
				tc.p(&p)
			}
			_, err := m.NewGeneration(tc.ref, nil, tc.text, p)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want InputError containing %q", err, tc.want)
			}
		})
	}
}

// TestPickMatchesDefinition draws with pick and with pickRef (the sampler
// written over all the logits, kept here as the definition) from the same
// seeds: the same tokens every time, over random and tied logits and the
// parameter ranges requests use.
func TestPickMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	a, b := newSampler(5), newSampler(5)
	trials := 300
	if os.Getenv("NANOVOX_LONG_TESTS") != "" {
		trials = 3000
	}
	for trial := range trials {
		n := []int{1, 2, 5, 17, 1024, 16384}[trial%6]
		lg := make([]float32, n)
		for i := range lg {
			lg[i] = float32(r.NormFloat64() * 3)
			if trial%3 == 0 {
				lg[i] = float32(math.Round(float64(lg[i]))) // ties
			}
		}
		temp := []float64{0.3, 0.8, 1, 1.7}[r.IntN(4)]
		topK := []int{0, 1, 2, 25, 50, n, n + 3}[r.IntN(7)]
		topP := []float64{1, 0.95, 0.5, 0.01}[r.IntN(4)]
		x, y := append([]float32(nil), lg...), append([]float32(nil), lg...)
		i, err := a.pick(x, false, temp, topK, topP)
		j, err2 := b.pickRef(y, false, temp, topK, topP)
		if err != nil || err2 != nil || i != j {
			t.Fatalf("trial %d (n %d, temperature %v, top-k %d, top-p %v): pick %d (%v), definition %d (%v)", trial, n, temp, topK, topP, i, err, j, err2)
		}
	}
}

// pickRef is the sampler before it kept its candidates in a list: the
// definition pick must match draw for draw.
func (s *sampler) pickRef(logits []float32, greedy bool, temperature float64, topK int, topP float64) (int, error) {
	for _, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("non-finite logits during generation")
		}
	}
	if greedy {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best, nil
	}
	n := len(logits)
	// Scores in float32 like upstream, then probabilities in float64.
	inv := float32(1 / temperature)
	for i := range logits {
		logits[i] *= inv
	}
	negInf := float32(math.Inf(-1))
	if topK > 0 && topK < n {
		// Threshold = the k-th largest score (ties at the threshold kept, as
		// upstream's masked_fill(scores < threshold)). A sorted buffer of the
		// k best values: O(n) comparisons for small k, no sort of all n.
		top := s.top[:0]
		for _, v := range logits {
			if len(top) == topK && v <= top[topK-1] {
				continue
			}
			i := len(top)
			if i < topK {
				top = append(top, v)
			} else {
				i = topK - 1
			}
			for i > 0 && top[i-1] < v {
				top[i] = top[i-1]
				i--
			}
			top[i] = v
		}
		s.top = top
		th := top[topK-1]
		for i, v := range logits {
			if v < th {
				logits[i] = negInf
			}
		}
	}
	if topP > 0 && topP < 1 {
		// Only the tokens that survived top-k take part: sort those.
		s.idx = s.idx[:0]
		for i, v := range logits {
			if v != negInf {
				s.idx = append(s.idx, i)
			}
		}
		sort.SliceStable(s.idx, func(a, b int) bool { return logits[s.idx[a]] > logits[s.idx[b]] })
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
	}
	// Categorical draw.
	mx := float32(math.Inf(-1))
	for _, v := range logits {
		if v > mx {
			mx = v
		}
	}
	if cap(s.probs) < n {
		s.probs = make([]float64, n)
	}
	p := s.probs[:n]
	var z float64
	for i, v := range logits {
		if v == negInf {
			p[i] = 0
			continue
		}
		p[i] = math.Exp(float64(v - mx))
		z += p[i]
	}
	u := s.rng.Float64() * z
	last := 0
	for i, w := range p {
		if w == 0 {
			continue
		}
		last = i
		if u < w {
			return i, nil
		}
		u -= w
	}
	return last, nil
}

// TestSampler checks the sampling filters against their definitions with
// many draws.
func TestSampler(t *testing.T) {
	s := newSampler(1)
	logits := []float32{2, 1, 0.5, 3, -1}
	// Greedy: first maximum; penalty applied before.
	lg := append([]float32(nil), logits...)
	penalize(lg, []bool{false, false, false, true, false}, 2) // 3 → 1.5
	if i, _ := s.pick(lg, true, 1, 0, 1); i != 0 {
		t.Fatalf("greedy after penalty picked %d, want 0", i)
	}
	lg = []float32{-2, 1}
	penalize(lg, []bool{true, true}, 2)
	if lg[0] != -4 || lg[1] != 0.5 {
		t.Fatalf("penalty: %v", lg)
	}
	count := func(topK int, topP float64) map[int]int {
		c := map[int]int{}
		for range 20000 {
			lg := append([]float32(nil), logits...)
			i, err := s.pick(lg, false, 1, topK, topP)
			if err != nil {
				t.Fatal(err)
			}
			c[i]++
		}
		return c
	}
	// top-k 2 keeps indices 3 and 0 in ratio e^3 : e^2.
	c := count(2, 1)
	if len(c) != 2 || c[3] == 0 || c[0] == 0 {
		t.Fatalf("top-k 2 drew %v", c)
	}
	if r := float64(c[3]) / float64(c[0]); math.Abs(r-math.E) > 0.25 {
		t.Errorf("top-k ratio %.3f, want e", r)
	}
	// top-p: probabilities sorted are p3=.61, p0=.22, p1=.08, p2=.05, p4=.01;
	// with p=0.7 the kept set is {3, 0} (cumsum .61 < .7, then .84 > .7).
	c = count(0, 0.7)
	if len(c) != 2 || c[3] == 0 || c[0] == 0 {
		t.Fatalf("top-p 0.7 drew %v", c)
	}
	// top-p tiny keeps only the best.
	if c := count(0, 0.01); len(c) != 1 || c[3] != 20000 {
		t.Fatalf("top-p 0.01 drew %v", c)
	}
	if _, err := s.pick([]float32{1, float32(math.NaN())}, true, 1, 0, 1); err == nil {
		t.Fatal("NaN logits: want error")
	}
}

// TestBF16DotCloseToF32 checks that the bfloat16 dot products and caches
// are in use (the prompt's keys and values are stored as bfloat16 and differ
// from the float32 ones) and close to them: the inputs of every product and
// the cached values are rounded to bfloat16 (8 bits).
func TestBF16DotCloseToF32(t *testing.T) {
	testCloseToF32(t, Options{Matmul: tensor.BF16}, 0.03, 2)
}

// TestInt8CloseToF32 is TestBF16DotCloseToF32 for the int8 products: the
// weights take a byte each, and the cache stays within the error of 8-bit
// inputs and weights.
func TestInt8CloseToF32(t *testing.T) {
	testCloseToF32(t, Options{Matmul: tensor.Int8}, 0.1, 1)
}

// cacheValue returns element i of head h of position p of layer l's keys
// (or values) as c stores it.
func cacheValue(c *kvCache, l int, key bool, h, p, i int) float32 {
	k, v := c.layers[l].At((h*c.cap+p)*c.hd+i, c.hd)
	if key {
		return k
	}
	return v
}

// testCloseToF32 compares the prompt's cache computed with opts to the
// float32 one (relative RMS difference in (0, tol] per layer) and checks
// that the transformers' weights take bytesPerWeight each.
func testCloseToF32(t *testing.T, opts Options, tol float64, bytesPerWeight int64) {
	ref := readGolden(t, "tiny-a", "canonical.json").RefCodes
	var caches []*kvCache
	for _, opts := range []Options{{KeepBF16: true}, opts} {
		m, err := Load(filepath.Join("../../../testdata/tiny-a/lm"), opts)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.NewPrefix(ref)
		if err != nil {
			t.Fatal(err)
		}
		caches = append(caches, p.cache)
		if !opts.KeepBF16 {
			for _, s := range []*stack{&m.global, &m.local} {
				for _, b := range s.blocks {
					for _, w := range []*tensor.Mat{b.attnW, b.projW, b.fcInW, b.fcOutW} {
						// The padding of the last panel: at most 32 rows
						// (and the int8 trailers, 2 rows' worth of 4 bytes).
						if min := bytesPerWeight * int64(w.Rows*w.Cols); w.Bytes() < min || w.Bytes() > min+int64(32*(w.Cols+8)*int(bytesPerWeight)) {
							t.Fatalf("[%d %d] takes %d bytes, want %d per weight", w.Rows, w.Cols, w.Bytes(), bytesPerWeight)
						}
					}
				}
			}
		}
	}
	exact, fast := caches[0], caches[1]
	if want := map[bool]tensor.KVStore{false: tensor.KVBFloat16, true: tensor.KVInt8}[opts.Matmul == tensor.Int8]; fast.store != want || exact.store != tensor.KVFloat32 {
		t.Fatalf("caches store %d and %d, want %d and %d", exact.store, fast.store, tensor.KVFloat32, want)
	}
	for l := range exact.layers {
		for _, key := range []bool{true, false} {
			var diff, norm float64
			for h := range exact.nh {
				for p := range exact.n {
					for i := range exact.hd {
						a, b := float64(cacheValue(exact, l, key, h, p, i)), float64(cacheValue(fast, l, key, h, p, i))
						diff += (a - b) * (a - b)
						norm += a * a
					}
				}
			}
			rel := math.Sqrt(diff / norm)
			t.Logf("layer %d: relative RMS difference %.2e", l, rel)
			if !(rel > 0 && rel <= tol) {
				t.Fatalf("layer %d: relative RMS difference %g, want in (0, %g]", l, rel, tol)
			}
		}
	}
}

// BenchmarkPick is one audio code's draw with the default sampling (1024
// logits, temperature 0.8, top-k 25, top-p 0.95); "definition" is pickRef.
func BenchmarkPick(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	lg := make([]float32, 1024)
	for i := range lg {
		lg[i] = float32(r.NormFloat64() * 3)
	}
	x := make([]float32, len(lg))
	s := newSampler(1)
	for _, c := range []struct {
		name string
		pick func([]float32, bool, float64, int, float64) (int, error)
	}{{"pick", s.pick}, {"definition", s.pickRef}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				copy(x, lg)
				c.pick(x, false, 0.8, 25, 0.95)
			}
		})
	}
}
