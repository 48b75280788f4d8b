package main

import "fmt"

func bfdotName(t gemmTile) string { return fmt.Sprintf("dotBF16NEON_%dx%d", t.rows, t.cols) }

// genBFDot writes the bfloat16 dot-product tiles and their table
// (bfdotTiles).
func genBFDot(g *gen) {
	tileTable(g, "\n// bfdotTiles lists the generated bfloat16 dot-product tiles (BFDOT, FEAT_BF16).\nvar bfdotTiles = []gemmTile[uint16]{\n", "}\n",
		func(t gemmTile) string { bfdotKernel(g, t); return bfdotName(t) })
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
	nv, w0 := dotLoop(g, t, name, dotTile{
		wShift: "<<1", wArr: "H8", xArr: "S4",
		elem: bfdotElem, elemText: bfdotElemText,
	})
	storeTile(g, t, nv, w0, "R20")
}
