package tensor

import (
	"fmt"
	"math"
	"slices"
)

// AttnScratch holds the temporary buffers of AttendWindows. The zero value
// is ready to use; keep one per goroutine and reuse it so that steady calls
// do not allocate.
type AttnScratch struct {
	buf   []float32
	deq   []float32 // int8 blocks dequantized
	job   windowsJob
	tiles []windowTile
}

// Floats returns the number of float32 values the scratch holds.
func (sc *AttnScratch) Floats() int { return len(sc.buf) }

// AttendWindows computes multi-head attention (heads and scale as s says)
// for nq = len(lo) query rows, each with its own window of keys: row i
// (query q[i·ldq : i·ldq+d], result
// out[i·ldo : i·ldo+d]) attends the logical keys lo[i] <= j < hi[i] of kv,
// head by head as Attend does:
//
//	out_h = Σ_j softmax_j(scale · q_h·k_jh) · v_jh
//
// A row with an empty window gets zeros. out must not overlap q or kv.
//
// The rows are processed in tiles (one or two vector registers of rows on
// the SIMD paths: 8 to 32 rows on amd64, 4 to 16 on arm64), and each tile
// reads the keys and values of the union of its rows' windows once, so
// rows with overlapping windows — the rows of one decode step, consecutive
// rows of a sequence — share the memory traffic.
//
// Exactness: a row's result depends only on its query, its window's keys
// and values, and scale — not on the other rows of the call, on how rows are
// tiled, on threads, on the stride or on where a ring wraps. Per row and
// head: each score is one fused multiply-add chain over the head's
// dimensions from zero, then times scale; the maximum is taken over the
// window (NaN scores never win); e_j = exp(s_j − max) in float32 (exp32,
// within 1 ulp), summed in float64 in order of j; p_j = e_j ·
// float32(1/sum); each output value is one fused multiply-add chain of p_j ·
// v_j over the window in order of j, from zero. Keys outside a row's window
// never touch its result, even when they are NaN. Every step is an IEEE
// float32 (or float64) operation, so the portable code and the SIMD kernels
// give the same bits.
//
// sc may be nil (a temporary is allocated). Large calls are spread over the
// worker pool; inconsistent arguments panic.
func AttendWindows(out []float32, ldo int, q []float32, ldq int, kv KV, lo, hi []int, s AttnShape, sc *AttnScratch) {
	heads, headDim, scale := s.Heads, s.HeadDim, s.Scale
	nq := len(lo)
	d := heads * headDim
	checkWindows(out, ldo, q, ldq, &kv, lo, hi, heads, headDim)
	if nq == 0 || d == 0 {
		return
	}
	if sc == nil {
		sc = new(AttnScratch)
	}
	if kv.i8() {
		kv = kv.dequantI8(slices.Max(hi), heads, headDim, &sc.deq)
	}
	j := &sc.job
	*j = windowsJob{out: out, ldo: ldo, q: q, ldq: ldq, kv: kv, lo: lo, hi: hi,
		heads: heads, hd: headDim, scale: scale, tiles: windowTiles(sc.tiles[:0], nq)}
	sc.tiles = j.tiles
	work := 0
	for i := range j.tiles {
		t := &j.tiles[i]
		t.prepare(j)
		work += (t.kmax - t.kmin) * max(t.lanes*t.vectors, t.n)
	}
	chunks := len(j.tiles) * heads
	if 2*work*d < parMinAttend || chunks == 1 || Threads() == 1 {
		for c := range chunks {
			j.run(c, &sc.buf)
		}
	} else {
		parallel(j, chunks, &sc.buf)
	}
	sc.job = windowsJob{tiles: sc.tiles[:0]} // drop references to the caller's buffers
}

