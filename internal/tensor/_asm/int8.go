package main

import (
	"bytes"
	"fmt"
	"log"
)

// The int8 kernels (W8A8, AVX512_VNNI) share the loop of the bfloat16 ones
// with quads instead of pairs: a points at activation rows quantized to
// unsigned bytes (x/sx rounded, + 128) read as 4-byte groups, lda the row
// stride in groups, k the number of groups; each row is followed by its
// scale sx as a float32 (at a + k groups). W is stored in 32-column panels of
// signed bytes [k][32][4] followed by a trailer of two 32-lane rows: the
// column corrections 128·Σq (int32) and the column scales sw (float32); wp
// is the panel stride in bytes. VPDPBUSD accumulates the products exactly in
// int32, then every output is
//
//	float32(float32(float32(acc − corr)·sw)·sx) + bias
//
// which tensor.linearInt8Generic computes the same way.

func i8Name(t gemmTile) string { return fmt.Sprintf("dotI8AVX512_%dx%d", t.rows, t.cols) }

// vpdpbusd: dst.i32[i] += Σ₄ src1.u8[4i+j]·src2.s8[4i+j] (Go operand order
// reversed).
func vpdpbusd(dst, src1, src2 int) string {
	return fmt.Sprintf("\tVPDPBUSD Z%d, Z%d, Z%d\n", src2, src1, dst)
}

// i8Epilogue turns the int32 sums into scaled float32 outputs: the weight
// pointers stand at their panels' trailers and the step index at the rows'
// scales. Accumulators are vectors reg0… of vb bytes, nv per row; bc is a
// free register for the row scale.
func i8Epilogue(b *bytes.Buffer, rows, wptr []string, nv int, reg string, vb, bc int) {
	per := stepBytes / vb // vectors per panel
	for r := range rows {
		fmt.Fprintf(b, "\tVBROADCASTSS (%s)(%s*4), %s%d\n", rows[r], tileIdx, reg, bc)
		for v := range nv {
			acc, off, w := r*nv+v, (v%per)*vb, wptr[v/per]
			fmt.Fprintf(b, "\tVPSUBD %d(%s), %s%d, %s%d\n", off, w, reg, acc, reg, acc)
			fmt.Fprintf(b, "\tVCVTDQ2PS %s%d, %s%d\n", reg, acc, reg, acc)
			fmt.Fprintf(b, "\tVMULPS %d(%s), %s%d, %s%d\n", stepBytes+off, w, reg, acc, reg, acc)
			fmt.Fprintf(b, "\tVMULPS %s%d, %s%d, %s%d\n", reg, bc, reg, acc, reg, acc)
		}
	}
	b.WriteString("\n")
}

// The AVX-VNNI int8 kernels are the same computation for CPUs with AVX2
// and the VEX-encoded VPDPBUSD (Intel Alder Lake and later client cores)
// but no AVX-512: ymm registers (8 columns each), the tiles of the AVX2
// float32 kernels, and VPDPBUSD written as bytes (Go's assembler only
// encodes the EVEX form, which those CPUs do not run).

func vnniName(t gemmTile) string { return fmt.Sprintf("dotI8AVXVNNI_%dx%d", t.rows, t.cols) }

// vexVPDPBUSD: dst.i32[i] += Σ₄ src1.u8[4i+j]·src2.s8[4i+j] on ymm registers
// (VEX.256.66.0F38.W0 50 /r).
func vexVPDPBUSD(dst, src1, src2 int) string {
	b1 := 0x02 // map 0F38
	if dst&8 == 0 {
		b1 |= 0x80 // R̄
	}
	b1 |= 0x40 // X̄
	if src2&8 == 0 {
		b1 |= 0x20 // B̄
	}
	b2 := (^src1&15)<<3 | 0x04 | 0x01 // W0, v̄v̄v̄v̄, L = 256 bits, pp = 66
	modrm := 0xC0 | (dst&7)<<3 | src2&7
	return fmt.Sprintf("\tBYTE $0xc4; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x50; BYTE $0x%02x // VPDPBUSD Y%d, Y%d, Y%d (Go operand order)\n",
		b1, b2, modrm, src2, src1, dst)
}

