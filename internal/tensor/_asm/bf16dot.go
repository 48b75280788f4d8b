package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
)

// The bfloat16 dot-product kernels use VDPBF16PS (AVX512_BF16), which Go's
// assembler has no mnemonic for and avo cannot emit. They are written here as
// plain text with physical registers and the instruction as EVEX bytes.
//
// Each kernel has the signature of the other GEMM tiles,
//
//	func(a *float32, lda int, w *uint16, wp int, k int, c *float32, ldc int, bias *float32)
//
// but a points at activations rounded to bfloat16, row-major with an even
// row length, read as (even, odd) pairs: lda is the row stride in pairs, k
// the number of pairs. W is stored in 32-column panels of pairs [k][32][2]
// (panel stride wp uint16 elements), w pointing at the tile's first column.
// Every output is one chain over the pairs, in order, from zero:
//
//	acc = (acc + a[2p+1]·w[2p+1]) + a[2p]·w[2p]
//
// each addition rounded to nearest even, denormals flushed (the instruction's
// definition), then + bias. tensor.linearBF16DotGeneric computes the same.

// dotTiles lists the generated tile shapes (rows × columns): those of the
// AVX-512 float32 kernels, whose register budget they share.
func dotTiles() []gemmTile { return gemmTiles(avx512) }

func dotName(t gemmTile) string { return fmt.Sprintf("dotBF16AVX512_%dx%d", t.rows, t.cols) }

// evex returns the bytes of a 512-bit EVEX instruction of map 0F38, W0,
// on registers only: op zmm(dst), zmm(src1), zmm(src2) in Intel's operand
// order (dst in ModRM.reg, src1 in EVEX.vvvv, src2 in ModRM.r/m). pp is the
// implied prefix (1 = 66, 2 = F3, 3 = F2). comment names the instruction.
func evex(opcode, pp, dst, src1, src2 int, comment string) string {
	return evexL(opcode, pp, dst, src1, src2, 512, comment)
}

// evexL is evex for 512-bit (zmm) or 256-bit (ymm, AVX512VL) registers.
func evexL(opcode, pp, dst, src1, src2, bits int, comment string) string {
	return evexLK(opcode, pp, dst, src1, src2, bits, 0, comment)
}

// evexLK is evexL with the write mask K(k) merging (k 0: no mask).
func evexLK(opcode, pp, dst, src1, src2, bits, k int, comment string) string {
	p0 := 0x02 // map 0F38
	if dst&8 == 0 {
		p0 |= 0x80 // R̄
	}
	if src2&16 == 0 {
		p0 |= 0x40 // X̄ (high bit of the r/m register)
	}
	if src2&8 == 0 {
		p0 |= 0x20 // B̄
	}
	if dst&16 == 0 {
		p0 |= 0x10 // R̄′
	}
	p1 := (^src1&15)<<3 | 0x04 | pp // W0, v̄v̄v̄v̄, 1, pp
	p2 := 0x40                      // z0, L′L = 512 bits, b0
	reg := "Z"
	if bits == 256 {
		p2, reg = 0x20, "Y" // L′L = 256 bits
	}
	if src1&16 == 0 {
		p2 |= 0x08 // V̄′
	}
	p2 |= k & 7 // aaa: the write mask
	modrm := 0xC0 | (dst&7)<<3 | src2&7
	mask := ""
	if k != 0 {
		mask = fmt.Sprintf("K%d, ", k)
	}
	return fmt.Sprintf("\tBYTE $0x62; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x // %s %s%d, %s%d, %s%s%d (Go operand order)\n",
		p0, p1, p2, opcode, modrm, comment, reg, src2, reg, src1, mask, reg, dst)
}

// vdpbf16ps: dst.f32[i] += src1.bf16[2i+1]·src2.bf16[2i+1] + src1.bf16[2i]·src2.bf16[2i]
// (EVEX.512.F3.0F38.W0 52 /r).
func vdpbf16ps(dst, src1, src2 int) string { return evex(0x52, 2, dst, src1, src2, "VDPBF16PS") }

