package main

import "fmt"

func i8Name(t gemmTile) string { return fmt.Sprintf("gemmI8NEON_%dx%d", t.rows, t.cols) }

// genInt8 writes the int8 tiles and their table (gemmTilesI8).
func genInt8(g *gen) {
	tileTable(g, "\n// gemmTilesI8 lists the generated int8 tiles (SDOT, FEAT_DotProd).\nvar gemmTilesI8 = []gemmTile[int8]{\n", "}\n",
		func(t gemmTile) string { i8Kernel(g, t); return i8Name(t) })
}

// i8Kernel generates the int8 tile of package tensor's int8 layout (see
// tensor/int8.go):
//
//	func(a *float32, lda int, w *int8, wp int, k int, c *float32, ldc int, bias *float32)
//
// a holds rows of lda 4-byte words: k groups of four bytes q+128, then the
// row's scale sx (float32 bits); w points at the tile's first column in a
// panel of k groups [32 columns][4 bytes], followed by the panel's trailer
// (32 corrections 128·Σq_w, then 32 scales sw); wp is the panel size in
// bytes. Per output
//
//	c = float32(float32(float32(Σ q_x·q_w) · sw) · sx) (+ bias)
//
// The amd64 kernels multiply the unsigned bytes q+128 (VPDPBUSD) and take
// the correction off; SDOT multiplies signed bytes, so the kernel flips
// the x bytes back to q (EOR 0x80) and needs no correction: the integer
// sum is the same, exactly, and so is everything after it. The loop is the
// float32 tile's: one 16-byte load of four x groups per row, SDOT by
// element per group.
func i8Kernel(g *gen, t gemmTile) {
	name := i8Name(t)
	g.text(name, "(a *float32, lda int, w *int8, wp int, k int, c *float32, ldc int, bias *float32)", 64,
		fmt.Sprintf("%s computes a %dx%d tile of an int8 Linear with SDOT.", name, t.rows, t.cols))
	nv, w0 := dotLoop(g, t, name, dotTile{
		wArr: "S4", xArr: "B16", flip: true,
		elem: sdotElem, elemText: sdotElemText,
	})
	groups := nv / 4
	acc := func(r, v int) int { return r*nv + v }
	xr := func(r int) int { return t.rows*nv + r }
	row := tileRow
	wregs := fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", w0, w0+1, w0+2, w0+3)
	// The weight pointers now point at the trailers; the scales sw follow
	// the 32 corrections. The row pointers point at the scales sx.
	g.i("ADD $128, R2, R20")
	if t.cols > 32 {
		g.i("ADD $128, R9, R21")
	}
	for q := 0; q < groups; q++ {
		if q*16 < 32 {
			g.i("VLD1.P 64(R20), %s", wregs)
		} else {
			g.i("VLD1.P 64(R21), %s", wregs)
		}
		for r := 0; r < t.rows; r++ {
			for v := 0; v < 4; v++ {
				d := acc(r, 4*q+v)
				g.word(scvtfS(d, d), scvtfSText(d, d))
				g.word(sameS(opFMUL, d, d, w0+v), sameSText(opFMUL, d, d, w0+v))
			}
		}
	}
	for r := 0; r < t.rows; r++ {
		g.i("VLD1R (%s), [V%d.S4]", row(r), xr(r))
		for v := 0; v < nv; v++ {
			d := acc(r, v)
			g.word(sameS(opFMUL, d, d, xr(r)), sameSText(opFMUL, d, d, xr(r)))
		}
	}
	storeTile(g, t, nv, w0, "R22")
}
