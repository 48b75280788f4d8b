package main

import "fmt"

// attnSumMaxVecs is the widest column block of the weighted-sum kernels, in
// vectors (64 floats): its accumulators take half the registers. Wider
// heads are summed a block at a time.
const attnSumMaxVecs = 16

func genAttention(g *gen) {
	attnScores(g)
	var tab []string
	for nv := 1; nv <= attnSumMaxVecs; nv++ {
		tab = append(tab, attnSum(g, nv))
	}
	fmt.Fprintf(&g.decl, "\n// attnSumNEON holds the weighted-sum kernels by block width in vectors.\nvar attnSumNEON = [...]func(out, p, v *float32, stride, n int, pf *float32){\n")
	for _, name := range tab {
		fmt.Fprintf(&g.decl, "%s,\n", name)
	}
	g.decl.WriteString("}\n")
}

// reduceScore leaves in lane 0 of Va the sum of its four lanes as
// (a0+a1)+(a2+a3), multiplies it by the scale in F31 and stores it at
// (R5), advancing R5.
func reduceScore(g *gen, a int) {
	for range 2 {
		g.word(sameS(opFADDP, a, a, a), sameSText(opFADDP, a, a, a))
	}
	g.i("FMULS F31, F%d, F%[1]d", a)
	g.i("FMOVS.P F%d, 4(R5)", a)
}

// prefetchRow prefetches the first four cache lines (a 64-float head) of
// the row at (R6) and advances R6 by a row (R2 bytes). A prefetch never
// faults.
func prefetchRow(g *gen) {
	for l := range 4 {
		g.i("PRFM %d(R6), PLDL1KEEP", 64*l)
	}
	g.i("ADD R2, R6, R6")
}

// attnScores generates
//
//	func(q, k *float32, stride, n, hd int, scale float32, out *float32, pf *float32)
//
// out[j] = (q · k[j·stride : j·stride+hd]) · scale for j < n, hd a multiple
// of 4. Each score is four FMA chains (one per lane) over the head's
// vectors, then the lanes added as (l0+l1)+(l2+l3) and the sum scaled,
// whether the key is done in a block of four keys or alone: a score never
// depends on n or on its position. Row j of pf (stride apart like the keys)
// is prefetched with key j.
func attnScores(g *gen) {
	name := "attnScoresNEON"
	g.text(name, "(q *float32, k *float32, stride, n, hd int, scale float32, out *float32, pf *float32)", 64,
		name+" computes out[j] = (q · k[j·stride:][:hd]) · scale for j < n, hd a multiple of 4.")
	g.i("MOVD q+0(FP), R0")
	g.i("MOVD k+8(FP), R1")
	g.i("MOVD stride+16(FP), R2")
	g.i("LSL $2, R2, R2")
	g.i("MOVD n+24(FP), R3")
	g.i("MOVD hd+32(FP), R4")
	g.i("LSR $2, R4, R4") // vectors per head
	g.i("FMOVS scale+40(FP), F31")
	g.i("MOVD out+48(FP), R5")
	g.i("MOVD pf+56(FP), R6")
	g.i("LSR $2, R3, R7")
	g.i("AND $3, R3, R3")
	g.i("CBZ R7, one")
	g.i("block:")
	g.i("MOVD R1, R8")
	g.i("ADD R2, R8, R9")
	g.i("ADD R2, R9, R10")
	g.i("ADD R2, R10, R11")
	for range 4 {
		prefetchRow(g)
	}
	g.i("MOVD R0, R12")
	g.i("MOVD R4, R13")
	for a := range 4 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", a)
	}
	g.i("inner4:")
	g.i("VLD1.P 16(R12), [V4.S4]")
	for r := range 4 {
		g.i("VLD1.P 16(R%d), [V%d.S4]", 8+r, 5+r)
	}
	for r := range 4 {
		g.i("VFMLA V%d.S4, V4.S4, V%d.S4", 5+r, r)
	}
	g.i("SUB $1, R13, R13")
	g.i("CBNZ R13, inner4")
	for a := range 4 {
		reduceScore(g, a)
	}
	g.i("ADD R2<<2, R1, R1")
	g.i("SUB $1, R7, R7")
	g.i("CBNZ R7, block")
	g.i("one:")
	g.i("CBZ R3, end")
	g.i("loop1:")
	g.i("MOVD R1, R8")
	prefetchRow(g)
	g.i("MOVD R0, R12")
	g.i("MOVD R4, R13")
	g.i("VEOR V0.B16, V0.B16, V0.B16")
	g.i("inner1:")
	g.i("VLD1.P 16(R12), [V4.S4]")
	g.i("VLD1.P 16(R8), [V5.S4]")
	g.i("VFMLA V5.S4, V4.S4, V0.S4")
	g.i("SUB $1, R13, R13")
	g.i("CBNZ R13, inner1")
	reduceScore(g, 0)
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
//	func(out, p, v *float32, stride, n int, pf *float32)
//
// out[c] += Σ_j p[j]·v[j·stride+c] for c < 4·nv: one FMA chain per element
// in order of j, from out's value. Row j of pf (stride apart like the
// values) is prefetched with value j.
func attnSum(g *gen, nv int) string {
	name := fmt.Sprintf("attnSumNEON_%d", nv)
	g.text(name, "(out, p, v *float32, stride, n int, pf *float32)", 48,
		fmt.Sprintf("%s accumulates out += Σ_j p[j]·v[j·stride:] over %d vectors, one FMA chain per element in order of j.", name, nv))
	g.i("MOVD out+0(FP), R0")
	g.i("MOVD p+8(FP), R1")
	g.i("MOVD v+16(FP), R7")
	g.i("MOVD stride+24(FP), R2")
	g.i("LSL $2, R2, R2")
	g.i("MOVD n+32(FP), R4")
	g.i("MOVD pf+40(FP), R6")
	groups := func(f func(first, count int)) {
		for v := 0; v < nv; v += 4 {
			f(v, min(4, nv-v))
		}
	}
	g.i("MOVD R0, R8")
	groups(func(first, count int) { g.i("VLD1.P %d(R8), %s", 16*count, vlist(first, count)) })
	g.i("loop:")
	prefetchRow(g)
	g.i("VLD1R.P 4(R1), [V31.S4]")
	g.i("MOVD R7, R8")
	groups(func(first, count int) {
		g.i("VLD1.P %d(R8), %s", 16*count, vlist(16, count))
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
