package main

import (
	"fmt"
	"math"

	"nanovoxtensorasm/exp32"
)

// The windowed attention kernels (AttendWindows in ../../window.go): the
// arm64 form of the amd64 tile kernels in ../windows.go, with the same
// signatures, driven by the same tile driver (../../window_driver.go).
//
// A tile is nv vectors of four lanes (nv = 1, 2 or 4: 4, 8 or 16 query
// rows); lane l of vector v is row 4v+l of the tile, so every per-row
// operation is lane-wise and a row's result never depends on the other
// rows, on nv or on which keys are blocked together. Per row and head, in
// this order (the portable code's, windowRowGeneric):
//
//	s_j  = (Σ_c q_c·k_jc as one FMA chain from zero, c = 0…hd−1) · scale
//	mx   = max of the visible s_j (a NaN never replaces the running max)
//	e_j  = exp32(s_j − mx), sum = Σ float64(e_j) in float64 in order of j
//	p_j  = e_j · float32(1/sum)
//	o_c  = Σ p_j·v_jc as one FMA chain from zero in order of the visible j
//
// FMLA and FMLS are single-rounded fused multiply-adds like the amd64
// VFMADD231PS/VFNMADD231PS, and the other operations are IEEE float32 or
// float64 operations rounding to nearest even (Go programs run with the
// FPCR's default rounding and without flush-to-zero), so each lane computes
// the portable code's bits. The lane bounds are those of windowTile.win:
// per vector, lo−1 of its four lanes then hi−1 (int32), relative to the
// tile's first key; a lane sees key j iff lo−1 < j ≤ hi−1.
//
// The keys' and values' bfloat16 forms (KV.K16, KV.V16) are widened
// exactly: a bfloat16 value placed in the high half of a float32 lane is
// its float32 value. The dot-product forms (KV.BF16Scores, KV.BF16Sums) are
// defined by VDPBF16PS, which BFDOT does not reproduce (see
// ../../kernels_arm64.go): their tiles run the portable loops of the driver.

// mqVectorsNEON are the tile widths, in vectors of four rows.
var mqVectorsNEON = []int{1, 2, 4}

// mqGroupNEON is the most head dimensions one weighted-sum kernel of nv
// vectors accumulates: 16 accumulator registers, as many for the
// probabilities, values, masks and their temporaries.
func mqGroupNEON(nv int) int { return 16 / nv }

func genWindows(g *gen) {
	for _, nv := range mqVectorsNEON {
		for _, el := range []elemKind{elemF32, elemBF16} {
			mqScoresNEON(g, nv, el)
			for d := 1; d <= mqGroupNEON(nv); d++ {
				mqPVNEON(g, nv, d, false, el)
				mqPVNEON(g, nv, d, true, el)
			}
		}
	}
	mqSoftmaxNEON(g)
	// The kernel sets, one per tile width, in the driver's windowKernels
	// (the dot-product fields nil: the driver's portable loops).
	for _, nv := range mqVectorsNEON {
		fmt.Fprintf(&g.decl, "\n// windowKernelsNEON%d are the windowed-attention kernels for tiles of %d rows.\nvar windowKernelsNEON%[1]d = windowKernels{\n", nv, 4*nv)
		fmt.Fprintf(&g.decl, "scores: %s,\nsoftmax: mqSoftmaxNEON,\nscoresBF: %s,\n", mqScoresNameNEON(nv, elemF32), mqScoresNameNEON(nv, elemBF16))
		for _, f := range []struct {
			field, typ string
			masked     bool
			el         elemKind
		}{
			{"pv", "func(oT, pT, v *float32, stride, n int)", false, elemF32},
			{"pvMask", "func(oT, pT, v *float32, stride, n int, win *int32, j0 int)", true, elemF32},
			{"pvBF", "func(oT, pT *float32, v *uint16, stride, n int)", false, elemBF16},
			{"pvMaskBF", "func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int)", true, elemBF16},
		} {
			fmt.Fprintf(&g.decl, "%s: []%s{", f.field, f.typ)
			for d := 1; d <= mqGroupNEON(nv); d++ {
				fmt.Fprintf(&g.decl, "%s, ", mqPVNameNEON(nv, d, f.masked, f.el))
			}
			g.decl.WriteString("},\n")
		}
		g.decl.WriteString("}\n")
	}
}

func mqSuffixNEON(nv int) string {
	if nv == 1 {
		return "NEON"
	}
	return fmt.Sprintf("NEONx%d", nv)
}

