package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The float64 exponential shared by GELU and softmax. It must stay in step
// with exp64 in ../ops.go, which the Go code uses for tails and the portable
// path: t clamped to ±expClamp; n = round(t·log2e) with the 1.5·2⁵² trick;
// r = t − n·ln2 (two FMAs, Cody–Waite); Taylor polynomial of degree 13 by
// Horner with FMAs; times 2ⁿ built in the exponent bits.
const (
	expClamp = 700
	log2e    = 1.4426950408889634
	expMagic = 6755399441055744.0 // 1.5·2⁵²
	ln2Hi    = 6.93147180369123816490e-01
	ln2Lo    = 1.90821492927058770002e-10
	geluC    = 0.7978845608028654 // sqrt(2/pi)
	geluC3   = 0.044715
)

// expCoef[i] = 1/i!.
func expCoef() []float64 {
	c := make([]float64, 14)
	f := 1.0
	for i := range c {
		if i > 0 {
			f *= float64(i)
		}
		c[i] = 1 / f
	}
	return c
}

// consts is a table of float64 (or int64) constants, each repeated across a
// whole vector so that it can be a memory operand of any instruction.
type consts struct {
	is   isa
	mem  Mem
	off  map[string]int
	next int
}

func newConsts(is isa) *consts {
	c := &consts{is: is, off: map[string]int{}}
	c.mem = GLOBL("consts"+is.name, RODATA|NOPTR)
	add := func(name string, bits uint64) {
		c.off[name] = c.next
		for i := 0; i < is.lanes/2; i++ {
			DATA(c.next, U64(bits))
			c.next += 8
		}
	}
	addF := func(name string, v float64) { add(name, math.Float64bits(v)) }
	addF("lo", -expClamp)
	addF("hi", expClamp)
	addF("log2e", log2e)
	addF("magic", expMagic)
	addF("ln2hi", ln2Hi)
	addF("ln2lo", ln2Lo)
	for i, v := range expCoef() {
		addF(fmt.Sprintf("c%d", i), v)
	}
	add("bias1023", 1023)
	addF("one", 1)
	addF("gelu3", geluC3)
	addF("gelum2c", -2*geluC)
	return c
}

func (c *consts) get(name string) Mem {
	o, ok := c.off[name]
	if !ok {
		panic("no constant " + name)
	}
	return c.mem.Offset(o)
}

var constTables = map[string]*consts{}

func constsFor(is isa) *consts {
	if c, ok := constTables[is.name]; ok {
		return c
	}
	c := newConsts(is)
	constTables[is.name] = c
	return c
}

// f64 returns a vector register holding lanes/2 float64 values.
func (is isa) f64() VecVirtual { return is.vec() }

// half returns a register for lanes/2 float32 values (the float32 side of
// one float64 vector).
func (is isa) half() VecVirtual {
	if is.lanes == 16 {
		return YMM()
	}
	return XMM()
}

// widenHalf returns half h (0: low lanes, 1: high) of float32 vector v
// as a float64 vector.
func (is isa) widenHalf(v VecVirtual, h int) VecVirtual {
	t, half := is.f64(), is.half()
	switch {
	case h == 0 && is.lanes == 16:
		VMOVAPS(v.AsY(), half)
	case h == 0:
		VMOVAPS(v.AsX(), half)
	case is.lanes == 16:
		VEXTRACTF64X4(U8(1), v, half)
	default:
		VEXTRACTF128(U8(1), v, half)
	}
	VCVTPS2PD(half, t)
	return t
}

// cvtStore rounds float64 vector v to float32 and stores it at m.
func (is isa) cvtStore(v VecVirtual, m Mem) {
	h := is.half()
	if is.lanes == 16 {
		VCVTPD2PS(v, h)
	} else {
		VCVTPD2PSY(v, h)
	}
	VMOVUPS(h, m)
}

// geluUnroll is how many vectors the GELU kernels process at a time: as
// many as the registers hold (four with AVX-512's 32, two with AVX2's 16;
// measured on Zen 5, BenchmarkOps/GELU*: one vector at a time left the
// kernels waiting on their ≈ 25-deep chains of dependent operations).
func (is isa) geluUnroll() int {
	if is.regs >= 32 {
		return 4
	}
	return 2
}