// vnniKernel writes one AVX-VNNI tile: accumulators Y0…, the weights of a k
// step in registers after them (rows > 1) or through two alternating
// registers (one row), the row broadcast in Y15.
func vnniKernel(b *bytes.Buffer, t gemmTile) {
	name := vnniName(t)
	nv := t.cols / 8 // accumulators per row
	const bc = 15
	wreg := func(v int) int { return t.rows*nv + v }
	if t.rows == 1 {
		wreg = func(v int) int { return nv + v%2 }
	}
	if wreg(nv-1) >= bc {
		log.Fatalf("%s: not enough vector registers", name)
	}
	rows, wptr := tilePrologue(b, name, "AVX, AVX2, AVX_VNNI", "int8", t, (t.cols+31)/32, 0)
	wload := func(v int) string { return fmt.Sprintf("%d(%s)", (v%4)*32, wptr[v/4]) }
	for a := 0; a < t.rows*nv; a++ {
		fmt.Fprintf(b, "\tVPXOR Y%d, Y%d, Y%d\n", a, a, a)
	}
	fmt.Fprintf(b, "\n%s_loop:\n", name)
	if t.rows > 1 {
		for v := range nv {
			fmt.Fprintf(b, "\tVMOVDQU %s, Y%d\n", wload(v), wreg(v))
		}
	}
	for r := range t.rows {
		fmt.Fprintf(b, "\tVPBROADCASTD (%s)(%s*4), Y%d\n", rows[r], tileIdx, bc)
		for v := range nv {
			if t.rows == 1 {
				fmt.Fprintf(b, "\tVMOVDQU %s, Y%d\n", wload(v), wreg(v))
			}
			b.WriteString(vexVPDPBUSD(r*nv+v, bc, wreg(v)))
		}
	}
	tileLoopEnd(b, name, wptr)
	i8Epilogue(b, rows, wptr, nv, "Y", 32, bc)
	tileStore(b, name, t.rows, nv, "Y", 32)
}

// quantKernels writes absMaxBitsAVX512(src *float32, n int) uint32, the
// largest bit pattern of |src[i]| (so NaN > Inf > every finite magnitude),
// and quantI8AVX512(dst *int8, src *float32, n int, inv float32), which
// stores round-half-even(src[i]·inv) as a byte + 128 (the products lie in
// [-127.5, 127.5]); n is a multiple of 16 and at least 16.
func quantKernels(b *bytes.Buffer) {
	b.WriteString(`// func absMaxBitsAVX512(src *float32, n int) uint32
// Requires: AVX512F, AVX512VL
TEXT ·absMaxBitsAVX512(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $0x04, CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z1
	VPXORD Z0, Z0, Z0

absmax_loop:
	VPANDD (SI), Z1, Z2
	VPMAXUD Z2, Z0, Z0
	ADDQ $0x40, SI
	DECQ CX
	JNZ absmax_loop
	VEXTRACTI64X4 $0x01, Z0, Y2
	VPMAXUD Y2, Y0, Y0
` + absMaxTail + `
// func quantI8AVX512(dst *int8, src *float32, n int, inv float32)
// Requires: AVX512F, AVX512VL
TEXT ·quantI8AVX512(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $0x04, CX
	VBROADCASTSS inv+24(FP), Z1
	MOVL $0x80808080, AX
	VPBROADCASTD AX, X3

quant_loop:
	VMULPS (SI), Z1, Z2
	VCVTPS2DQ Z2, Z2
	VPMOVSDB Z2, X2
	VPXORD X3, X2, X2
	VMOVDQU X2, (DI)
	ADDQ $0x40, SI
	ADDQ $0x10, DI
	DECQ CX
	JNZ quant_loop
	VZEROUPPER
	RET

`)
}

// absMaxTail reduces the eight lanes of Y0 to their largest and returns it
// (the end of both absMaxBits kernels).
const absMaxTail = `	VEXTRACTI128 $0x01, Y0, X2
	VPMAXUD X2, X0, X0
	VPSHUFD $0x4e, X0, X2
	VPMAXUD X2, X0, X0
	VPSHUFD $0xb1, X0, X2
	VPMAXUD X2, X0, X0
	VMOVD X0, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET
`

