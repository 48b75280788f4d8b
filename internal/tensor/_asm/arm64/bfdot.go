package main

import (
	"bytes"
	"fmt"
)

func bfdotName(t gemmTile) string { return fmt.Sprintf("dotBF16NEON_%dx%d", t.rows, t.cols) }

// genBFDot writes the bfloat16 dot-product tiles and their table
// (bfdotTiles).
func genBFDot(g *gen) {
	var tab bytes.Buffer
	tab.WriteString("\n// bfdotTiles lists the generated bfloat16 dot-product tiles (BFDOT, FEAT_BF16).\nvar bfdotTiles = []gemmTile[uint16]{\n")
	for _, t := range gemmTiles() {
		bfdotKernel(g, t)
		fmt.Fprintf(&tab, "{%d, %d, %s},\n", t.rows, t.cols, bfdotName(t))
	}
	tab.WriteString("}\n")
	g.decl.Write(tab.Bytes())
}

// bfdotKernel generates the tile of package tensor's bfloat16 dot layout
// (see tensor/bf16dot.go, PackBF16Dot):
//
//	func(a *float32, lda int, w *uint16, wp int, k int, c *float32, ldc int, bias *float32)
//
// a holds rows of lda pairs of bfloat16 inputs (each pair read as one
// 4-byte word); k counts pairs; w points at the tile's first column in a
// panel of k pair rows [32 columns][2], wp is the panel size in bfloat16
// elements. Per output, from zero, one BFDOT step per pair in the order of
// k, then + bias (rounded to nearest, like the float32 tiles).
//
// A panel's pair row is 128 bytes, like an int8 panel's group row, so the
// loop is the int8 tile's: one 16-byte load of four x pairs per row, then
// per pair a group of four weight vectors (four columns' pairs each) and
// BFDOT by element, lane l of the x vector being pair l. Every
// accumulator lane sees its pairs in order, so the value does not depend
// on the tile, the rows beside it or the threads.
func bfdotKernel(g *gen, t gemmTile) {
	name := bfdotName(t)
	g.text(name, "(a *float32, lda int, w *uint16, wp int, k int, c *float32, ldc int, bias *float32)", 64,
		fmt.Sprintf("%s computes a %dx%d tile of x·Wᵀ with BFDOT.", name, t.rows, t.cols))
	nv := t.cols / 4
	groups := nv / 4
	acc := func(r, v int) int { return r*nv + v }
	xr := func(r int) int { return t.rows*nv + r }
	w0 := t.rows*nv + t.rows
	if w0+4 > 32 {
		panic(name + ": too many registers")
	}
	row := func(r int) string { return fmt.Sprintf("R%d", 10+r) }
	g.i("MOVD a+0(FP), R10")
	g.i("MOVD lda+8(FP), R1")
	g.i("LSL $2, R1, R1")
	for r := 1; r < t.rows; r++ {
		g.i("ADD R1, %s, %s", row(r-1), row(r))
	}
	g.i("MOVD w+16(FP), R2")
	if t.cols > 32 {
		g.i("MOVD wp+24(FP), R3")
		g.i("ADD R3<<1, R2, R9")
	}
	if t.cols == 16 {
		g.i("MOVD $128, R8") // one pair row: the 16-column tile skips the other half
	}
	g.i("MOVD k+32(FP), R4")
	g.i("LSR $2, R4, R15")
	g.i("AND $3, R4, R19")
	for r := 0; r < t.rows; r++ {
		for v := 0; v < nv; v++ {
			g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", acc(r, v))
		}
	}
	wregs := fmt.Sprintf("[V%d.H8, V%d.H8, V%d.H8, V%d.H8]", w0, w0+1, w0+2, w0+3)
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
					g.word(bfdotElem(d, w0+v, xr(r), l), bfdotElemText(d, w0+v, xr(r), l))
				}
			}
		}
	}
	g.i("CBZ R15, tail")
	g.i("loop4:")
	for r := 0; r < t.rows; r++ {
		g.i("VLD1.P 16(%s), [V%d.S4]", row(r), xr(r))
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
	}
	dots(0)
	g.i("SUB $1, R19, R19")
	g.i("CBNZ R19, loop1")
	g.i("done:")
	storeTile(g, t, nv, w0, "R20")
}