func mqScoresNameNEON(nv int, el elemKind) string {
	return "mqScores" + el.name() + mqSuffixNEON(nv)
}

func mqPVNameNEON(nv, d int, masked bool, el elemKind) string {
	m := ""
	if masked {
		m = "Mask"
	}
	return fmt.Sprintf("mqPV%s%s%s_%d", m, el.name(), mqSuffixNEON(nv), d)
}

// vlistN is the register list of the count vectors from V(first) (at most
// four, consecutive).
func vlistN(first, count int) string { return vlist(first, count) }

// loadElems loads the elements [0, d) of a key or value row at (ptr) into
// the registers vec[0…] as float32, four per register (element c in lane c%4
// of vec[c/4]), advancing ptr by d elements and reading nothing past them:
// float32 whole vectors then single lanes; bfloat16 four halfwords zipped
// with the zero register z (each into the high half of its lane), then
// single halfwords into the high halves of a cleared register.
func loadElems(g *gen, el elemKind, vec []int, d int, ptr string, z int) {
	for i := 0; i < d/4; i++ {
		t := vec[i]
		if el == elemF32 {
			g.i("VLD1.P 16(%s), [V%d.S4]", ptr, t)
		} else {
			g.i("VLD1.P 8(%s), [V%d.H4]", ptr, t)
			g.i("VZIP1 V%d.H8, V%d.H8, V%[1]d.H8", t, z)
		}
	}
	if d%4 == 0 {
		return
	}
	t := vec[d/4]
	if el == elemBF16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", t)
	}
	for l := range d % 4 {
		if el == elemF32 {
			g.i("VLD1.P 4(%s), V%d.S[%d]", ptr, t, l)
		} else {
			g.i("VLD1.P 2(%s), V%d.H[%d]", ptr, t, 2*l+1)
		}
	}
}

// mqScoresNEON generates, for tiles of nv vectors,
//
//	func(qT *float32, k *T, stride, n, hd int, scale float32, sT *float32, pf *T)
//
// sT[j][r] = scale · Σ_c qT[c][r]·k[j·stride+c] for j < n and the tile's
// rows r, each score one FMA chain over c from zero (FMLA by element: a key
// vector's four elements in turn). Keys go four at a time, then one; every
// accumulator is one key of one vector, so the blocking never changes a
// score. Row j of pf (the same rows' values, stride apart) is prefetched
// with key j.
func mqScoresNEON(g *gen, nv int, el elemKind) {
	name := mqScoresNameNEON(nv, el)
	t := el.goType()
	g.text(name, "(qT *float32, k "+t+", stride, n, hd int, scale float32, sT *float32, pf "+t+")", 64,
		fmt.Sprintf("%s computes the scaled scores of a tile of %d transposed query vectors against n keys of hd elements, stride elements apart.", name, nv))
	const (
		accBase = 0  // acc[b][v] = V(b·nv + v), up to 16
		keyBase = 16 // the key vectors of a block, V16…V19
		qBase   = 20 // the queries of one dimension, V20…V23
		zero    = 30 // zero halves for widening bfloat16
		scale   = 31
	)
	row := 16 * nv // bytes of one dimension of qT, one key of sT
	g.i("MOVD qT+0(FP), R0")
	g.i("MOVD k+8(FP), R1")
	g.i("MOVD stride+16(FP), R2")
	if sh := el.shift(); sh > 0 {
		g.i("LSL $%d, R2, R2", sh)
	}
	g.i("MOVD n+24(FP), R3")
	g.i("MOVD hd+32(FP), R4")
	g.i("FMOVS scale+40(FP), F%d", scale)
	g.i("VDUP V%d.S[0], V%[1]d.S4", scale)
	g.i("MOVD sT+48(FP), R5")
	g.i("MOVD pf+56(FP), R6")
	g.i("LSR $2, R4, R14") // whole vectors of a key
	g.i("AND $3, R4, R15") // single elements after them
	if el == elemBF16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", zero)
	}
	block := func(lbl string, b int) {
		for k := range b {
			if k == 0 {
				g.i("MOVD R1, R8")
			} else {
				g.i("ADD R2, R%d, R%d", 7+k, 8+k)
			}
			prefetchRow(g, el)
		}
		g.i("MOVD R0, R12")
		for a := range b * nv {
			g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", accBase+a)
		}
		// fmla accumulates dimension l of the key vectors' lanes.
		fmla := func(l int) {
			g.i("VLD1.P %d(R12), %s", row, vlistN(qBase, nv))
			for k := range b {
				for v := range nv {
					a := accBase + k*nv + v
					g.word(fmlaElemS(a, qBase+v, keyBase+k, l), fmlaElemSText(a, qBase+v, keyBase+k, l))
				}
			}
		}
		g.i("MOVD R14, R13")
		g.i("CBZ R13, %s_tail", lbl)
		g.i("%s_c4:", lbl)
		for k := range b {
			loadElems(g, el, []int{keyBase + k}, 4, fmt.Sprintf("R%d", 8+k), zero)
		}
		for l := range 4 {
			fmla(l)
		}
		g.i("SUB $1, R13, R13")
		g.i("CBNZ R13, %s_c4", lbl)
		g.i("%s_tail:", lbl)
		// The last hd%4 dimensions, one lane each (three kernels' worth of
		// code paths: no loop over a count).
		for d := 1; d <= 3; d++ {
			g.i("CMP $%d, R15", d)
			g.i("BNE %s_t%d", lbl, d+1)
			for k := range b {
				loadElems(g, el, []int{keyBase + k}, d, fmt.Sprintf("R%d", 8+k), zero)
			}
			for l := range d {
				fmla(l)
			}
			g.i("%s_t%d:", lbl, d+1)
		}
		for k := range b {
			for v := range nv {
				a := accBase + k*nv + v
				g.word(sameS(opFMUL, a, a, scale), sameSText(opFMUL, a, a, scale))
			}
			g.i("VST1.P %s, %d(R5)", vlistN(accBase+k*nv, nv), row)
		}
		if b == 1 {
			g.i("ADD R2, R1, R1")
		} else {
			g.i("ADD R2<<2, R1, R1")
		}
	}
	g.i("LSR $2, R3, R7")
	g.i("AND $3, R3, R3")
	g.i("CBZ R7, one")
	g.i("b4:")
	block("b4", 4)
	g.i("SUB $1, R7, R7")
	g.i("CBNZ R7, b4")
	g.i("one:")
	g.i("CBZ R3, end")
	g.i("b1:")
	block("b1", 1)
	g.i("SUB $1, R3, R3")
	g.i("CBNZ R3, b1")
	g.i("end:")
	g.i("RET")
}

