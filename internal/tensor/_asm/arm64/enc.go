package main

import "fmt"

// Go's arm64 assembler has no mnemonic for some Advanced SIMD forms the
// kernels use; they are emitted as WORD directives built here, each with a
// comment giving the instruction in Arm syntax. The field layouts are those
// of the Arm Architecture Reference Manual (DDI 0487), section C7.2; the
// tests check the encoder against encodings produced by other assemblers.

// fmlaElemS encodes FMLA <Vd>.4S, <Vn>.4S, <Vm>.S[<idx>] (vector, by
// element, single precision: ARM ARM C7.2.114):
//
//	0 Q=1 U=0 01111 1 sz=0 L M Rm[3:0] 0001 H 0 Rn Rd
//
// The lane index is H:L; M is bit 4 of Rm (all 32 registers are allowed
// for single precision).
func fmlaElemS(d, n, m, idx int) uint32 {
	checkReg(d, n, m)
	if idx < 0 || idx > 3 {
		panic(fmt.Sprintf("fmla: lane %d", idx))
	}
	return 0x4f801000 |
		uint32(idx&1)<<21 | uint32(m>>4&1)<<20 | uint32(m&15)<<16 |
		uint32(idx>>1)<<11 | uint32(n)<<5 | uint32(d)
}

// fmlaElemSText is the Arm-syntax text of fmlaElemS, for the comment beside
// the WORD.
func fmlaElemSText(d, n, m, idx int) string {
	return fmt.Sprintf("FMLA V%d.4S, V%d.4S, V%d.S[%d]", d, n, m, idx)
}

func checkReg(rs ...int) {
	for _, r := range rs {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("vector register V%d", r))
		}
	}
}

// Three-register "same" vector forms on .4S (ARM ARM C4.1.96.13:
// 0 Q=1 U 01110 0 sz=0 1 Rm opcode 1 Rn Rd), by their fixed bits.
const (
	opFADD  = 0x4e20d400 // FADD  <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=0, opcode 11010)
	opFADDP = 0x6e20d400 // FADDP <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=1, opcode 11010)
	opFMUL  = 0x6e20dc00 // FMUL  <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=1, opcode 11011)
	opFSUB  = 0x4ea0d400 // FSUB  <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=0, sz:bit 23 set, opcode 11010)
	opFCMGT = 0x6ea0e400 // FCMGT <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=1, bit 23 set, opcode 11100): all ones where n > m
	opCMGT  = 0x4ea03400 // CMGT  <Vd>.4S, <Vn>.4S, <Vm>.4S  (integer, signed: all ones where n > m)
	opBIC   = 0x4e601c00 // BIC   <Vd>.16B, <Vn>.16B, <Vm>.16B (n AND NOT m)
	opFADDD = 0x4e60d400 // FADD  <Vd>.2D, <Vn>.2D, <Vm>.2D  (sz=1)
	opFDIVD = 0x6e60fc00 // FDIV  <Vd>.2D, <Vn>.2D, <Vm>.2D  (U=1, sz=1, opcode 11111)
	opFDIV  = 0x6e20fc00 // FDIV  <Vd>.4S, <Vn>.4S, <Vm>.4S  (U=1, sz=0, opcode 11111)
)

// sameNames are the Arm-syntax forms of the three-register operations.
var sameNames = map[uint32]string{
	opFADD: "FADD V%d.4S, V%d.4S, V%d.4S", opFADDP: "FADDP V%d.4S, V%d.4S, V%d.4S",
	opFMUL: "FMUL V%d.4S, V%d.4S, V%d.4S", opFSUB: "FSUB V%d.4S, V%d.4S, V%d.4S",
	opFCMGT: "FCMGT V%d.4S, V%d.4S, V%d.4S", opCMGT: "CMGT V%d.4S, V%d.4S, V%d.4S",
	opBIC: "BIC V%d.16B, V%d.16B, V%d.16B", opFADDD: "FADD V%d.2D, V%d.2D, V%d.2D",
	opFDIVD: "FDIV V%d.2D, V%d.2D, V%d.2D", opFDIV: "FDIV V%d.4S, V%d.4S, V%d.4S",
}

// sameS encodes the three-register vector instruction op (on .4S unless
// its name says otherwise).
func sameS(op uint32, d, n, m int) uint32 {
	checkReg(d, n, m)
	return op | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
}

// sameSText is the Arm-syntax text of sameS.
func sameSText(op uint32, d, n, m int) string {
	return fmt.Sprintf(sameNames[op], d, n, m)
}

// sdotElem encodes SDOT <Vd>.4S, <Vn>.16B, <Vm>.4B[<idx>] (dot product,
// by element; FEAT_DotProd, Armv8.2: ARM ARM C7.2.291):
//
//	0 Q=1 U=0 01111 size=10 L M Rm[3:0] 1110 H 0 Rn Rd
//
// Each int32 lane of Vd gains the sum of the four products of its four
// signed bytes of Vn with the four signed bytes of element idx of Vm.
func sdotElem(d, n, m, idx int) uint32 {
	checkReg(d, n, m)
	if idx < 0 || idx > 3 {
		panic(fmt.Sprintf("sdot: lane %d", idx))
	}
	return 0x4f80e000 |
		uint32(idx&1)<<21 | uint32(m>>4&1)<<20 | uint32(m&15)<<16 |
		uint32(idx>>1)<<11 | uint32(n)<<5 | uint32(d)
}

