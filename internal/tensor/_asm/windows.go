package main

import (
	"fmt"
	"math"
	"math/bits"

	"nanovoxtensorasm/exp32"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The multi-query windowed attention kernels (AttendWindows in ../window.go).
//
// A tile is V vector registers' worth of query rows (V·16 with AVX-512, V·8
// with AVX2, V = 1 or 2): lane l of vector v belongs to query row v·lanes+l
// of the tile, so every per-row operation is lane-wise and a row's result
// can never depend on the other rows of the tile or on V. The driver
// transposes the tile's queries of one head into qT [hd][V·lanes] and gets
// back the head's outputs from oT [hd][V·lanes]; scores and probabilities
// live in sT [keys][V·lanes]. With V = 2 every broadcast key or value
// element feeds two FMAs and the keys and values are read once for twice
// the rows.
//
// Per row and head, in this order and whatever the tiling:
//
//	s_j  = (Σ_c q_c·k_jc as one FMA chain from zero, c = 0…hd−1) · scale
//	mx   = max of the visible s_j (a NaN never replaces the running max)
//	e_j  = exp32(s_j − mx), sum = Σ float64(e_j) in float64 in order of j
//	p_j  = e_j · float32(1/sum)
//	o_c  = Σ p_j·v_jc as one FMA chain from zero in order of the visible j
//
// The visible keys of lane l of vector v are lo ≤ j < hi; the window block
// of vector v, at win + v·8·lanes bytes, holds the int32 values lo−1 of its
// lanes followed by hi−1, relative to the first key of sT. Invisible keys
// take no part at all: their scores are computed but never read, and the
// masked weighted-sum kernels leave the lane's accumulators untouched (merge
// masking or a blend), so not even the sign of a zero or a NaN in another
// row's key can leak into a row.

// mqGroup is the most head dimensions one weighted-sum kernel accumulates
// for tiles of v vectors.
func mqGroup(is isa, v int) int {
	if is.lanes == 16 {
		return 16 / v
	}
	return 8 / v
}

// mqVectors are the tile widths, in vectors, kernels are generated for.
var mqVectors = []int{1, 2}

func genWindows(is isa) {
	for _, bf := range []bool{false, true} {
		for _, v := range mqVectors {
			mqScores(is, v, bf)
			for g := 1; g <= mqGroup(is, v); g++ {
				mqPV(is, v, g, false, bf)
				mqPV(is, v, g, true, bf)
			}
		}
	}
	mqSoftmax(is)
}

// The BF16 variants read keys or values stored as bfloat16 (tensor.KV.K16):
// each element is broadcast as 16 bits and shifted into the high half of a
// float32 lane, which is its exact float32 value, so they compute exactly
// what the float32 kernels compute on the widened values.

// broadcastElem broadcasts the key or value element at m into a vector.
func (is isa) broadcastElem(m Mem, bf bool) VecVirtual {
	t := is.vec()
	if bf {
		VPBROADCASTW(m, t)
		VPSLLD(U8(16), t, t)
	} else {
		VBROADCASTSS(m, t)
	}
	return t
}

// mqSuffix names the kernels of an ISA and tile width.
func mqSuffix(is isa, v int) string {
	if v == 1 {
		return is.name
	}
	return fmt.Sprintf("%sx%d", is.name, v)
}

// broadcast32 fills a vector with the int32 (or float32 bits) x.
func (is isa) broadcast32(x uint32) VecVirtual {
	r := GP32()
	MOVL(U32(x), r)
	return is.broadcastGP(r)
}

// broadcastGP fills a vector with the 32-bit general register r.
func (is isa) broadcastGP(r Register) VecVirtual {
	v := is.vec()
	if is.lanes == 16 {
		VPBROADCASTD(r, v)
		return v
	}
	x := XMM()
	VMOVD(r, x)
	VPBROADCASTD(x, v)
	return v
}

// loadInt loads a vector of int32 lanes.
func (is isa) loadInt(m Mem) VecVirtual {
	v := is.vec()
	if is.lanes == 16 {
		VMOVDQU32(m, v)
	} else {
		VMOVDQU(m, v)
	}
	return v
}

// window tracks the running key index of the masked kernels against the
// lane bounds of one or more vectors.
type window struct {
	is     isa
	win    Register
	lo, hi []VecVirtual // per vector lo−1, hi−1 (AVX-512; AVX2 reads them from memory)
	j, one VecVirtual   // current key index in every lane; 1 in every lane
}

func (is isa) window(win Register, vectors int, j0 Op) *window {
	w := &window{is: is, win: win}
	if is.lanes == 16 {
		for v := range vectors {
			w.lo = append(w.lo, is.loadInt(mem(win, v*8*is.lanes)))
			w.hi = append(w.hi, is.loadInt(mem(win, v*8*is.lanes+4*is.lanes)))
		}
	}
	w.one = is.broadcast32(1)
	if j0 == nil {
		w.j = is.vec()
		is.zero(w.j)
	} else {
		r := GP64()
		MOVQ(j0, r)
		w.j = is.broadcastGP(r.As32())
	}
	return w
}

// maskK returns the opmask of the lanes of vector v that see key j (AVX-512).
func (w *window) maskK(v int) Register {
	k1, k2 := K(), K()
	VPCMPD(U8(6), w.lo[v], w.j, k1)     // j > lo−1
	VPCMPD(U8(2), w.hi[v], w.j, k1, k2) // and j <= hi−1
	return k2
}

// maskV returns all-ones lanes for the lanes of vector v that see key j
// (AVX2).
func (w *window) maskV(v int) VecVirtual {
	m, t := w.is.vec(), w.is.vec()
	base := v * 8 * w.is.lanes
	VPCMPGTD(mem(w.win, base), w.j, m)              // j > lo−1
	VPCMPGTD(mem(w.win, base+4*w.is.lanes), w.j, t) // j > hi−1
	VPANDN(m, t, m)                                 // m &^ t
	return m
}

func (w *window) next() { VPADDD(w.one, w.j, w.j) }

// mqScores generates, for tiles of nv vectors,
//
//	func(qT, k *float32, stride, n, hd int, scale float32, sT *float32)
//
// sT[j][r] = scale · Σ_c qT[c][r]·k[j·stride+c] for j < n and the tile's
// rows r, each score one FMA chain over c from zero. Keys are taken in
// register blocks (then 4, then 1); every accumulator is one key of one
// vector, so the blocking never changes a score.
//
// The last argument pf (of the keys' type) holds rows the caller reads next,
// stride apart like the keys (the same rows' values): with each block of
// keys the kernel prefetches the start of those rows of pf (the four lines
// of a 64-float head row, the two of a bfloat16 one), and the same of the
// keys 16 rows ahead,
// so that the windows of many streams, too big for the caches, stream from
// memory while the products run. Prefetches never fault and change no
// result.
func mqScores(is isa, nv int, bf bool) {
	name := "mqScores" + elemOf(bf).name() + mqSuffix(is, nv)
	kt := "*float32"
	if bf {
		kt = "*uint16"
	}
	TEXT(name, NOSPLIT, "func(qT *float32, k "+kt+", stride, n, hd int, scale float32, sT *float32, pf "+kt+")")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes the scaled scores of a tile of %d transposed query vectors against n keys of hd %s, stride elements apart.", name, nv, map[bool]string{false: "floats", true: "bfloat16 values"}[bf]))
	kb := Load(Param("k"), GP64())
	s := Load(Param("stride"), GP64())
	scaleBytes(s, elemOf(bf))
	s3 := GP64()
	LEAQ(Mem{Base: s, Index: s, Scale: 2}, s3)
	n := Load(Param("n"), GP64())
	sT := Load(Param("sT"), GP64())
	scale := is.vec()
	VBROADCASTSS(NewParamAddr("scale", 40), scale)
	blocks := []int{is.lanes / nv}
	if is.lanes/nv != 4 {
		blocks = append(blocks, 4)
	}
	for _, b := range append(blocks, 1) {
		lbl := fmt.Sprintf("%s_b%d", name, b)
		Label(lbl)
		CMPQ(n, U32(b))
		JL(LabelRef(lbl + "_end"))
		mqScoresBlock(is, nv, lbl, b, kb, s, s3, sT, scale, bf)
		SUBQ(U32(b), n)
		JMP(LabelRef(lbl))
		Label(lbl + "_end")
	}
	VZEROUPPER()
	RET()
}

func mqScoresBlock(is isa, nv int, lbl string, b int, kb, s, s3, sT Register, scale VecVirtual, bf bool) {
	es := elemOf(bf).bytes()
	vb := 4 * is.lanes
	row := nv * vb // bytes of one key's scores, or of one dimension of qT
	bases := make([]Register, (b+3)/4)
	for i := range bases {
		bases[i] = GP64()
		if i == 0 {
			MOVQ(kb, bases[0])
		} else {
			LEAQ(Mem{Base: bases[i-1], Index: s, Scale: 4}, bases[i])
		}
	}
	// rowMem addresses row j%4 of the four rows from base (s the stride in
	// bytes, s3 three strides).
	rowMem := func(base Register, j, disp int) Mem {
		m := Mem{Base: base, Disp: disp}
		switch j % 4 {
		case 1:
			m.Index, m.Scale = s, 1
		case 2:
			m.Index, m.Scale = s, 2
		case 3:
			m.Index, m.Scale = s3, 1
		}
		return m
	}
	key := func(j, disp int) Mem { return rowMem(bases[j/4], j, disp) }
	// Prefetch the block's rows of pf (the pointer kept in its argument
	// slot, advanced by the block) and the keys 16 rows ahead.
	lines := []int{0, 64, 128, 192}
	if bf {
		lines = lines[:2]
	}
	// prefetchRows prefetches b rows from p and leaves p b rows further (b
	// is 1 or a multiple of 4).
	prefetchRows := func(p Register) {
		for j := range b {
			for _, o := range lines {
				PREFETCHT0(rowMem(p, j, o))
			}
			if j%4 == 3 {
				LEAQ(Mem{Base: p, Index: s, Scale: 4}, p)
			}
		}
		if b%4 != 0 {
			ADDQ(s, p)
		}
	}
	pfSlot := NewParamAddr("pf", 56)
	pf := GP64()
	MOVQ(pfSlot, pf)
	prefetchRows(pf)
	MOVQ(pf, pfSlot)
	ahead := GP64()
	LEAQ(Mem{Base: kb, Index: s, Scale: 8}, ahead)
	LEAQ(Mem{Base: ahead, Index: s, Scale: 8}, ahead)
	prefetchRows(ahead)
	qp := Load(Param("qT"), GP64())
	c := Load(Param("hd"), GP64())
	acc := make([][]VecVirtual, b)
	for j := range acc {
		for range nv {
			a := is.vec()
			is.zero(a)
			acc[j] = append(acc[j], a)
		}
	}
	step := func(u int) {
		q := make([]VecVirtual, nv)
		for v := range q {
			q[v] = is.vec()
			VMOVUPS(mem(qp, u*row+v*vb), q[v])
		}
		for j := range acc {
			if nv == 1 && is.lanes == 16 && !bf {
				VFMADD231PS_BCST(key(j, 4*u), q[0], acc[j][0])
				continue
			}
			t := is.broadcastElem(key(j, es*u), bf)
			for v := range q {
				VFMADD231PS(t, q[v], acc[j][v])
			}
		}
	}
	Label(lbl + "_c4")
	CMPQ(c, U32(4))
	JL(LabelRef(lbl + "_c1"))
	for u := range 4 {
		step(u)
	}
	ADDQ(U32(4*row), qp)
	for _, r := range bases {
		ADDQ(U32(4*es), r)
	}
	SUBQ(U32(4), c)
	JMP(LabelRef(lbl + "_c4"))
	Label(lbl + "_c1")
	CMPQ(c, U32(0))
	JLE(LabelRef(lbl + "_store"))
	step(0)
	ADDQ(U32(row), qp)
	for _, r := range bases {
		ADDQ(U32(es), r)
	}
	DECQ(c)
	JMP(LabelRef(lbl + "_c1"))
	Label(lbl + "_store")
	for j := range acc {
		for v, a := range acc[j] {
			VMULPS(scale, a, a)
			VMOVUPS(a, mem(sT, j*row+v*vb))
		}
	}
	ADDQ(U32(b*row), sT)
	if b == 1 {
		ADDQ(s, kb)
	} else {
		t := GP64()
		MOVQ(s, t)
		SHLQ(U8(bits.TrailingZeros(uint(b))), t)
		ADDQ(t, kb)
	}
}

// mqSoftmax generates func(sT *float32, n, stride int, win *int32): each
// lane of the n score vectors, stride floats apart, becomes its softmax over
// the lane's visible keys (see the order above); entries of invisible keys
// are left meaningless. Tiles of several vectors call it once per vector.
// softmaxUnroll is how many keys mqSoftmax exponentiates at a time.
func (is isa) softmaxUnroll() int {
	if is.regs >= 32 {
		return 4
	}
	return 2
}

func mqSoftmax(is isa) {
	name := "mqSoftmax" + is.name
	TEXT(name, NOSPLIT, "func(sT *float32, n, stride int, win *int32)")
	Pragma("noescape")
	Doc(name + " turns one vector column of a tile's scores into softmax probabilities over each lane's visible keys.")
	c := constsFor(is)
	L := is.lanes
	w := is.window(Load(Param("win"), GP64()), 1, nil)
	st := Load(Param("stride"), GP64())
	SHLQ(U8(2), st)

	// Pass 1: the largest visible score of every lane.
	mx := is.broadcast32(0xff800000) // −Inf
	var negInf VecVirtual
	if L != 16 {
		negInf = is.vec()
		VMOVAPS(mx, negInf)
	}
	p := Load(Param("sT"), GP64())
	n := Load(Param("n"), GP64())
	loop(name+"_max", n, 1, func() {
		x := is.vec()
		VMOVUPS(mem(p, 0), x)
		if L == 16 {
			VMAXPS(mx, x, w.maskK(0), mx) // mx = x > mx ? x : mx, visible lanes only
		} else {
			t := is.vec()
			VBLENDVPS(w.maskV(0), x, negInf, t)
			VMAXPS(mx, t, mx)
		}
		w.next()
		ADDQ(st, p)
	})

	// Pass 2: e = exp32(s − mx), zero where invisible; float64 running sums.
	c32 := consts32For(is)
	sums := []VecVirtual{is.f64(), is.f64()}
	is.zero(sums[0])
	is.zero(sums[1])
	is.zero(w.j)
	Load(Param("sT"), p)
	Load(Param("n"), n)
	// u keys at a time, their exponentials interleaved (one key's is a
	// chain of ≈ 20 dependent operations); masks, stores and sums stay in
	// order of the keys.
	st3 := GP64()
	LEAQ(Mem{Base: st, Index: st, Scale: 2}, st3)
	keyMem := func(i int) Mem {
		switch i {
		case 0:
			return mem(p, 0)
		case 1:
			return Mem{Base: p, Index: st, Scale: 1}
		case 2:
			return Mem{Base: p, Index: st, Scale: 2}
		}
		return Mem{Base: p, Index: st3, Scale: 1}
	}
	body := func(u int) {
		xs := make([]VecVirtual, u)
		for i := range xs {
			xs[i] = is.vec()
			VMOVUPS(keyMem(i), xs[i])
		}
		for _, x := range xs {
			VSUBPS(mx, x, x)
		}
		es := is.exp32N(c32, xs)
		for i, e := range es {
			if L == 16 {
				VMOVAPS_Z(e, w.maskK(0), e)
			} else {
				VANDPS(w.maskV(0), e, e)
			}
			VMOVUPS(e, keyMem(i))
			for h, sum := range sums {
				VADDPD(is.widenHalf(e, h), sum, sum)
			}
			w.next()
		}
		if u == 4 {
			LEAQ(Mem{Base: p, Index: st, Scale: 4}, p)
		} else {
			for range u {
				ADDQ(st, p)
			}
		}
	}
	if u := is.softmaxUnroll(); u > 1 {
		loop(name+"_exp_u", n, u, func() { body(u) })
	}
	loop(name+"_exp", n, 1, func() { body(1) })

	// Pass 3: p = e · float32(1/sum).
	r := is.vec()
	for h, sum := range sums {
		inv := is.f64()
		VMOVUPD(c.get("one"), inv)
		VDIVPD(sum, inv, inv)
		half := is.half()
		if L == 16 {
			VCVTPD2PS(inv, half)
			if h == 0 {
				VMOVAPS(half, r.AsY())
			} else {
				VINSERTF64X4(U8(1), half, r, r)
			}
		} else {
			VCVTPD2PSY(inv, half)
			if h == 0 {
				VMOVAPS(half, r.AsX())
			} else {
				VINSERTF128(U8(1), half, r, r)
			}
		}
	}
	Load(Param("sT"), p)
	Load(Param("n"), n)
	loop(name+"_scale", n, 1, func() {
		x := is.vec()
		VMULPS(mem(p, 0), r, x)
		VMOVUPS(x, mem(p, 0))
		ADDQ(st, p)
	})
	VZEROUPPER()
	RET()
}

// mqPVName is the name of the weighted-sum kernel over g head dimensions.
func mqPVName(is isa, nv, g int, masked, bf bool) string {
	m := ""
	if masked {
		m = "Mask"
	}
	return fmt.Sprintf("mqPV%s%s%s_%d", m, elemOf(bf).name(), mqSuffix(is, nv), g)
}

// mqPV generates, for tiles of nv vectors,
//
//	func(oT, pT, v *float32, stride, n int)                      (unmasked)
//	func(oT, pT, v *float32, stride, n int, win *int32, j0 int)  (masked)
//
// oT[c][r] += Σ_j pT[j][r]·v[j·stride+c] for c < g, j < n and the tile's
// rows r, one FMA chain per element in order of j. The masked form treats
// the n keys as keys j0… of the windows at win and leaves a lane's
// accumulators untouched for keys it does not see; the unmasked form is for
// runs of keys every row sees.
func mqPV(is isa, nv, g int, masked, bf bool) {
	name := mqPVName(is, nv, g, masked, bf)
	vt := "*float32"
	if bf {
		vt = "*uint16"
	}
	sig := "func(oT, pT *float32, v " + vt + ", stride, n int)"
	if masked {
		sig = "func(oT, pT *float32, v " + vt + ", stride, n int, win *int32, j0 int)"
	}
	es := elemOf(bf).bytes()
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	what := "every lane"
	if masked {
		what = "the lanes that see each key"
	}
	Doc(fmt.Sprintf("%s accumulates probability-weighted values into %d transposed output dimensions of a %d-vector tile, for %s.", name, g, nv, what))
	vb := 4 * is.lanes
	row := nv * vb
	oT := Load(Param("oT"), GP64())
	pT := Load(Param("pT"), GP64())
	vp := Load(Param("v"), GP64())
	s := Load(Param("stride"), GP64())
	scaleBytes(s, elemOf(bf))
	n := Load(Param("n"), GP64())
	var w *window
	if masked {
		w = is.window(Load(Param("win"), GP64()), nv, NewParamAddr("j0", 48))
	}
	acc := make([][]VecVirtual, g)
	for c := range acc {
		for v := range nv {
			a := is.vec()
			VMOVUPS(mem(oT, c*row+v*vb), a)
			acc[c] = append(acc[c], a)
		}
	}
	loop(name, n, 1, func() {
		PREFETCHT0(Mem{Base: vp, Index: s, Scale: 8})
		p := make([]VecVirtual, nv)
		for v := range p {
			p[v] = is.vec()
			VMOVUPS(mem(pT, v*vb), p[v])
		}
		var ks []Register
		var ms []VecVirtual
		if masked {
			for v := range nv {
				if is.lanes == 16 {
					ks = append(ks, w.maskK(v))
				} else {
					ms = append(ms, w.maskV(v))
				}
			}
		}
		for c := range acc {
			if !masked && nv == 1 && is.lanes == 16 && !bf {
				VFMADD231PS_BCST(mem(vp, 4*c), p[0], acc[c][0])
				continue
			}
			if masked && nv == 1 && is.lanes == 16 && !bf {
				VFMADD231PS_BCST(mem(vp, 4*c), p[0], ks[0], acc[c][0])
				continue
			}
			t := is.broadcastElem(mem(vp, es*c), bf)
			for v, a := range acc[c] {
				switch {
				case !masked:
					VFMADD231PS(t, p[v], a)
				case is.lanes == 16:
					VFMADD231PS(t, p[v], ks[v], a)
				default:
					u := is.vec()
					VMOVAPS(t, u)
					VFMADD213PS(a, p[v], u) // u = p·v + acc
					VBLENDVPS(ms[v], u, a, a)
				}
			}
		}
		if masked {
			w.next()
		}
		ADDQ(U32(row), pT)
		ADDQ(s, vp)
	})
	for c := range acc {
		for v, a := range acc[c] {
			VMOVUPS(a, mem(oT, c*row+v*vb))
		}
	}
	VZEROUPPER()
	RET()
}

// consts32 is a table of float32 (or int32) constants, each repeated
// across a whole vector.
type consts32 struct {
	mem Mem
	off map[string]int
}

var consts32Tables = map[string]*consts32{}

func consts32For(is isa) *consts32 {
	if c, ok := consts32Tables[is.name]; ok {
		return c
	}
	c := &consts32{mem: GLOBL("consts32"+is.name, RODATA|NOPTR), off: map[string]int{}}
	next := 0
	add := func(name string, bits uint32) {
		c.off[name] = next
		for range is.lanes {
			DATA(next, U32(bits))
			next += 4
		}
	}
	addF := func(name string, v float32) { add(name, math.Float32bits(v)) }
	addF("lo", exp32.Lo)
	addF("log2e", exp32.Log2e)
	addF("magic", exp32.Magic)
	addF("ln2hi", exp32.Ln2Hi)
	addF("ln2lo", exp32.Ln2Lo)
	for i, v := range exp32.Coef() {
		addF(fmt.Sprintf("c%d", i), v)
	}
	add("bias127", 127)
	addGELUConsts(add)
	add("bf16hi", 0xffff0000) // the upper bfloat16 of each 32-bit pair
	consts32Tables[is.name] = c
	return c
}

func (c *consts32) get(name string) Mem {
	o, ok := c.off[name]
	if !ok {
		panic("no constant " + name)
	}
	return c.mem.Offset(o)
}

// exp32 returns exp(x) lane-wise, clobbering x.
func (is isa) exp32(c *consts32, x VecVirtual) VecVirtual {
	return is.exp32N(c, []VecVirtual{x})[0]
}

// exp32N is exp32 of several independent vectors, instruction by
// instruction interleaved so that their dependency chains overlap (each
// vector's operations, and so its bits, are exp32's).
func (is isa) exp32N(c *consts32, xs []VecVirtual) []VecVirtual {
	k := len(xs)
	each := func(f func(i int)) {
		for i := range xs {
			f(i)
		}
	}
	b := is.vec()
	VMOVUPS(c.get("lo"), b)
	keep := make([]Op, k) // lanes not below the clamp (or NaN)
	each(func(i int) {
		if is.lanes == 16 {
			m := K()
			VCMPPS(U8(5), b, xs[i], m) // !(x < lo)
			keep[i] = m
		} else {
			m := is.vec()
			VCMPPS(U8(5), b, xs[i], m)
			keep[i] = m
		}
	})
	each(func(i int) { VMAXPS(xs[i], b, xs[i]) }) // b > x ? b : x, so NaN stays
	is.zero(b)
	each(func(i int) { VMINPS(xs[i], b, xs[i]) })
	y, n, p := make([]VecVirtual, k), make([]VecVirtual, k), make([]VecVirtual, k)
	each(func(i int) { y[i], n[i], p[i] = is.vec(), is.vec(), is.vec() })
	each(func(i int) { VMULPS(c.get("log2e"), xs[i], y[i]) })
	each(func(i int) { VADDPS(c.get("magic"), y[i], y[i]) })
	each(func(i int) { VSUBPS(c.get("magic"), y[i], n[i]) })
	each(func(i int) { VFNMADD231PS(c.get("ln2hi"), n[i], xs[i]) })
	each(func(i int) { VFNMADD231PS(c.get("ln2lo"), n[i], xs[i]) })
	each(func(i int) { VMOVUPS(c.get(fmt.Sprintf("c%d", exp32.Terms-1)), p[i]) })
	for j := exp32.Terms - 2; j >= 0; j-- {
		each(func(i int) { VFMADD213PS(c.get(fmt.Sprintf("c%d", j)), xs[i], p[i]) })
	}
	each(func(i int) { VPSUBD(c.get("magic"), y[i], y[i]) })
	each(func(i int) { VPADDD(c.get("bias127"), y[i], y[i]) })
	each(func(i int) { VPSLLD(U8(23), y[i], y[i]) })
	each(func(i int) { VMULPS(y[i], p[i], p[i]) })
	each(func(i int) {
		if is.lanes == 16 {
			VMOVAPS_Z(p[i], keep[i], p[i])
		} else {
			VANDPS(keep[i], p[i], p[i])
		}
	})
	return p
}
