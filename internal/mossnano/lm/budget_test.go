package lm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/tensor"
)

// benchModel loads the language model of a full-size checkpoint made by
// `nanovox dev mkmodel --preset nano-100m --out DIR` from
// NANOVOX_BENCH_MODEL=DIR, in the mode NANOVOX_BENCH_MATMUL names (f32 when
// unset); without it the benchmark is skipped: the per-frame budget means
// something only at the release's size.
func benchModel(b *testing.B) *Model {
	dir := os.Getenv("NANOVOX_BENCH_MODEL")
	if dir == "" {
		b.Skip("set NANOVOX_BENCH_MODEL to a full-size checkpoint (nanovox dev mkmodel --preset nano-100m)")
	}
	mm, _ := tensor.ParseMatmul(os.Getenv("NANOVOX_BENCH_MATMUL"))
	m, err := Load(filepath.Join(dir, "lm"), Options{KeepBF16: true, Matmul: mm})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchRef is a 5 s reference clip's codes (62 frames), the same for
// every benchmark.
func benchRef(m *Model) [][]int {
	ref := make([][]int, 62)
	for i := range ref {
		ref[i] = make([]int, m.Config.NVQ)
		for c := range ref[i] {
			ref[i][c] = (i*31 + c*7) % 1024
		}
	}
	return ref
}

// benchGeneration starts one request with a 5 s reference (62 frames) and
// one text chunk, past its first step (the prefill), that never stops. With
// pre (benchRef's prefix) it starts after it, as with a saved voice.
func benchGeneration(b *testing.B, m *Model, st *Stepper, pre *Prefix) *Generation {
	ref := benchRef(m)
	if pre != nil {
		ref = nil
	}
	p := DefaultParams()
	p.IgnoreEOS = true
	p.MaxNewFrames = 1 << 20
	g, err := m.NewGenerationContext(context.Background(), ref, pre, "A benchmark sentence of ordinary length for one chunk.", p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Step([]*Generation{g}); err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkFrameBudget splits one stream's language-model frame, as Step
// runs it, into its phases (frameBudget) and reports each in ms per frame:
// global (the 12-layer stack's forward of one row), local (the local
// transformer's 17 autoregressive forwards), heads (the text decision's
// two rows and the 16 audio heads), sample (repetition penalty and
// sampling) and glue (embeddings and the rest). The hot-* runs repeat one
// phase alone, so that its weights stay in the processor's caches as far
// as they fit: the gap between local and hot-local is what streaming the
// global stack's weights through the caches costs the local transformer.
func BenchmarkFrameBudget(b *testing.B) {
	m := benchModel(b)
	H := m.Config.Hidden()
	var gBytes, lBytes, hBytes int64
	for _, s := range []struct {
		st *stack
		n  *int64
	}{{&m.global, &gBytes}, {&m.local, &lBytes}} {
		for i := range s.st.blocks {
			bl := &s.st.blocks[i]
			*s.n += bl.attnW.Bytes() + bl.projW.Bytes() + bl.fcInW.Bytes() + bl.fcOutW.Bytes()
		}
	}
	for _, e := range m.audioEmb {
		hBytes += e.Bytes()
	}
	b.Logf("weights: global %.1f MB, local %.1f MB (read %d times a frame), audio heads %.1f MB",
		float64(gBytes)/1e6, float64(lBytes)/1e6, m.Config.NVQ+1, float64(hBytes)/1e6)

	// step is one stream; step-8 and step-16 step that many streams
	// together, as a server batches its streams (each phase's time is the
	// whole batch's); the -saved ones after one shared prefix, as streams of
	// a saved voice.
	pre, err := m.NewPrefix(benchRef(m))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		streams int
		saved   bool
	}{{1, false}, {8, false}, {16, false}, {8, true}, {16, true}} {
		name := "step"
		if c.streams > 1 {
			name = fmt.Sprintf("step-%d", c.streams)
		}
		var p *Prefix
		if c.saved {
			name, p = name+"-saved", pre
		}
		b.Run(name, func(b *testing.B) {
			st := m.NewStepper()
			gens := make([]*Generation, c.streams)
			for i := range gens {
				gens[i] = benchGeneration(b, m, st, p)
			}
			st.budget = new(frameBudget)
			for b.Loop() {
				if _, err := st.Step(gens); err != nil {
					b.Fatal(err)
				}
			}
			names := [numPhases]string{"glue", "global", "local", "heads", "sample"}
			for p, d := range st.budget.d {
				b.ReportMetric(float64(d)/float64(time.Millisecond)/float64(b.N), names[p]+"-ms")
			}
		})
	}
	// The local transformer's lookup table (Model.localQKV) against the
	// products it replaces, frame by frame on one generation, so that a
	// shared machine's changing speed hits both alike.
	if m.localQKV != nil {
		b.Run("table-ab", func(b *testing.B) {
			st := m.NewStepper()
			g := benchGeneration(b, m, st, nil)
			var buds [2]frameBudget
			var wall [2]time.Duration
			var n [2]int
			for i := 0; b.Loop(); i++ {
				k := i % 2
				st.noTable = k == 1
				st.budget = &buds[k]
				t0 := time.Now()
				if _, err := st.Step([]*Generation{g}); err != nil {
					b.Fatal(err)
				}
				wall[k] += time.Since(t0)
				n[k]++
			}
			ms := func(d time.Duration, n int) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
			b.ReportMetric(ms(wall[0], n[0]), "table-ms")
			b.ReportMetric(ms(wall[1], n[1]), "computed-ms")
			b.ReportMetric(ms(buds[0].d[phaseLocal], n[0]), "table-local-ms")
			b.ReportMetric(ms(buds[1].d[phaseLocal], n[1]), "computed-local-ms")
		})
	}
	b.Run("hot-global", func(b *testing.B) {
		st := m.NewStepper()
		g := benchGeneration(b, m, st, nil)
		x := make([]float32, H)
		seqs := []seqRows{{cache: g.cache, pre: g.pre, n: 1}}
		n := g.cache.n
		for b.Loop() {
			m.embedRows(x, append(Rows{m.Config.AudioAssistantSlotTokenID}, g.last...))
			m.forward(&m.global, x, seqs, &st.gws)
			g.cache.n = n // the same position every time
		}
	})
	b.Run("hot-local", func(b *testing.B) {
		st := m.NewStepper()
		g := benchGeneration(b, m, st, nil)
		x := make([]float32, H)
		seqs := []seqRows{{cache: g.local, n: 1}}
		for b.Loop() {
			g.local.reset()
			for c := range m.Config.NVQ + 1 {
				m.audioEmb[max(c-1, 0)].Row(c, x)
				m.forward(&m.local, x, seqs, &st.lws)
			}
		}
	})
	b.Run("hot-heads", func(b *testing.B) {
		x := make([]float32, H)
		for i := range x {
			x[i] = float32(i%7) / 7
		}
		logits := make([]float32, m.Config.AudioCodebookSizes[0])
		for b.Loop() {
			for c := range m.Config.NVQ {
				tensor.Linear(logits[:m.Config.AudioCodebookSizes[c]], x, 1, m.audioEmb[c], nil)
			}
		}
	})
}
