package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// attnSumMaxVecs is the largest head size, in vectors, of the weighted-sum
// kernels (128 floats with AVX-512, 64 with AVX2).
const attnSumMaxVecs = 8

func genAttention(is isa) {
	for _, el := range []elemKind{elemF32, elemBF16, elemI8} {
		attnScores(is, el)
		for nv := 1; nv <= attnSumMaxVecs; nv++ {
			attnSum(is, nv, el)
		}
	}
	dequantRows(is)
}

// dequantRows generates func(dst *float32, src *int8, scales *float32, rows,
// hd int): dst[r·hd+c] = float32(src[r·hd+c])·scales[r], hd a multiple of
// the vector width (an int8 KV block's head, dequantized).
func dequantRows(is isa) {
	name := "dequantRows" + is.name
	TEXT(name, NOSPLIT, "func(dst *float32, src *int8, scales *float32, rows, hd int)")
	Pragma("noescape")
	Doc(name + " writes dst[r·hd+c] = float32(src[r·hd+c])·scales[r] for r < rows, hd a multiple of the vector width.")
	L := is.lanes
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	sc := Load(Param("scales"), GP64())
	rows := Load(Param("rows"), GP64())
	hd := Load(Param("hd"), GP64())
	c := GP64()
	loop(name+"_row", rows, 1, func() {
		s := is.vec()
		VBROADCASTSS(mem(sc, 0), s)
		MOVQ(hd, c)
		loop(name+"_col", c, L, func() {
			v := is.loadKV(mem(src, 0), elemI8).(VecVirtual)
			VMULPS(s, v, v)
			VMOVUPS(v, mem(dst, 0))
			ADDQ(U32(L), src)
			ADDQ(U32(4*L), dst)
		})
		ADDQ(U32(4), sc)
	})
	VZEROUPPER()
	RET()
}

// elemKind is how the keys and values an attention kernel reads are stored.
type elemKind int

const (
	elemF32  elemKind = iota
	elemBF16          // bfloat16 (tensor.KV.K16)
	elemI8            // signed bytes with a float32 scale per row (tensor.KV.K8)
)

// bytes is the size of one element.
func (el elemKind) bytes() int { return [...]int{4, 2, 1}[el] }

// name is the infix of the kernels' names.
func (el elemKind) name() string { return [...]string{"", "BF16", "I8"}[el] }

// goType is the Go type of the elements.
func (el elemKind) goType() string { return [...]string{"*float32", "*uint16", "*int8"}[el] }

// loadKV returns a vector of lanes keys or values at m as float32: a
// float32 memory operand as it is, bfloat16 values zero-extended and
// shifted into the high halves of the lanes, or signed bytes sign-extended
// and converted — in each case their exact float32 value.
func (is isa) loadKV(m Mem, el elemKind) Op {
	if el == elemF32 {
		return m
	}
	t := is.vec()
	if el == elemBF16 {
		VPMOVZXWD(m, t)
		VPSLLD(U8(16), t, t)
	} else {
		VPMOVSXBD(m, t)
		VCVTDQ2PS(t, t)
	}
	return t
}

// elemOf is the storage of the float32 (false) or bfloat16 (true)
// variants of the windowed kernels.
func elemOf(bf bool) elemKind {
	if bf {
		return elemBF16
	}
	return elemF32
}

// scaleBytes shifts a count of elements in r into bytes.
func scaleBytes(r Register, el elemKind) {
	if sh := bits.TrailingZeros(uint(el.bytes())); sh > 0 {
		SHLQ(U8(sh), r)
	}
}