// vcvtne2ps2bf16: dst.bf16[0:16] = src2.f32 rounded, dst.bf16[16:32] = src1.f32
// rounded (nearest even, denormals as zero; EVEX.512.F2.0F38.W0 72 /r).
func vcvtne2ps2bf16(dst, src1, src2 int) string {
	return evex(0x72, 3, dst, src1, src2, "VCVTNE2PS2BF16")
}

// stepBytes is the size of one k step (pair or quad) of a 32-column panel.
const stepBytes = 128

// dotKernel writes one tile. Registers: accumulators Z0…, weights from Z16
// or Z24, broadcasts Z28–Z31; row pointers, the panel pointers, the pair
// index and count in general-purpose registers (never BP, SP, R14, R15).
func dotKernel(b *bytes.Buffer, t gemmTile) { productKernel(b, t, bf16Dot) }

// productKind is one family of pair/quad product kernels.
type productKind struct {
	name     func(gemmTile) string
	requires string
	wtype    string                      // Go type of the weights
	wshift   int                         // log2 of the bytes of one weight element
	mac      func(acc, bc, w int) string // acc += products of broadcast bc and weights w
	scale    bool                        // int8 epilogue (see i8Epilogue)
}

var (
	bf16Dot = productKind{name: dotName, requires: "AVX512F, AVX512_BF16", wtype: "uint16", wshift: 1, mac: vdpbf16ps}
	i8Dot   = productKind{name: i8Name, requires: "AVX512F, AVX512_VNNI", wtype: "int8", wshift: 0, mac: vpdpbusd, scale: true}
)

// productKernel writes one tile of kind pk.
func productKernel(b *bytes.Buffer, t gemmTile, pk productKind) {
	name := pk.name(t)
	nv := t.cols / 16 // accumulators per row
	wreg := 24
	if nv > 4 {
		wreg = 16
	}
	rows, wptr := tilePrologue(b, name, pk.requires, pk.wtype, t, t.cols/32, pk.wshift)
	for a := 0; a < t.rows*nv; a++ {
		fmt.Fprintf(b, "\tVPXORD Z%d, Z%d, Z%d\n", a, a, a)
	}
	fmt.Fprintf(b, "\n%s_loop:\n", name)
	for v := 0; v < nv; v++ {
		fmt.Fprintf(b, "\tVMOVDQU32 %d(%s), Z%d\n", (v%2)*64, wptr[v/2], wreg+v)
	}
	for r := 0; r < t.rows; r++ {
		bc := 28 + r%4
		fmt.Fprintf(b, "\tVPBROADCASTD (%s)(%s*4), Z%d\n", rows[r], tileIdx, bc)
		for v := 0; v < nv; v++ {
			b.WriteString(pk.mac(r*nv+v, bc, wreg+v))
		}
	}
	tileLoopEnd(b, name, wptr)
	if pk.scale {
		i8Epilogue(b, rows, wptr, nv, "Z", 64, 28)
	}
	tileStore(b, name, t.rows, nv, "Z", 64)
}

// The general-purpose registers of the product tiles: row pointers and
// panel pointers (never BP, SP, R14, R15), the k step index and count.
const tileIdx, tileCount = "CX", "BX"

// tilePrologue writes a tile's header, loads its row pointers and the
// pointers of its npan weight panels (panel stride wp elements of 1<<wshift
// bytes) and clears the step index; it returns the registers.
func tilePrologue(b *bytes.Buffer, name, requires, wtype string, t gemmTile, npan, wshift int) (rows, wptr []string) {
	gp := []string{"SI", "DI", "R8", "R9", "R10", "R11", "R12", "R13"}
	if t.rows+npan-1 > len(gp) {
		log.Fatalf("%s: not enough registers", name)
	}
	rows = gp[:t.rows]
	wptr = append([]string{"DX"}, gp[t.rows:t.rows+npan-1]...)
	fmt.Fprintf(b, "// func %s(a *float32, lda int, w *%s, wp int, k int, c *float32, ldc int, bias *float32)\n", name, wtype)
	fmt.Fprintf(b, "// Requires: %s\nTEXT ·%s(SB), NOSPLIT, $0-64\n", requires, name)
	fmt.Fprintf(b, "\tMOVQ lda+8(FP), AX\n\tSHLQ $0x02, AX\n\tMOVQ a+0(FP), %s\n", rows[0])
	for r := 1; r < t.rows; r++ {
		fmt.Fprintf(b, "\tLEAQ (%s)(AX*1), %s\n", rows[r-1], rows[r])
	}
	fmt.Fprintf(b, "\tMOVQ w+16(FP), %s\n", wptr[0])
	if npan > 1 {
		b.WriteString("\tMOVQ wp+24(FP), AX\n")
		if wshift > 0 {
			fmt.Fprintf(b, "\tSHLQ $0x%02x, AX\n", wshift)
		}
		for q := 1; q < npan; q++ {
			fmt.Fprintf(b, "\tLEAQ (%s)(AX*1), %s\n", wptr[q-1], wptr[q])
		}
	}
	fmt.Fprintf(b, "\tMOVQ k+32(FP), %s\n\tXORQ %s, %s\n", tileCount, tileIdx, tileIdx)
	return rows, wptr
}

