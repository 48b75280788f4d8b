package main

// peakChains is the number of independent accumulators of fmaPeakNEON:
// enough to cover a fused multiply-add's latency (4 cycles) on four pipes
// (Apple M-series, Neoverse V2), leaving two registers for the operands.
const peakChains = 24

// genPeak emits fmaPeakNEON, the machine's floating-point ceiling: n rounds
// of one FMLA per accumulator and nothing else in the loop but its counter.
// It measures what no kernel can exceed (BenchmarkFMAPeak) and is not used
// by the model.
func genPeak(g *gen) {
	g.text("fmaPeakNEON", "(out *float32, a, b float32, n int)", 24,
		"fmaPeakNEON sets out[0:4] to the sum over its accumulators of n fused\n// multiply-adds a·b + acc each, all accumulators starting at zero.")
	g.i("MOVD out+0(FP), R0")
	g.i("FMOVS a+8(FP), F30")
	g.i("FMOVS b+12(FP), F31")
	g.i("MOVD n+16(FP), R1")
	g.i("VDUP V30.S[0], V30.S4")
	g.i("VDUP V31.S[0], V31.S4")
	for v := range peakChains {
		g.i("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	g.i("CBZ R1, peak_end")
	g.i("peak_loop:")
	for v := range peakChains {
		g.i("VFMLA V30.S4, V31.S4, V%d.S4", v)
	}
	g.i("SUB $1, R1, R1")
	g.i("CBNZ R1, peak_loop")
	g.i("peak_end:")
	for w := peakChains; w > 1; w = (w + 1) / 2 {
		for i := 0; i < w/2; i++ {
			g.word(sameS(opFADD, i, i, i+(w+1)/2), sameSText(opFADD, i, i, i+(w+1)/2))
		}
	}
	g.i("VST1 [V0.S4], (R0)")
	g.i("RET")
}
