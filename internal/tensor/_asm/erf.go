package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"math"
	"os"

	"nanovoxtensorasm/exp32"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// GELU with the exact erf, y = x·Φ(x), Φ(x) = ½·erfc(−x/√2), in float32.
// With z = min(|x|/√2, 10), r = 1/(2+z), u = (2−z)·r ∈ (−1, 1] and t = 2r =
// 1/(1+z/2):
//
//	erfc(z) = t · exp(P(u) − x²/2)
//
// where P is a degree-12 polynomial, the Chebyshev interpolant in u of
// ln(erfc(z)/t) + z² (smooth on the whole half line; relative error of the
// erfc < 7e-9), evaluated by Horner with FMAs on float32 coefficients;
// −x²/2 joins P(u) in one fused step, exp is exp32 of the softmax kernels;
// Φ = ½·erfc(z) for x < 0 and 1 − ½·erfc(z) otherwise. Every step is an
// IEEE float32 operation, so the SIMD kernels and the Go mirror (geluErf1 in
// ../ops.go, with the coefficients written to ../erf_coef.go) agree bit for
// bit. Error: within 1.2e-7·max(|y|, 1) everywhere; within 3 ulp for 99.98%
// of inputs above −3 (7 ulp at worst), with relative errors growing in the
// far negative tail where y is tiny (x²/2 is rounded to float32 there).

const geluDegree = 12

// geluZMax bounds z: past it ½·erfc(z) is far below the smallest float32,
// and the bound keeps z = +Inf from making u NaN.
const geluZMax = 10

// geluErfFunc is ln(erfc(z)/t) + z² as a function of u (t = (1+u)/2,
// z = 2(1−u)/(1+u)), in float64, with the asymptotic series of erfc where
// math.Erfc underflows.
func geluErfFunc(u float64) float64 {
	t := (1 + u) / 2
	if t == 0 {
		return math.Log(1 / (2 * math.SqrtPi))
	}
	z := 2 * (1 - t) / t
	if z > 25 {
		w := 1 / (2 * z * z)
		s, term := 1.0, 1.0
		for k := 1; k <= 7; k++ {
			term *= -float64(2*k-1) * w
			s += term
		}
		return math.Log(s / (z * math.SqrtPi) / t)
	}
	return math.Log(math.Erfc(z)/t) + z*z
}

// geluErfCoef returns the monomial coefficients in u of the Chebyshev
// interpolant of geluErfFunc at degree geluDegree, rounded to float32.
func geluErfCoef() []float32 {
	n := geluDegree + 1
	cheb := make([]float64, n)
	for j := range cheb {
		var s float64
		for k := range n {
			th := math.Pi * (float64(k) + 0.5) / float64(n)
			s += geluErfFunc(math.Cos(th)) * math.Cos(float64(j)*th)
		}
		cheb[j] = 2 * s / float64(n)
	}
	cheb[0] /= 2
	// T_0 = 1, T_1 = u, T_j = 2u·T_{j−1} − T_{j−2}, as monomial coefficients.
	mono := make([]float64, n)
	prev, cur := []float64{1}, []float64{0, 1}
	for j := range n {
		var tj []float64
		switch j {
		case 0:
			tj = prev
		case 1:
			tj = cur
		default:
			next := make([]float64, j+1)
			for i, v := range cur {
				next[i+1] += 2 * v
			}
			for i, v := range prev {
				next[i] -= v
			}
			prev, cur = cur, next
			tj = next
		}
		for i, v := range tj {
			mono[i] += cheb[j] * v
		}
	}
	out := make([]float32, n)
	for i, v := range mono {
		out[i] = float32(v)
	}
	return out
}

