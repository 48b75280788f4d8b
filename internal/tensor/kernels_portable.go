//go:build !(amd64 || arm64) || !gc || purego

package tensor

// This file holds the portable side of every SIMD entry point: on builds
// without the amd64 or arm64 kernels (another architecture, gccgo, the
// purego tag) each reports that it did nothing, and the callers run their
// portable code. The amd64 versions are in the *_amd64.go files, the arm64
// ones in the *_arm64.go files.

func detectImpl() impl { return implGeneric }

func implAvailable(i impl) bool { return i == implGeneric }

func simdGEMM() bool { return false }

func linearSIMD(y, x []float32, m int, w *Mat, bias []float32, serial bool) bool { return false }

const hasBF16Dot = false

func cvtBF16SIMD(dst []uint16, src []float32) int { return 0 }

func widenSIMD(dst []float32, src []uint16) int { return 0 }

func linearBF16DotSIMD(y []float32, xb []uint16, m int, w *Mat, bias []float32, serial bool) bool {
	return false
}

func linearInt8SIMD(y []float32, xq []uint32, m int, w *Mat, bias []float32, serial bool) bool {
	return false
}

func dotSIMD(a, b []float32) (float32, bool)                                    { return 0, false }
func axpySIMD(y []float32, a float32, x []float32) bool                         { return false }
func addSIMD(y, x []float32) bool                                               { return false }
func addMulSIMD(y, s, x []float32) bool                                         { return false }
func ropePairsSIMD(x, c, s []float32, heads int) bool                           { return false }
func scaleSIMD(y []float32, a float32) bool                                     { return false }
func sumF64SIMD(x []float32) (float64, bool)                                    { return 0, false }
func sumSqDevSIMD(x []float32, mean float64) (float64, bool)                    { return 0, false }
func layerNormApplySIMD(y, x []float32, mean, inv float64, g, b []float32) bool { return false }
func geluTanhSIMD(x []float32) bool                                             { return false }
func geluErfSIMD(x []float32) bool                                              { return false }
func expSumSIMD(x []float32, mx float32) (float64, bool)                        { return 0, false }
func maxSIMD(x []float32) (float32, bool)                                       { return 0, false }

func attnScoresSIMD(s, q, k []float32, stride int, scale float32, pf []float32) bool { return false }
func attnSumSIMD(out, p, v []float32, stride int, pf []float32) bool                 { return false }

func attnScoresBFSIMD(s, q []float32, k []uint16, stride int, scale float32, pf []uint16) bool {
	return false
}
func attnSumBFSIMD(out, p []float32, v []uint16, stride int, pf []uint16) bool { return false }
func attnScoresI8SIMD(s, q []float32, k []int8, ks []float32, stride int, scale float32, pf []int8) bool {
	return false
}
func dequantRowsSIMD(dst []float32, q []int8, s []float32, hd int) bool { return false }
func attnSumI8SIMD(out, p []float32, v []int8, vs []float32, stride int, pf []int8) bool {
	return false
}

func absMaxSIMD(v []float32) (uint32, int) { return 0, 0 }

func quantSIMD(q []int8, v []float32, inv float32) int { return 0 }

// i8SetFor reports no int8 kernels: a nil set, as on amd64 CPUs without
// them.
func i8SetFor(i impl) *gemmSet[int8] { return nil }
