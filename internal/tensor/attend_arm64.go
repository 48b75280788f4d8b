//go:build gc && !purego

package tensor

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
