package tensor

import "fmt"

// AttnShape is the multi-head layout shared by the attention entry points:
// a query, key, value or output row holds Heads heads of HeadDim values
// (head h at h·HeadDim of a query or output row; where it sits in a key or
// value row is the cache's layout, see KV), and every score q_h·k_jh is
// multiplied by Scale (usually 1/√HeadDim) before the softmax.
type AttnShape struct {
	Heads   int
	HeadDim int
	Scale   float32
}

// Attend computes multi-head attention of one query row over the first
// nkeys key/value rows of kv: for each head h,
//
//	out[h·hd : (h+1)·hd] = Σ_j softmax_j(scale · q_h·k_jh) · v_jh
//
// with hd = s.HeadDim, scale = s.Scale, q_h = q[h·hd : (h+1)·hd] and k_jh,
// v_jh head h of logical key j of kv (see KV: a plain [n, d] cache has
// Stride d, the rows of a fused qkv buffer Stride 3d; a head-major cache,
// HeadStride = rows·hd, keeps each head's keys contiguous). scores is
// scratch of at least nkeys floats; AttendKVScratch(nkeys, s.HeadDim) floats
// also leave room for the rows of bfloat16 blocks the portable code widens,
// so no call allocates. Heads are spread over the worker pool when the work
// is large enough.
//
// A ring (kv.Ring > 0) needs float32 keys and values with adjacent heads
// (HeadStride 0); its nkeys attended rows are ring rows First, First+1, …
// modulo Ring, in that order.
//
// A head's result depends only on q, the nkeys rows and scale: not on other
// queries, on threads, on the layout of kv or on where a ring wraps.
//
// Attend is the one entry point for a single block (it replaced Attend over
// bare slices, AttendRing and AttendKV). It is a single call so that it
// inlines, as AttendKV did: AttendKV2 takes the ring branch. A first merge
// with the ring checks in Attend itself (not inlined) measured 10–15 %
// slower on BenchmarkAttendCache/{bf16,int8}, and so does this one; but so
// does the old code with one never-taken branch added to AttendKV2, which
// only moves the attention's Go functions ((*attendJob).run, Softmax, the
// SIMD wrappers) by 32 bytes: the difference is where the linker places
// them, not this API (docs/development.md, "Code placement", has the
// controlled measurement).
func Attend(out, q []float32, kv KV, nkeys int, s AttnShape, scores []float32) {
	AttendKV2(out, q, kv, nkeys, KV{}, 0, s, scores)
}

// attendRing is Attend over a ring.
func attendRing(out, q []float32, kv *KV, nkeys int, s AttnShape, scores []float32) {
	if kv.K16 != nil || kv.K8 != nil || kv.HeadStride != 0 && kv.HeadStride != s.HeadDim {
		panic("tensor.Attend: a ring needs float32 keys and values with adjacent heads")
	}
	if kv.First < 0 || kv.First >= kv.Ring || nkeys > kv.Ring {
		panic(fmt.Sprintf("tensor.Attend: first %d / nkeys %d outside a ring of %d", kv.First, nkeys, kv.Ring))
	}
	attend(out, q, kv.K, kv.V, kv.Ring, kv.First, nkeys, s.Heads, s.HeadDim, kv.Stride, s.Scale, scores)
}