// expRegs are the registers holding exp32's constants, broadcast, and its
// coefficients c[i] = float32(1/i!), four to a register: c_i in lane i%4
// of V(c[i/4]), broadcast when used (so that the polynomial's constants
// take two registers, not eight).
type expRegs struct {
	lo, log2e, magic, ln2hi, ln2lo, bias, zero int
	c                                          [(exp32.Terms + 3) / 4]int
}

// dupF32 fills V(r) with the 32-bit pattern bits (R13 clobbered).
func dupF32(g *gen, r int, bits uint32) {
	g.i("MOVD $0x%x, R13", bits)
	g.i("VDUP R13, V%d.S4", r)
}

// packF32 puts the float32 values vs into the lanes of V(regs[0]),
// V(regs[1])… in order, four to a register (R13 clobbered).
func packF32(g *gen, regs []int, vs []float32) {
	for i, v := range vs {
		g.i("MOVD $0x%x, R13", math.Float32bits(v))
		g.i("VMOV R13, V%d.S[%d]", regs[i/4], i%4)
	}
}

// loadExpConsts fills the registers of e.
func loadExpConsts(g *gen, e *expRegs) {
	f := func(r int, v float32) { dupF32(g, r, math.Float32bits(v)) }
	f(e.lo, exp32.Lo)
	f(e.log2e, exp32.Log2e)
	f(e.magic, exp32.Magic)
	f(e.ln2hi, exp32.Ln2Hi)
	f(e.ln2lo, exp32.Ln2Lo)
	c := exp32.Coef()
	packF32(g, e.c[:], c[:])
	dupF32(g, e.bias, 127)
	g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", e.zero)
}

// horner leaves in V(p) the polynomial Σ coef_i·x^i by Horner's rule with
// fused steps, p = coef_i + p·x from the highest coefficient down, the
// coefficients packed four to a register in V(pack[i/4]) lane i%4 (n of
// them); V(u) is the other accumulator of the alternation (FMLA's
// destination starts as the coefficient). Every lane does the portable
// loop's operations.
func horner(g *gen, pack []int, n, x, p, u int) {
	dup := func(d, i int) { g.i("VDUP V%d.S[%d], V%d.S4", pack[i/4], i%4, d) }
	regs := [2]int{p, u}
	cur := regs[(n-1)%2]
	dup(cur, n-1)
	for i := n - 2; i >= 0; i-- {
		d := regs[i%2]
		dup(d, i)
		g.i("VFMLA V%d.S4, V%d.S4, V%d.S4", x, cur, d) // d = coef_i + cur·x, fused
		cur = d
	}
}

