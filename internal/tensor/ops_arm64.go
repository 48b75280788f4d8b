//go:build gc && !purego

package tensor

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