// writeErfCoef writes the Go copy of the coefficients.
func writeErfCoef(path string) {
	var b bytes.Buffer
	b.WriteString(header + "package tensor\n\n")
	b.WriteString("// geluErfCoef are the float32 coefficients, in powers of u, of the\n// polynomial P(u) of GELUErf: erfc(z) = t·exp(P(u) − x²/2).\n")
	fmt.Fprintf(&b, "var geluErfCoef = [%d]float32{\n", geluDegree+1)
	for _, v := range geluErfCoef() {
		fmt.Fprintf(&b, "%v,\n", v)
	}
	b.WriteString("}\n\n")
	b.WriteString("// geluErfPoly is P(u) by Horner's rule in fused steps, highest power\n// first: the operations of geluErf1's loop over geluErfCoef.\n")
	writeHorner(&b, "geluErfPoly", "u", geluErfCoef())
	writeGoSource(path, &b)
}

// writeHorner writes func name(arg float32) float32: the polynomial with
// coefficients c (in increasing powers) by Horner's rule in fused steps,
// highest power first, the coefficients as constants. It serves the builds
// where fma32 is the compiler's fused instruction: gc on amd64 folds an
// addend loaded from a coefficient table into a plain add instead of
// fusing, while a constant stays in a register.
func writeHorner(b *bytes.Buffer, name, arg string, c []float32) {
	fmt.Fprintf(b, "func %s(%s float32) float32 {\n", name, arg)
	fmt.Fprintf(b, "p := float32(%v)\n", c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		fmt.Fprintf(b, "p = fma32(p, %s, %v)\n", arg, c[i])
	}
	b.WriteString("return p\n}\n")
}

