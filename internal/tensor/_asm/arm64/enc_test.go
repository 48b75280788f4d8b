package main

import "testing"

// The expected encodings are those GNU as (binutils 2.40,
// aarch64-linux-gnu-as) assembles the instruction in each comment to,
// read back with objdump -d; they agree with the ones listed in the Go
// assembler's own test data (cmd/asm/internal/asm/testdata/arm64enc.s)
// where that lists the instruction.

// TestFmlaElemS covers each field of FMLA (by element): the lane bits H and
// L, the M bit (Rm >= 16), Rn and Rd.
func TestFmlaElemS(t *testing.T) {
	for _, tc := range []struct {
		d, n, m, idx int
		want         uint32
	}{
		{0, 1, 2, 0, 0x4f821020},    // fmla v0.4s, v1.4s, v2.s[0]
		{0, 1, 2, 1, 0x4fa21020},    // fmla v0.4s, v1.4s, v2.s[1]
		{0, 1, 2, 2, 0x4f821820},    // fmla v0.4s, v1.4s, v2.s[2]
		{0, 1, 2, 3, 0x4fa21820},    // fmla v0.4s, v1.4s, v2.s[3]
		{31, 30, 17, 3, 0x4fb11bdf}, // fmla v31.4s, v30.4s, v17.s[3]
	} {
		if got := fmlaElemS(tc.d, tc.n, tc.m, tc.idx); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", fmlaElemSText(tc.d, tc.n, tc.m, tc.idx), got, tc.want)
		}
	}
}

func TestSameS(t *testing.T) {
	for _, tc := range []struct {
		op      uint32
		d, n, m int
		want    uint32
	}{
		{opFADD, 0, 1, 2, 0x4e22d420},    // fadd v0.4s, v1.4s, v2.4s
		{opFADD, 31, 17, 5, 0x4e25d63f},  // fadd v31.4s, v17.4s, v5.4s
		{opFADDP, 0, 1, 2, 0x6e22d420},   // faddp v0.4s, v1.4s, v2.4s
		{opFADDP, 11, 3, 30, 0x6e3ed46b}, // faddp v11.4s, v3.4s, v30.4s (also arm64enc.s)
		{opFMUL, 0, 1, 2, 0x6e22dc20},    // fmul v0.4s, v1.4s, v2.4s
		{opFMUL, 29, 18, 7, 0x6e27de5d},  // fmul v29.4s, v18.4s, v7.4s
		{opFSUB, 0, 1, 2, 0x4ea2d420},    // fsub v0.4s, v1.4s, v2.4s
		{opFSUB, 31, 17, 5, 0x4ea5d63f},  // fsub v31.4s, v17.4s, v5.4s
		{opFCMGT, 0, 1, 2, 0x6ea2e420},   // fcmgt v0.4s, v1.4s, v2.4s
		{opFCMGT, 29, 18, 7, 0x6ea7e65d}, // fcmgt v29.4s, v18.4s, v7.4s
		{opCMGT, 0, 1, 2, 0x4ea23420},    // cmgt v0.4s, v1.4s, v2.4s
		{opCMGT, 31, 17, 5, 0x4ea5363f},  // cmgt v31.4s, v17.4s, v5.4s
		{opBIC, 0, 1, 2, 0x4e621c20},     // bic v0.16b, v1.16b, v2.16b
		{opBIC, 29, 18, 7, 0x4e671e5d},   // bic v29.16b, v18.16b, v7.16b
		{opFADDD, 0, 1, 2, 0x4e62d420},   // fadd v0.2d, v1.2d, v2.2d
		{opFADDD, 31, 17, 5, 0x4e65d63f}, // fadd v31.2d, v17.2d, v5.2d
		{opFDIVD, 0, 1, 2, 0x6e62fc20},   // fdiv v0.2d, v1.2d, v2.2d
		{opFDIVD, 29, 18, 7, 0x6e67fe5d}, // fdiv v29.2d, v18.2d, v7.2d
		{opFDIV, 0, 1, 2, 0x6e22fc20},    // fdiv v0.4s, v1.4s, v2.4s
		{opFDIV, 29, 18, 7, 0x6e27fe5d},  // fdiv v29.4s, v18.4s, v7.4s
	} {
		if got := sameS(tc.op, tc.d, tc.n, tc.m); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", sameSText(tc.op, tc.d, tc.n, tc.m), got, tc.want)
		}
	}
}

