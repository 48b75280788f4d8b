package main

import (
	"bytes"
	"fmt"
)

// The windowed attention's weighted sums as bfloat16 dot products
// (tensor.KV.BF16Sums). The values are stored in row pairs: rows 2m and 2m+1
// of a head interleaved, element c of the pair at 2c (even row) and 2c+1
// (odd row), so one 32-bit broadcast holds a dimension of both keys. The
// probabilities of a tile, sT [keys][R] float32 (R = nv·lanes), become
// pairs first:
//
//	func(pT, sT *float32, n int, win *int32, j0 int)
//
// pT[m][r] = bf16(p(j)) | bf16(p(j+1))<<16 for the keys j = j0+2m, j+1 of
// pair m < n, where sT points at key j0 and p(j) is sT's entry for a lane
// that sees key j and zero for one that does not (win as in the other
// masked kernels: per vector, lo−1 of its lanes then hi−1); rounding to
// nearest even, denormals as zero (VCVTNE2PS2BF16). Then
//
//	func(oT, pT *float32, v *uint16, stride, n int)                      (unmasked)
//	func(oT, pT *float32, v *uint16, stride, n int, win *int32, j0 int)  (masked)
//
// oT[c][r] += Σ_m pair m for c < g: one VDPBF16PS chain per element over
// the pairs in order, (acc + p₁v₁) + p₀v₀ with every sum rounded and
// denormals flushed, where v points at dimension 0 of the group in pair 0
// and pairs are 2·stride elements apart. The masked form leaves a lane's
// accumulators untouched for pairs it sees neither key of (the keys
// j0+2m, j0+2m+1 of its window), so a row's chain covers exactly the pairs
// that overlap its window, whatever the tile.

// pvDotVariants are the (lanes, vectors) tiles of the AVX-512 windowed
// attention (as scoresDotVariants) with the most dimensions a weighted-sum
// kernel accumulates.
var pvDotVariants = []struct{ lanes, nv, group int }{{16, 1, 16}, {16, 2, 8}, {8, 1, 16}}

func pvDotSuffix(lanes, nv int) string {
	s := "AVX512"
	if lanes == 8 {
		s += "Y"
	}
	if nv == 2 {
		s += "x2"
	}
	return s
}

func pairsDotName(lanes, nv int) string { return "mqPairsDot" + pvDotSuffix(lanes, nv) }

func pvDotName(lanes, nv, g int, masked bool) string {
	m := ""
	if masked {
		m = "Mask"
	}
	return fmt.Sprintf("mqPVDot%s%s_%d", m, pvDotSuffix(lanes, nv), g)
}

// vecGeom returns the register prefix, width in bits and bytes of a vector
// of lanes float32 values.
func vecGeom(lanes int) (reg string, bits, vb int) {
	if lanes == 8 {
		return "Y", 256, 32
	}
	return "Z", 512, 64
}

// pairIdxData writes the VPERMW index that interleaves the two halves of a
// VCVTNE2PS2BF16 result: word 2i takes word i (the even key), word 2i+1
// word lanes+i (the odd key).
func pairIdxData(b *bytes.Buffer, lanes int) {
	sym := fmt.Sprintf("pairIdx%d<>", lanes)
	for i := range lanes {
		fmt.Fprintf(b, "DATA %s+0x%02x(SB)/4, $0x%08x\n", sym, 4*i, (lanes+i)<<16|i)
	}
	fmt.Fprintf(b, "GLOBL %s(SB), RODATA|NOPTR, $%d\n\n", sym, 4*lanes)
}

// keyMasks writes the compares that set K1+v to the lanes of vector v
// seeing key j (j in register j) and K3+v to those seeing key j+1. lo and hi
// are the registers of the vector's window bounds (lo−1, hi−1).
func keyMasks(b *bytes.Buffer, reg string, v, lo, hi, j int) {
	fmt.Fprintf(b, "\tVPCMPD $0x06, %s%d, %s%d, K%d\n", reg, lo, reg, j, 1+v)           // j > lo−1
	fmt.Fprintf(b, "\tVPCMPD $0x02, %s%d, %s%d, K%d, K%d\n", reg, hi, reg, j, 1+v, 1+v) // j <= hi−1
	fmt.Fprintf(b, "\tVPCMPD $0x05, %s%d, %s%d, K%d\n", reg, lo, reg, j, 3+v)           // j+1 > lo−1
	fmt.Fprintf(b, "\tVPCMPD $0x01, %s%d, %s%d, K%d, K%d\n", reg, hi, reg, j, 3+v, 3+v) // j+1 <= hi−1
}

