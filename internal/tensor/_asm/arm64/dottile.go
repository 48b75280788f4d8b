package main

import "fmt"

// dotTile is what differs between the tiles that accumulate four-lane dot
// products by element (SDOT for the int8 mode, BFDOT for arm64's bf16
// mode). Both read panels whose group rows are 128 bytes (32 columns of
// four int8 weights or two bfloat16 weights) and x rows of 4-byte groups,
// so their loops are the same: one 16-byte load of four x groups per row,
// then per group four weight vectors and one dot by element per
// accumulator, lane l of the x vector being group l.
type dotTile struct {
	wShift   string // scale of wp to bytes in "ADD R3<<…": "" (bytes) or "<<1" (bfloat16 elements)
	wArr     string // arrangement of the weight registers (S4, H8)
	xArr     string // arrangement of the 16-byte x load (B16, S4)
	flip     bool   // int8: x bytes are stored q+128, flipped back to q (EOR 0x80) after each load
	elem     func(d, n, m, idx int) uint32
	elemText func(d, n, m, idx int) string
}

// dotLoop emits a dot tile's prologue and its loop over k (in steps of
// four groups, then one at a time): the accumulators V0… (nv per row) hold
// the sums when it ends. It returns nv and w0, the first of the four
// weight registers (free again after the loop).
func dotLoop(g *gen, t gemmTile, name string, dt dotTile) (nv, w0 int) {
	nv = t.cols / 4
	groups := nv / 4
	acc := func(r, v int) int { return r*nv + v }
	xr := func(r int) int { return t.rows*nv + r }
	w0 = t.rows*nv + t.rows
	flip := w0 + 4 // 0x80 in every byte
	need := w0 + 4
	if dt.flip {
		need++
	}
	if need > 32 {
		panic(name + ": too many registers")
	}
	row := tileRow
	tilePointers(g, t, dt.wShift, 128)
	if dt.flip {
		g.i("VMOVI $128, V%d.B16", flip)
	}
	g.i("MOVD k+32(FP), R4")
	g.i("LSR $2, R4, R15")
	g.i("AND $3, R4, R19")
	for r := 0; r < t.rows; r++ {
		for v := 0; v < nv; v++ {
			g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", acc(r, v))
		}
	}
	a := dt.wArr
	wregs := fmt.Sprintf("[V%d.%s, V%d.%s, V%d.%s, V%d.%s]", w0, a, w0+1, a, w0+2, a, w0+3, a)
	loadGroup := func(q int) {
		switch {
		case t.cols == 16:
			g.i("VLD1.P (R2)(R8), %s", wregs)
		case q*16 < 32:
			g.i("VLD1.P 64(R2), %s", wregs)
		default:
			g.i("VLD1.P 64(R9), %s", wregs)
		}
	}
	dots := func(l int) {
		for q := 0; q < groups; q++ {
			loadGroup(q)
			for r := 0; r < t.rows; r++ {
				for v := 0; v < 4; v++ {
					d := acc(r, 4*q+v)
					g.word(dt.elem(d, w0+v, xr(r), l), dt.elemText(d, w0+v, xr(r), l))
				}
			}
		}
	}
	flipX := func(r int) {
		if dt.flip {
			g.i("VEOR V%d.B16, V%d.B16, V%[2]d.B16", flip, xr(r))
		}
	}
	g.i("CBZ R15, tail")
	g.i("loop4:")
	for r := 0; r < t.rows; r++ {
		g.i("VLD1.P 16(%s), [V%d.%s]", row(r), xr(r), dt.xArr)
		flipX(r)
	}
	for l := 0; l < 4; l++ {
		dots(l)
	}
	g.i("SUB $1, R15, R15")
	g.i("CBNZ R15, loop4")
	g.i("tail:")
	g.i("CBZ R19, done")
	g.i("loop1:")
	for r := 0; r < t.rows; r++ {
		g.i("VLD1R.P 4(%s), [V%d.S4]", row(r), xr(r))
		flipX(r)
	}
	dots(0)
	g.i("SUB $1, R19, R19")
	g.i("CBNZ R19, loop1")
	g.i("done:")
	return nv, w0
}