// AttendKV2 attends over two blocks of rows as if they were one: the first
// na rows of a, then the first nb rows of b (a shared, read-only voice
// prefix and a stream's own rows, say; a ring only as a alone, which is
// Attend's ring). It gives bit for bit what Attend gives on the na+nb rows
// laid out contiguously. scores holds at least na+nb floats;
// AttendKVScratch(na+nb, s.HeadDim) floats also leave room for the rows of
// bfloat16 blocks the portable code widens, so no call allocates.
func AttendKV2(out, q []float32, a KV, na int, b KV, nb int, s AttnShape, scores []float32) {
	if a.Ring != 0 && nb == 0 {
		attendRing(out, q, &a, na, s, scores) // Attend's ring
		return
	}
	heads, headDim, scale := s.Heads, s.HeadDim, s.Scale
	d := heads * headDim
	if heads < 0 || headDim < 0 || na < 0 || nb < 0 || len(q) < d || len(out) < d || len(scores) < na+nb {
		panic(fmt.Sprintf("tensor.AttendKV2: out %d, q %d, scores %d too short for %d+%d keys of %d heads × %d", len(out), len(q), len(scores), na, nb, heads, headDim))
	}
	j := attendJob{out: out, q: q, nkeys: na + nb, hd: headDim, scale: scale}
	for i, sg := range []struct {
		kv KV
		n  int
	}{{a, na}, {b, nb}} {
		if sg.n == 0 {
			continue
		}
		hs := sg.kv.headStride(headDim)
		if sg.kv.i8() {
			if msg := sg.kv.checkI8(sg.n, heads, headDim); msg != "" {
				panic("tensor.AttendKV2: " + msg)
			}
			j.wide = min(max(j.wide, sg.n), attnWideRows)
			j.segs[i] = attnSeg{keys8: sg.kv.K8, vals8: sg.kv.V8, ks: sg.kv.KS, vs: sg.kv.VS, n: sg.n, stride: sg.kv.Stride, headOff: hs}
			continue
		}
		nk, nv := len(sg.kv.K), len(sg.kv.V)
		if sg.kv.bf16() {
			if sg.kv.K != nil || sg.kv.V != nil || sg.kv.V16 == nil {
				panic("tensor.AttendKV2: keys and values must both be float32 or both bfloat16")
			}
			nk, nv = len(sg.kv.K16), len(sg.kv.V16)
			j.wide = min(max(j.wide, sg.n), attnWideRows)
		}
		if sg.kv.Ring != 0 || sg.kv.Stride < 1 || hs < 1 || (heads > 0 && (nk < (sg.n-1)*sg.kv.Stride+(heads-1)*hs+headDim || nv < (sg.n-1)*sg.kv.Stride+(heads-1)*hs+headDim)) {
			panic(fmt.Sprintf("tensor.AttendKV2: keys %d, vals %d too short for %d keys of %d heads × %d (stride %d, head stride %d, ring %d)",
				nk, nv, sg.n, heads, headDim, sg.kv.Stride, hs, sg.kv.Ring))
		}
		j.segs[i] = attnSeg{keys: sg.kv.K, vals: sg.kv.V, keys16: sg.kv.K16, vals16: sg.kv.V16, n: sg.n, stride: sg.kv.Stride, headOff: hs}
	}
	j.start(heads, scores)
}

// attendJob is one attention call; a chunk is a head.
type attendJob struct {
	out, q    []float32
	segs      [2]attnSeg // the attended rows, in order: one or two runs
	nkeys, hd int
	heads     int
	scale     float32
	wide      int       // rows of bfloat16 keys or values widened at a time
	scores    []float32 // a parallel call's scratch for the calling goroutine
}

// AttendKVScratch returns the scores length with which Attend and
// AttendKV2 over nkeys keys never allocate, whatever the blocks' storage.
func AttendKVScratch(nkeys, headDim int) int { return nkeys + attnWideRows*headDim }

// attnWideRows is how many bfloat16 key or value rows a head widens at a
// time: a buffer that stays in the first-level caches, so that the widened
// copy costs no memory traffic. Splitting the keys this way does not change
// results (scores are per key; the weighted sum is one chain in key order).
const attnWideRows = 128

// attnSeg is a run of n contiguous rows starting at row first: head h of
// row r at keys[r·stride + h·headOff].
type attnSeg struct {
	keys, vals      []float32
	keys16, vals16  []uint16  // bfloat16 storage instead (widened exactly)
	keys8, vals8    []int8    // or signed bytes (Stride = head size) …
	ks, vs          []float32 // … with a scale per row and head, at offset/hd
	first, n        int
	stride, headOff int
}