// tileLoopEnd advances the panel pointers by one k step (prefetching ahead)
// and closes the loop.
func tileLoopEnd(b *bytes.Buffer, name string, wptr []string) {
	for _, w := range wptr {
		fmt.Fprintf(b, "\tPREFETCHT0 %d(%s)\n\tPREFETCHT0 %d(%s)\n", prefetchDist, w, prefetchDist+64, w)
		fmt.Fprintf(b, "\tADDQ $0x80, %s\n", w)
	}
	fmt.Fprintf(b, "\tINCQ %s\n\tCMPQ %s, %s\n\tJL %s_loop\n\n", tileIdx, tileIdx, tileCount, name)
}

// tileStore adds the bias, if any, to the accumulators (nv vectors of vb
// bytes per row, registers reg0…) and stores them.
func tileStore(b *bytes.Buffer, name string, rows, nv int, reg string, vb int) {
	fmt.Fprintf(b, "\tMOVQ bias+56(FP), AX\n\tTESTQ AX, AX\n\tJZ %s_nobias\n", name)
	for r := range rows {
		for v := range nv {
			fmt.Fprintf(b, "\tVADDPS %d(AX), %s%d, %s%d\n", v*vb, reg, r*nv+v, reg, r*nv+v)
		}
	}
	fmt.Fprintf(b, "\n%s_nobias:\n\tMOVQ c+40(FP), AX\n\tMOVQ ldc+48(FP), DX\n\tSHLQ $0x02, DX\n", name)
	for r := range rows {
		for v := range nv {
			fmt.Fprintf(b, "\tVMOVUPS %s%d, %d(AX)\n", reg, r*nv+v, v*vb)
		}
		if r < rows-1 {
			b.WriteString("\tADDQ DX, AX\n")
		}
	}
	b.WriteString("\tVZEROUPPER\n\tRET\n\n")
}

// The windowed attention's scores as bfloat16 dot products (KV.BF16Scores): for a
// tile of nv vectors of query rows (lanes rows each),
//
//	func(qT *float32, k *uint16, stride, n, hd int, scale float32, sT *float32)
//
// sT[j][r] = scale · Σ_p qT[p][r]·k[j·stride+2p : +2] for j < n, where qT
// holds per pair p of head dimensions and row r the row's two query values
// rounded to bfloat16 (one 32-bit lane), and the keys are bfloat16, stride
// elements apart. Each score is one VDPBF16PS chain over the pairs in order
// from zero ((acc + q₁k₁) + q₀k₀, denormals flushed), then times scale; keys
// go in register blocks (lanes/nv keys, then 4, then 1) whose accumulators
// each hold one key of one vector, so the blocking never changes a score.
// pf *uint16 (the last argument) holds rows the caller reads next, stride
// apart like the keys (their values): the first two cache lines of row j
// are prefetched with key j, and so are those of key j+16. Over 16 rings
// read from memory, as 8 streams' windows are (BenchmarkAttendWindowsRing
// dot cold), the window kernel went from 82 to 109 GMAC/s, about as fast
// as on a ring in cache. A prefetch never faults (the look-ahead past the
// last key is harmless) and changes no result.