// sdotElemText is the Arm-syntax text of sdotElem.
func sdotElemText(d, n, m, idx int) string {
	return fmt.Sprintf("SDOT V%d.4S, V%d.16B, V%d.4B[%d]", d, n, m, idx)
}

// scvtfS encodes SCVTF <Vd>.4S, <Vn>.4S (signed int32 to float32, vector,
// rounding as FPCR says: to nearest even in Go programs; ARM ARM C7.2.236):
//
//	0 Q=1 U=0 01110 0 sz=0 10000 11101 10 Rn Rd
func scvtfS(d, n int) uint32 {
	checkReg(d, n)
	return 0x4e21d800 | uint32(n)<<5 | uint32(d)
}

// scvtfSText is the Arm-syntax text of scvtfS.
func scvtfSText(d, n int) string { return fmt.Sprintf("SCVTF V%d.4S, V%d.4S", d, n) }

// sxtl encodes SXTL <Vd>.<2×size>, <Vn>.<size> on the low half of Vn
// (SSHLL with shift 0: ARM ARM C7.2.333), for bytes (8B to 8H) or
// halfwords (4H to 4S):
//
//	0 Q=0 U=0 011110 immh:immb=0001000 (bytes) or 0010000 (halfwords) 10100 1 Rn Rd
func sxtl(d, n int, bytes bool) uint32 {
	checkReg(d, n)
	op := uint32(0x0f10a400)
	if bytes {
		op = 0x0f08a400
	}
	return op | uint32(n)<<5 | uint32(d)
}

// sxtlText is the Arm-syntax text of sxtl.
func sxtlText(d, n int, bytes bool) string {
	if bytes {
		return fmt.Sprintf("SXTL V%d.8H, V%d.8B", d, n)
	}
	return fmt.Sprintf("SXTL V%d.4S, V%d.4H", d, n)
}

// Two-register conversions between single and double precision (ARM ARM
// C7.2.90 FCVTL, C7.2.92 FCVTN): 0 Q 0 01110 0 sz=1 10000 opcode 10 Rn Rd;
// Q=1 (the "2" forms) reads or writes the upper half of the 128-bit
// register.
const (
	opFCVTL  = 0x0e617800 // FCVTL  <Vd>.2D, <Vn>.2S: the low two floats, exactly
	opFCVTL2 = 0x4e617800 // FCVTL2 <Vd>.2D, <Vn>.4S: the high two floats, exactly
	opFCVTN  = 0x0e616800 // FCVTN  <Vd>.2S, <Vn>.2D: rounded as FPCR says (to nearest even), upper half cleared
	opFCVTN2 = 0x4e616800 // FCVTN2 <Vd>.4S, <Vn>.2D: into the upper half, the lower kept
)

// cvt encodes the conversion op.
func cvt(op uint32, d, n int) uint32 {
	checkReg(d, n)
	return op | uint32(n)<<5 | uint32(d)
}

// cvtText is the Arm-syntax text of cvt.
func cvtText(op uint32, d, n int) string {
	f := map[uint32]string{opFCVTL: "FCVTL V%d.2D, V%d.2S", opFCVTL2: "FCVTL2 V%d.2D, V%d.4S",
		opFCVTN: "FCVTN V%d.2S, V%d.2D", opFCVTN2: "FCVTN2 V%d.4S, V%d.2D"}[op]
	return fmt.Sprintf(f, d, n)
}

// bfdotElem encodes BFDOT <Vd>.4S, <Vn>.8H, <Vm>.2H[<idx>] (bfloat16 dot
// product, by element; FEAT_BF16, Armv8.6: ARM ARM C7.2, BFDOT (by
// element)):
//
//	0 Q=1 0 01111 0 1 L M Rm[3:0] 1111 H 0 Rn Rd
//
// Each float32 lane of Vd gains the dot product of its pair of bfloat16
// values of Vn with pair idx of Vm, in BFDOT's own arithmetic (products,
// their sum and the accumulation each rounded to odd, denormals flushed).
func bfdotElem(d, n, m, idx int) uint32 {
	checkReg(d, n, m)
	if idx < 0 || idx > 3 {
		panic(fmt.Sprintf("bfdot: lane %d", idx))
	}
	return 0x4f40f000 |
		uint32(idx&1)<<21 | uint32(m>>4&1)<<20 | uint32(m&15)<<16 |
		uint32(idx>>1)<<11 | uint32(n)<<5 | uint32(d)
}

// bfdotElemText is the Arm-syntax text of bfdotElem.
func bfdotElemText(d, n, m, idx int) string {
	return fmt.Sprintf("BFDOT V%d.4S, V%d.8H, V%d.2H[%d]", d, n, m, idx)
}