func checkWindows(out []float32, ldo int, q []float32, ldq int, kv *KV, lo, hi []int, heads, headDim int) {
	nq := len(lo)
	d := heads * headDim
	bad := func(format string, args ...any) {
		panic(fmt.Sprintf("tensor.AttendWindows: "+format, args...))
	}
	if len(hi) != nq {
		bad("%d lo bounds, %d hi bounds", nq, len(hi))
	}
	if heads < 0 || headDim < 0 {
		bad("%d heads of %d", heads, headDim)
	}
	if nq == 0 || d == 0 {
		return
	}
	if (nq > 1 && (ldq < d || ldo < d)) || len(q) < (nq-1)*ldq+d || len(out) < (nq-1)*ldo+d {
		bad("q %d (ld %d) / out %d (ld %d) too short for %d rows of %d", len(q), ldq, len(out), ldo, nq, d)
	}
	maxHi := 0
	for i, l := range lo {
		if l < 0 || hi[i] < l {
			bad("row %d: window [%d, %d)", i, l, hi[i])
		}
		maxHi = max(maxHi, hi[i])
	}
	rows := maxHi
	if kv.Ring != 0 {
		if kv.Ring < 0 || kv.First < 0 || kv.First >= kv.Ring || maxHi > kv.Ring {
			bad("ring of %d, first %d, keys up to %d", kv.Ring, kv.First, maxHi)
		}
		rows = kv.Ring
	}
	hs := kv.headStride(headDim)
	if kv.HeadStride < 0 || kv.Stride < 0 {
		bad("stride %d, head stride %d", kv.Stride, kv.HeadStride)
	}
	if kv.i8() {
		if msg := kv.checkI8(rows, heads, headDim); msg != "" {
			bad("%s", msg)
		}
		return
	}
	if kv.HeadStride == 0 && kv.Stride < d {
		bad("stride %d shorter than a row of %d", kv.Stride, d)
	}
	nk, nv := len(kv.K), len(kv.V)
	if kv.bf16() {
		if kv.K != nil || kv.V != nil || kv.V16 == nil {
			bad("keys and values must both be float32 or both bfloat16")
		}
		nk, nv = len(kv.K16), len(kv.V16)
	}
	if kv.BF16Scores && (!kv.bf16() || headDim%2 != 0) {
		bad("dot-product scores need bfloat16 keys and an even head size (%d)", headDim)
	}
	if kv.BF16Sums {
		if kv.Ring == 0 {
			rows += rows % 2 // the last key's pair
		}
		if !kv.BF16Scores || kv.Stride != headDim || kv.HeadStride < rows*headDim || rows%2 != 0 {
			bad("dot-product weighted sums need BF16Scores, the head-major layout (stride %d, head stride %d for %d rows of %d) and an even number of rows", kv.Stride, kv.HeadStride, rows, headDim)
		}
	}
	if end := (rows-1)*kv.Stride + (heads-1)*hs + headDim; rows > 0 && (nk < end || nv < end) {
		bad("keys %d / values %d (stride %d, head stride %d) too short for %d rows of %d heads × %d", nk, nv, kv.Stride, hs, rows, heads, headDim)
	}
}

// windowsJob is one AttendWindows call; chunk c is head c / len(tiles) of
// row tile c % len(tiles), so that consecutive chunks share a head's keys.
type windowsJob struct {
	out       []float32
	ldo       int
	q         []float32
	ldq       int
	kv        KV
	lo, hi    []int
	heads, hd int
	scale     float32
	tiles     []windowTile
}

// windowTile is rows [r0, r0+n) of a call, computed with kernels on
// vectors registers of lanes floats (lanes 0: the portable code), and the
// keys [kmin, kmax) they see.
type windowTile struct {
	r0, n          int
	lanes, vectors int
	kmin, kmax     int
	// SIMD tiles: per vector, lo−1 of its lanes then hi−1, relative to kmin
	// (lanes without a row, or with an empty window, hold −2: they see no
	// key and no pair); the tile's keys as runs; and the keys every row
	// sees, [full0, full1) relative to kmin (empty if full0 >= full1).
	win          [64]int32
	runs         []windowRun
	rbuf         [8]windowRun
	full0, full1 int
	// KV.BF16Sums: np pairs of keys from pj0 (0, or −1 when kmin's row is
	// odd), as runs of pairs.
	pj0, np int
	pruns   []windowRun
	prbuf   [8]windowRun
}

