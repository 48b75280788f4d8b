package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strconv"
)

// erfCoefPath is the file the amd64 generator writes GELUErf's polynomial
// to (run before this one by package tensor's go:generate lines; the
// working directory is _asm): the NEON kernel takes the coefficients from
// there, so that both architectures use the very same float32 values.
var erfCoefPath = flag.String("erfcoef", "../erf_coef.go", "read geluErfCoef from this file")

// readErfCoef returns the elements of the geluErfCoef array literal in the
// Go file at path.
func readErfCoef(path string) ([]float32, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []float32
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "geluErfCoef" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			bad = fmt.Errorf("geluErfCoef is not a composite literal")
			return false
		}
		for _, e := range lit.Elts {
			sign := 1.0
			if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
				sign, e = -1, u.X
			}
			b, ok := e.(*ast.BasicLit)
			if !ok {
				bad = fmt.Errorf("geluErfCoef element %T", e)
				return false
			}
			v, err := strconv.ParseFloat(b.Value, 32)
			if err != nil {
				bad = err
				return false
			}
			out = append(out, float32(sign*v))
		}
		return false
	})
	if bad == nil && len(out) == 0 {
		bad = fmt.Errorf("no geluErfCoef in %s", path)
	}
	return out, bad
}

// geluErfNEON generates func(x *float32, n int): x[i] = GELUErf(x[i]) for
// i < n, n a multiple of 4, lane by lane the operations of geluErf1 in
// ../../ops.go (and of the amd64 kernels, ../erf.go):
//
//	z = min(|x|·(1/√2), 10) (NaN kept)   r = 1/(z+2)   u = (2−z)·r   t = r+r
//	p = P(u) by fused Horner steps   p = fma(−x, x·½, p)
//	h = (exp32(p)·t)·½   x < 0 ? x·h : x·(1−h)
func geluErfNEON(g *gen, coef []float32) {
	name := "geluErfNEON"
	g.text(name, "(x *float32, n int)", 16, name+" applies the exact GELU x·Φ(x) in float32 to x[i], i < n, n a multiple of 4.")
	e := &expRegs{lo: 16, log2e: 17, magic: 18, ln2hi: 19, ln2lo: 20, bias: 21, zero: 22, c: [2]int{23, 24}}
	pack := []int{25, 26, 27, 28}
	if len(coef) > 4*len(pack) {
		panic(fmt.Sprintf("%d GELU coefficients", len(coef)))
	}
	const (
		absmask, invsqrt2, zmax = 29, 30, 31
		one, two, half          = 12, 13, 14
	)
	w := func(op uint32, d, n, m int) { g.word(sameS(op, d, n, m), sameSText(op, d, n, m)) }
	g.i("MOVD x+0(FP), R0")
	g.i("MOVD n+8(FP), R1")
	g.i("LSR $2, R1, R1")
	g.i("CBZ R1, end")
	loadExpConsts(g, e)
	packF32(g, pack, coef)
	dupF32(g, absmask, 0x7fffffff)
	dupF32(g, invsqrt2, math.Float32bits(float32(1/math.Sqrt2)))
	dupF32(g, zmax, math.Float32bits(10))
	dupF32(g, one, math.Float32bits(1))
	dupF32(g, two, math.Float32bits(2))
	dupF32(g, half, math.Float32bits(0.5))
	const (
		x, z, m, r, u, t, p, q, h = 0, 1, 2, 3, 4, 5, 6, 7, 8
	)
	g.i("loop:")
	g.i("VLD1 (R0), [V%d.S4]", x)
	g.i("VAND V%d.B16, V%d.B16, V%d.B16", absmask, x, z)
	w(opFMUL, z, z, invsqrt2)
	w(opFCMGT, m, z, zmax)                            // z > 10: false for NaN
	g.i("VBIT V%d.B16, V%d.B16, V%d.B16", m, zmax, z) // z = 10 there
	w(opFADD, r, z, two)                              // z + 2
	w(opFDIV, r, one, r)                              // r = 1/(z+2)
	w(opFSUB, u, two, z)                              // 2 − z
	w(opFMUL, u, u, r)                                // u = (2−z)·r
	w(opFADD, t, r, r)                                // t = r + r
	horner(g, pack, len(coef), u, p, q)               // p = P(u)
	w(opFMUL, h, x, half)                             // x·½
	g.i("VFMLS V%d.S4, V%d.S4, V%d.S4", h, x, p)      // p −= x·(x·½), fused
	exp32NEON(g, e, p, q, [4]int{z, m, r, u})         // q = exp32(p)
	w(opFMUL, q, q, t)                                // ·t
	w(opFMUL, q, q, half)                             // h = ·½
	w(opFMUL, h, x, q)                                // x·h
	w(opFSUB, q, one, q)                              // 1 − h
	w(opFMUL, q, x, q)                                // x·(1−h)
	w(opFCMGT, m, e.zero, x)                          // x < 0
	g.i("VBIT V%d.B16, V%d.B16, V%d.B16", m, h, q)    // x·h there
	g.i("VST1.P [V%d.S4], 16(R0)", q)
	g.i("SUB $1, R1, R1")
	g.i("CBNZ R1, loop")
	g.i("end:")
	g.i("RET")
}
