package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// prefetchDist is how far ahead (bytes) the GEMM kernels prefetch weights.
const prefetchDist = 2048

// gemmTile is one register-tile shape: rows of x times cols output columns.
type gemmTile struct{ rows, cols int }

// gemmTiles lists the tiles generated per ISA. Each kernel computes every
// output element as the same single FMA chain over k (from zero, in order),
// so all tiles give bit-identical results and the driver may mix them freely.
func gemmTiles(is isa) []gemmTile {
	var t []gemmTile
	if is.lanes == 16 {
		for r := 1; r <= 8; r++ {
			t = append(t, gemmTile{r, 32})
		}
		for r := 1; r <= 6; r++ {
			t = append(t, gemmTile{r, 64})
		}
		for r := 1; r <= 2; r++ {
			t = append(t, gemmTile{r, 128})
		}
		return t
	}
	for r := 1; r <= 6; r++ {
		t = append(t, gemmTile{r, 16})
	}
	for r := 1; r <= 2; r++ {
		t = append(t, gemmTile{r, 32})
	}
	// One row over two panels: eight independent FMA chains, so that a
	// matrix-vector product is not bound by the FMA latency (the four
	// chains of 1x32 allow one k step per latency).
	t = append(t, gemmTile{1, 64})
	return t
}

// GemmName is the kernel name of a tile.
func gemmName(is isa, bf16 bool, t gemmTile) string {
	dt := "F32"
	if bf16 {
		dt = "BF16"
	}
	return fmt.Sprintf("gemm%s%s_%dx%d", dt, is.name, t.rows, t.cols)
}

func genGEMM(is isa) {
	for _, bf16 := range []bool{false, true} {
		for _, t := range gemmTiles(is) {
			gemmKernel(is, bf16, t)
		}
	}
}

