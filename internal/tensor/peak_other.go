//go:build !((amd64 || arm64) && gc && !purego)

package tensor

// fmaPeak has no loop on this build (see peak_amd64.go, peak_arm64.go).
func fmaPeak(a, b float32, n int) (sums []float32, flops int, ok bool) {
	return nil, 0, false
}
