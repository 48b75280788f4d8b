package main

import (
	"bytes"
	"fmt"
)

// gemmTile is one register-tile shape: rows of x times cols output columns.
type gemmTile struct{ rows, cols int }

// gemmTiles lists the float32 tiles. A tile keeps rows×cols/4 accumulators,
// rows vectors of four x values (four steps of k) and one group of four
// weight vectors in the 32 vector registers: rows·(cols/4+1)+4 ≤ 32.
// The 1x64 tile gives a matrix-vector product sixteen independent FMA
// chains, enough to cover the FMLA latency of every core.
func gemmTiles() []gemmTile {
	var t []gemmTile
	for r := 1; r <= 5; r++ {
		t = append(t, gemmTile{r, 16})
	}
	for r := 1; r <= 3; r++ {
		t = append(t, gemmTile{r, 32})
	}
	return append(t, gemmTile{1, 64})
}

func gemmName(bf16 bool, t gemmTile) string {
	dt := "F32"
	if bf16 {
		dt = "BF16"
	}
	return fmt.Sprintf("gemm%sNEON_%dx%d", dt, t.rows, t.cols)
}

func genGEMM(g *gen) {
	for _, dt := range []struct {
		name string
		bf16 bool
		typ  string
	}{{"F32", false, "float32"}, {"BF16", true, "uint16"}} {
		head := fmt.Sprintf("\n// gemmTiles%s lists the generated %s tiles per kernel set.\n", dt.name, dt.typ) +
			fmt.Sprintf("var gemmTiles%s = map[impl][]gemmTile[%s]{\nimplNEON: {\n", dt.name, dt.typ)
		tileTable(g, head, "},\n}\n", func(t gemmTile) string { gemmKernel(g, dt.bf16, t); return gemmName(dt.bf16, t) })
	}
}

// tileTable generates every tile of gemmTiles with kernel, which returns
// the tile's name, and writes their table to the declarations: head, a
// {rows, cols, name} line per tile, tail.
func tileTable(g *gen, head, tail string, kernel func(t gemmTile) string) {
	var tab bytes.Buffer
	tab.WriteString(head)
	for _, t := range gemmTiles() {
		name := kernel(t)
		fmt.Fprintf(&tab, "{%d, %d, %s},\n", t.rows, t.cols, name)
	}
	tab.WriteString(tail)
	g.decl.Write(tab.Bytes())
}

// gemmKernel generates
//
//	func(a *float32, lda int, w *float32, wp int, k int, c *float32, ldc int, bias *float32)
//
// computing c[r·ldc+j] = Σ_k a[r·lda+k]·W[k][j] (+ bias[j]) for r < rows, j <
// cols, where W is stored in 32-column panels [k][32] (panel stride wp
// elements) and w points at the tile's first column; lda, ldc and wp count
// elements. Tiles of 32 columns or more start at a panel's first column.
//
// The main loop takes four steps of k: one load of four x values per row,
// then per step a group of four weight vectors and FMLA by element (lane l
// of the x vector is step l), so each accumulator lane still sees its
// products in the order of k, each rounded once. The last k%4 steps
// broadcast single x values.
//
// With bf16 the weights are bfloat16 ([k][32] uint16 panels), widened
// exactly to float32 by interleaving them with zero halves (ZIP1/ZIP2
// against a zero register: the bfloat16 bits become the high half of each
// lane), so the products are those of the widened weights.
func gemmKernel(g *gen, bf16 bool, t gemmTile) {
	name := gemmName(bf16, t)
	wt, esz := "*float32", 4
	if bf16 {
		wt, esz = "*uint16", 2
	}
	g.text(name, "(a *float32, lda int, w "+wt+", wp int, k int, c *float32, ldc int, bias *float32)", 64,
		fmt.Sprintf("%s computes a %dx%d tile of x·Wᵀ from panel-packed weights.", name, t.rows, t.cols))
	nv := t.cols / 4
	groups := nv / 4
	acc := func(r, v int) int { return r*nv + v }
	xr := func(r int) int { return t.rows*nv + r }
	w0 := t.rows*nv + t.rows // first of the four weight registers
	zero := w0 + 4           // bf16: zero halves for widening
	if w0+4 > 32 || bf16 && zero >= 32 {
		panic(name + ": too many registers")
	}
	row := tileRow
	tilePointers(g, t, fmt.Sprintf("<<%d", esz/2), 32*esz)
	if bf16 {
		g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", zero)
	}
	g.i("MOVD k+32(FP), R4")
	g.i("LSR $2, R4, R15")
	g.i("AND $3, R4, R19")
	for r := 0; r < t.rows; r++ {
		for v := 0; v < nv; v++ {
			g.i("VEOR V%d.B16, V%[1]d.B16, V%[1]d.B16", acc(r, v))
		}
	}
	wregs := fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", w0, w0+1, w0+2, w0+3)
	dst := wregs
	if bf16 {
		// The 16 bfloat16 weights land in the upper two registers and
		// are widened downwards: each raw register is read before it is
		// overwritten.
		dst = fmt.Sprintf("[V%d.H8, V%d.H8]", w0+2, w0+3)
	}
	loadGroup := func(q int) {
		switch {
		case t.cols == 16:
			g.i("VLD1.P (R2)(R8), %s", dst)
		case q*16 < 32:
			g.i("VLD1.P %d(R2), %s", 16*esz, dst)
		default:
			g.i("VLD1.P %d(R9), %s", 16*esz, dst)
		}
		if bf16 {
			for i, src := range []int{w0 + 2, w0 + 2, w0 + 3, w0 + 3} {
				op := "VZIP1"
				if i%2 == 1 {
					op = "VZIP2"
				}
				g.i("%s V%d.H8, V%d.H8, V%d.H8", op, src, zero, w0+i)
			}
		}
	}
	g.i("CBZ R15, tail")
	g.i("loop4:")
	for r := 0; r < t.rows; r++ {
		g.i("VLD1.P 16(%s), [V%d.S4]", row(r), xr(r))
	}
	for l := 0; l < 4; l++ {
		for q := 0; q < groups; q++ {
			loadGroup(q)
			for r := 0; r < t.rows; r++ {
				for v := 0; v < 4; v++ {
					d := acc(r, 4*q+v)
					g.word(fmlaElemS(d, w0+v, xr(r), l), fmlaElemSText(d, w0+v, xr(r), l))
				}
			}
		}
	}
	g.i("SUB $1, R15, R15")
	g.i("CBNZ R15, loop4")
	g.i("tail:")
	g.i("CBZ R19, done")
	g.i("loop1:")
	for r := 0; r < t.rows; r++ {
		g.i("VLD1R.P 4(%s), [V%d.S4]", row(r), xr(r))
	}
	for q := 0; q < groups; q++ {
		loadGroup(q)
		for r := 0; r < t.rows; r++ {
			for v := 0; v < 4; v++ {
				g.i("VFMLA V%d.S4, V%d.S4, V%d.S4", w0+v, xr(r), acc(r, 4*q+v))
			}
		}
	}
	g.i("SUB $1, R19, R19")
	g.i("CBNZ R19, loop1")
	g.i("done:")
	storeTile(g, t, nv, w0, "R20")
}