// writeGoSource formats b and writes it to path.
func writeGoSource(path string, b *bytes.Buffer) {
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// writeExp32Coef writes exp32's constants, its polynomial's coefficients
// and that polynomial as a Go function, from package exp32, for the
// portable exp32 in window.go.
func writeExp32Coef(path string) {
	var b bytes.Buffer
	b.WriteString(header + "package tensor\n\n")
	b.WriteString("// Constants of exp32, the kernels' (_asm/exp32).\nconst (\n")
	fmt.Fprintf(&b, "exp32Lo = %v // float32(ln 2⁻¹²⁶)\n", float64(exp32.Lo))
	fmt.Fprintf(&b, "log2e32 = %v\n", float64(exp32.Log2e))
	fmt.Fprintf(&b, "magic32 = %v // 1.5·2²³\n", float64(exp32.Magic))
	fmt.Fprintf(&b, "ln2Hi32 = %v\n", float64(exp32.Ln2Hi))
	fmt.Fprintf(&b, "ln2Lo32 = %v\n", float64(exp32.Ln2Lo))
	fmt.Fprintf(&b, "exp32Terms = %d\n)\n\n", exp32.Terms)
	c := exp32.Coef()
	b.WriteString("// exp32Coef[i] = float32(1/i!).\n")
	fmt.Fprintf(&b, "var exp32Coef = [exp32Terms]float32{")
	for i, v := range c {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%v", v)
	}
	b.WriteString("}\n\n")
	b.WriteString("// exp32Poly is the Taylor polynomial of exp32 by Horner's rule in fused\n// steps: the operations of exp32's loop over exp32Coef.\n")
	writeHorner(&b, "exp32Poly", "r", c[:])
	writeGoSource(path, &b)
}

// addGELUConsts adds the float32 constants of geluErf.
func addGELUConsts(add func(string, uint32)) {
	addF := func(name string, v float32) { add(name, math.Float32bits(v)) }
	for i, v := range geluErfCoef() {
		addF(fmt.Sprintf("g%d", i), v)
	}
	add("absmask", 0x7fffffff)
	addF("invsqrt2", float32(1/math.Sqrt2))
	addF("one", 1)
	addF("two", 2)
	addF("half", 0.5)
	addF("zmax", geluZMax)
}

// geluErf generates func(x *float32, n int) applying x·Φ(x) in place.
func geluErf(is isa) {
	c := consts32For(is)
	L := is.lanes
	vb := 4 * L
	name := "geluerf" + is.name
	TEXT(name, NOSPLIT, "func(x *float32, n int)")
	Pragma("noescape")
	Doc(name + " applies the exact GELU x·Φ(x) in float32 to x[i], i < n, n a multiple of the vector width.")
	x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
	// u vectors at a time, their instructions interleaved (see gelutanh).
	body := func(u int) {
		vs := make([]VecVirtual, u)
		each := func(f func(i int)) {
			for i := range vs {
				f(i)
			}
		}
		each(func(i int) {
			vs[i] = is.vec()
			VMOVUPS(mem(x, i*vb), vs[i])
		})
		z := make([]VecVirtual, u)
		each(func(i int) {
			z[i] = is.vec()
			VANDPS(c.get("absmask"), vs[i], z[i])
		})
		each(func(i int) { VMULPS(c.get("invsqrt2"), z[i], z[i]) })
		zmax := is.vec()
		VMOVUPS(c.get("zmax"), zmax)
		each(func(i int) { VMINPS(z[i], zmax, z[i]) }) // keeps NaN; only stops +Inf from making u NaN
		r := make([]VecVirtual, u)
		each(func(i int) {
			r[i] = is.vec()
			VADDPS(c.get("two"), z[i], r[i])
		})
		one := is.vec()
		VMOVUPS(c.get("one"), one)
		each(func(i int) { VDIVPS(r[i], one, r[i]) }) // r = 1/(2+z)
		us := make([]VecVirtual, u)
		each(func(i int) {
			us[i] = is.vec()
			VMOVUPS(c.get("two"), us[i])
		})
		each(func(i int) { VSUBPS(z[i], us[i], us[i]) })
		each(func(i int) { VMULPS(r[i], us[i], us[i]) }) // u = (2−z)·r
		t := z                                           // z is dead: t = 2r
		each(func(i int) { VADDPS(r[i], r[i], t[i]) })
		p := make([]VecVirtual, u)
		each(func(i int) {
			p[i] = is.vec()
			VMOVUPS(c.get(fmt.Sprintf("g%d", geluDegree)), p[i])
		})
		for j := geluDegree - 1; j >= 0; j-- {
			each(func(i int) { VFMADD213PS(c.get(fmt.Sprintf("g%d", j)), us[i], p[i]) })
		}
		hx := make([]VecVirtual, u)
		each(func(i int) {
			hx[i] = is.vec()
			VMULPS(c.get("half"), vs[i], hx[i])
		})
		each(func(i int) { VFNMADD231PS(hx[i], vs[i], p[i]) }) // p − x·(x/2)
		e := is.exp32N(c, p)
		each(func(i int) { VMULPS(t[i], e[i], e[i]) })
		each(func(i int) { VMULPS(c.get("half"), e[i], e[i]) }) // ½·erfc(z)
		om := make([]VecVirtual, u)
		each(func(i int) {
			om[i] = is.vec()
			VSUBPS(e[i], one, om[i]) // 1 − ½·erfc(z)
		})
		zero := is.vec()
		is.zero(zero)
		each(func(i int) {
			phi := is.vec()
			if L == 16 {
				k := K()
				VCMPPS(U8(1), zero, vs[i], k) // x < 0
				VBLENDMPS(e[i], om[i], k, phi)
			} else {
				m := is.vec()
				VCMPPS(U8(1), zero, vs[i], m)
				VBLENDVPS(m, e[i], om[i], phi)
			}
			VMULPS(phi, vs[i], vs[i])
		})
		each(func(i int) { VMOVUPS(vs[i], mem(x, i*vb)) })
		ADDQ(U32(u*vb), x)
	}
	if u := is.geluUnroll(); u > 1 {
		loop(name+"_u", n, u*L, func() { body(u) })
	}
	loop(name, n, L, func() { body(1) })
	VZEROUPPER()
	RET()
}
