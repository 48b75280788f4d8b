package main

// The element-wise kernels: y op= … over n floats, n a multiple of 4; the
// Go side does the last n%4 with the same operations. Each is the portable
// loop's IEEE operations lane by lane (products rounded before the sums:
// no fused multiply-add), so every value equals the portable one.

func genVector(g *gen) {
	vecKernel(g, "addNEON", "(y, x *float32, n int)", 24, "addNEON computes y += x for n floats, n a multiple of 4.",
		[]string{"x+8(FP)"}, "", func(y, a, b int) {
			g.word(sameS(opFADD, y, y, a), sameSText(opFADD, y, y, a))
		})
	vecKernel(g, "scaleNEON", "(y *float32, a float32, n int)", 24, "scaleNEON computes y *= a for n floats, n a multiple of 4.",
		nil, "a+8(FP)", func(y, a, b int) {
			g.word(sameS(opFMUL, y, y, 31), sameSText(opFMUL, y, y, 31))
		})
	vecKernel(g, "axpyNEON", "(y *float32, a float32, x *float32, n int)", 32, "axpyNEON computes y += float32(a·x) for n floats, n a multiple of 4.",
		[]string{"x+16(FP)"}, "a+8(FP)", func(y, a, b int) {
			g.word(sameS(opFMUL, a, a, 31), sameSText(opFMUL, a, a, 31))
			g.word(sameS(opFADD, y, y, a), sameSText(opFADD, y, y, a))
		})
	vecKernel(g, "addMulNEON", "(y, s, x *float32, n int)", 32, "addMulNEON computes y += float32(s·x) for n floats, n a multiple of 4.",
		[]string{"s+8(FP)", "x+16(FP)"}, "", func(y, a, b int) {
			g.word(sameS(opFMUL, a, a, b), sameSText(opFMUL, a, a, b))
			g.word(sameS(opFADD, y, y, a), sameSText(opFADD, y, y, a))
		})
}

// vecKernel generates one element-wise kernel: y at y+0(FP), the other
// operands at srcs (one or two), the scalar (if any) broadcast into V31,
// n the last argument. op emits the operation on one vector of y (register
// y, which is stored back) and of the sources (registers a and b).
func vecKernel(g *gen, name, sig string, args int, doc string, srcs []string, scalar string, op func(y, a, b int)) {
	g.text(name, sig, args, doc)
	g.i("MOVD y+0(FP), R0")
	for i, s := range srcs {
		g.i("MOVD %s, R%d", s, 1+i)
	}
	g.i("MOVD n+%d(FP), R3", args-8)
	if scalar != "" {
		g.i("FMOVS %s, F31", scalar)
		g.i("VDUP V31.S[0], V31.S4")
	}
	g.i("MOVD R0, R5")
	g.i("LSR $4, R3, R4")
	g.i("AND $15, R3, R3")
	g.i("LSR $2, R3, R3")
	for _, c := range []struct {
		label string
		count int
		cnt   string
	}{{"loop16", 4, "R4"}, {"loop4", 1, "R3"}} {
		g.i("CBZ %s, %s_end", c.cnt, c.label)
		g.i("%s:", c.label)
		g.i("VLD1.P %d(R0), %s", 16*c.count, vlist(0, c.count))
		for i := range srcs {
			g.i("VLD1.P %d(R%d), %s", 16*c.count, 1+i, vlist(4+4*i, c.count))
		}
		for v := range c.count {
			op(v, 4+v, 8+v)
		}
		g.i("VST1.P %s, %d(R5)", vlist(0, c.count), 16*c.count)
		g.i("SUB $1, %s, %[1]s", c.cnt)
		g.i("CBNZ %s, %s", c.cnt, c.label)
		g.i("%s_end:", c.label)
	}
	g.i("RET")
}
