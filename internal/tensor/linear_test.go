package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// linearShapes covers tile edges: N and K off the panel and vector widths,
// M around every row-block size, and tiny matrices.
var linearShapes = []struct{ m, n, k int }{
	{1, 1, 1}, {1, 7, 13}, {2, 31, 3}, {3, 16, 64}, {1, 32, 768}, {4, 33, 17},
	{5, 64, 100}, {6, 65, 15}, {7, 96, 16}, {8, 100, 31}, {9, 128, 47},
	{13, 130, 65}, {17, 160, 33}, {17, 240, 256}, {23, 257, 9}, {40, 67, 45},
	{1, 2304, 96}, {2, 1024, 70}, {64, 48, 5},
	{300, 40, 520}, // inputs converted in parallel (dot and int8 layouts)
}

// refLinear is the float64 reference of x·wᵀ + bias.
func refLinear(x, w, bias []float32, m, n, k int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for kk := range k {
				s += float64(x[i*k+kk]) * float64(w[j*k+kk])
			}
			if bias != nil {
				s += float64(bias[j])
			}
			out[i*n+j] = s
		}
	}
	return out
}

// TestLinear checks every kernel set, packed and unpacked, f32 and bf16,
// with and without bias, on one and two threads, against a float64
// reference; the SIMD sets must also agree with each other bit for bit.
func TestLinear(t *testing.T) {
	useThreads(t, Threads()) // restored at the end
	r := rand.New(rand.NewPCG(1, 2))
	alwaysParallel(t)
	for _, tc := range linearShapes {
		x := randVec(r, tc.m*tc.k)
		bias := randVec(r, tc.n)
		for _, tm := range testMats(r, tc.n, tc.k) {
			for _, b := range [][]float32{nil, bias} {
				want := refLinear(x, tm.vals, b, tc.m, tc.n, tc.k)
				var simd []float32 // first SIMD result, to compare the others with
				for _, im := range impls() {
					for _, threads := range []int{1, 2} {
						for _, pack := range []bool{false, true} {
							name := fmt.Sprintf("%v/%s/%v/bias=%v/threads=%d/pack=%v", tc, tm.name, im, b != nil, threads, pack)
							useImpl(t, im)
							SetThreads(threads)
							w := tm.mk()
							if pack {
								w.Pack()
							}
							y := linearChecked(t, name, x, tc.m, w, b)
							tol := 2e-6 * math.Sqrt(float64(tc.k))
							for i, v := range y {
								// Tolerance relative to the magnitude of the terms.
								if math.Abs(float64(v)-want[i]) > tol*(1+math.Sqrt(float64(tc.k))) {
									t.Fatalf("%s: y[%d] = %v, want %v", name, i, v, want[i])
								}
							}
							if im != implGeneric && pack {
								if simd == nil {
									simd = y
								} else if !slices.Equal(simd, y) {
									t.Fatalf("%s: differs from the other SIMD kernels", name)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestLinearRowIndependent checks that a row's result does not depend on the
// other rows of the batch, on the batch size, on the thread count or on how
// the columns are split: batching streams and caching prefixes rely on it.
func TestLinearRowIndependent(t *testing.T) {
	useThreads(t, Threads()) // restored at the end
	r := rand.New(rand.NewPCG(3, 4))
	oldMin := parMinWork
	t.Cleanup(func() { parMinWork = oldMin })
	const maxM = 40
	for _, shape := range []struct{ n, k int }{{67, 45}, {96, 301}, {33, 16}, {257, 31}} {
		n, k := shape.n, shape.k
		x := randVec(r, maxM*k)
		bias := randVec(r, n)
		for _, tm := range testMats(r, n, k) {
			for _, im := range impls() {
				for _, pack := range []bool{false, true} {
					if pack && im == implGeneric {
						continue // Pack is a no-op there
					}
					useImpl(t, im)
					w := tm.mk()
					if pack {
						w.Pack()
					}
					// Reference: every row alone, one thread.
					SetThreads(1)
					alone := make([]float32, maxM*n)
					for i := range maxM {
						Linear(alone[i*n:(i+1)*n], x[i*k:(i+1)*k], 1, w, bias)
					}
					threadCounts, parMins := []int{1, 2}, []int{0, 1 << 30} // always / never parallel
					if !pack {
						// The portable path: its columns split over two
						// threads against the one-thread reference (the
						// race detector makes every combination slow).
						threadCounts, parMins = []int{2}, []int{0}
					}
					for _, threads := range threadCounts {
						SetThreads(threads)
						for _, pmin := range parMins {
							parMinWork = pmin
							for m := 1; m <= maxM; m++ {
								// Rows [s, s+m) for a few start offsets.
								for _, s := range []int{0, maxM - m, (maxM - m) / 2} {
									y := make([]float32, m*n)
									Linear(y, x[s*k:(s+m)*k], m, w, bias)
									if !slices.Equal(y, alone[s*n:(s+m)*n]) {
										for i := range y {
											if y[i] != alone[s*n+i] {
												t.Fatalf("[%d %d] %s %v pack=%v threads=%d par=%v: m=%d from row %d: y[%d,%d] = %v batched, %v alone",
													n, k, tm.name, im, pack, threads, pmin == 0, m, s, i/n, i%n, y[i], alone[s*n+i])
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPack checks that a packed matrix reads back the same rows and keeps
// its type and size accounting, and that LinearRows equals Linear.
func TestPack(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, shape := range []struct{ n, k int }{{1, 1}, {31, 5}, {32, 7}, {64, 3}, {100, 9}, {1024, 64}} {
		for _, tm := range testMats(r, shape.n, shape.k) {
			for _, im := range impls() {
				useImpl(t, im)
				plain, w := tm.mk(), tm.mk()
				w.Pack()
				w.Pack() // idempotent
				if w.Packed() != (im != implGeneric) {
					t.Fatalf("%v: Packed() = %v", im, w.Packed())
				}
				if w.IsBF16() != plain.IsBF16() {
					t.Fatalf("IsBF16 changed by Pack")
				}
				np := (shape.n + 31) / 32
				wantBytes := plain.Bytes()
				if w.Packed() {
					wantBytes = wantBytes / int64(shape.n) * int64(np*32)
				}
				if w.Bytes() != wantBytes {
					t.Fatalf("%v %v %s: Bytes = %d, want %d", shape, im, tm.name, w.Bytes(), wantBytes)
				}
				a, b := make([]float32, shape.k), make([]float32, shape.k)
				for i := range shape.n {
					if !slices.Equal(plain.Row(i, a), w.Row(i, b)) {
						t.Fatalf("%v %v %s: row %d differs after Pack", shape, im, tm.name, i)
					}
					if !slices.Equal(b, tm.vals[i*shape.k:(i+1)*shape.k]) {
						t.Fatalf("row %d is not the stored values", i)
					}
					for j := range a {
						a[j], b[j] = float32(j), float32(j)
					}
					plain.AddRow(a, i)
					w.AddRow(b, i)
					if !slices.Equal(a, b) {
						t.Fatalf("%v %v %s: AddRow %d differs after Pack", shape, im, tm.name, i)
					}
				}
				m := 3
				x := randVec(r, m*shape.k)
				full := make([]float32, m*shape.n)
				Linear(full, x, m, w, nil)
				rows := []int{shape.n - 1, 0, shape.n / 2}
				got := make([]float32, m*len(rows))
				LinearRows(got, x, m, w, rows)
				for i := range m {
					for j, row := range rows {
						if got[i*len(rows)+j] != full[i*shape.n+row] {
							t.Fatalf("%v %v %s: LinearRows[%d,%d] = %v, Linear %v", shape, im, tm.name, i, row, got[i*len(rows)+j], full[i*shape.n+row])
						}
					}
				}
			}
		}
	}
}

// TestPackInPlace checks that Pack reuses the caller's slice when the rows
// fill whole panels (no second copy of big weights).
func TestPackInPlace(t *testing.T) {
	if !simdGEMM() {
		t.Skip("no SIMD matrix kernels: Pack is a no-op")
	}
	data := make([]float32, 64*10)
	w := NewF32(64, 10, data)
	w.Pack()
	if &w.pf32[0] != &data[0] {
		t.Fatal("Pack copied a matrix whose rows fill whole panels")
	}
}

// TestLinearConcurrent runs many Linear calls at once through the shared
// pool (run with -race).
func TestLinearConcurrent(t *testing.T) {
	useThreads(t, 2)
	alwaysParallel(t)
	r := rand.New(rand.NewPCG(9, 9))
	n, k, m := 200, 64, 5
	w := NewBF16(n, k, make([]uint16, n*k))
	for i := range w.BF16 {
		w.BF16[i] = F32ToBF16(float32(r.NormFloat64()))
	}
	w.Pack()
	x := randVec(r, m*k)
	want := make([]float32, m*n)
	Linear(want, x, m, w, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y := make([]float32, m*n)
			for it := range 50 {
				Linear(y, x, m, w, nil)
				if !slices.Equal(y, want) {
					errs <- fmt.Errorf("goroutine %d iteration %d: result differs", g, it)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestLinearPackedGeneric runs the portable kernel on weights packed for the
// SIMD ones (what happens if the kernels are switched after loading).
func TestLinearPackedGeneric(t *testing.T) {
	if !simdGEMM() {
		t.Skip("no SIMD matrix kernels: weights are never packed")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range linearShapes {
		x, bias := randVec(r, tc.m*tc.k), randVec(r, tc.n)
		for _, tm := range testMats(r, tc.n, tc.k) {
			w := tm.mk()
			w.Pack()
			simd := make([]float32, tc.m*tc.n)
			Linear(simd, x, tc.m, w, bias)
			useImpl(t, implGeneric)
			gen := make([]float32, tc.m*tc.n)
			Linear(gen, x, tc.m, w, bias)
			active = detectImpl()
			for i := range gen {
				// Same FMA chain; float64 FMA then float32 rounding may differ
				// from a float32 FMA in rare double-rounding cases.
				if !near(float64(gen[i]), float64(simd[i]), 1e-6) {
					t.Fatalf("%v %s: generic %v, SIMD %v", tc, tm.name, gen[i], simd[i])
				}
			}
		}
	}
}

// TestLinearSerial checks that LinearSerial gives Linear's results bit for
// bit in every storage and kernel set, with Linear forced onto the pool.
func TestLinearSerial(t *testing.T) {
	useThreads(t, 2)
	alwaysParallel(t)
	r := rand.New(rand.NewPCG(43, 44))
	packs := append(packings(), packing{"rowmajor", func(*Mat) bool { return true }})
	shapes := [][2]int{{67, 45}, {96, 301}}
	if longTests() {
		shapes = append(shapes, [2]int{300, 1024})
	}
	for _, sh := range shapes {
		n, k := sh[0], sh[1]
		bias := randVec(r, n)
		for _, tm := range testMats(r, n, k) {
			for _, p := range packs {
				w := tm.mk()
				if !p.pack(w) {
					continue
				}
				for _, im := range impls() {
					useImpl(t, im)
					for _, m := range []int{1, 17, 70} {
						x := randVec(r, m*k)
						want := linearChecked(t, "Linear", x, m, w, bias)
						got := make([]float32, m*n)
						LinearSerial(got, x, m, w, bias)
						if !slices.Equal(got, want) {
							t.Fatalf("%dx%d %s %s %v m=%d: LinearSerial differs from Linear", n, k, tm.name, p.name, im, m)
						}
					}
				}
			}
		}
	}
}

// refDotGeneric is the definition of a row-major Linear value (dotGeneric's
// contract) written as plainly as possible: the partial sum of lane l takes
// the products of the indices ≡ l mod 4 of the whole groups of four, each
// rounded to float32; the leftover indices go into lane 0.
func refDotGeneric(a, b []float32) float32 {
	var s [4]float32
	whole := len(a) &^ 3
	for i := range whole {
		s[i%4] += float32(a[i] * b[i])
	}
	for i := whole; i < len(a); i++ {
		s[0] += float32(a[i] * b[i])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// TestLinearGenericExact checks the portable Linear on row-major weights
// (what purego builds run) bit for bit against refDotGeneric plus the bias, with
// column counts around its three-column passes, every tail of k, and the
// columns split over the pool or not. Unbiased outputs are refDotGeneric + 0, so a
// −0 dot product comes out +0.
func TestLinearGenericExact(t *testing.T) {
	useThreads(t, Threads()) // restored at the end
	useImpl(t, implGeneric)
	r := rand.New(rand.NewPCG(47, 48))
	for _, sh := range []struct{ m, n, k int }{
		{1, 1, 1}, {1, 2, 3}, {2, 3, 4}, {1, 4, 5}, {3, 5, 6}, {1, 7, 7}, {4, 8, 64},
		{1, 67, 45}, {5, 96, 301}, {2, 100, 768}, {1, 257, 31}, {9, 31, 130},
	} {
		x := randVec(r, sh.m*sh.k)
		bias := randVec(r, sh.n)
		x[0] = 0 // a −0 or +0 product in lane 0 of the first row
		for _, tm := range testMats(r, sh.n, sh.k) {
			for _, b := range [][]float32{nil, bias} {
				want := make([]float32, sh.m*sh.n)
				for i := range sh.m {
					for c := range sh.n {
						v := refDotGeneric(x[i*sh.k:(i+1)*sh.k], tm.vals[c*sh.k:(c+1)*sh.k])
						if b != nil {
							v += b[c]
						} else {
							v += 0
						}
						want[i*sh.n+c] = v
					}
				}
				for _, threads := range []int{1, 2} {
					for _, par := range []bool{false, true} {
						SetThreads(threads)
						old := parMinWork
						if par {
							parMinWork = 0
						}
						w := tm.mk()
						y := linearChecked(t, "Linear", x, sh.m, w, b)
						parMinWork = old
						for i := range y {
							if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%v %s bias=%v threads=%d par=%v: y[%d,%d] = %v, want %v",
									sh, tm.name, b != nil, threads, par, i/sh.n, i%sh.n, y[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