// parMinAttend is the multiply-add count (2·heads·nkeys·hd) from which heads
// are spread over the pool.
var parMinAttend = 1 << 18

func attend(out, q, keys, vals []float32, ring, first, nkeys, heads, hd, stride int, scale float32, scores []float32) {
	d := heads * hd
	rows := nkeys
	if ring > 0 {
		rows = ring
	}
	if nkeys < 0 || heads < 0 || hd < 0 || stride < d || len(q) < d || len(out) < d || len(scores) < nkeys ||
		(nkeys > 0 && (len(keys) < (rows-1)*stride+d || len(vals) < (rows-1)*stride+d)) {
		panic(fmt.Sprintf("tensor.Attend: out %d, q %d, keys %d, vals %d, scores %d too short for %d keys of %d heads × %d (stride %d)",
			len(out), len(q), len(keys), len(vals), len(scores), nkeys, heads, hd, stride))
	}
	j := attendJob{out: out, q: q, nkeys: nkeys, hd: hd, scale: scale}
	j.segs[0] = attnSeg{keys: keys, vals: vals, first: first, n: nkeys, stride: stride, headOff: hd}
	if ring > 0 && first+nkeys > ring {
		j.segs[0].n = ring - first
		j.segs[1] = attnSeg{keys: keys, vals: vals, first: 0, n: nkeys - (ring - first), stride: stride, headOff: hd}
	}
	j.start(heads, scores)
}

// start runs the job's heads, spread over the pool when the work is large.
func (j *attendJob) start(heads int, scores []float32) {
	j.heads = heads
	if 2*heads*j.nkeys*j.hd < parMinAttend {
		for h := range heads {
			j.run(h, &scores)
		}
		return
	}
	// Only a parallel call's job (with the caller's scratch) lives on the
	// heap.
	pj := new(attendJob)
	*pj = *j
	pj.scores = scores
	parallel(pj, heads, &pj.scores)
}