// gemmKernel generates
//
//	func(a *float32, lda int, w *T, wp int, k int, c *float32, ldc int, bias *float32)
//
// computing c[r][j] = Σ_k a[r·lda+k]·W[k][j] (+ bias[j]) for r < rows, j < cols,
// where W is stored in 32-column panels [k][32] (panel stride wp elements) and
// w points at the first column of the tile. lda, ldc and wp count elements.
func gemmKernel(is isa, bf16 bool, t gemmTile) {
	wt, esz := "*float32", 4
	if bf16 {
		wt, esz = "*uint16", 2
	}
	name := gemmName(is, bf16, t)
	TEXT(name, NOSPLIT, "func(a *float32, lda int, w "+wt+", wp int, k int, c *float32, ldc int, bias *float32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes a %dx%d tile of x·Wᵀ from panel-packed weights.", name, t.rows, t.cols))

	nv := t.cols / is.lanes
	npan := (t.cols + 31) / 32
	pairs := bf16 && is.lanes == 8
	var hiMask Mem
	if pairs {
		hiMask = consts32For(is).get("bf16hi")
	}

	lda := Load(Param("lda"), GP64())
	SHLQ(U8(2), lda)
	rows := make([]Register, t.rows)
	rows[0] = Load(Param("a"), GP64())
	for r := 1; r < t.rows; r++ {
		rows[r] = GP64()
		LEAQ(Mem{Base: rows[r-1], Index: lda, Scale: 1}, rows[r])
	}
	wptr := make([]Register, npan)
	wptr[0] = Load(Param("w"), GP64())
	if npan > 1 {
		wp := Load(Param("wp"), GP64())
		if bf16 {
			SHLQ(U8(1), wp)
		} else {
			SHLQ(U8(2), wp)
		}
		for q := 1; q < npan; q++ {
			wptr[q] = GP64()
			LEAQ(Mem{Base: wptr[q-1], Index: wp, Scale: 1}, wptr[q])
		}
	}
	kk := Load(Param("k"), GP64())
	idx := GP64()
	XORQ(idx, idx)

	acc := make([][]VecVirtual, t.rows)
	for r := range acc {
		acc[r] = make([]VecVirtual, nv)
		for v := range acc[r] {
			acc[r][v] = is.vec()
			is.zero(acc[r][v])
		}
	}

	loop, done, nobias := name+"_loop", name+"_done", name+"_nobias"
	Label(loop)
	CMPQ(idx, kk)
	JGE(LabelRef(done))
	// widen loads 16 bf16 columns at m with one 32-byte load (AVX2): the
	// even columns widen with a shift, the odd ones with a mask.
	widen := func(m Mem) (ev, od VecVirtual) {
		ev, od = is.vec(), is.vec()
		VMOVDQU(m, ev)
		VPAND(hiMask, ev, od)
		VPSLLD(U8(16), ev, ev)
		return ev, od
	}
	wv := make([]VecVirtual, nv)
	fused := t.rows == 1 && is.lanes == 8
	if fused {
		// One row (AVX2): broadcast first, then each block's weights
		// straight into its FMAs, so that wide tiles (1x64: eight
		// accumulators) fit in sixteen registers.
		b := is.vec()
		VBROADCASTSS(Mem{Base: rows[0], Index: idx, Scale: 4}, b)
		for q := 0; q < nv/2; q++ {
			col := q * 16
			m := mem(wptr[col/32], (col%32)*esz)
			if !bf16 {
				VFMADD231PS(m, b, acc[0][2*q])
				VFMADD231PS(mem(wptr[col/32], (col%32+8)*esz), b, acc[0][2*q+1])
				continue
			}
			ev, od := widen(m)
			VFMADD231PS(ev, b, acc[0][2*q])
			VFMADD231PS(od, b, acc[0][2*q+1])
		}
	} else if pairs {
		// AVX2 bf16: accumulator 2q holds block q's even columns and
		// 2q+1 its odd ones (interleaved back before the store). Two ALU
		// operations per 16 weights instead of two zero-extensions and two
		// shifts.
		for q := 0; q < nv/2; q++ {
			col := q * 16
			wv[2*q], wv[2*q+1] = widen(mem(wptr[col/32], (col%32)*esz))
		}
	} else {
		for v := range wv {
			wv[v] = is.vec()
			col := v * is.lanes
			m := mem(wptr[col/32], (col%32)*esz)
			if bf16 {
				VPMOVZXWD(m, wv[v])
				VPSLLD(U8(16), wv[v], wv[v])
			} else {
				VMOVUPS(m, wv[v])
			}
		}
	}
	for r := 0; r < t.rows && !fused; r++ {
		b := is.vec()
		VBROADCASTSS(Mem{Base: rows[r], Index: idx, Scale: 4}, b)
		for v := 0; v < nv; v++ {
			VFMADD231PS(wv[v], b, acc[r][v])
		}
	}
	// Software prefetch of the weight stream: hides DRAM latency when the
	// tile is compute-bound enough that the hardware prefetcher falls behind.
	for q := range wptr {
		for off := 0; prefetchDist > 0 && off < 32*esz; off += 64 {
			PREFETCHT0(mem(wptr[q], prefetchDist+off))
		}
		ADDQ(U32(32*esz), wptr[q])
	}
	INCQ(idx)
	JMP(LabelRef(loop))

	Label(done)
	if pairs {
		// Put the columns back in order: per 128-bit lane, unpack
		// interleaves (even, odd) pairs, then the lanes are regrouped.
		for r := range acc {
			for q := 0; q < nv/2; q++ {
				ev, od := acc[r][2*q], acc[r][2*q+1]
				lo, hi := is.vec(), is.vec()
				VUNPCKLPS(od, ev, lo) // columns 0-3 | 8-11 of the block
				VUNPCKHPS(od, ev, hi) // columns 4-7 | 12-15
				VPERM2F128(U8(0x20), hi, lo, ev)
				VPERM2F128(U8(0x31), hi, lo, od)
			}
		}
	}
	bias := Load(Param("bias"), GP64())
	TESTQ(bias, bias)
	JZ(LabelRef(nobias))
	for r := range acc {
		for v := range acc[r] {
			VADDPS(mem(bias, v*is.lanes*4), acc[r][v], acc[r][v])
		}
	}
	Label(nobias)
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	for r := range acc {
		for v := range acc[r] {
			VMOVUPS(acc[r][v], mem(c, v*is.lanes*4))
		}
		if r < t.rows-1 {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}
