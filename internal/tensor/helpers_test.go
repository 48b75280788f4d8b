package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The pool is process-wide; shrinking it to one thread must stop every
	// helper goroutine.
	SetThreads(1)
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goroutine leak:", err)
		code = 1
	}
	os.Exit(code)
}

// impls returns every kernel set this machine can run, generic first.
func impls() []impl {
	var out []impl
	for _, i := range allImpls {
		if implAvailable(i) {
			out = append(out, i)
		}
	}
	return out
}

// useImpl switches the active kernels for the rest of the test.
func useImpl(t testing.TB, i impl) {
	t.Helper()
	old := active
	active = i
	t.Cleanup(func() { active = old })
}

// alwaysParallel sends every Linear with two panels or more through the
// pool for the rest of the test.
func alwaysParallel(t testing.TB) {
	old := parMinWork
	parMinWork = 0
	t.Cleanup(func() { parMinWork = old })
}

// linearChecked runs Linear into a fresh output with a guard past its end,
// failing if the guard is written, and returns the output.
func linearChecked(t testing.TB, name string, x []float32, m int, w *Mat, bias []float32) []float32 {
	t.Helper()
	n := w.Rows
	y := make([]float32, m*n+5)
	for i := range y {
		y[i] = 42
	}
	Linear(y, x, m, w, bias)
	for i, v := range y[m*n:] {
		if v != 42 {
			t.Fatalf("%s: wrote past the output (y[%d] = %v)", name, m*n+i, v)
		}
	}
	return y[:m*n]
}

// useThreads sets the pool size for the rest of the test.
func useThreads(t testing.TB, n int) {
	t.Helper()
	old := Threads()
	SetThreads(n)
	t.Cleanup(func() { SetThreads(old) })
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// testMats returns the f32 and bf16 (rounded) versions of random weights
// [n, k], with the exact float32 values of the bf16 one.
type testMat struct {
	name string
	vals []float32 // exact values, row-major
	mk   func() *Mat
}

// toBF16 rounds x to bfloat16 bit patterns (F32ToBF16).
func toBF16(x []float32) []uint16 {
	out := make([]uint16, len(x))
	for i, v := range x {
		out[i] = F32ToBF16(v)
	}
	return out
}

// bf16Exact rounds every value of the slices to the nearest bfloat16 in
// place, so that they are stored exactly in either format.
func bf16Exact(xs ...[]float32) {
	for _, x := range xs {
		for i, v := range x {
			x[i] = BF16ToF32(F32ToBF16(v))
		}
	}
}

// implsFor lists the portable code and the SIMD kernel sets the CPU runs
// for which has(set) is true.
func implsFor(has func(impl) bool) []impl {
	out := []impl{implGeneric}
	for _, i := range allImpls[1:] {
		if implAvailable(i) && has(i) {
			out = append(out, i)
		}
	}
	return out
}

func testMats(r *rand.Rand, n, k int) []testMat {
	wf := randVec(r, n*k)
	wb := make([]uint16, len(wf))
	wbf := make([]float32, len(wf))
	for i, v := range wf {
		wb[i] = F32ToBF16(v)
		wbf[i] = BF16ToF32(wb[i])
	}
	return []testMat{
		{"f32", wf, func() *Mat { return NewF32(n, k, append([]float32(nil), wf...)) }},
		{"bf16", wbf, func() *Mat { return NewBF16(n, k, append([]uint16(nil), wb...)) }},
	}
}

// TestPoolWorkerFunction checks that the exported name matches the helpers'
// function, so the goleak option suggested for other packages works.
func TestPoolWorkerFunction(t *testing.T) {
	useThreads(t, 2)
	parallel(nopChunks{}, 2, nil) // helpers exist
	err := goleak.Find(goleak.IgnoreCurrent())
	if err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(); err == nil {
		t.Skip("no helper goroutine visible")
	}
	if err := goleak.Find(goleak.IgnoreAnyFunction(PoolWorkerFunction)); err != nil {
		t.Fatalf("helpers not matched by PoolWorkerFunction: %v", err)
	}
}

// longTests reports whether the exhaustive sweeps run: set
// NANOVOX_LONG_TESTS=1 (.ci/run's long suite does). Without it the slowest
// kernel tests check a fixed sample of their shapes, so that `go test ./...`
// stays fast.
func longTests() bool { return os.Getenv("NANOVOX_LONG_TESTS") != "" }

// sampleShapes returns every shape in a long run, else every third one and
// the last (the tables end with the shapes that exercise the parallel
// paths), so a short run still covers tile edges of each kind. With -short
// (the emulated arm64 runs of scripts/test-arm64, some 50 times slower
// than native) the last, largest shape is left out too.
func sampleShapes[T any](shapes []T) []T {
	if longTests() || len(shapes) <= 3 {
		return shapes
	}
	var out []T
	for i, s := range shapes {
		if i%3 == 0 || i == len(shapes)-1 && !testing.Short() {
			out = append(out, s)
		}
	}
	return out
}
