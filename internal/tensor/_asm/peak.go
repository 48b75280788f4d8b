package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// peakChains is the number of independent accumulators of fmaPeak: enough
// to cover the fused multiply-add's latency (4 cycles) on two pipes, and
// within the registers of both instruction sets beside the two operands.
func (is isa) peakChains() int {
	if is.lanes == 16 {
		return 16
	}
	return 12
}

// genPeak emits fmaPeak, the machine's floating-point ceiling: n rounds of
// one vector fused multiply-add per accumulator, nothing else in the loop
// but its counter. It measures what no kernel can exceed
// (BenchmarkFMAPeak) and is not used by the model.
func genPeak(is isa) {
	name := "fmaPeak" + is.name
	TEXT(name, NOSPLIT, "func(out *float32, a, b float32, n int)")
	Pragma("noescape")
	Doc(name+" sets out[0:lanes] to the sum over its accumulators of n fused",
		"multiply-adds a·b + acc each, all accumulators starting at zero.")
	out, n := Load(Param("out"), GP64()), Load(Param("n"), GP64())
	a, b := is.vec(), is.vec()
	VBROADCASTSS(NewParamAddr("a", 8), a)
	VBROADCASTSS(NewParamAddr("b", 12), b)
	acc := make([]VecVirtual, is.peakChains())
	for i := range acc {
		acc[i] = is.vec()
		is.zero(acc[i])
	}
	loop(name, n, 1, func() {
		for _, v := range acc {
			VFMADD231PS(a, b, v)
		}
	})
	for w := len(acc); w > 1; w = (w + 1) / 2 {
		for i := 0; i < w/2; i++ {
			VADDPS(acc[i+(w+1)/2], acc[i], acc[i])
		}
	}
	VMOVUPS(acc[0], mem(out, 0))
	VZEROUPPER()
	RET()
}