func scoresDotName(lanes, nv int) string {
	name := "mqScoresDotAVX512"
	if lanes == 8 {
		name = "mqScoresDotAVX512Y"
	}
	if nv == 2 {
		name += "x2"
	}
	return name
}

// scoresDotKernel writes the kernel for lanes 16 (zmm) or 8 (ymm) and nv
// vectors. Registers: accumulators 0…15, queries 16–17, key broadcasts
// 18–21, the scale 31; GP: DI keys, SI stride bytes, R8 3·stride, R9 keys
// left, R10 sT, R11 qT, R12 pairs left, R13/AX/BX/DX the block's key bases,
// R14 the prefetched rows.
func scoresDotKernel(b *bytes.Buffer, lanes, nv int) {
	name := scoresDotName(lanes, nv)
	reg, bits, vb := "Z", 512, 64
	if lanes == 8 {
		reg, bits, vb = "Y", 256, 32
	}
	row := nv * vb
	fmt.Fprintf(b, "// func %s(qT *float32, k *uint16, stride int, n int, hd int, scale float32, sT *float32, pf *uint16)\n", name)
	fmt.Fprintf(b, "// Requires: AVX512F, AVX512VL, AVX512_BF16\nTEXT ·%s(SB), NOSPLIT, $0-64\n", name)
	b.WriteString("\tMOVQ k+8(FP), DI\n\tMOVQ stride+16(FP), SI\n\tSHLQ $0x01, SI\n\tLEAQ (SI)(SI*2), R8\n")
	b.WriteString("\tMOVQ n+24(FP), R9\n\tMOVQ sT+48(FP), R10\n\tMOVQ pf+56(FP), R14\n")
	fmt.Fprintf(b, "\tVBROADCASTSS scale+40(FP), %s31\n", reg)
	bases := []string{"R13", "AX", "BX", "DX"}
	blocks := []int{16 / nv}
	if lanes == 8 {
		blocks = []int{8}
	}
	if blocks[0] != 4 {
		blocks = append(blocks, 4)
	}
	for _, blk := range append(blocks, 1) {
		lbl := fmt.Sprintf("%s_b%d", name, blk)
		fmt.Fprintf(b, "\n%s:\n\tCMPQ R9, $0x%02x\n\tJL %s_end\n", lbl, blk, lbl)
		nb := (blk + 3) / 4
		b.WriteString("\tMOVQ DI, R13\n")
		for i := 1; i < nb; i++ {
			fmt.Fprintf(b, "\tLEAQ (%s)(SI*4), %s\n", bases[i-1], bases[i])
		}
		key := func(j int) string {
			base := bases[j/4]
			switch j % 4 {
			case 1:
				return fmt.Sprintf("(%s)(SI*1)", base)
			case 2:
				return fmt.Sprintf("(%s)(SI*2)", base)
			case 3:
				return fmt.Sprintf("(%s)(R8*1)", base)
			}
			return fmt.Sprintf("(%s)", base)
		}
		b.WriteString("\tLEAQ (DI)(SI*8), CX\n\tLEAQ (CX)(SI*8), CX\n")
		for j := range blk {
			// Two lines of each row of pf, R14 walking four rows at a time.
			ix := [...]string{"", "(SI*1)", "(SI*2)", "(R8*1)"}[j%4]
			fmt.Fprintf(b, "\tPREFETCHT0 (R14)%s\n\tPREFETCHT0 64(R14)%s\n", ix, ix)
			fmt.Fprintf(b, "\tPREFETCHT0 (CX)%s\n\tPREFETCHT0 64(CX)%s\n", ix, ix)
			if j%4 == 3 {
				b.WriteString("\tLEAQ (R14)(SI*4), R14\n")
				b.WriteString("\tLEAQ (CX)(SI*4), CX\n")
			}
		}
		switch blk % 4 {
		case 1:
			b.WriteString("\tADDQ SI, R14\n")
		case 2:
			b.WriteString("\tLEAQ (R14)(SI*2), R14\n")
		case 3:
			b.WriteString("\tADDQ R8, R14\n")
		}
		for a := 0; a < blk*nv; a++ {
			fmt.Fprintf(b, "\tVPXORD %s%d, %s%d, %s%d\n", reg, a, reg, a, reg, a)
		}
		fmt.Fprintf(b, "\tMOVQ qT+0(FP), R11\n\tMOVQ hd+32(FP), R12\n\tSHRQ $0x01, R12\n\tJZ %s_store\n", lbl)
		fmt.Fprintf(b, "\n%s_pair:\n", lbl)
		for v := range nv {
			fmt.Fprintf(b, "\tVMOVUPS %d(R11), %s%d\n", v*vb, reg, 16+v)
		}
		for j := range blk {
			t := 18 + j%4
			fmt.Fprintf(b, "\tVPBROADCASTD %s, %s%d\n", key(j), reg, t)
			for v := range nv {
				b.WriteString(evexL(0x52, 2, j*nv+v, 16+v, t, bits, "VDPBF16PS"))
			}
		}
		fmt.Fprintf(b, "\tADDQ $0x%02x, R11\n", row)
		for i := range nb {
			fmt.Fprintf(b, "\tADDQ $0x04, %s\n", bases[i])
		}
		fmt.Fprintf(b, "\tDECQ R12\n\tJNZ %s_pair\n", lbl)
		fmt.Fprintf(b, "\n%s_store:\n", lbl)
		for j := range blk {
			for v := range nv {
				a := j*nv + v
				fmt.Fprintf(b, "\tVMULPS %s31, %s%d, %s%d\n\tVMOVUPS %s%d, %d(R10)\n", reg, reg, a, reg, a, reg, a, j*row+v*vb)
			}
		}
		fmt.Fprintf(b, "\tADDQ $0x%02x, R10\n", blk*row)
		if blk == 1 {
			b.WriteString("\tADDQ SI, DI\n")
		} else {
			fmt.Fprintf(b, "\tMOVQ SI, CX\n\tSHLQ $0x%02x, CX\n\tADDQ CX, DI\n", bitsOf(blk))
		}
		fmt.Fprintf(b, "\tSUBQ $0x%02x, R9\n\tJMP %s\n\n%s_end:\n", blk, lbl, lbl)
	}
	b.WriteString("\tVZEROUPPER\n\tRET\n\n")
}

