package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Shapes of the models (y[M, N] = x[M, K]·Wᵀ): the global/local GPT-2 blocks
// (K=768: N=2304 qkv, 768 proj, 3072 fc_in; K=3072: N=768 fc_out), the audio
// heads (N=1024) and the codec transformer (d=256, ff=1024).
var benchLinearShapes = []struct {
	name string
	n, k int
	ms   []int
}{
	{"qkv", 2304, 768, []int{1, 8, 17, 256}},
	{"proj", 768, 768, []int{1, 8, 17, 256}},
	{"fcin", 3072, 768, []int{1, 8, 17, 256, 512}},
	{"fcout", 768, 3072, []int{1, 8, 17, 256}},
	{"head", 1024, 768, []int{1, 8}},
	{"codecqkv", 768, 256, []int{4, 32, 2000}},
	{"codecff1", 1024, 256, []int{4, 32, 2000}},
	{"codecff2", 256, 1024, []int{4, 32, 2000}},
}

// BenchmarkLinear reports GFLOP/s (2·M·N·K per op) and, through SetBytes,
// the weight bytes streamed per second.
func BenchmarkLinear(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchLinearShapes {
		wf := randVec(r, s.n*s.k)
		wb := toBF16(wf)
		bias := randVec(r, s.n)
		for _, dt := range []string{"bf16", "f32", "bf16dot", "int8"} {
			var w *Mat
			switch dt {
			case "bf16":
				w = NewBF16(s.n, s.k, append([]uint16(nil), wb...))
				w.Pack()
			case "f32":
				w = NewF32(s.n, s.k, append([]float32(nil), wf...))
				w.Pack()
			case "bf16dot":
				if !HasBF16Dot() {
					continue
				}
				w = NewBF16(s.n, s.k, append([]uint16(nil), wb...))
				w.PackBF16Dot()
			case "int8":
				if !HasInt8Dot() {
					continue
				}
				w = NewBF16(s.n, s.k, append([]uint16(nil), wb...))
				w.PackInt8()
			}
			for _, m := range s.ms {
				x := randVec(r, m*s.k)
				y := make([]float32, m*s.n)
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/%dx%d/%s/M=%d/t=%d", s.name, s.n, s.k, dt, m, threads), func(b *testing.B) {
						useThreads(b, threads)
						b.SetBytes(w.Bytes())
						for b.Loop() {
							Linear(y, x, m, w, bias)
						}
						b.ReportMetric(2*float64(m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// BenchmarkGlobalStep runs the four Linears of 12 GPT-2 blocks (hidden 768)
// for M rows: one frame step of the global transformer without attention.
// The 85M weights (170 MB in bf16) do not fit in cache, so this measures
// memory streaming as the model sees it.
func BenchmarkGlobalStep(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	const H, I, layers = 768, 3072, 12
	shapes := [][2]int{{3 * H, H}, {H, H}, {I, H}, {H, I}}
	for _, dt := range []string{"bf16", "f32", "bf16dot", "int8"} {
		if dt == "bf16dot" && !HasBF16Dot() || dt == "int8" && !HasInt8Dot() {
			continue
		}
		var ws []*Mat
		var bytes int64
		for range layers {
			for _, s := range shapes {
				var w *Mat
				if dt != "f32" {
					d := make([]uint16, s[0]*s[1])
					for i := range d {
						d[i] = F32ToBF16(float32(r.NormFloat64()))
					}
					w = NewBF16(s[0], s[1], d)
				} else {
					w = NewF32(s[0], s[1], randVec(r, s[0]*s[1]))
				}
				switch dt {
				case "bf16dot":
					w.PackBF16Dot()
				case "int8":
					w.PackInt8()
				default:
					w.Pack()
				}
				bytes += w.Bytes()
				ws = append(ws, w)
			}
		}
		// bfloat16 weights and int8 also with the AVX2 kernels (AVX-VNNI
		// for int8): what CPUs without AVX-512 run.
		ks := []impl{active}
		if (dt == "bf16" || dt == "int8" && i8SetFor(implAVX2) != nil) && active == implAVX512 {
			ks = append(ks, implAVX2)
		}
		for _, k := range ks {
			for _, m := range []int{1, 4, 8} {
				x := randVec(r, m*I)
				y := make([]float32, m*I)
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/%v/M=%d/t=%d", dt, k, m, threads), func(b *testing.B) {
						useImpl(b, k)
						useThreads(b, threads)
						b.SetBytes(bytes)
						for b.Loop() {
							for _, w := range ws {
								Linear(y, x, m, w, nil)
							}
						}
					})
				}
			}
		}
	}
}

type nopChunks struct{}

func (nopChunks) run(int, *[]float32) {}

// BenchmarkPoolOverhead measures one parallel call with empty chunks: the
// fixed cost a Linear pays for using the pool.
func BenchmarkPoolOverhead(b *testing.B) {
	useThreads(b, 2)
	for b.Loop() {
		parallel(nopChunks{}, 4, nil)
	}
}

// BenchmarkOps measures the small kernels at their model sizes; SetBytes is
// the float32 data touched once.
func BenchmarkOps(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	big := randVec(r, 32*1024)
	x := randVec(r, 32*1024)
	g, bb := randVec(r, 768), randVec(r, 768)
	run := func(name string, n int, f func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				f()
			}
		})
	}
	run("GELUTanh/3072", 3072, func() { copy(x, big[:3072]); GELUTanh(x[:3072]) })
	run("GELUErf/32x1024", 32*1024, func() { copy(x, big); GELUErf(x) })
	run("LayerNorm/1x768", 768, func() { LayerNorm(x, big, 1, g, bb, 1e-5) })
	run("LayerNorm/17x768", 17*768, func() { LayerNorm(x, big, 17, g, bb, 1e-5) })
	run("Softmax/1000", 1000, func() { copy(x, big[:1000]); Softmax(x[:1000]) })
	run("Add/768", 768, func() { Add(x[:768], big[:768]) })
	run("Dot/768", 768, func() { Dot(x[:768], big[:768]) })
}