// clamp bounds t to [lo, hi] keeping NaN: the variable is the second
// (NaN-returning) source of VMAXPD/VMINPD.
func (is isa) clamp(c *consts, t VecVirtual) { is.clampN(c, []VecVirtual{t}) }

// clampN is clamp of several independent vectors, instruction by
// instruction interleaved.
func (is isa) clampN(c *consts, ts []VecVirtual) {
	b := is.f64()
	VMOVUPD(c.get("lo"), b)
	for _, t := range ts {
		VMAXPD(t, b, t)
	}
	VMOVUPD(c.get("hi"), b)
	for _, t := range ts {
		VMINPD(t, b, t)
	}
}

// exp returns exp(t) (t already clamped), clobbering t.
func (is isa) exp(c *consts, t VecVirtual) VecVirtual { return is.expN(c, []VecVirtual{t})[0] }

// expN is exp of several independent vectors, instruction by instruction
// interleaved so that their dependency chains overlap (each vector's
// operations, and so its bits, are exp's).
func (is isa) expN(c *consts, ts []VecVirtual) []VecVirtual {
	k := len(ts)
	y, n, p := make([]VecVirtual, k), make([]VecVirtual, k), make([]VecVirtual, k)
	for i := range ts {
		y[i], n[i], p[i] = is.f64(), is.f64(), is.f64()
	}
	each := func(f func(i int)) {
		for i := range ts {
			f(i)
		}
	}
	each(func(i int) { VMULPD(c.get("log2e"), ts[i], y[i]) })
	each(func(i int) { VADDPD(c.get("magic"), y[i], y[i]) })
	each(func(i int) { VSUBPD(c.get("magic"), y[i], n[i]) })
	each(func(i int) { VFNMADD231PD(c.get("ln2hi"), n[i], ts[i]) })
	each(func(i int) { VFNMADD231PD(c.get("ln2lo"), n[i], ts[i]) })
	each(func(i int) { VMOVUPD(c.get("c13"), p[i]) })
	for j := 12; j >= 0; j-- {
		each(func(i int) { VFMADD213PD(c.get(fmt.Sprintf("c%d", j)), ts[i], p[i]) })
	}
	each(func(i int) { VPSUBQ(c.get("magic"), y[i], y[i]) })
	each(func(i int) { VPADDQ(c.get("bias1023"), y[i], y[i]) })
	each(func(i int) { VPSLLQ(U8(52), y[i], y[i]) })
	each(func(i int) { VMULPD(y[i], p[i], p[i]) })
	return p
}

// reduceF64 sums the lanes of float64 vector v in a fixed order and returns
// the scalar in the low lane of an xmm register.
// shiftedExp loads the u vectors at x, subtracts the broadcast shift sh,
// widens each half to float64, clamps it and returns its exp (the front
// end expsum and exp64v share): 2u float64 vectors in the order of the
// elements.
func (is isa) shiftedExp(c *consts, x Register, sh VecVirtual, u int) []VecVirtual {
	var ts []VecVirtual
	for i := range u {
		d := is.vec()
		VMOVUPS(mem(x, i*is.lanes*4), d)
		VSUBPS(sh, d, d)
		for h := range 2 {
			ts = append(ts, is.widenHalf(d, h))
		}
	}
	is.clampN(c, ts)
	return is.expN(c, ts)
}

func (is isa) reduceF64(v VecVirtual) VecVirtual {
	var y VecVirtual
	if is.lanes == 16 {
		y = YMM()
		VEXTRACTF64X4(U8(1), v, y)
		VADDPD(v.AsY(), y, y)
	} else {
		y = v
	}
	x := XMM()
	VEXTRACTF128(U8(1), y, x)
	VADDPD(y.AsX(), x, x)
	h := XMM()
	VUNPCKHPD(x, x, h)
	VADDSD(h, x, x)
	return x
}

// reduceF32 sums the lanes of float32 vector v with the fixed pairwise tree
// (lane l + lane l+half, recursively) that the blocked attention scores use
// too, and returns the scalar in the low lane of an xmm register.
func (is isa) reduceF32(v VecVirtual) VecVirtual {
	var y VecVirtual
	if is.lanes == 16 {
		y = YMM()
		VEXTRACTF64X4(U8(1), v, y)
		VADDPS(v.AsY(), y, y)
	} else {
		y = v
	}
	x := XMM()
	VEXTRACTF128(U8(1), y, x)
	VADDPS(y.AsX(), x, x)
	h := XMM()
	VMOVHLPS(x, x, h)
	VADDPS(h, x, x)
	VMOVSHDUP(x, h)
	VADDSS(h, x, x)
	return x
}

