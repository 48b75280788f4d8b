package main

import "fmt"

// attnSumMaxVecs is the widest column block of the weighted-sum kernels, in
// vectors (64 floats): its accumulators take half the registers. Wider
// heads are summed a block at a time.
const attnSumMaxVecs = 16

// elemKind is how the keys and values an attention kernel reads are stored.
type elemKind int

const (
	elemF32  elemKind = iota
	elemBF16          // bfloat16 (tensor.KV.K16)
	elemI8            // signed bytes with a float32 scale per row (tensor.KV.K8)
)

func (el elemKind) bytes() int     { return [...]int{4, 2, 1}[el] }
func (el elemKind) name() string   { return [...]string{"", "BF16", "I8"}[el] }
func (el elemKind) goType() string { return [...]string{"*float32", "*uint16", "*int8"}[el] }
func (el elemKind) shift() int     { return [...]int{2, 1, 0}[el] }

// zeroReg holds zero halves for widening bfloat16 (see loadVec).
const zeroReg = 30

// loadVec loads four keys or values at (ptr) into Vt as float32, advancing
// ptr: float32 as they are, bfloat16 interleaved with zero halves (the
// bits become the high half of each lane), bytes sign-extended twice and
// converted. Each is the exact float32 value.
func loadVec(g *gen, el elemKind, t int, ptr string) {
	switch el {
	case elemF32:
		g.i("VLD1.P 16(%s), [V%d.S4]", ptr, t)
	case elemBF16:
		g.i("VLD1.P 8(%s), [V%d.H4]", ptr, t)
		g.i("VZIP1 V%d.H8, V%d.H8, V%[1]d.H8", t, zeroReg)
	case elemI8:
		g.i("VLD1.P 4(%s), V%d.S[0]", ptr, t)
		g.word(sxtl(t, t, true), sxtlText(t, t, true))
		g.word(sxtl(t, t, false), sxtlText(t, t, false))
		g.word(scvtfS(t, t), scvtfSText(t, t))
	}
}

func genAttention(g *gen) {
	for _, el := range []elemKind{elemF32, elemBF16, elemI8} {
		attnScores(g, el)
		var tab []string
		for nv := 1; nv <= attnSumMaxVecs; nv++ {
			tab = append(tab, attnSum(g, el, nv))
		}
		sig := "func(out, p *float32, v " + el.goType() + ", stride, n int, pf " + el.goType() + ")"
		if el == elemI8 {
			sig = "func(out, p *float32, v *int8, stride, n int, vs *float32, pf *int8)"
		}
		fmt.Fprintf(&g.decl, "\n// attnSum%sNEON holds the weighted-sum kernels by block width in vectors.\nvar attnSum%[1]sNEON = [...]%s{\n", el.name(), sig)
		for _, name := range tab {
			fmt.Fprintf(&g.decl, "%s,\n", name)
		}
		g.decl.WriteString("}\n")
	}
}

// reduceScore leaves in lane 0 of Va the sum of its four lanes as
// (a0+a1)+(a2+a3), multiplies it by the scale in F31 (and, for int8 keys,
// by the key's scale at (R14), advancing R14) and stores it at (R5),
// advancing R5.
func reduceScore(g *gen, el elemKind, a int) {
	for range 2 {
		g.word(sameS(opFADDP, a, a, a), sameSText(opFADDP, a, a, a))
	}
	g.i("FMULS F31, F%d, F%[1]d", a)
	if el == elemI8 {
		g.i("FMOVS.P 4(R14), F29")
		g.i("FMULS F29, F%d, F%[1]d", a)
	}
	g.i("FMOVS.P F%d, 4(R5)", a)
}

// prefetchRow prefetches the cache lines of a 64-element head at (R6) and
// advances R6 by a row (R2 bytes). A prefetch never faults.
func prefetchRow(g *gen, el elemKind) {
	for l := range el.bytes() {
		g.i("PRFM %d(R6), PLDL1KEEP", 64*l)
	}
	g.i("ADD R2, R6, R6")
}