// BenchmarkAttendCache is one decode row's attention over a stream's
// key/value cache as the language model runs it (12 heads of 64, 150 keys,
// head-major, one thread), for each cache storage: over one cache, which
// stays in cache (hot), and cycling over 96 (8 streams × 12 layers), as an
// 8-stream step reads them from memory (cold). ns/call is per Attend.
func BenchmarkAttendCache(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	const heads, hd, rows, n = 12, 64, 160, 150
	for _, kind := range []string{"f32", "bf16", "int8"} {
		for _, sets := range []int{1, 96} {
			kvs := make([]KV, sets)
			for s := range kvs {
				kv := KV{Stride: hd, HeadStride: rows * hd}
				k, v := randVec(r, heads*rows*hd), randVec(r, heads*rows*hd)
				switch kind {
				case "f32":
					kv.K, kv.V = k, v
				case "bf16":
					kv.K16, kv.V16 = toBF16(k), toBF16(v)
				case "int8":
					kv.K8, kv.V8 = make([]int8, len(k)), make([]int8, len(v))
					kv.KS, kv.VS = make([]float32, heads*rows), make([]float32, heads*rows)
					for i := range kv.KS {
						kv.KS[i] = QuantizeI8(kv.K8[i*hd:(i+1)*hd], k[i*hd:(i+1)*hd])
						kv.VS[i] = QuantizeI8(kv.V8[i*hd:(i+1)*hd], v[i*hd:(i+1)*hd])
					}
				}
				kvs[s] = kv
			}
			q := randVec(r, heads*hd)
			out := make([]float32, heads*hd)
			sc := make([]float32, AttendKVScratch(n, hd))
			name := map[int]string{1: "hot", 96: "cold"}[sets]
			b.Run(kind+"/"+name, func(b *testing.B) {
				useThreads(b, 1)
				for b.Loop() {
					for _, kv := range kvs {
						Attend(out, q, kv, n, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, sc)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sets), "ns/call")
			})
		}
	}
}