// attnScores generates
//
//	func(q, k *float32, stride, n, hd int, scale float32, out *float32)
//
// out[j] = (q · k[j·stride : j·stride+hd]) · scale for j < n, hd a multiple of
// the vector width. Each score is lanes of FMA chains over the head's vectors
// followed by the fixed pairwise lane tree of reduceF32, whether the key is
// computed in a block of one vector's worth of keys (lane sums transposed
// together) or alone, so a score never depends on n or on its position.
//
// The last argument, pf (of the keys' type), holds rows the caller reads
// next (the same keys' values), stride apart like the keys: the start of
// row j (the lines of a 64-element head) is prefetched with key j, so that
// the next kernel finds it in cache instead of waiting for a stream of
// short rows to train the hardware prefetcher. A prefetch never faults and
// changes no result.
//
// The I8 variant reads keys stored as signed bytes and takes one more
// argument, ks *float32 (before pf), the keys' scales: out[j] = ((q · k_j) ·
// scale) · ks[j].
func attnScores(is isa, el elemKind) {
	name := "attnScores" + el.name() + is.name
	sig := "func(q *float32, k " + el.goType() + ", stride, n, hd int, scale float32, out *float32, pf " + el.goType() + ")"
	pfOff := 56
	if el == elemI8 {
		sig = "func(q *float32, k *int8, stride, n, hd int, scale float32, out *float32, ks *float32, pf *int8)"
		pfOff = 64
	}
	pfLines := el.bytes() // cache lines of a 64-element head
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(name + " computes the scaled dot products of q with n keys of hd elements, stride elements apart.")
	L := is.lanes
	vb := 4 * L
	es := el.bytes()
	kvb := es * L // bytes of one vector of keys
	B := L        // keys per block
	q := Load(Param("q"), GP64())
	kb := Load(Param("k"), GP64())
	s := Load(Param("stride"), GP64())
	scaleBytes(s, el)
	s3 := GP64()
	LEAQ(Mem{Base: s, Index: s, Scale: 2}, s3)
	n := Load(Param("n"), GP64())
	hd := Load(Param("hd"), GP64())
	out := Load(Param("out"), GP64())
	var ks Register
	if el == elemI8 {
		ks = Load(Param("ks"), GP64())
	}
	scale := is.vec()
	VBROADCASTSS(NewParamAddr("scale", 40), scale)

	// keyOf[slot] is the key a block accumulator holds, chosen so that the
	// transposing tree leaves the scores in natural order.
	keyOf := func(slot int) int {
		if L == 16 {
			return 4*(slot%4) + slot/4
		}
		return 4*(slot%2) + slot/2
	}
	nb := B / 4 // base registers, four keys each
	bases := make([]Register, nb)
	for i := range bases {
		bases[i] = GP64()
	}
	keyMem := func(j int) Mem {
		b := bases[j/4]
		switch j % 4 {
		case 0:
			return Mem{Base: b}
		case 1:
			return Mem{Base: b, Index: s, Scale: 1}
		case 2:
			return Mem{Base: b, Index: s, Scale: 2}
		}
		return Mem{Base: b, Index: s3, Scale: 1}
	}
	qp := GP64()
	vc := GP64()

	Label(name + "_block")
	CMPQ(n, U32(B))
	JL(LabelRef(name + "_single"))
	{
		// The prefetch pointer lives in its argument slot (no register
		// is left): qp walks the block's B rows of it first.
		pf := NewParamAddr("pf", pfOff)
		MOVQ(pf, qp)
		for i := 0; i < nb; i++ {
			for l := range pfLines {
				PREFETCHT0(Mem{Base: qp, Disp: 64 * l})
				PREFETCHT0(Mem{Base: qp, Index: s, Scale: 1, Disp: 64 * l})
				PREFETCHT0(Mem{Base: qp, Index: s, Scale: 2, Disp: 64 * l})
				PREFETCHT0(Mem{Base: qp, Index: s3, Scale: 1, Disp: 64 * l})
			}
			LEAQ(Mem{Base: qp, Index: s, Scale: 4}, qp)
		}
		MOVQ(qp, pf)
	}
	MOVQ(kb, bases[0])
	for i := 1; i < nb; i++ {
		LEAQ(Mem{Base: bases[i-1], Index: s, Scale: 4}, bases[i])
	}
	MOVQ(q, qp)
	acc := make([]VecVirtual, B)
	qv := is.vec()
	VMOVUPS(mem(qp, 0), qv)
	for slot := range acc {
		acc[slot] = is.vec()
		VMULPS(is.loadKV(keyMem(keyOf(slot)), el), qv, acc[slot])
	}
	MOVQ(hd, vc)
	SUBQ(U32(L), vc)
	Label(name + "_bv")
	CMPQ(vc, U32(0))
	JLE(LabelRef(name + "_btree"))
	ADDQ(U32(vb), qp)
	for _, b := range bases {
		ADDQ(U32(kvb), b)
	}
	VMOVUPS(mem(qp, 0), qv)
	for slot := range acc {
		VFMADD231PS(is.loadKV(keyMem(keyOf(slot)), el), qv, acc[slot])
	}
	SUBQ(U32(L), vc)
	JMP(LabelRef(name + "_bv"))

	Label(name + "_btree")
	pairSum := func(a, b VecVirtual, shuf func(imm uint8, b, a, dst VecVirtual), lo, hi uint8) VecVirtual {
		x, y := is.vec(), is.vec()
		shuf(lo, b, a, x)
		shuf(hi, b, a, y)
		VADDPS(y, x, x)
		return x
	}
	shuf128 := func(imm uint8, b, a, dst VecVirtual) { VSHUFF32X4(U8(imm), b, a, dst) }
	perm128 := func(imm uint8, b, a, dst VecVirtual) { VPERM2F128(U8(imm), b, a, dst) }
	shufps := func(imm uint8, b, a, dst VecVirtual) { VSHUFPS(U8(imm), b, a, dst) }
	level := func(v []VecVirtual, shuf func(uint8, VecVirtual, VecVirtual, VecVirtual), lo, hi uint8) []VecVirtual {
		var r []VecVirtual
		for i := 0; i < len(v); i += 2 {
			r = append(r, pairSum(v[i], v[i+1], shuf, lo, hi))
		}
		return r
	}
	v := acc
	if L == 16 {
		v = level(v, shuf128, 0x44, 0xEE) // lane l + lane l+8
		v = level(v, shuf128, 0x88, 0xDD) // + l+4
		v = level(v, shufps, 0x44, 0xEE)  // + l+2
		v = level(v, shufps, 0x88, 0xDD)  // + l+1
	} else {
		v = level(v, perm128, 0x20, 0x31) // lane l + lane l+4
		v = level(v, shufps, 0x44, 0xEE)  // + l+2
		v = level(v, shufps, 0x88, 0xDD)  // + l+1
	}
	VMULPS(scale, v[0], v[0])
	if el == elemI8 {
		VMULPS(mem(ks, 0), v[0], v[0])
		ADDQ(U32(4*B), ks)
	}
	VMOVUPS(v[0], mem(out, 0))
	ADDQ(U32(4*B), out)
	LEAQ(Mem{Base: bases[nb-1], Index: s, Scale: 4}, kb) // kb += B·stride (bases advanced by the v loop)
	MOVQ(hd, vc)
	scaleBytes(vc, el)
	SUBQ(U32(kvb), vc)
	SUBQ(vc, kb)
	SUBQ(U32(B), n)
	JMP(LabelRef(name + "_block"))

	// Remaining keys one at a time, same lane chains and tree.
	Label(name + "_single")
	CMPQ(n, U32(0))
	JLE(LabelRef(name + "_ret"))
	{
		pf := NewParamAddr("pf", pfOff)
		MOVQ(pf, qp)
		for l := range pfLines {
			PREFETCHT0(Mem{Base: qp, Disp: 64 * l})
		}
		ADDQ(s, qp)
		MOVQ(qp, pf)
	}
	MOVQ(q, qp)
	MOVQ(kb, bases[0])
	a := is.vec()
	VMOVUPS(mem(qp, 0), a)
	VMULPS(is.loadKV(mem(bases[0], 0), el), a, a)
	MOVQ(hd, vc)
	SUBQ(U32(L), vc)
	Label(name + "_sv")
	CMPQ(vc, U32(0))
	JLE(LabelRef(name + "_stree"))
	ADDQ(U32(vb), qp)
	ADDQ(U32(kvb), bases[0])
	t := is.vec()
	VMOVUPS(mem(qp, 0), t)
	VFMADD231PS(is.loadKV(mem(bases[0], 0), el), t, a)
	SUBQ(U32(L), vc)
	JMP(LabelRef(name + "_sv"))
	Label(name + "_stree")
	r := is.reduceF32(a)
	VMULSS(scale.AsX(), r, r)
	if el == elemI8 {
		VMULSS(mem(ks, 0), r, r)
		ADDQ(U32(4), ks)
	}
	VMOVSS(r, mem(out, 0))
	ADDQ(U32(4), out)
	ADDQ(s, kb)
	DECQ(n)
	JMP(LabelRef(name + "_single"))

	Label(name + "_ret")
	VZEROUPPER()
	RET()
}