// run computes head h with scratch *sp for the scores.
func (j *attendJob) run(h int, sp *[]float32) {
	hd := j.hd
	oh := j.out[h*hd : (h+1)*hd]
	clear(oh)
	if j.nkeys == 0 {
		return
	}
	buf := growScratch(sp, j.nkeys+j.wide*hd)
	s := buf[:j.nkeys]
	wbuf := buf[j.nkeys : j.nkeys+j.wide*hd]
	qh := j.q[h*hd : (h+1)*hd]
	// Bfloat16 rows: the SIMD kernels read them directly; the portable
	// code widens attnWideRows at a time into wbuf.
	wrows := func(sg *attnSeg, b16 []uint16, r0, n int) []float32 {
		kv := KV{Stride: sg.stride}
		return kv.rows16(b16, (sg.first+r0)*sg.stride+h*sg.headOff, n, hd, wbuf)
	}
	off := 0
	for i := range j.segs {
		sg := &j.segs[i]
		if sg.n == 0 {
			continue
		}
		switch {
		case sg.keys8 != nil:
			o := sg.first*sg.stride + h*sg.headOff
			sk, ks := s[off:off+sg.n], sg.ks[o/hd:o/hd+sg.n]
			if attnScoresI8SIMD(sk, qh, sg.keys8[o:], ks, sg.stride, j.scale, sg.vals8[o:]) {
				break
			}
			for r0 := 0; r0 < sg.n; r0 += attnWideRows {
				n := min(attnWideRows, sg.n-r0)
				kv := KV{Stride: sg.stride}
				attnScores(sk[r0:r0+n], qh, kv.rows8(sg.keys8, o+r0*sg.stride, n, hd, wbuf), hd, j.scale, nil)
			}
			for i, f := range ks {
				sk[i] *= f
			}
		case sg.keys16 == nil:
			o := sg.first*sg.stride + h*sg.headOff
			attnScores(s[off:off+sg.n], qh, sg.keys[o:], sg.stride, j.scale, sg.vals[o:])
		case attnScoresBFSIMD(s[off:off+sg.n], qh, sg.keys16[sg.first*sg.stride+h*sg.headOff:], sg.stride, j.scale, sg.vals16[sg.first*sg.stride+h*sg.headOff:]):
		default:
			for r0 := 0; r0 < sg.n; r0 += attnWideRows {
				n := min(attnWideRows, sg.n-r0)
				attnScores(s[off+r0:off+r0+n], qh, wrows(sg, sg.keys16, r0, n), hd, j.scale, nil)
			}
		}
		off += sg.n
	}
	Softmax(s)
	off = 0
	for i := range j.segs {
		sg := &j.segs[i]
		if sg.n == 0 {
			continue
		}
		switch {
		case sg.vals8 != nil:
			o := sg.first*sg.stride + h*sg.headOff
			p, vs := s[off:off+sg.n], sg.vs[o/hd:o/hd+sg.n]
			if attnSumI8SIMD(oh, p, sg.vals8[o:], vs, sg.stride, nextHeadRows(sg.keys8, sg, h, j.heads)) {
				break
			}
			for i, f := range vs {
				p[i] *= f // the probabilities are not needed after this
			}
			for r0 := 0; r0 < sg.n; r0 += attnWideRows {
				n := min(attnWideRows, sg.n-r0)
				kv := KV{Stride: sg.stride}
				attnSum(oh, p[r0:r0+n], kv.rows8(sg.vals8, o+r0*sg.stride, n, hd, wbuf), hd, nil)
			}
		case sg.vals16 == nil:
			attnSum(oh, s[off:off+sg.n], sg.vals[sg.first*sg.stride+h*sg.headOff:], sg.stride, nextHeadRows(sg.keys, sg, h, j.heads))
		case attnSumBFSIMD(oh, s[off:off+sg.n], sg.vals16[sg.first*sg.stride+h*sg.headOff:], sg.stride, nextHeadRows(sg.keys16, sg, h, j.heads)):
		default:
			for r0 := 0; r0 < sg.n; r0 += attnWideRows {
				n := min(attnWideRows, sg.n-r0)
				attnSum(oh, s[off+r0:off+r0+n], wrows(sg, sg.vals16, r0, n), hd, nil)
			}
		}
		off += sg.n
	}
}

// nextHeadRows returns the keys of head h+1 of sg, stored in keys (one of
// sg's keys, keys16, keys8): what a head's weighted sum prefetches; nil
// after the last head.
func nextHeadRows[T any](keys []T, sg *attnSeg, h, heads int) []T {
	if h+1 >= heads {
		return nil
	}
	return keys[sg.first*sg.stride+(h+1)*sg.headOff:]
}

// attnScores sets s[i] = (q · k[i·stride : i·stride+len(q)])·scale. The
// vector kernels prefetch row i of pf (rows read next, stride apart; nil:
// none) with key i.
func attnScores(s, q, k []float32, stride int, scale float32, pf []float32) {
	if attnScoresSIMD(s, q, k, stride, scale, pf) {
		return
	}
	hd := len(q)
	for i := range s {
		s[i] = dotGeneric(q, k[i*stride:i*stride+hd]) * scale
	}
}

// attnSum computes out += Σ_i p[i]·v[i·stride : i·stride+len(out)], one
// chain per element in order of i. The vector kernels prefetch row i of pf
// (nil: none) with value i.
func attnSum(out, p, v []float32, stride int, pf []float32) {
	if attnSumSIMD(out, p, v, stride, pf) {
		return
	}
	hd := len(out)
	for i, pi := range p {
		vr := v[i*stride : i*stride+hd]
		for d := range out {
			out[d] += float32(pi * vr[d])
		}
	}
}