// BenchmarkAttendWindowsRing is the codec decoder's 400 Hz layer step: 32
// rows over full 1600-key windows of a ring (4 heads of 64, one thread),
// for the decoder's storages (dot: bfloat16 dot products, the fast modes
// on AVX512_BF16; bf16 widened; f32, the default mode), with the AVX2
// kernels too on AVX-512 machines: over one ring (hot) and cycling over 16
// (cold, as an 8-stream step's rings, 100 MB, come from memory).
func BenchmarkAttendWindowsRing(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	const heads, hd, ring, nq, ctx = 4, 64, 1632, 32, 1600
	d := heads * hd
	lo, hi := make([]int, nq), make([]int, nq)
	macs := 0
	for i := range lo {
		lo[i], hi[i] = i+1, min(ctx+i+1, ring)
		macs += 2 * (hi[i] - lo[i]) * d
	}
	q := randVec(r, nq*3*d)
	out := make([]float32, nq*d)
	var sc AttnScratch
	for _, kind := range []string{"dot", "bf16", "f32"} {
		if kind == "dot" && !HasBF16Dot() {
			continue
		}
		ks := []impl{active}
		if kind != "dot" && active == implAVX512 {
			ks = append(ks, implAVX2)
		}
		for _, sets := range []int{1, 16} {
			kvs := make([]KV, sets)
			for s := range kvs {
				kv := KV{Stride: hd, HeadStride: ring * hd, Ring: ring, First: 7}
				k, v := randVec(r, heads*ring*hd), randVec(r, heads*ring*hd)
				if kind == "f32" {
					kv.K, kv.V = k, v
				} else {
					kv.K16, kv.V16 = toBF16(k), toBF16(v)
					kv.BF16Scores, kv.BF16Sums = kind == "dot", kind == "dot"
				}
				kvs[s] = kv
			}
			name := map[int]string{1: "hot", 16: "cold"}[sets]
			for _, k := range ks {
				b.Run(fmt.Sprintf("%s/%v/%s", kind, k, name), func(b *testing.B) {
					useImpl(b, k)
					useThreads(b, 1)
					for b.Loop() {
						for _, kv := range kvs {
							AttendWindows(out, d, q, 3*d, kv, lo, hi, AttnShape{Heads: heads, HeadDim: hd, Scale: 0.125}, &sc)
						}
					}
					b.ReportMetric(float64(macs*sets)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}

// BenchmarkPortableLinear compares, on one thread, the portable Linear on
// row-major float32 weights (two rows per pass, LinearSerial) with the
// one-row loop of dotGeneric it replaced (same values): "step" streams the
// 12 global layers of a decode step from memory (M=1), "qkv" and "codec"
// repeat one product whose weights stay in cache; "linear-t2" is Linear
// on two threads, as a portable decode step runs it (the weights are not
// packed, so every build takes the portable code). Compare with -count 10
// and the best or the median; the machine's other load moves single runs.
func BenchmarkPortableLinear(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	const H, I = 768, 3072
	var step []*Mat
	for range 12 {
		for _, s := range [][2]int{{3 * H, H}, {H, H}, {I, H}, {H, I}} {
			step = append(step, NewF32(s[0], s[1], randVec(r, s[0]*s[1])))
		}
	}
	cases := []struct {
		name string
		ws   []*Mat
		m    int
	}{
		{"step", step, 1},
		{"qkv", []*Mat{NewF32(3*H, H, randVec(r, 3*H*H))}, 1},
		{"codec", []*Mat{NewF32(1024, 256, randVec(r, 1024*256))}, 32},
	}
	for _, c := range cases {
		x := randVec(r, c.m*I)
		y := make([]float32, c.m*I)
		var bytes int64
		for _, w := range c.ws {
			bytes += w.Bytes()
		}
		b.Run(c.name+"/one-row", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				for _, w := range c.ws {
					n, k := w.Rows, w.Cols
					for col := range n {
						for i := range c.m {
							y[i*n+col] = dotGeneric(x[i*k:(i+1)*k], w.F32[col*k:(col+1)*k]) + 0
						}
					}
				}
			}
		})
		b.Run(c.name+"/linear", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				for _, w := range c.ws {
					LinearSerial(y, x, c.m, w, nil)
				}
			}
		})
		b.Run(c.name+"/linear-t2", func(b *testing.B) {
			useThreads(b, 2)
			b.SetBytes(bytes)
			for b.Loop() {
				for _, w := range c.ws {
					Linear(y, x, c.m, w, nil)
				}
			}
		})
	}
}