// scoresDotVariants are the (lanes, vectors) tiles the AVX-512 windowed
// attention uses (windowTiles): 16×2, 16×1 and 8×1.
var scoresDotVariants = [][2]int{{16, 1}, {16, 2}, {8, 1}}

// cvtKernel writes cvtBF16AVX512(dst *uint16, src *float32, n int): src[0:n]
// rounded to bfloat16 (nearest even, denormals as zero, NaN quieted), n a
// multiple of 32.
func cvtKernel(b *bytes.Buffer) {
	b.WriteString("// func cvtBF16AVX512(dst *uint16, src *float32, n int)\n// Requires: AVX512F, AVX512_BF16\n")
	b.WriteString("TEXT ·cvtBF16AVX512(SB), NOSPLIT, $0-24\n\tMOVQ dst+0(FP), DI\n\tMOVQ src+8(FP), SI\n\tMOVQ n+16(FP), CX\n\tSHRQ $0x05, CX\n\tJZ cvt_done\n\ncvt_loop:\n")
	b.WriteString("\tVMOVUPS (SI), Z0\n\tVMOVUPS 64(SI), Z1\n")
	b.WriteString(vcvtne2ps2bf16(2, 1, 0))
	b.WriteString("\tVMOVDQU32 Z2, (DI)\n\tADDQ $0x80, SI\n\tADDQ $0x40, DI\n\tDECQ CX\n\tJNZ cvt_loop\n\ncvt_done:\n\tVZEROUPPER\n\tRET\n\n")
}

