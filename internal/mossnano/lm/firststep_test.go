//go:build unix

package lm

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkNewClipFirstStep times a new clip's first step (its prompt
// prefix, its first chunk's text rows and its first frame), the two ways
// Step can run it, alternating iteration by iteration so that a shared
// machine's changing speed hits both alike: "two-pass", the prefix in a
// pass of its own and the chunk's rows in a second (as Step did before
// it folded them together; a shared prefix still takes that path), and
// "one-pass", both in one pass of the global stack (Step). It reports the
// wall and CPU (process, every thread) milliseconds of each per first
// step.
func BenchmarkNewClipFirstStep(b *testing.B) {
	m := benchModel(b)
	ref := benchRef(m) // a 5 s clip
	p := DefaultParams()
	p.IgnoreEOS = true
	const text = "This benchmark sentence is long enough to make one natural chunk of speech for nanovox."
	st := m.NewStepper()
	var wall, cpu [2]time.Duration
	var n [2]int
	for i := 0; b.Loop(); i++ {
		k := i % 2
		g, err := m.NewGenerationContext(context.Background(), ref, nil, text, p)
		if err != nil {
			b.Fatal(err)
		}
		t0, c0 := time.Now(), cpuTime()
		if k == 0 {
			g.pre = m.getCache(m.prefixLen(ref), false)
			g.ownPre = true
			m.prefill(context.Background(), g.pre, ref)
		}
		if _, err := st.Step([]*Generation{g}); err != nil {
			b.Fatal(err)
		}
		wall[k] += time.Since(t0)
		cpu[k] += cpuTime() - c0
		n[k]++
		// Back to the pools, as a finished request's caches go.
		m.putCache(g.cache)
		m.putCache(g.pre)
	}
	ms := func(d time.Duration, n int) float64 {
		return float64(d) / float64(time.Millisecond) / float64(max(n, 1))
	}
	b.ReportMetric(ms(wall[0], n[0]), "two-pass-ms")
	b.ReportMetric(ms(wall[1], n[1]), "one-pass-ms")
	b.ReportMetric(ms(cpu[0], n[0]), "two-pass-cpu-ms")
	b.ReportMetric(ms(cpu[1], n[1]), "one-pass-cpu-ms")
}

// cpuTime returns the CPU time the process has used, every thread's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