// TestSdotElem: the same fields as FMLA (by element) in another opcode
// (assembled with -march=armv8.2-a+dotprod).
func TestSdotElem(t *testing.T) {
	for _, tc := range []struct {
		d, n, m, idx int
		want         uint32
	}{
		{0, 1, 2, 0, 0x4f82e020},    // sdot v0.4s, v1.16b, v2.4b[0]
		{0, 1, 2, 1, 0x4fa2e020},    // sdot v0.4s, v1.16b, v2.4b[1]
		{0, 1, 2, 2, 0x4f82e820},    // sdot v0.4s, v1.16b, v2.4b[2]
		{0, 1, 2, 3, 0x4fa2e820},    // sdot v0.4s, v1.16b, v2.4b[3]
		{31, 30, 17, 3, 0x4fb1ebdf}, // sdot v31.4s, v30.16b, v17.4b[3]
	} {
		if got := sdotElem(tc.d, tc.n, tc.m, tc.idx); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", sdotElemText(tc.d, tc.n, tc.m, tc.idx), got, tc.want)
		}
	}
}

func TestScvtfS(t *testing.T) {
	for _, tc := range []struct {
		d, n int
		want uint32
	}{
		{0, 1, 0x4e21d820},   // scvtf v0.4s, v1.4s
		{29, 18, 0x4e21da5d}, // scvtf v29.4s, v18.4s
	} {
		if got := scvtfS(tc.d, tc.n); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", scvtfSText(tc.d, tc.n), got, tc.want)
		}
	}
}

func TestSxtl(t *testing.T) {
	for _, tc := range []struct {
		d, n  int
		bytes bool
		want  uint32
	}{
		{0, 1, true, 0x0f08a420},    // sxtl v0.8h, v1.8b
		{31, 17, true, 0x0f08a63f},  // sxtl v31.8h, v17.8b
		{0, 1, false, 0x0f10a420},   // sxtl v0.4s, v1.4h
		{29, 18, false, 0x0f10a65d}, // sxtl v29.4s, v18.4h
	} {
		if got := sxtl(tc.d, tc.n, tc.bytes); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", sxtlText(tc.d, tc.n, tc.bytes), got, tc.want)
		}
	}
}

// TestCvt covers the four single/double conversions of the softmax's
// float64 sums.
func TestCvt(t *testing.T) {
	for _, tc := range []struct {
		op   uint32
		d, n int
		want uint32
	}{
		{opFCVTL, 0, 1, 0x0e617820},    // fcvtl v0.2d, v1.2s
		{opFCVTL, 29, 18, 0x0e617a5d},  // fcvtl v29.2d, v18.2s
		{opFCVTL2, 0, 1, 0x4e617820},   // fcvtl2 v0.2d, v1.4s
		{opFCVTL2, 29, 18, 0x4e617a5d}, // fcvtl2 v29.2d, v18.4s
		{opFCVTN, 0, 1, 0x0e616820},    // fcvtn v0.2s, v1.2d
		{opFCVTN, 29, 18, 0x0e616a5d},  // fcvtn v29.2s, v18.2d
		{opFCVTN2, 0, 1, 0x4e616820},   // fcvtn2 v0.4s, v1.2d
		{opFCVTN2, 29, 18, 0x4e616a5d}, // fcvtn2 v29.4s, v18.2d
	} {
		if got := cvt(tc.op, tc.d, tc.n); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", cvtText(tc.op, tc.d, tc.n), got, tc.want)
		}
	}
}

// TestBfdotElem: the by-element fields once more, in BFDOT's opcode
// (assembled with -march=armv8.6-a+bf16).
func TestBfdotElem(t *testing.T) {
	for _, tc := range []struct {
		d, n, m, idx int
		want         uint32
	}{
		{0, 1, 2, 0, 0x4f42f020},    // bfdot v0.4s, v1.8h, v2.2h[0]
		{0, 1, 2, 1, 0x4f62f020},    // bfdot v0.4s, v1.8h, v2.2h[1]
		{0, 1, 2, 2, 0x4f42f820},    // bfdot v0.4s, v1.8h, v2.2h[2]
		{0, 1, 2, 3, 0x4f62f820},    // bfdot v0.4s, v1.8h, v2.2h[3]
		{31, 30, 17, 3, 0x4f71fbdf}, // bfdot v31.4s, v30.8h, v17.2h[3]
		{5, 18, 29, 1, 0x4f7df245},  // bfdot v5.4s, v18.8h, v29.2h[1]
	} {
		if got := bfdotElem(tc.d, tc.n, tc.m, tc.idx); got != tc.want {
			t.Errorf("%s = %#08x, want %#08x", bfdotElemText(tc.d, tc.n, tc.m, tc.idx), got, tc.want)
		}
	}
}