// attnSum generates func(out, p, v *float32, stride, n int):
// out[0:nv·lanes] += Σ_j p[j]·v[j·stride : …] as one FMA chain per element,
// in order of j.
//
// The last argument, pf (of the values' type), holds rows read next (the
// next head's keys), stride apart, whose row j's start (the lines of a
// 64-element head) is prefetched with value j (see attnScores).
//
// The I8 variant reads values stored as signed bytes and takes their scales
// vs *float32 (before pf): the weight of v[j] is then p[j]·vs[j], rounded to
// float32.
func attnSum(is isa, nv int, el elemKind) {
	name := fmt.Sprintf("attnSum%s%s_%d", el.name(), is.name, nv)
	sig := "func(out, p *float32, v " + el.goType() + ", stride, n int, pf " + el.goType() + ")"
	if el == elemI8 {
		sig = "func(out, p *float32, v *int8, stride, n int, vs *float32, pf *int8)"
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s accumulates out += Σ_j p[j]·v[j·stride:] over %d vectors, one FMA chain per element in order of j.", name, nv))
	L := is.lanes
	vb := 4 * L
	es := el.bytes()
	out := Load(Param("out"), GP64())
	p := Load(Param("p"), GP64())
	vp := Load(Param("v"), GP64())
	s := Load(Param("stride"), GP64())
	scaleBytes(s, el)
	n := Load(Param("n"), GP64())
	var vs Register
	if el == elemI8 {
		vs = Load(Param("vs"), GP64())
	}
	pf := Load(Param("pf"), GP64())
	acc := make([]VecVirtual, nv)
	for i := range acc {
		acc[i] = is.vec()
		VMOVUPS(mem(out, i*vb), acc[i])
	}
	loop(name, n, 1, func() {
		b := is.vec()
		for l := range el.bytes() { // the lines of a 64-element head
			PREFETCHT0(mem(pf, 64*l))
		}
		ADDQ(s, pf)
		if el == elemI8 {
			w := XMM()
			VMOVSS(mem(p, 0), w)
			VMULSS(mem(vs, 0), w, w)
			VBROADCASTSS(w, b)
			ADDQ(U32(4), vs)
		} else {
			VBROADCASTSS(mem(p, 0), b)
		}
		for i := range acc {
			VFMADD231PS(is.loadKV(mem(vp, i*es*L), el), b, acc[i])
		}
		ADDQ(U32(4), p)
		ADDQ(s, vp)
	})
	for i := range acc {
		VMOVUPS(acc[i], mem(out, i*vb))
	}
	VZEROUPPER()
	RET()
}