// pairMask writes the compares that set K1+v to the lanes of vector v
// seeing key j or j+1 (j in register j): j+1 > lo−1 and j <= hi−1.
func pairMask(b *bytes.Buffer, reg string, v, lo, hi, j int) {
	fmt.Fprintf(b, "\tVPCMPD $0x05, %s%d, %s%d, K%d\n", reg, lo, reg, j, 1+v)
	fmt.Fprintf(b, "\tVPCMPD $0x02, %s%d, %s%d, K%d, K%d\n", reg, hi, reg, j, 1+v, 1+v)
}

// windowRegs loads the window bounds of nv vectors from the pointer in
// register p into registers lo0, lo0+1, … (lo, hi per vector) and
// broadcasts the 64-bit register jr (the first key) into register j and
// the constant 2 into register two.
func windowRegs(b *bytes.Buffer, reg string, vb, nv int, p string, lo0 int, jr string, j, two int) {
	for v := range nv {
		fmt.Fprintf(b, "\tVMOVDQU32 %d(%s), %s%d\n", 2*v*vb, p, reg, lo0+2*v)
		fmt.Fprintf(b, "\tVMOVDQU32 %d(%s), %s%d\n", 2*v*vb+vb, p, reg, lo0+2*v+1)
	}
	fmt.Fprintf(b, "\tVPBROADCASTD %s, %s%d\n\tMOVL $0x00000002, %s\n\tVPBROADCASTD %s, %s%d\n", jr, reg, j, jr, jr, reg, two)
}

// pairsDotKernel writes the conversion of probabilities into pairs.
// Registers: window bounds 0–3, j 4, 2 in 5, the VPERMW index 6, the two
// keys' probabilities 8–9, the pair vector 10; GP: DI pT, SI sT, CX pairs
// left, DX win, AX j0.
func pairsDotKernel(b *bytes.Buffer, lanes, nv int) {
	name := pairsDotName(lanes, nv)
	reg, bits, vb := vecGeom(lanes)
	row := nv * vb
	fmt.Fprintf(b, "// func %s(pT *float32, sT *float32, n int, win *int32, j0 int)\n", name)
	fmt.Fprintf(b, "// Requires: AVX512F, AVX512BW, AVX512VL, AVX512_BF16\nTEXT ·%s(SB), NOSPLIT, $0-40\n", name)
	b.WriteString("\tMOVQ pT+0(FP), DI\n\tMOVQ sT+8(FP), SI\n\tMOVQ n+16(FP), CX\n\tMOVQ win+24(FP), DX\n\tMOVQ j0+32(FP), AX\n")
	windowRegs(b, reg, vb, nv, "DX", 0, "AX", 4, 5)
	fmt.Fprintf(b, "\tVMOVDQU32 pairIdx%d<>(SB), %s6\n", lanes, reg)
	fmt.Fprintf(b, "\tTESTQ CX, CX\n\tJZ %s_done\n\n%s_loop:\n", name, name)
	for v := range nv {
		keyMasks(b, reg, v, 2*v, 2*v+1, 4)
		fmt.Fprintf(b, "\tVMOVUPS.Z %d(SI), K%d, %s8\n", v*vb, 1+v, reg)
		fmt.Fprintf(b, "\tVMOVUPS.Z %d(SI), K%d, %s9\n", row+v*vb, 3+v, reg)
		b.WriteString(evexLK(0x72, 3, 10, 9, 8, bits, 0, "VCVTNE2PS2BF16"))
		fmt.Fprintf(b, "\tVPERMW %s10, %s6, %s10\n", reg, reg, reg)
		fmt.Fprintf(b, "\tVMOVDQU32 %s10, %d(DI)\n", reg, v*vb)
	}
	fmt.Fprintf(b, "\tVPADDD %s5, %s4, %s4\n", reg, reg, reg)
	fmt.Fprintf(b, "\tADDQ $0x%02x, SI\n\tADDQ $0x%02x, DI\n\tDECQ CX\n\tJNZ %s_loop\n\n%s_done:\n\tVZEROUPPER\n\tRET\n\n", 2*row, row, name, name)
}