// exp32NEON leaves exp32(V(x)) lane-wise in V(p), clobbering V(x) and the
// temporaries t[0…3]:
//
//	lt = lo > x (0 for NaN)          x = +0 where x > 0 (NaN kept)
//	y = (x·log2e) + magic, rounded each   n = y − magic
//	x = fma(−n, ln2hi, x), then fma(−n, ln2lo, x)
//	p = c7; p = fma(p, x, c_i) for i = 6…0
//	p = p · float32 with exponent bits (bits(y) − bits(magic) + 127)
//	p = 0 where lt
//
// Lanes below lo compute meaningless values before they are cleared (the
// portable code returns 0 for them at once); every other lane does the
// portable code's operations.
func exp32NEON(g *gen, e *expRegs, x, p int, t [4]int) {
	w := func(op uint32, d, n, m int) { g.word(sameS(op, d, n, m), sameSText(op, d, n, m)) }
	lt, y, n, u := t[0], t[1], t[2], t[3]
	w(opFCMGT, lt, e.lo, x)
	w(opFCMGT, u, x, e.zero)
	w(opBIC, x, x, u)
	w(opFMUL, y, x, e.log2e)
	w(opFADD, y, y, e.magic)
	w(opFSUB, n, y, e.magic)
	g.i("VFMLS V%d.S4, V%d.S4, V%d.S4", e.ln2hi, n, x) // x −= n·ln2hi, fused
	g.i("VFMLS V%d.S4, V%d.S4, V%d.S4", e.ln2lo, n, x)
	horner(g, e.c[:], exp32.Terms, x, p, u)
	g.i("VSUB V%d.S4, V%d.S4, V%d.S4", e.magic, y, y) // integer: n
	g.i("VADD V%d.S4, V%d.S4, V%d.S4", e.bias, y, y)
	g.i("VSHL $23, V%d.S4, V%[1]d.S4", y)
	w(opFMUL, p, p, y)
	w(opBIC, p, p, lt)
}

// visible sets V(m) to all ones in the lanes that see key V(j): lo−1 < j
// and not hi−1 < j, the bounds in V(lo) and V(hi) (V(hi) clobbered).
func visible(g *gen, m, j, lo, hi int) {
	g.word(sameS(opCMGT, m, j, lo), sameSText(opCMGT, m, j, lo))
	g.word(sameS(opCMGT, hi, j, hi), sameSText(opCMGT, hi, j, hi))
	g.word(sameS(opBIC, m, m, hi), sameSText(opBIC, m, m, hi))
}