// quantKernelsAVX2 writes the AVX2 forms of the quantization kernels:
// absMaxBitsAVX2(src *float32, n int) uint32 for n a multiple of 8, and
// quantI8AVX2(dst *int8, src *float32, n int, inv float32) for n a multiple
// of 32 (the packs saturate, which values within ±127.5 never reach).
func quantKernelsAVX2(b *bytes.Buffer) {
	b.WriteString(`// func absMaxBitsAVX2(src *float32, n int) uint32
// Requires: AVX, AVX2
TEXT ·absMaxBitsAVX2(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $0x03, CX
	MOVL $0x7fffffff, AX
	MOVD AX, X1
	VPBROADCASTD X1, Y1
	VPXOR Y0, Y0, Y0

absmax2_loop:
	VPAND (SI), Y1, Y2
	VPMAXUD Y2, Y0, Y0
	ADDQ $0x20, SI
	DECQ CX
	JNZ absmax2_loop
` + absMaxTail + `
// The dword order that undoes VPACKSSDW/VPACKSSWB's lane interleaving.
DATA i8perm<>+0(SB)/4, $0
DATA i8perm<>+4(SB)/4, $4
DATA i8perm<>+8(SB)/4, $1
DATA i8perm<>+12(SB)/4, $5
DATA i8perm<>+16(SB)/4, $2
DATA i8perm<>+20(SB)/4, $6
DATA i8perm<>+24(SB)/4, $3
DATA i8perm<>+28(SB)/4, $7
GLOBL i8perm<>(SB), RODATA|NOPTR, $32

// func quantI8AVX2(dst *int8, src *float32, n int, inv float32)
// Requires: AVX, AVX2
TEXT ·quantI8AVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $0x05, CX
	VBROADCASTSS inv+24(FP), Y8
	MOVL $0x80808080, AX
	MOVD AX, X9
	VPBROADCASTD X9, Y9
	VMOVDQU i8perm<>(SB), Y10

quant2_loop:
	VMULPS (SI), Y8, Y0
	VMULPS 32(SI), Y8, Y1
	VMULPS 64(SI), Y8, Y2
	VMULPS 96(SI), Y8, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y4
	VPACKSSDW Y3, Y2, Y5
	VPACKSSWB Y5, Y4, Y6
	VPERMD Y6, Y10, Y6
	VPXOR Y9, Y6, Y6
	VMOVDQU Y6, (DI)
	ADDQ $0x80, SI
	ADDQ $0x20, DI
	DECQ CX
	JNZ quant2_loop
	VZEROUPPER
	RET

`)
}

// genInt8 writes the int8 kernels (the GEMM tiles for AVX512_VNNI and
// AVX-VNNI and the quantizers of their activations) to asmPath and their
// declarations and tile tables to declPath.
func genInt8(asmPath, declPath string) {
	s, d := newAsm(), newDecl()
	for _, t := range dotTiles() {
		productKernel(s, t, i8Dot)
		fmt.Fprintf(d, "// %s computes a %dx%d tile of x·Wᵀ with int8 products.\n//\n//go:noescape\n", i8Name(t), t.rows, t.cols)
		fmt.Fprintf(d, "func %s(a *float32, lda int, w *int8, wp int, k int, c *float32, ldc int, bias *float32)\n\n", i8Name(t))
	}
	d.WriteString("// i8Tiles lists the generated int8 tiles (AVX512_VNNI).\nvar i8Tiles = []gemmTile[int8]{\n")
	for _, t := range dotTiles() {
		fmt.Fprintf(d, "{%d, %d, %s},\n", t.rows, t.cols, i8Name(t))
	}
	d.WriteString("}\n\n")
	for _, t := range gemmTiles(avx2) {
		vnniKernel(s, t)
		fmt.Fprintf(d, "// %s computes a %dx%d tile of x·Wᵀ with int8 products (AVX-VNNI).\n//\n//go:noescape\n", vnniName(t), t.rows, t.cols)
		fmt.Fprintf(d, "func %s(a *float32, lda int, w *int8, wp int, k int, c *float32, ldc int, bias *float32)\n\n", vnniName(t))
	}
	d.WriteString("// vnniTiles lists the generated AVX-VNNI int8 tiles.\nvar vnniTiles = []gemmTile[int8]{\n")
	for _, t := range gemmTiles(avx2) {
		fmt.Fprintf(d, "{%d, %d, %s},\n", t.rows, t.cols, vnniName(t))
	}
	d.WriteString("}\n\n")
	quantKernels(s)
	quantKernelsAVX2(s)
	d.WriteString("// absMaxBitsAVX512 returns the largest bit pattern of |src[i]|; n is a\n// multiple of 16.\n//\n//go:noescape\nfunc absMaxBitsAVX512(src *float32, n int) uint32\n\n")
	d.WriteString("// quantI8AVX512 stores round-half-even(src[i]·inv) + 128 as bytes; n is a\n// multiple of 16.\n//\n//go:noescape\nfunc quantI8AVX512(dst *int8, src *float32, n int, inv float32)\n\n")
	d.WriteString("// absMaxBitsAVX2 is absMaxBitsAVX512 for n a multiple of 8.\n//\n//go:noescape\nfunc absMaxBitsAVX2(src *float32, n int) uint32\n\n")
	d.WriteString("// quantI8AVX2 is quantI8AVX512 for n a multiple of 32.\n//\n//go:noescape\nfunc quantI8AVX2(dst *int8, src *float32, n int, inv float32)\n")
	writeGenerated(asmPath, declPath, s, d)
}