// widenKernel writes widenBF16<ISA>(dst *float32, src *uint16, n int): exact
// bfloat16 → float32 of n values, n a multiple of the vector's lanes.
func widenKernel(b *bytes.Buffer, isa string, lanes int, reg string) {
	name := "widenBF16" + isa
	fmt.Fprintf(b, "// func %s(dst *float32, src *uint16, n int)\nTEXT ·%s(SB), NOSPLIT, $0-24\n", name, name)
	fmt.Fprintf(b, "\tMOVQ dst+0(FP), DI\n\tMOVQ src+8(FP), SI\n\tMOVQ n+16(FP), CX\n\tSHRQ $0x%02x, CX\n\tJZ %s_done\n\n%s_loop:\n", bitsOf(lanes), name, name)
	fmt.Fprintf(b, "\tVPMOVZXWD (SI), %s0\n\tVPSLLD $0x10, %s0, %s0\n\tVMOVUPS %s0, (DI)\n", reg, reg, reg, reg)
	fmt.Fprintf(b, "\tADDQ $0x%02x, SI\n\tADDQ $0x%02x, DI\n\tDECQ CX\n\tJNZ %s_loop\n\n%s_done:\n\tVZEROUPPER\n\tRET\n\n", 2*lanes, 4*lanes, name, name)
}

func bitsOf(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// genBF16Dot writes the bfloat16 kernels (conversions, GEMM tiles and the
// windowed attention's pair kernels) to asmPath and their declarations and
// tile table to declPath.
func genBF16Dot(asmPath, declPath string) {
	s, d := newAsm(), newDecl()
	cvtKernel(s)
	widenKernel(s, "AVX512", 16, "Z")
	widenKernel(s, "AVX2", 8, "Y")
	for _, isa := range []string{"AVX512", "AVX2"} {
		fmt.Fprintf(d, "// widenBF16%s widens n bfloat16 values exactly; n is a multiple of the lanes.\n//\n//go:noescape\nfunc widenBF16%s(dst *float32, src *uint16, n int)\n\n", isa, isa)
	}
	d.WriteString("// cvtBF16AVX512 rounds src[0:n] to bfloat16 (nearest even, denormals as\n// zero, NaN quieted) into dst; n is a multiple of 32.\n//\n//go:noescape\nfunc cvtBF16AVX512(dst *uint16, src *float32, n int)\n\n")
	for _, t := range dotTiles() {
		dotKernel(s, t)
		fmt.Fprintf(d, "// %s computes a %dx%d tile of x·Wᵀ with bfloat16 dot products.\n//\n//go:noescape\n", dotName(t), t.rows, t.cols)
		fmt.Fprintf(d, "func %s(a *float32, lda int, w *uint16, wp int, k int, c *float32, ldc int, bias *float32)\n\n", dotName(t))
	}
	d.WriteString("// bf16DotTiles lists the generated bfloat16 dot-product tiles (AVX512_BF16).\nvar bf16DotTiles = []gemmTile[uint16]{\n")
	for _, t := range dotTiles() {
		fmt.Fprintf(d, "{%d, %d, %s},\n", t.rows, t.cols, dotName(t))
	}
	d.WriteString("}\n")
	for _, v := range scoresDotVariants {
		scoresDotKernel(s, v[0], v[1])
		fmt.Fprintf(d, "// %s computes windowed-attention scores of %d query vectors of %d lanes with bfloat16 dot products.\n//\n//go:noescape\n", scoresDotName(v[0], v[1]), v[1], v[0])
		fmt.Fprintf(d, "func %s(qT *float32, k *uint16, stride int, n int, hd int, scale float32, sT *float32, pf *uint16)\n\n", scoresDotName(v[0], v[1]))
	}
	genPVDot(s, d)
	writeGenerated(asmPath, declPath, s, d)
}

// newAsm returns a buffer holding the head of a generated assembly file.
func newAsm() *bytes.Buffer {
	return bytes.NewBufferString(header + "//go:build gc && !purego\n\n#include \"textflag.h\"\n\n")
}

// newDecl returns a buffer holding the head of a generated Go file.
func newDecl() *bytes.Buffer {
	return bytes.NewBufferString(header + "//go:build gc && !purego\n\npackage tensor\n\n")
}

// writeGenerated writes the assembly s to asmPath and the Go declarations d,
// formatted, to declPath.
func writeGenerated(asmPath, declPath string, s, d *bytes.Buffer) {
	src, err := format.Source(d.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(declPath, src, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(asmPath, s.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