// prepare sets the tile's key range, lane windows and runs.
func (t *windowTile) prepare(j *windowsJob) {
	t.kmin, t.kmax = math.MaxInt, 0
	for i := t.r0; i < t.r0+t.n; i++ {
		if j.lo[i] < j.hi[i] {
			t.kmin = min(t.kmin, j.lo[i])
			t.kmax = max(t.kmax, j.hi[i])
		}
	}
	if t.kmax == 0 {
		t.kmin, t.kmax = 0, 0
	}
	t.runs, t.pruns, t.np = nil, nil, 0
	if t.lanes == 0 || t.kmin == t.kmax {
		return
	}
	L, n := t.lanes, t.kmax-t.kmin
	full0, full1 := 0, n // keys every row sees
	for r := range L * t.vectors {
		lo, hi := &t.win[(r/L)*2*L+r%L], &t.win[(r/L)*2*L+L+r%L]
		*lo, *hi = -2, -2
		if r >= t.n {
			continue
		}
		i := t.r0 + r
		if j.lo[i] == j.hi[i] {
			full0, full1 = 0, 0 // an empty row: mask everything
			continue
		}
		a, b := j.lo[i]-t.kmin, j.hi[i]-t.kmin
		*lo, *hi = int32(a-1), int32(b-1)
		full0, full1 = max(full0, a), min(full1, b)
	}
	t.full0, t.full1 = full0, full1
	t.runs = windowRuns(t.rbuf[:0], &j.kv, t.kmin, n, full0, full1)
	if j.kv.BF16Sums {
		t.pj0 = -(j.kv.row(t.kmin) % 2)
		t.np = (n - t.pj0 + 1) / 2
		t.pruns = pairRuns(t.prbuf[:0], &j.kv, t.kmin, t.pj0, t.np, full0, full1)
	}
}

func (j *windowsJob) run(c int, sp *[]float32) {
	h, t := c/len(j.tiles), &j.tiles[c%len(j.tiles)]
	if t.lanes > 0 {
		windowTileSIMD(j, t, h, sp)
		return
	}
	for i := t.r0; i < t.r0+t.n; i++ {
		n := j.hi[i] - j.lo[i]
		buf := growScratch(sp, n+2*j.hd)
		windowRowGeneric(j, i, h, buf[:n], buf[n:n+2*j.hd])
	}
}

// fma32Emulated returns a·b + c rounded once to float32 in float64
// arithmetic: fma32 where the compiler does not fuse float32 operations.
// The product is exact in float64; the sum is rounded to float64 and then
// to float32, which is the single rounding unless the float64 sum lies
// exactly halfway between two float32 values, where the sign of the float64
// rounding error decides.
//
// Rounding s to float32 can only differ from rounding the exact p + c when
// s is itself a float32 midpoint (the float32 neighbours and midpoints are
// float64 values, so rounding to float64 never moves a sum across one): in
// the normal range that is the 29 fraction bits float32 drops being
// exactly 1000…0. Every other sum is rounded directly, without the error
// term; the rest (and float32's subnormal range, where more bits are
// dropped) go through fma32Tie.
func fma32Emulated(a, b, c float32) float32 {
	if s, ok := fma32Sum(a, b, c); ok {
		return float32(s)
	}
	return fma32Tie(a, b, c)
}

// fma32Sum returns a·b + c rounded to float64 and whether rounding that to
// float32 is fma32's result. It is small enough to be inlined into the hot
// loops, which call fma32 only when ok is false (about one sum in 2²⁹).
func fma32Sum(a, b, c float32) (s float64, ok bool) {
	s = float64(a)*float64(b) + float64(c) // exact product: fusing changes nothing
	bits := math.Float64bits(s)
	return s, bits&(1<<29-1) != 1<<28 && bits<<1 >= (1023-126)<<53
}

// fma32Tie is fma32 for the sums fma32Sum cannot round directly.
func fma32Tie(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	r := float32(s)
	if float64(r) == s || math.IsNaN(s) || math.IsInf(s, 0) {
		return r
	}
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv) // s + e = p + c exactly
	if e == 0 {
		return r
	}
	lo, hi := r, r
	if float64(r) < s {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if s-float64(lo) != float64(hi)-s {
		return r
	}
	if e > 0 {
		return hi
	}
	return lo
}

