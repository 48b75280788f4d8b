package tensor

import (
	"fmt"
	"runtime"
)

// Matmul is the arithmetic of a model's big matrix products, chosen once
// when the model is loaded (the --matmul flag). The zero value is F32, the
// reference's arithmetic.
type Matmul uint8

const (
	// F32 multiplies in float32 (bfloat16 weights widened exactly): results
	// equal the float32 reference.
	F32 Matmul = iota
	// BF16 rounds the inputs of the products to bfloat16 and multiplies with
	// AVX512_BF16 dot products (see PackBF16Dot), or on arm64 with BFDOT
	// (FEAT_BF16), which rounds otherwise (see linearBF16DotSIMD in
	// linear_arm64.go; there only for the language model: see BF16Dot):
	// faster batches, half the memory of float32 weights, results differ
	// slightly from the reference.
	BF16
	// Int8 quantizes weights and inputs to 8 bits per row (see PackInt8) and
	// multiplies with AVX512_VNNI or AVX-VNNI: the fastest mode, the least
	// exact. What a model keeps outside int8 follows BF16Dot.
	Int8
)

var matmulNames = [...]string{F32: "f32", BF16: "bf16", Int8: "int8"}

// ParseMatmul parses a mode name: f32, bf16 or int8 (empty means f32).
func ParseMatmul(s string) (Matmul, error) {
	if s == "" {
		return F32, nil
	}
	for m, name := range matmulNames {
		if s == name {
			return Matmul(m), nil
		}
	}
	return F32, fmt.Errorf("matmul mode %q: want f32, bf16 or int8", s)
}

// String returns the mode's name as ParseMatmul reads it.
func (m Matmul) String() string {
	if int(m) < len(matmulNames) {
		return matmulNames[m]
	}
	return fmt.Sprintf("Matmul(%d)", uint8(m))
}

// Supported reports whether the mode's kernels run on this CPU with the
// kernel set in use. Elsewhere the mode's layouts are multiplied by portable
// code that computes the same values much more slowly, so Available falls
// back to F32 instead.
func (m Matmul) Supported() bool {
	switch m {
	case F32:
		return true
	case BF16:
		return HasBF16Dot()
	case Int8:
		return HasInt8Dot()
	}
	return false
}

// Requires names the CPU features the mode's kernels need on this
// architecture, for the message that reports a fallback to F32 (empty for
// F32).
func (m Matmul) Requires() string {
	if m == F32 {
		return ""
	}
	if runtime.GOARCH == "arm64" {
		return map[Matmul]string{BF16: "FEAT_BF16 (BFDOT)", Int8: "FEAT_DotProd (SDOT)"}[m]
	}
	return map[Matmul]string{BF16: "AVX512_BF16", Int8: "AVX512_VNNI or AVX-VNNI"}[m]
}

// Available returns the mode to load with on this CPU: m if Supported, else
// F32. It is the one fallback policy of every model.
func (m Matmul) Available() Matmul {
	if m.Supported() {
		return m
	}
	return F32
}

// BF16Dot reports whether a model in this mode multiplies with bfloat16 dot
// products where it does not use int8 ones (attention scores, the matrices
// a mode keeps outside int8): always in BF16, in Int8 where the CPU has
// AVX512_BF16 — and never on arm64, where what it gates (the codec's) is
// dominated by the windowed attention's dot-product forms (KV.BF16Scores,
// KV.BF16Sums), which have no BFDOT kernel: their portable products inside
// the NEON tiles run about 100 times slower than the float32 attention
// (measured on amd64 with the AVX2 tiles, the same arrangement), which
// would make the fast modes slower than real time. There the bf16 mode's
// BFDOT products are the language model's, and the rest computes as f32.
func (m Matmul) BF16Dot() bool {
	if runtime.GOARCH == "arm64" {
		return false
	}
	return m == BF16 || m == Int8 && HasBF16Dot()
}

// PackAs packs the matrix for the products of a mode: Int8 packs it with
// PackInt8 where the matrix allows it, BF16 with PackBF16Dot, and whatever
// these decline (and F32) with Pack.
func (m *Mat) PackAs(mode Matmul) {
	switch {
	case mode == Int8 && m.PackInt8():
	case mode == BF16 && m.PackBF16Dot():
	default:
		m.Pack()
	}
}