// storeTile ends a tile kernel whose accumulators (rows × nv vectors,
// register r·nv+v) hold the sums: adds the bias (loaded in groups of four
// vectors into V(w0)…V(w0+3)) if the bias pointer is not nil, stores each
// row at c + r·ldc through the scratch register tmp, and returns.
func storeTile(g *gen, t gemmTile, nv, w0 int, tmp string) {
	groups := nv / 4
	acc := func(r, v int) int { return r*nv + v }
	wregs := fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", w0, w0+1, w0+2, w0+3)
	g.i("MOVD bias+56(FP), R7")
	g.i("CBZ R7, nobias")
	for q := 0; q < groups; q++ {
		g.i("VLD1.P 64(R7), %s", wregs)
		for r := 0; r < t.rows; r++ {
			for v := 0; v < 4; v++ {
				d := acc(r, 4*q+v)
				g.word(sameS(opFADD, d, d, w0+v), sameSText(opFADD, d, d, w0+v))
			}
		}
	}
	g.i("nobias:")
	g.i("MOVD c+40(FP), R5")
	g.i("MOVD ldc+48(FP), R6")
	g.i("LSL $2, R6, R6")
	for r := 0; r < t.rows; r++ {
		g.i("MOVD R5, %s", tmp)
		for q := 0; q < groups; q++ {
			a := acc(r, 4*q)
			g.i("VST1.P [V%d.S4, V%d.S4, V%d.S4, V%d.S4], 64(%s)", a, a+1, a+2, a+3, tmp)
		}
		if r < t.rows-1 {
			g.i("ADD R6, R5, R5")
		}
	}
	g.i("RET")
}

// tileRow names the register that walks row r of a tile's x: R10, R11, ….
func tileRow(r int) string { return fmt.Sprintf("R%d", 10+r) }

// tilePointers emits the prologue every Linear tile shares (float32,
// bfloat16, SDOT and BFDOT): the x row pointers tileRow(r) (lda counts
// 4-byte words), the weight pointer R2, for tiles wider than one 32-column
// panel the next panel's pointer R9 = R2 + wp<<shift (wpShift: "" when wp
// counts bytes, "<<1" or "<<2" for 2- or 4-byte elements), and for
// 16-column tiles R8 = rowBytes, the step over one panel row (the tile
// skips the panel's other half).
func tilePointers(g *gen, t gemmTile, wpShift string, rowBytes int) {
	g.i("MOVD a+0(FP), R10")
	g.i("MOVD lda+8(FP), R1")
	g.i("LSL $2, R1, R1")
	for r := 1; r < t.rows; r++ {
		g.i("ADD R1, %s, %s", tileRow(r-1), tileRow(r))
	}
	g.i("MOVD w+16(FP), R2")
	if t.cols > 32 {
		g.i("MOVD wp+24(FP), R3")
		g.i("ADD R3%s, R2, R9", wpShift)
	}
	if t.cols == 16 {
		g.i("MOVD $%d, R8", rowBytes)
	}
}
