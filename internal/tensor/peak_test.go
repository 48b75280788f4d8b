package tensor

import (
	"fmt"
	"sync"
	"testing"
)

// TestFMAPeak checks that the peak loop does the multiply-adds it counts:
// with a·b = 0.5 every lane must sum to 0.5 · rounds · accumulators exactly
// (the values stay far below 2²⁴), so a dropped accumulator, a skipped
// round or a wrong reduction changes the result.
func TestFMAPeak(t *testing.T) {
	tested := 0
	for _, i := range impls() {
		t.Run(i.String(), func(t *testing.T) {
			useImpl(t, i)
			_, per, ok := fmaPeak(2, 0.25, 1)
			if !ok {
				t.Skip("no peak loop")
			}
			tested++
			for _, n := range []int{0, 1, 7, 1000} {
				sums, flops, _ := fmaPeak(2, 0.25, n)
				if flops != n*per {
					t.Fatalf("n=%d: %d flops, want %d", n, flops, n*per)
				}
				chains := per / (2 * len(sums))
				for l, s := range sums {
					if want := 0.5 * float32(n*chains); s != want {
						t.Fatalf("n=%d lane %d: %v, want %v (%d accumulators)", n, l, s, want, chains)
					}
				}
			}
		})
	}
	if tested == 0 {
		t.Skip("no kernel set of this build has a peak loop")
	}
}

// BenchmarkFMAPeak is the most floating-point work the active kernel set
// can do per second on 1 and 2 threads: independent fused multiply-adds
// and nothing else, no memory traffic. It is the ceiling of every
// compute-bound phase (docs/performance.md, "Floors on this machine").
func BenchmarkFMAPeak(b *testing.B) {
	_, per, ok := fmaPeak(1, 1, 1)
	if !ok {
		b.Skipf("no peak loop for %s", Kernels())
	}
	const rounds = 1 << 20
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("%s/t=%d", Kernels(), threads), func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for range threads {
					wg.Go(func() { fmaPeak(1, 1, rounds) })
				}
				wg.Wait()
			}
			flops := float64(b.N) * float64(threads*per*rounds)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