// mqSoftmaxNEON generates func(sT *float32, n, stride int, win *int32): each
// lane of the n score vectors, stride floats apart, becomes its softmax
// over the lane's visible keys (in the order above); entries of invisible
// keys become 0. Tiles of several vectors call it once per vector.
func mqSoftmaxNEON(g *gen) {
	name := "mqSoftmaxNEON"
	g.text(name, "(sT *float32, n, stride int, win *int32)", 32,
		name+" turns one vector column of a tile's scores into softmax probabilities over each lane's visible keys.")
	const (
		lo, hi = 28, 29 // the lane bounds (kept)
		thi    = 27     // a copy of hi, clobbered by visible
		one    = 26     // int32 1
		jr     = 25     // the key index
		mx     = 24     // the running maximum
		s0, s1 = 30, 31 // float64 sums of lanes 0, 1 and of lanes 2, 3
		tmp0   = 0      // temporaries V0…V7
	)
	// exp32's constants: V8…V16.
	e := &expRegs{lo: 8, log2e: 9, magic: 10, ln2hi: 11, ln2lo: 12, bias: 13, zero: 14, c: [2]int{15, 16}}
	g.i("MOVD win+24(FP), R3")
	g.i("VLD1 (R3), [V%d.S4, V%d.S4]", lo, hi)
	g.i("MOVD stride+16(FP), R2")
	g.i("LSL $2, R2, R2")
	dupF32(g, one, 1)
	// Pass 1: the largest visible score of every lane.
	dupF32(g, mx, 0xff800000) // −Inf
	g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", jr)
	g.i("MOVD sT+0(FP), R5")
	g.i("MOVD n+8(FP), R1")
	g.i("CBZ R1, end")
	g.i("max:")
	g.i("VLD1 (R5), [V%d.S4]", tmp0)
	g.i("ADD R2, R5, R5")
	g.i("VORR V%d.B16, V%[1]d.B16, V%d.B16", hi, thi)
	visible(g, tmp0+1, jr, lo, thi)
	g.word(sameS(opFCMGT, tmp0+2, tmp0, mx), sameSText(opFCMGT, tmp0+2, tmp0, mx)) // x > mx: false for NaN
	g.i("VAND V%d.B16, V%d.B16, V%d.B16", tmp0+1, tmp0+2, tmp0+2)
	g.i("VBIT V%d.B16, V%d.B16, V%d.B16", tmp0+2, tmp0, mx) // mx = x where taken
	g.i("VADD V%d.S4, V%d.S4, V%[2]d.S4", one, jr)
	g.i("SUB $1, R1, R1")
	g.i("CBNZ R1, max")

	// Pass 2: e = exp32(s − mx), 0 where invisible; float64 running sums.
	loadExpConsts(g, e)
	g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", jr)
	g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", s0)
	g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", s1)
	g.i("MOVD sT+0(FP), R5")
	g.i("MOVD n+8(FP), R1")
	g.i("exp:")
	g.i("VLD1 (R5), [V%d.S4]", tmp0)
	g.word(sameS(opFSUB, tmp0, tmp0, mx), sameSText(opFSUB, tmp0, tmp0, mx))
	exp32NEON(g, e, tmp0, tmp0+1, [4]int{tmp0 + 2, tmp0 + 3, tmp0 + 4, tmp0 + 5})
	g.i("VORR V%d.B16, V%[1]d.B16, V%d.B16", hi, thi)
	visible(g, tmp0+6, jr, lo, thi)
	g.i("VAND V%d.B16, V%d.B16, V%d.B16", tmp0+6, tmp0+1, tmp0+1)
	g.i("VST1 [V%d.S4], (R5)", tmp0+1)
	g.i("ADD R2, R5, R5")
	g.word(cvt(opFCVTL, tmp0+2, tmp0+1), cvtText(opFCVTL, tmp0+2, tmp0+1))
	g.word(sameS(opFADDD, s0, s0, tmp0+2), sameSText(opFADDD, s0, s0, tmp0+2))
	g.word(cvt(opFCVTL2, tmp0+3, tmp0+1), cvtText(opFCVTL2, tmp0+3, tmp0+1))
	g.word(sameS(opFADDD, s1, s1, tmp0+3), sameSText(opFADDD, s1, s1, tmp0+3))
	g.i("VADD V%d.S4, V%d.S4, V%[2]d.S4", one, jr)
	g.i("SUB $1, R1, R1")
	g.i("CBNZ R1, exp")

	// Pass 3: p = e · float32(1/sum).
	g.i("MOVD $0x3ff0000000000000, R4")
	g.i("VDUP R4, V%d.D2", tmp0)
	g.word(sameS(opFDIVD, tmp0+1, tmp0, s0), sameSText(opFDIVD, tmp0+1, tmp0, s0))
	g.word(sameS(opFDIVD, tmp0+2, tmp0, s1), sameSText(opFDIVD, tmp0+2, tmp0, s1))
	g.word(cvt(opFCVTN, tmp0+3, tmp0+1), cvtText(opFCVTN, tmp0+3, tmp0+1))
	g.word(cvt(opFCVTN2, tmp0+3, tmp0+2), cvtText(opFCVTN2, tmp0+3, tmp0+2))
	g.i("MOVD sT+0(FP), R5")
	g.i("MOVD n+8(FP), R1")
	g.i("scale:")
	g.i("VLD1 (R5), [V%d.S4]", tmp0)
	g.word(sameS(opFMUL, tmp0, tmp0, tmp0+3), sameSText(opFMUL, tmp0, tmp0, tmp0+3))
	g.i("VST1 [V%d.S4], (R5)", tmp0)
	g.i("ADD R2, R5, R5")
	g.i("SUB $1, R1, R1")
	g.i("CBNZ R1, scale")
	g.i("end:")
	g.i("RET")
}