// attnScores generates
//
//	func(q *float32, k *T, stride, n, hd int, scale float32, out *float32, pf *T)
//
// out[j] = (q · k[j·stride : j·stride+hd]) · scale for j < n, hd a multiple
// of 4, the keys widened exactly. Each score is four FMA chains (one per
// lane) over the head's vectors, then the lanes added as (l0+l1)+(l2+l3)
// and the sum scaled, whether the key is done in a block of four keys or
// alone: a score never depends on n or on its position. Row j of pf
// (stride apart like the keys) is prefetched with key j.
//
// The I8 variant takes ks *float32 before pf, the keys' scales: out[j] =
// ((q · k_j) · scale) · ks[j].
func attnScores(g *gen, el elemKind) {
	name := "attnScores" + el.name() + "NEON"
	t := el.goType()
	sig, args, pfOff := "(q *float32, k "+t+", stride, n, hd int, scale float32, out *float32, pf "+t+")", 64, 56
	if el == elemI8 {
		sig, args, pfOff = "(q *float32, k *int8, stride, n, hd int, scale float32, out *float32, ks *float32, pf *int8)", 72, 64
	}
	doc := name + " computes out[j] = (q · k[j·stride:][:hd]) · scale for j < n, hd a multiple of 4."
	if el == elemI8 {
		doc = name + " computes out[j] = ((q · k[j·stride:][:hd]) · scale) · ks[j] for j < n, hd a multiple of 4."
	}
	g.text(name, sig, args, doc)
	g.i("MOVD q+0(FP), R0")
	g.i("MOVD k+8(FP), R1")
	g.i("MOVD stride+16(FP), R2")
	if sh := el.shift(); sh > 0 {
		g.i("LSL $%d, R2, R2", sh)
	}
	g.i("MOVD n+24(FP), R3")
	g.i("MOVD hd+32(FP), R4")
	g.i("LSR $2, R4, R4") // vectors per head
	g.i("FMOVS scale+40(FP), F31")
	g.i("MOVD out+48(FP), R5")
	if el == elemI8 {
		g.i("MOVD ks+56(FP), R14")
	}
	g.i("MOVD pf+%d(FP), R6", pfOff)
	if el == elemBF16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", zeroReg)
	}
	g.i("LSR $2, R3, R7")
	g.i("AND $3, R3, R3")
	g.i("CBZ R7, one")
	g.i("block:")
	g.i("MOVD R1, R8")
	g.i("ADD R2, R8, R9")
	g.i("ADD R2, R9, R10")
	g.i("ADD R2, R10, R11")
	for range 4 {
		prefetchRow(g, el)
	}
	g.i("MOVD R0, R12")
	g.i("MOVD R4, R13")
	for a := range 4 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", a)
	}
	g.i("inner4:")
	g.i("VLD1.P 16(R12), [V4.S4]")
	for r := range 4 {
		loadVec(g, el, 5+r, fmt.Sprintf("R%d", 8+r))
	}
	for r := range 4 {
		g.i("VFMLA V%d.S4, V4.S4, V%d.S4", 5+r, r)
	}
	g.i("SUB $1, R13, R13")
	g.i("CBNZ R13, inner4")
	for a := range 4 {
		reduceScore(g, el, a)
	}
	g.i("ADD R2<<2, R1, R1")
	g.i("SUB $1, R7, R7")
	g.i("CBNZ R7, block")
	g.i("one:")
	g.i("CBZ R3, end")
	g.i("loop1:")
	g.i("MOVD R1, R8")
	prefetchRow(g, el)
	g.i("MOVD R0, R12")
	g.i("MOVD R4, R13")
	g.i("VEOR V0.B16, V0.B16, V0.B16")
	g.i("inner1:")
	g.i("VLD1.P 16(R12), [V4.S4]")
	loadVec(g, el, 5, "R8")
	g.i("VFMLA V5.S4, V4.S4, V0.S4")
	g.i("SUB $1, R13, R13")
	g.i("CBNZ R13, inner1")
	reduceScore(g, el, 0)
	g.i("ADD R2, R1, R1")
	g.i("SUB $1, R3, R3")
	g.i("CBNZ R3, loop1")
	g.i("end:")
	g.i("RET")
}

// vlist is the register list of count consecutive vectors from V(first).
func vlist(first, count int) string {
	s := "["
	for i := range count {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("V%d.S4", first+i)
	}
	return s + "]"
}

// attnSum generates
//
//	func(out, p *float32, v *T, stride, n int, pf *T)
//
// out[c] += Σ_j p[j]·v[j·stride+c] for c < 4·nv, the values widened
// exactly: one FMA chain per element in order of j, from out's value. Row
// j of pf (stride apart like the values) is prefetched with value j. The
// I8 variant takes vs *float32 before pf, the values' scales: the weight
// of row j is float32(p[j]·vs[j]).
func attnSum(g *gen, el elemKind, nv int) string {
	name := fmt.Sprintf("attnSum%sNEON_%d", el.name(), nv)
	t := el.goType()
	sig, args, pfOff := "(out, p *float32, v "+t+", stride, n int, pf "+t+")", 48, 40
	if el == elemI8 {
		sig, args, pfOff = "(out, p *float32, v *int8, stride, n int, vs *float32, pf *int8)", 56, 48
	}
	g.text(name, sig, args,
		fmt.Sprintf("%s accumulates out += Σ_j p[j]·v[j·stride:] over %d vectors, one FMA chain per element in order of j.", name, nv))
	g.i("MOVD out+0(FP), R0")
	g.i("MOVD p+8(FP), R1")
	g.i("MOVD v+16(FP), R7")
	g.i("MOVD stride+24(FP), R2")
	if sh := el.shift(); sh > 0 {
		g.i("LSL $%d, R2, R2", sh)
	}
	g.i("MOVD n+32(FP), R4")
	if el == elemI8 {
		g.i("MOVD vs+40(FP), R14")
	}
	g.i("MOVD pf+%d(FP), R6", pfOff)
	if el == elemBF16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", zeroReg)
	}
	groups := func(f func(first, count int)) {
		for v := 0; v < nv; v += 4 {
			f(v, min(4, nv-v))
		}
	}
	g.i("MOVD R0, R8")
	groups(func(first, count int) { g.i("VLD1.P %d(R8), %s", 16*count, vlist(first, count)) })
	g.i("loop:")
	prefetchRow(g, el)
	if el == elemI8 {
		g.i("FMOVS.P 4(R1), F31")
		g.i("FMOVS.P 4(R14), F29")
		g.i("FMULS F29, F31, F31")
		g.i("VDUP V31.S[0], V31.S4")
	} else {
		g.i("VLD1R.P 4(R1), [V31.S4]")
	}
	g.i("MOVD R7, R8")
	groups(func(first, count int) {
		if el == elemF32 {
			g.i("VLD1.P %d(R8), %s", 16*count, vlist(16, count))
		} else {
			for i := range count {
				loadVec(g, el, 16+i, "R8")
			}
		}
		for i := range count {
			g.i("VFMLA V%d.S4, V31.S4, V%d.S4", 16+i, first+i)
		}
	})
	g.i("ADD R2, R7, R7")
	g.i("SUB $1, R4, R4")
	g.i("CBNZ R4, loop")
	g.i("MOVD R0, R8")
	groups(func(first, count int) { g.i("VST1.P %s, %d(R8)", vlist(first, count), 16*count) })
	g.i("RET")
	return name
}