// loop emits `for n >= step { body; n -= step }` over a counter register.
func loop(name string, n Register, step int, body func()) {
	top, end := name+"_top", name+"_end"
	Label(top)
	CMPQ(n, U32(step))
	JL(LabelRef(end))
	body()
	SUBQ(U32(step), n)
	JMP(LabelRef(top))
	Label(end)
}

// streamLoops emits the loops of an elementwise kernel over n floats (a
// multiple of the vector width): four vectors per round while they last,
// then one; step(u) does vector u of a round and the pointers ptrs advance
// after each round.
func (is isa) streamLoops(name string, n Register, ptrs []Register, step func(u int)) {
	vb := 4 * is.lanes
	adv := func(k int) {
		for _, r := range ptrs {
			ADDQ(U32(k*vb), r)
		}
	}
	loop(name+"4", n, 4*is.lanes, func() {
		for u := range 4 {
			step(u)
		}
		adv(4)
	})
	loop(name+"1", n, is.lanes, func() { step(0); adv(1) })
}

func genVector(is isa) {
	geluErf(is)
	c := constsFor(is)
	L := is.lanes
	vb := L * 4 // bytes of one float32 vector

	// add: y += x over n (a multiple of lanes).
	{
		name := "add" + is.name
		TEXT(name, NOSPLIT, "func(y, x *float32, n int)")
		Pragma("noescape")
		Doc(name + " computes y[i] += x[i] for i < n, n a multiple of the vector width.")
		y, x, n := Load(Param("y"), GP64()), Load(Param("x"), GP64()), Load(Param("n"), GP64())
		is.streamLoops(name, n, []Register{y, x}, func(u int) {
			v := is.vec()
			VMOVUPS(mem(y, u*vb), v)
			VADDPS(mem(x, u*vb), v, v)
			VMOVUPS(v, mem(y, u*vb))
		})
		VZEROUPPER()
		RET()
	}

	// scale: y *= a; axpy: y += a·x (multiply, then add: no fusion).
	for _, axpy := range []bool{false, true} {
		name, sig := "scale"+is.name, "func(y *float32, a float32, n int)"
		if axpy {
			name, sig = "axpy"+is.name, "func(y *float32, a float32, x *float32, n int)"
		}
		TEXT(name, NOSPLIT, sig)
		Pragma("noescape")
		if axpy {
			Doc(name + " computes y[i] += a·x[i] for i < n, n a multiple of the vector width.")
		} else {
			Doc(name + " computes y[i] *= a for i < n, n a multiple of the vector width.")
		}
		y, n := Load(Param("y"), GP64()), Load(Param("n"), GP64())
		var x Register
		if axpy {
			x = Load(Param("x"), GP64())
		}
		a := is.vec()
		VBROADCASTSS(NewParamAddr("a", 8), a)
		ptrs := []Register{y}
		if axpy {
			ptrs = append(ptrs, x)
		}
		is.streamLoops(name, n, ptrs, func(u int) {
			v := is.vec()
			if axpy {
				VMULPS(mem(x, u*vb), a, v)
				VADDPS(mem(y, u*vb), v, v)
			} else {
				VMULPS(mem(y, u*vb), a, v)
			}
			VMOVUPS(v, mem(y, u*vb))
		})
		VZEROUPPER()
		RET()
	}

	// ropePairs: x[2i], x[2i+1] = x[2i]·c[2i] + x[2i+1]·s[2i],
	// x[2i+1]·c[2i+1] + x[2i]·s[2i+1] (products rounded, then added), the
	// pair angles c, s of one head (n values) applied to every head.
	{
		name := "ropePairs" + is.name
		TEXT(name, NOSPLIT, "func(x, c, s *float32, n, heads int)")
		Pragma("noescape")
		Doc(name + " rotates the interleaved pairs of heads vectors of n values (a multiple of the vector width) by the pair angles c, s.")
		x, heads := Load(Param("x"), GP64()), Load(Param("heads"), GP64())
		loop(name+"_head", heads, 1, func() {
			c, s, n := Load(Param("c"), GP64()), Load(Param("s"), GP64()), Load(Param("n"), GP64())
			loop(name+"_vec", n, L, func() {
				v, sw, t := is.vec(), is.vec(), is.vec()
				VMOVUPS(mem(x, 0), v)
				VPERMILPS(U8(0xB1), v, sw) // swap each pair
				VMULPS(mem(c, 0), v, t)
				VMULPS(mem(s, 0), sw, sw)
				VADDPS(sw, t, t)
				VMOVUPS(t, mem(x, 0))
				for _, r := range []Register{x, c, s} {
					ADDQ(U32(vb), r)
				}
			})
		})
		VZEROUPPER()
		RET()
	}

	// addMul: y += s ⊙ x (multiply, then add: no fusion).
	{
		name := "addMul" + is.name
		TEXT(name, NOSPLIT, "func(y, s, x *float32, n int)")
		Pragma("noescape")
		Doc(name + " computes y[i] += s[i]·x[i] (the product rounded) for i < n, n a multiple of the vector width.")
		y, s, x, n := Load(Param("y"), GP64()), Load(Param("s"), GP64()), Load(Param("x"), GP64()), Load(Param("n"), GP64())
		is.streamLoops(name, n, []Register{y, s, x}, func(u int) {
			v := is.vec()
			VMOVUPS(mem(s, u*vb), v)
			VMULPS(mem(x, u*vb), v, v)
			VADDPS(mem(y, u*vb), v, v)
			VMOVUPS(v, mem(y, u*vb))
		})
		VZEROUPPER()
		RET()
	}

	// dot: Σ a[i]·b[i]: four FMA accumulators over blocks of four vectors,
	// then single vectors into the first, then (a0+a1)+(a2+a3) and the lane tree.
	{
		name := "dot" + is.name
		TEXT(name, NOSPLIT, "func(a, b *float32, n int) float32")
		Pragma("noescape")
		Doc(name + " returns Σ a[i]·b[i] for i < n, n a multiple of the vector width.")
		a, b, n := Load(Param("a"), GP64()), Load(Param("b"), GP64()), Load(Param("n"), GP64())
		acc := make([]VecVirtual, 4)
		for i := range acc {
			acc[i] = is.vec()
			is.zero(acc[i])
		}
		loop(name+"4", n, 4*L, func() {
			for u := range 4 {
				v := is.vec()
				VMOVUPS(mem(a, u*vb), v)
				VFMADD231PS(mem(b, u*vb), v, acc[u])
			}
			ADDQ(U32(4*vb), a)
			ADDQ(U32(4*vb), b)
		})
		loop(name+"1", n, L, func() {
			v := is.vec()
			VMOVUPS(mem(a, 0), v)
			VFMADD231PS(mem(b, 0), v, acc[0])
			ADDQ(U32(vb), a)
			ADDQ(U32(vb), b)
		})
		VADDPS(acc[1], acc[0], acc[0])
		VADDPS(acc[3], acc[2], acc[2])
		VADDPS(acc[2], acc[0], acc[0])
		Store(is.reduceF32(acc[0]), ReturnIndex(0))
		VZEROUPPER()
		RET()
	}

	// maxf: the largest of x[0:n].
	{
		name := "maxf" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, n int) float32")
		Pragma("noescape")
		Doc(name + " returns the largest of x[i], i < n, n a nonzero multiple of the vector width.")
		x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
		m := is.vec()
		VMOVUPS(mem(x, 0), m)
		loop(name, n, L, func() {
			VMAXPS(mem(x, 0), m, m)
			ADDQ(U32(vb), x)
		})
		var y VecVirtual = m
		if L == 16 {
			y = YMM()
			VEXTRACTF64X4(U8(1), m, y)
			VMAXPS(m.AsY(), y, y)
		}
		xx := XMM()
		VEXTRACTF128(U8(1), y, xx)
		VMAXPS(y.AsX(), xx, xx)
		h := XMM()
		VMOVHLPS(xx, xx, h)
		VMAXPS(h, xx, xx)
		VMOVSHDUP(xx, h)
		VMAXSS(h, xx, xx)
		Store(xx, ReturnIndex(0))
		VZEROUPPER()
		RET()
	}

	// Float64 work on float32 data goes in steps of one float32 vector: two
	// float64 vectors (lo, hi halves).
	load2 := func(p Register, off int) (VecVirtual, VecVirtual) {
		lo, hi := is.f64(), is.f64()
		VCVTPS2PD(mem(p, off), lo)
		VCVTPS2PD(mem(p, off+vb/2), hi)
		return lo, hi
	}

	// sumf64: Σ float64(x[i]).
	{
		name := "sumf64" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, n int) float64")
		Pragma("noescape")
		Doc(name + " returns Σ float64(x[i]) for i < n, n a multiple of the vector width.")
		x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
		a0, a1 := is.f64(), is.f64()
		is.zero(a0)
		is.zero(a1)
		loop(name, n, L, func() {
			lo, hi := load2(x, 0)
			VADDPD(lo, a0, a0)
			VADDPD(hi, a1, a1)
			ADDQ(U32(vb), x)
		})
		VADDPD(a1, a0, a0)
		Store(is.reduceF64(a0), ReturnIndex(0))
		VZEROUPPER()
		RET()
	}

	// sumsqdev: Σ (float64(x[i]) − mean)².
	{
		name := "sumsqdev" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, n int, mean float64) float64")
		Pragma("noescape")
		Doc(name + " returns Σ (float64(x[i])−mean)² for i < n, n a multiple of the vector width.")
		x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
		mean := is.f64()
		VBROADCASTSD(NewParamAddr("mean", 16), mean)
		a0, a1 := is.f64(), is.f64()
		is.zero(a0)
		is.zero(a1)
		loop(name, n, L, func() {
			lo, hi := load2(x, 0)
			VSUBPD(mean, lo, lo)
			VSUBPD(mean, hi, hi)
			VFMADD231PD(lo, lo, a0)
			VFMADD231PD(hi, hi, a1)
			ADDQ(U32(vb), x)
		})
		VADDPD(a1, a0, a0)
		Store(is.reduceF64(a0), ReturnIndex(0))
		VZEROUPPER()
		RET()
	}

	// lnapply: y = float32((float64(x)−mean)·inv)·g + b (b may be nil).
	{
		name := "lnapply" + is.name
		TEXT(name, NOSPLIT, "func(y, x *float32, n int, mean, inv float64, gamma, beta *float32)")
		Pragma("noescape")
		Doc(name + " writes the normalised row y = float32((x−mean)·inv)·g + b, n a multiple of the vector width; b may be nil.")
		y, x, n := Load(Param("y"), GP64()), Load(Param("x"), GP64()), Load(Param("n"), GP64())
		g, b := Load(Param("gamma"), GP64()), Load(Param("beta"), GP64())
		mean, inv := is.f64(), is.f64()
		VBROADCASTSD(NewParamAddr("mean", 24), mean)
		VBROADCASTSD(NewParamAddr("inv", 32), inv)
		for _, withB := range []bool{true, false} {
			lname := name + "_nob"
			if withB {
				lname = name + "_b"
				TESTQ(b, b)
				JZ(LabelRef(name + "_nob_top"))
			}
			loop(lname, n, L, func() {
				lo, hi := load2(x, 0)
				VSUBPD(mean, lo, lo)
				VSUBPD(mean, hi, hi)
				VMULPD(inv, lo, lo)
				VMULPD(inv, hi, hi)
				hl, hh := is.half(), is.half()
				if L == 16 {
					VCVTPD2PS(lo, hl)
					VCVTPD2PS(hi, hh)
				} else {
					VCVTPD2PSY(lo, hl)
					VCVTPD2PSY(hi, hh)
				}
				v := is.vec()
				if L == 16 {
					VINSERTF64X4(U8(1), hh, hl.AsZ(), v)
				} else {
					VINSERTF128(U8(1), hh, hl.AsY(), v)
				}
				VMULPS(mem(g, 0), v, v)
				if withB {
					VADDPS(mem(b, 0), v, v)
					ADDQ(U32(vb), b)
				}
				VMOVUPS(v, mem(y, 0))
				ADDQ(U32(vb), x)
				ADDQ(U32(vb), y)
				ADDQ(U32(vb), g)
			})
			if withB {
				JMP(LabelRef(name + "_ret"))
			}
		}
		Label(name + "_ret")
		VZEROUPPER()
		RET()
	}

	// expsum: x[i] = float32(exp(float64(x[i]−shift))), returning the float64 sum.
	{
		name := "expsum" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, n int, shift float32) float64")
		Pragma("noescape")
		Doc(name + " replaces x[i] by float32(exp(float64(x[i]−shift))) for i < n and returns Σ exp, n a multiple of the vector width.")
		x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
		sh := is.vec()
		VBROADCASTSS(NewParamAddr("shift", 16), sh)
		a0, a1 := is.f64(), is.f64()
		is.zero(a0)
		is.zero(a1)
		// u vectors (2u float64 chains) at a time, their exponentials
		// interleaved (see gelutanh); the sums stay in order.
		body := func(u int) {
			es := is.shiftedExp(c, x, sh, u)
			for i, e := range es {
				VADDPD(e, []VecVirtual{a0, a1}[i%2], []VecVirtual{a0, a1}[i%2])
				is.cvtStore(e, mem(x, i*vb/2))
			}
			ADDQ(U32(u*vb), x)
		}
		if u := is.geluUnroll(); u > 1 {
			loop(name+"_u", n, u*L, func() { body(u) })
		}
		loop(name, n, L, func() { body(1) })
		VADDPD(a1, a0, a0)
		Store(is.reduceF64(a0), ReturnIndex(0))
		VZEROUPPER()
		RET()
	}

	// exp64v: expsum's exponentials of one vector, each also stored as
	// float64, for a caller that sums them in its own order (Softmax's
	// tail: its sum continues expsum's in order of the elements).
	{
		name := "exp64v" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, e *float64, shift float32)")
		Pragma("noescape")
		Doc(name + " replaces the one vector x[0:lanes] by float32(exp(float64(x[i]−shift))) and stores each exponential in e[i] as float64.")
		x, ep := Load(Param("x"), GP64()), Load(Param("e"), GP64())
		sh := is.vec()
		VBROADCASTSS(NewParamAddr("shift", 16), sh)
		es := is.shiftedExp(c, x, sh, 1)
		for i, e := range es {
			VMOVUPD(e, mem(ep, i*vb))
			is.cvtStore(e, mem(x, i*vb/2))
		}
		VZEROUPPER()
		RET()
	}

	// gelutanh: x = x/(1+exp(−2c(x+c3·x³))) in float64.
	{
		name := "gelutanh" + is.name
		TEXT(name, NOSPLIT, "func(x *float32, n int)")
		Pragma("noescape")
		Doc(name + " applies GELU (tanh form, as x/(1+exp(−2u))) in float64 to x[i], i < n, n a multiple of the vector width.")
		x, n := Load(Param("x"), GP64()), Load(Param("n"), GP64())
		// u float32 vectors (2u float64 chains) at a time, their
		// instructions interleaved: one vector's chain of dependent
		// operations (≈ 25 deep) leaves most of the vector units idle.
		body := func(u int) {
			var fs []VecVirtual
			for i := range u {
				lo, hi := load2(x, i*vb)
				fs = append(fs, lo, hi)
			}
			as := make([]VecVirtual, len(fs))
			for i, f := range fs {
				as[i] = is.f64()
				VMULPD(c.get("gelu3"), f, as[i])
			}
			for i, f := range fs {
				VMULPD(f, as[i], as[i])
			}
			for i, f := range fs {
				VMULPD(f, as[i], as[i])
			}
			for i, f := range fs {
				VADDPD(as[i], f, as[i])
			}
			for _, a := range as {
				VMULPD(c.get("gelum2c"), a, a)
			}
			is.clampN(c, as)
			es := is.expN(c, as)
			for _, e := range es {
				VADDPD(c.get("one"), e, e)
			}
			for i, f := range fs {
				VDIVPD(es[i], f, f)
			}
			for i, f := range fs {
				is.cvtStore(f, mem(x, i*vb/2))
			}
			ADDQ(U32(u*vb), x)
		}
		if u := is.geluUnroll(); u > 1 {
			loop(name+"_u", n, u*L, func() { body(u) })
		}
		loop(name, n, L, func() { body(1) })
		VZEROUPPER()
		RET()
	}
}