// mqPVNEON generates, for tiles of nv vectors,
//
//	func(oT, pT *float32, v *T, stride, n int)                      (unmasked)
//	func(oT, pT *float32, v *T, stride, n int, win *int32, j0 int)  (masked)
//
// oT[c][r] += Σ_j pT[j][r]·v[j·stride+c] for c < d, j < n and the tile's
// rows r, one FMA chain per element in order of j (FMLA by element: four
// value elements per register). The masked form treats the n keys as keys
// j0… of the windows at win and leaves a lane's accumulators untouched for
// keys it does not see (the sum goes to a copy, merged back with BIT); the
// unmasked form is for runs of keys every row sees.
func mqPVNEON(g *gen, nv, d int, masked bool, el elemKind) {
	name := mqPVNameNEON(nv, d, masked, el)
	t := el.goType()
	sig, args := "(oT, pT *float32, v "+t+", stride, n int)", 40
	if masked {
		sig, args = "(oT, pT *float32, v "+t+", stride, n int, win *int32, j0 int)", 56
	}
	what := "every lane"
	if masked {
		what = "the lanes that see each key"
	}
	g.text(name, sig, args, fmt.Sprintf("%s accumulates probability-weighted values into %d transposed output dimensions of a %d-vector tile, for %s.", name, d, nv, what))
	next := 0
	alloc := func(k int) int { r := next; next += k; return r }
	acc := alloc(d * nv) // acc[c][v] = V(acc + c·nv + v): oT's layout
	p := alloc(nv)
	nval := (d + 3) / 4
	val := alloc(nval)
	var mask, jr, one, tlo, tmp, zero int
	if masked {
		mask = alloc(nv)
		jr, one = alloc(1), alloc(1)
		tlo = alloc(2) // lo−1 and hi−1 of one vector
		tmp = alloc(1)
	}
	if el == elemBF16 {
		zero = alloc(1)
	}
	if next > 32 {
		panic(fmt.Sprintf("%s: %d registers", name, next))
	}
	row := 16 * nv
	g.i("MOVD oT+0(FP), R0")
	g.i("MOVD pT+8(FP), R1")
	g.i("MOVD v+16(FP), R7")
	g.i("MOVD stride+24(FP), R2")
	if sh := el.shift(); sh > 0 {
		g.i("LSL $%d, R2, R2", sh)
	}
	g.i("MOVD n+32(FP), R4")
	if masked {
		g.i("MOVD win+40(FP), R3")
		g.i("MOVD j0+48(FP), R9")
		g.i("VDUP R9, V%d.S4", jr)
		dupF32(g, one, 1)
	}
	if el == elemBF16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", zero)
	}
	// The accumulators are oT's d·nv vectors in order.
	groups := func(f func(first, count int)) {
		for r := 0; r < d*nv; r += 4 {
			f(acc+r, min(4, d*nv-r))
		}
	}
	g.i("MOVD R0, R8")
	groups(func(first, count int) { g.i("VLD1.P %d(R8), %s", 16*count, vlistN(first, count)) })
	g.i("CBZ R4, end")
	g.i("loop:")
	g.i("VLD1.P %d(R1), %s", row, vlistN(p, nv))
	if masked {
		g.i("MOVD R3, R10")
		for v := range nv {
			g.i("VLD1.P 32(R10), %s", vlistN(tlo, 2))
			visible(g, mask+v, jr, tlo, tlo+1)
		}
		g.i("VADD V%d.S4, V%d.S4, V%[2]d.S4", one, jr)
	}
	g.i("MOVD R7, R8")
	vals := make([]int, nval)
	for i := range vals {
		vals[i] = val + i
	}
	loadElems(g, el, vals, d, "R8", zero)
	for c := range d {
		for v := range nv {
			a := acc + c*nv + v
			if !masked {
				g.word(fmlaElemS(a, p+v, val+c/4, c%4), fmlaElemSText(a, p+v, val+c/4, c%4))
				continue
			}
			g.i("VORR V%d.B16, V%[1]d.B16, V%d.B16", a, tmp)
			g.word(fmlaElemS(tmp, p+v, val+c/4, c%4), fmlaElemSText(tmp, p+v, val+c/4, c%4))
			g.i("VBIT V%d.B16, V%d.B16, V%d.B16", mask+v, tmp, a) // a = tmp where the lane sees the key
		}
	}
	g.i("ADD R2, R7, R7")
	g.i("SUB $1, R4, R4")
	g.i("CBNZ R4, loop")
	g.i("end:")
	g.i("MOVD R0, R8")
	groups(func(first, count int) { g.i("VST1.P %s, %d(R8)", vlistN(first, count), 16*count) })
	g.i("RET")
}