// pvDotKernel writes a weighted-sum kernel over g dimensions. Registers:
// accumulators 0…g·nv−1 (dimension c of vector v at c·nv+v), the pair
// probabilities 16–17, broadcasts 18–21, window bounds 22–25, j 26, 2 in
// 27; GP: AX oT, CX pT, DX v, BX pair bytes, SI pairs left, DI win, R8 j0.
func pvDotKernel(b *bytes.Buffer, lanes, nv, g int, masked bool) {
	name := pvDotName(lanes, nv, g, masked)
	reg, bits, vb := vecGeom(lanes)
	row := nv * vb
	if masked {
		fmt.Fprintf(b, "// func %s(oT *float32, pT *float32, v *uint16, stride int, n int, win *int32, j0 int)\n", name)
		fmt.Fprintf(b, "// Requires: AVX512F, AVX512VL, AVX512_BF16\nTEXT ·%s(SB), NOSPLIT, $0-56\n", name)
	} else {
		fmt.Fprintf(b, "// func %s(oT *float32, pT *float32, v *uint16, stride int, n int)\n", name)
		fmt.Fprintf(b, "// Requires: AVX512F, AVX512VL, AVX512_BF16\nTEXT ·%s(SB), NOSPLIT, $0-40\n", name)
	}
	b.WriteString("\tMOVQ oT+0(FP), AX\n\tMOVQ pT+8(FP), CX\n\tMOVQ v+16(FP), DX\n\tMOVQ stride+24(FP), BX\n\tSHLQ $0x02, BX\n\tMOVQ n+32(FP), SI\n")
	if masked {
		b.WriteString("\tMOVQ win+40(FP), DI\n\tMOVQ j0+48(FP), R8\n")
		windowRegs(b, reg, vb, nv, "DI", 22, "R8", 26, 27)
	}
	for c := range g {
		for v := range nv {
			fmt.Fprintf(b, "\tVMOVUPS %d(AX), %s%d\n", c*row+v*vb, reg, c*nv+v)
		}
	}
	fmt.Fprintf(b, "\tTESTQ SI, SI\n\tJZ %s_end\n\n%s_loop:\n\tPREFETCHT0 (DX)(BX*4)\n", name, name)
	for v := range nv {
		fmt.Fprintf(b, "\tVMOVUPS %d(CX), %s%d\n", v*vb, reg, 16+v)
		if masked {
			pairMask(b, reg, v, 22+2*v, 23+2*v, 26)
		}
	}
	for c := range g {
		t := 18 + c%4
		fmt.Fprintf(b, "\tVPBROADCASTD %d(DX), %s%d\n", 4*c, reg, t)
		for v := range nv {
			k := 0
			if masked {
				k = 1 + v
			}
			b.WriteString(evexLK(0x52, 2, c*nv+v, 16+v, t, bits, k, "VDPBF16PS"))
		}
	}
	if masked {
		fmt.Fprintf(b, "\tVPADDD %s27, %s26, %s26\n", reg, reg, reg)
	}
	fmt.Fprintf(b, "\tADDQ $0x%02x, CX\n\tADDQ BX, DX\n\tDECQ SI\n\tJNZ %s_loop\n\n%s_end:\n", row, name, name)
	for c := range g {
		for v := range nv {
			fmt.Fprintf(b, "\tVMOVUPS %s%d, %d(AX)\n", reg, c*nv+v, c*row+v*vb)
		}
	}
	b.WriteString("\tVZEROUPPER\n\tRET\n\n")
}

// genPVDot writes the pair kernels to s and their declarations to d.
func genPVDot(s, d *bytes.Buffer) {
	pairIdxData(s, 16)
	pairIdxData(s, 8)
	for _, pv := range pvDotVariants {
		pairsDotKernel(s, pv.lanes, pv.nv)
		fmt.Fprintf(d, "// %s rounds the probabilities of %d vectors of %d lanes into key pairs.\n//\n//go:noescape\n", pairsDotName(pv.lanes, pv.nv), pv.nv, pv.lanes)
		fmt.Fprintf(d, "func %s(pT *float32, sT *float32, n int, win *int32, j0 int)\n\n", pairsDotName(pv.lanes, pv.nv))
		for g := 2; g <= pv.group; g += 2 { // Dot's head sizes are even
			for _, masked := range []bool{false, true} {
				pvDotKernel(s, pv.lanes, pv.nv, g, masked)
				what := "every lane"
				args := "oT *float32, pT *float32, v *uint16, stride int, n int"
				if masked {
					what = "the lanes that see each pair"
					args += ", win *int32, j0 int"
				}
				fmt.Fprintf(d, "// %s accumulates %d output dimensions of key pairs with bfloat16 dot products, for %s.\n//\n//go:noescape\n", pvDotName(pv.lanes, pv.nv, g, masked), g, what)
				fmt.Fprintf(d, "func %s(%s)\n\n", pvDotName(pv.lanes, pv.nv, g, masked), args)
			}
		}
	}
}