// windowRowGeneric computes head h of row i with the contract's operations;
// s is scratch of the window's length, wide of two head sizes (one key and
// one value row widened from bfloat16 storage).
func windowRowGeneric(j *windowsJob, i, h int, s, wide []float32) {
	hd, kv := j.hd, &j.kv
	off, koff := h*hd, h*kv.headStride(hd)
	o := j.out[i*j.ldo+off : i*j.ldo+off+hd]
	clear(o)
	if len(s) == 0 {
		return
	}
	q := j.q[i*j.ldq+off : i*j.ldq+off+hd]
	lo := j.lo[i]
	n0 := 0
	if nativeFMA32 && !kv.BF16Scores {
		fmaScores(s, q, kv, lo, koff, j.scale)
		n0 = len(s)
	}
	if !nativeFMA32 && !kv.BF16Scores && !kv.bf16() {
		// Four keys at a time: four independent chains hide the latency
		// of each.
		for ; n0+4 <= len(s); n0 += 4 {
			r0 := kv.row(lo+n0)*kv.Stride + koff
			r1 := kv.row(lo+n0+1)*kv.Stride + koff
			r2 := kv.row(lo+n0+2)*kv.Stride + koff
			r3 := kv.row(lo+n0+3)*kv.Stride + koff
			a0, a1, a2, a3 := fmaChain4(q, kv.K[r0:r0+hd], kv.K[r1:r1+hd], kv.K[r2:r2+hd], kv.K[r3:r3+hd])
			s[n0], s[n0+1], s[n0+2], s[n0+3] = a0*j.scale, a1*j.scale, a2*j.scale, a3*j.scale
		}
	}
	for n := n0; n < len(s); n++ {
		r := kv.row(lo+n)*kv.Stride + koff
		if kv.BF16Scores {
			s[n] = scoreDot(q, kv.K16[r:r+hd]) * j.scale
			continue
		}
		var k []float32
		if kv.bf16() {
			k = kv.rows16(kv.K16, r, 1, hd, wide[:hd])
		} else {
			k = kv.K[r : r+hd]
		}
		s[n] = fmaChain(q, k) * j.scale
	}
	mx := float32(math.Inf(-1))
	for _, v := range s {
		if v > mx {
			mx = v
		}
	}
	var sum float64
	for n, v := range s {
		e := exp32(v - mx)
		s[n] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	if kv.BF16Sums || nativeFMA32 {
		// The weights into s, for the loops that take them whole.
		for n, e := range s {
			s[n] = e * inv
		}
		if kv.BF16Sums {
			pvDotRow(o, s, kv, lo, j.hi[i], koff)
		} else {
			fmaSums(o, s, kv, lo, koff)
		}
		return
	}
	n := 0
	if !kv.bf16() {
		// Two keys per pass over o: the same chains, each o[c] loaded
		// and stored once per two fused multiply-adds.
		for ; n+2 <= len(s); n += 2 {
			r0 := kv.row(lo+n)*kv.Stride + koff
			r1 := kv.row(lo+n+1)*kv.Stride + koff
			fmaAxpy2(o, s[n]*inv, kv.V[r0:r0+hd], s[n+1]*inv, kv.V[r1:r1+hd])
		}
	}
	for ; n < len(s); n++ {
		p := s[n] * inv
		r := kv.row(lo+n)*kv.Stride + koff
		var v []float32
		if kv.bf16() {
			v = kv.rows16(kv.V16, r, 1, hd, wide[hd:])
		} else {
			v = kv.V[r : r+hd]
		}
		fmaAxpy(o, p, v)
	}
}

// fmaChain returns the chain acc = fma32(q[c], k[c], acc) over c from zero.
func fmaChain(q, k []float32) float32 {
	k = k[:len(q)]
	var acc float32
	for c, qc := range q {
		if s, ok := fma32Sum(qc, k[c], acc); ok {
			acc = float32(s)
		} else {
			acc = fma32(qc, k[c], acc)
		}
	}
	return acc
}

// fmaChain4 is fmaChain of q with four keys at once.
func fmaChain4(q, k0, k1, k2, k3 []float32) (a0, a1, a2, a3 float32) {
	k0, k1, k2, k3 = k0[:len(q)], k1[:len(q)], k2[:len(q)], k3[:len(q)]
	for c, qc := range q {
		s0, ok0 := fma32Sum(qc, k0[c], a0)
		s1, ok1 := fma32Sum(qc, k1[c], a1)
		s2, ok2 := fma32Sum(qc, k2[c], a2)
		s3, ok3 := fma32Sum(qc, k3[c], a3)
		if ok0 && ok1 && ok2 && ok3 {
			a0, a1, a2, a3 = float32(s0), float32(s1), float32(s2), float32(s3)
			continue
		}
		a0, a1 = fma32(qc, k0[c], a0), fma32(qc, k1[c], a1)
		a2, a3 = fma32(qc, k2[c], a2), fma32(qc, k3[c], a3)
	}
	return a0, a1, a2, a3
}

// fmaScores sets s[n] to the chain of fma32 over q and the key of lo+n
// (float32 or bfloat16 storage), times scale, for builds with nativeFMA32:
// eight keys at a time, so that eight independent chains cover the fused
// instruction's latency and every multiply shares its query operand (gc on
// amd64 folds a single-use operand's load into a plain multiply instead of
// fusing); the last group repeats its first key as padding.
func fmaScores(s, q []float32, kv *KV, lo, koff int, scale float32) {
	var off [8]int
	for n0 := 0; n0 < len(s); n0 += 8 {
		for i := range off {
			off[i] = kv.row(lo+min(n0+i, len(s)-1))*kv.Stride + koff
		}
		var a [8]float32
		if kv.bf16() {
			a = fmaChain8BF16(q, kv.K16, &off)
		} else {
			a = fmaChain8(q, kv.K, &off)
		}
		for i := range min(8, len(s)-n0) {
			s[n0+i] = a[i] * scale
		}
	}
}

// fmaChain8 returns the chains acc = fma32(q[c], k[o+c], acc) over c from
// zero for the eight key offsets o.
func fmaChain8(q, k []float32, off *[8]int) [8]float32 {
	n := len(q)
	k0, k1, k2, k3 := k[off[0]:][:n], k[off[1]:][:n], k[off[2]:][:n], k[off[3]:][:n]
	// k4 alone keeps a bounds check in the loop: it splits the body in
	// two, so that gc does not load all eight keys before the first
	// multiply-add (8 accumulators, the query and 8 keys would spill).
	k4, k5, k6, k7 := k[off[4]:off[4]+n], k[off[5]:][:n], k[off[6]:][:n], k[off[7]:][:n]
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	for c, qc := range q {
		a0, a1 = fma32(qc, k0[c], a0), fma32(qc, k1[c], a1)
		a2, a3 = fma32(qc, k2[c], a2), fma32(qc, k3[c], a3)
		a4, a5 = fma32(qc, k4[c], a4), fma32(qc, k5[c], a5)
		a6, a7 = fma32(qc, k6[c], a6), fma32(qc, k7[c], a7)
	}
	return [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
}

// fmaChain8BF16 is fmaChain8 with bfloat16-stored keys, widened exactly.
func fmaChain8BF16(q []float32, k []uint16, off *[8]int) [8]float32 {
	n := len(q)
	k0, k1, k2, k3 := k[off[0]:][:n], k[off[1]:][:n], k[off[2]:][:n], k[off[3]:][:n]
	k4, k5, k6, k7 := k[off[4]:off[4]+n], k[off[5]:][:n], k[off[6]:][:n], k[off[7]:][:n] // as in fmaChain8
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	w := func(u uint16) float32 { return math.Float32frombits(uint32(u) << 16) }
	for c, qc := range q {
		a0, a1 = fma32(qc, w(k0[c]), a0), fma32(qc, w(k1[c]), a1)
		a2, a3 = fma32(qc, w(k2[c]), a2), fma32(qc, w(k3[c]), a3)
		a4, a5 = fma32(qc, w(k4[c]), a4), fma32(qc, w(k5[c]), a5)
		a6, a7 = fma32(qc, w(k6[c]), a6), fma32(qc, w(k7[c]), a7)
	}
	return [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
}

// fmaSums sets each o[c] to the chain acc = fma32(p[n], v[c], acc) from zero
// over the keys n in order, v the value row of key lo+n (float32 or
// bfloat16 storage): the weighted sum of fmaAxpy over every key, for
// builds with nativeFMA32, eight columns' chains at a time held in
// registers (gc on amd64 fuses a*b + c only if the addend is not a value
// it could fold from memory into the add, as o[c] in fmaAxpy would be),
// over the keys' one or two contiguous runs in the ring.
func fmaSums(o, p []float32, kv *KV, lo, koff int) {
	clear(o)
	r0, n0 := kv.row(lo), len(p)
	if kv.Ring != 0 {
		n0 = min(n0, kv.Ring-r0)
	}
	c8 := len(o) &^ 7
	for _, run := range [2]struct{ r, n0, n1 int }{{r0, 0, n0}, {0, n0, len(p)}} {
		off := run.r*kv.Stride + koff
		for c := 0; c < c8; c += 8 {
			if kv.bf16() {
				fmaRun8BF16((*[8]float32)(o[c:c+8]), p[run.n0:run.n1], kv.V16, off+c, kv.Stride)
			} else {
				fmaRun8((*[8]float32)(o[c:c+8]), p[run.n0:run.n1], kv.V, off+c, kv.Stride)
			}
		}
	}
	for c := c8; c < len(o); c++ {
		var acc float32
		for n, pn := range p {
			r := kv.row(lo+n)*kv.Stride + koff + c
			v := float32(0)
			if kv.bf16() {
				v = math.Float32frombits(uint32(kv.V16[r]) << 16)
			} else {
				v = kv.V[r]
			}
			acc = fma32(pn, v, acc)
		}
		o[c] = acc
	}
}

// fmaRun8 continues the chains acc[i] = fma32(p[n], v[off+n·stride+i], acc[i])
// over the keys n of one contiguous run.
func fmaRun8(acc *[8]float32, p, v []float32, off, stride int) {
	a0, a1, a2, a3, a4, a5, a6, a7 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	for _, pn := range p {
		// Two re-slices: the second's bounds check splits the loop body,
		// so that gc does not load all eight values before the first
		// multiply-add (17 live values: the accumulators spill).
		w := v[off : off+4 : off+4]
		a0, a1 = fma32(pn, w[0], a0), fma32(pn, w[1], a1)
		a2, a3 = fma32(pn, w[2], a2), fma32(pn, w[3], a3)
		w = v[off+4 : off+8 : off+8]
		a4, a5 = fma32(pn, w[0], a4), fma32(pn, w[1], a5)
		a6, a7 = fma32(pn, w[2], a6), fma32(pn, w[3], a7)
		off += stride
	}
	*acc = [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
}

// fmaRun8BF16 is fmaRun8 with bfloat16-stored values, widened exactly.
func fmaRun8BF16(acc *[8]float32, p []float32, v []uint16, off, stride int) {
	a0, a1, a2, a3, a4, a5, a6, a7 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	w := func(u uint16) float32 { return math.Float32frombits(uint32(u) << 16) }
	for _, pn := range p {
		x := v[off : off+4 : off+4] // split in two as in fmaRun8
		a0, a1 = fma32(pn, w(x[0]), a0), fma32(pn, w(x[1]), a1)
		a2, a3 = fma32(pn, w(x[2]), a2), fma32(pn, w(x[3]), a3)
		x = v[off+4 : off+8 : off+8]
		a4, a5 = fma32(pn, w(x[0]), a4), fma32(pn, w(x[1]), a5)
		a6, a7 = fma32(pn, w(x[2]), a6), fma32(pn, w(x[3]), a7)
		off += stride
	}
	*acc = [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
}

// fmaAxpy sets o[c] = fma32(p, v[c], o[c]) for every c.
func fmaAxpy(o []float32, p float32, v []float32) {
	v = v[:len(o)]
	for c, oc := range o {
		if s, ok := fma32Sum(p, v[c], oc); ok {
			o[c] = float32(s)
		} else {
			o[c] = fma32(p, v[c], oc)
		}
	}
}

// fmaAxpy2 is fmaAxpy(o, p0, v0) then fmaAxpy(o, p1, v1).
func fmaAxpy2(o []float32, p0 float32, v0 []float32, p1 float32, v1 []float32) {
	v0, v1 = v0[:len(o)], v1[:len(o)]
	for c, oc := range o {
		t, ok := fma32Sum(p0, v0[c], oc)
		a := float32(t)
		if !ok {
			a = fma32(p0, v0[c], oc)
		}
		t, ok = fma32Sum(p1, v1[c], a)
		if ok {
			o[c] = float32(t)
		} else {
			o[c] = fma32(p1, v1[c], a)
		}
	}
}

// scoreDot is the unscaled score of KV.BF16Scores: q rounded to bfloat16, one
// chain over the pairs (acc + q₁k₁) + q₀k₀, denormals flushed.
func scoreDot(q []float32, k []uint16) float32 {
	var acc float32
	for c := 0; c+1 < len(q); c += 2 {
		q0, q1 := bf16DAZ(roundBF16(q[c])), bf16DAZ(roundBF16(q[c+1]))
		a := ftz(acc + q1*bf16DAZ(k[c+1]))
		acc = ftz(a + q0*bf16DAZ(k[c]))
	}
	return acc
}

// scoresDotGo is the portable form of the dot-product score kernels:
// sT[j][r] for the R lanes of the pairs qT [hd/2][R] (two bfloat16 values
// per lane, as uint32 bits in float32 slots) against n keys of k16, stride
// elements apart.
func scoresDotGo(qT []float32, k []uint16, stride, n, hd int, scale float32, sT []float32, R int) {
	for j := range n {
		kr := k[j*stride : j*stride+hd]
		for r := range R {
			var acc float32
			for p := range hd / 2 {
				pair := math.Float32bits(qT[p*R+r])
				q0, q1 := bf16DAZ(uint16(pair)), bf16DAZ(uint16(pair>>16))
				a := ftz(acc + q1*bf16DAZ(kr[2*p+1]))
				acc = ftz(a + q0*bf16DAZ(kr[2*p]))
			}
			sT[j*R+r] = acc * scale
		}
	}
}

// pvDotRow accumulates into o (zeroed) the weighted sum of KV.BF16Sums for
// the probabilities p of the window [lo, hi): one chain per element over the
// pairs of rows that overlap the window, in order.
func pvDotRow(o, p []float32, kv *KV, lo, hi, koff int) {
	hd := len(o)
	a := lo - kv.row(lo)%2 // the first pair's first key
	for j := a; j < hi; j += 2 {
		var p0, p1 float32
		if j >= lo {
			p0 = bf16DAZ(roundBF16(p[j-lo]))
		}
		if j+1 < hi {
			p1 = bf16DAZ(roundBF16(p[j+1-lo]))
		}
		v := kv.V16[koff+kv.row(j)*hd:][:2*hd]
		for c := range o {
			t := ftz(o[c] + p1*bf16DAZ(v[2*c+1]))
			o[c] = ftz(t + p0*bf16DAZ(v[2*c]))
		}
	}
}

// pairsDotGo is the portable form of the pair kernels (see
// _asm/pvdot.go): pT[m][r] holds, as float32 bits, the bfloat16 pair of the
// probabilities in sT of keys j0+2m and j0+2m+1 for lane r, each zero where
// the lane does not see the key; L lanes per vector, R per key.
func pairsDotGo(pT, sT []float32, n, R, L int, win []int32, j0 int) {
	for m := range n {
		j := int32(j0 + 2*m)
		for r := range R {
			lo1, hi1 := win[(r/L)*2*L+r%L], win[(r/L)*2*L+L+r%L]
			var a, b uint16
			if lo1 < j && j <= hi1 {
				a = roundBF16(sT[2*m*R+r])
			}
			if lo1 < j+1 && j+1 <= hi1 {
				b = roundBF16(sT[(2*m+1)*R+r])
			}
			pT[m*R+r] = math.Float32frombits(uint32(a) | uint32(b)<<16)
		}
	}
}

// pvDotGo is the portable form of the weighted-sum pair kernels: g output
// dimensions oT [g][R] over n pairs of pT [n][R], the values from v (pair m
// at m·2·stride), every lane (win nil) or the lanes that see pair j0+2m.
func pvDotGo(oT, pT []float32, v []uint16, stride, n, g, R, L int, win []int32, j0 int) {
	for m := range n {
		j := int32(j0 + 2*m)
		vp := v[m*2*stride:]
		for r := range R {
			if win != nil {
				lo1, hi1 := win[(r/L)*2*L+r%L], win[(r/L)*2*L+L+r%L]
				if !(lo1 < j+1 && j <= hi1) {
					continue
				}
			}
			pair := math.Float32bits(pT[m*R+r])
			p0, p1 := bf16DAZ(uint16(pair)), bf16DAZ(uint16(pair>>16))
			for c := range g {
				acc := oT[c*R+r]
				t := ftz(acc + p1*bf16DAZ(vp[2*c+1]))
				oT[c*R+r] = ftz(t + p0*bf16DAZ(vp[2*c]))
			}
		}
	}
}

// pairRuns splits the pairs [0, n) of a tile, pair m being the keys
// j0+2m and j0+2m+1 relative to the tile's first key kmin, into runs of
// consecutive rows (ring wraps split them; an even Ring wraps between
// pairs) that every row sees both keys of or not (masked); full0, full1
// as windowTile's. dst is reused; runs count pairs (j0 and n of a run are
// in pairs, row is the first key's).
func pairRuns(dst []windowRun, kv *KV, kmin, j0, n, full0, full1 int) []windowRun {
	dst = dst[:0]
	add := func(a, b int, masked bool) {
		for a < b {
			row := kv.row(kmin + j0 + 2*a)
			m := b - a
			if kv.Ring != 0 {
				m = min(m, (kv.Ring-row)/2)
			}
			dst = append(dst, windowRun{j0: a, n: m, row: row, masked: masked})
			a += m
		}
	}
	// Pair m is seen whole by every row iff full0 <= j0+2m and
	// j0+2m+2 <= full1.
	u0 := min(max((full0-j0+1)/2, 0), n)
	u1 := min(max((full1-j0)/2, u0), n)
	if full0 >= full1 {
		u0, u1 = n, n
	}
	add(0, u0, true)
	add(u0, u1, false)
	add(u1, n, true)
	return dst
}

// windowRun is a run of consecutive logical keys [j0, j0+n) of a tile
// (relative to the tile's first key) that lies in one contiguous stretch of
// rows starting at row, and whose keys every row of the tile sees unless
// masked is set.
type windowRun struct {
	j0, n, row int
	masked     bool
}

// windowRuns splits the keys [0, n) of a tile whose first key is logical key
// kmin into runs: [full0, full1) is where no masking is needed (empty if
// full0 >= full1), and ring wraps split runs further. dst is reused.
func windowRuns(dst []windowRun, kv *KV, kmin, n, full0, full1 int) []windowRun {
	dst = dst[:0]
	add := func(a, b int, masked bool) {
		for a < b {
			row := kv.row(kmin + a)
			m := b - a
			if kv.Ring != 0 {
				m = min(m, kv.Ring-row)
			}
			dst = append(dst, windowRun{j0: a, n: m, row: row, masked: masked})
			a += m
		}
	}
	if full0 >= full1 {
		add(0, n, true)
		return dst
	}
	add(0, full0, true)
	add(full0, full1, false)
	add(full1, n, true)
	return dst
}

// exp32 is the float32 exponential of AttendWindows and GELUErf for
// arguments <= 0 (the SIMD kernels do exactly these operations): 0 below
// ln 2⁻¹²⁶ (no subnormal results); x clamped to at most 0 keeping NaN;
// n = round(x·log2 e); r = x − n·ln 2 in two fused steps; the degree-7
// Taylor polynomial (truncation < 1e-8 relative for |r| ≤ ln2/2); times 2ⁿ.
func exp32(x float32) float32 {
	if x < exp32Lo {
		return 0
	}
	if x > 0 {
		x = 0
	}
	y := float32(x*log2e32) + magic32 // no fusion: the kernels round the product
	n := y - magic32
	r := fma32(-n, ln2Hi32, x)
	r = fma32(-n, ln2Lo32, r)
	var p float32
	if nativeFMA32 {
		p = exp32Poly(r)
	} else {
		p = exp32Coef[exp32Terms-1]
		for i := exp32Terms - 2; i >= 0; i-- {
			if s, ok := fma32Sum(p, r, exp32Coef[i]); ok {
				p = float32(s)
			} else {
				p = fma32(p, r, exp32Coef[i])
			}
		}
	}
	e := int32(math.Float32bits(y)-math.Float32bits(magic32)) + 127
	return p * math.Float32frombits(uint32(e)<<23)
}
