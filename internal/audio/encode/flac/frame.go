package flac

import "math/bits"

// Subframe types (the 6-bit field of the subframe header).
const (
	subConstant = iota
	subVerbatim
	subFixed
)

// maxPartitionOrder bounds the Rice partition search: 2^8 = 256 partitions
// of 16 samples for a 4096 block, where the 4-bit parameter per partition
// stops paying for itself.
const maxPartitionOrder = 8

// maxRiceParam is the largest parameter of the 4-bit Rice method (15 is the
// escape code, which this encoder does not use: verbatim wins instead).
const maxRiceParam = 14

// subframe is the encoding chosen for one channel of a block.
type subframe struct {
	kind      int
	order     int // fixed predictor order, 0–4
	partOrder int
	params    [1 << maxPartitionOrder]uint8
	bits      int // size estimate, for choosing the stereo mode
}

// analyzer holds the scratch buffers of the subframe analysis.
type analyzer struct {
	res  []int32  // residual of the chosen predictor
	sums []uint64 // zig-zag sums of the finest partitions
}

// analyze picks the cheapest encoding of x (samples of bps bits).
func (a *analyzer) analyze(sf *subframe, x []int32, bps int) {
	n := len(x)
	constant := true
	for _, v := range x[1:] {
		if v != x[0] {
			constant = false
			break
		}
	}
	if constant {
		*sf = subframe{kind: subConstant, bits: 8 + bps}
		return
	}
	sf.kind, sf.bits = subVerbatim, 8+n*bps
	if n <= 4 {
		return
	}
	// Fixed predictor order by the smallest sum of absolute residuals over
	// the samples every order can predict (libFLAC's estimate).
	var e [5]uint64
	x1, x2, x3 := int64(x[3]), int64(x[2]), int64(x[1])
	d1, d2 := x1-x2, x2-x3
	dd1 := d1 - d2
	d0 := int64(x[0])
	ddd1 := dd1 - ((x2 - x3) - (x3 - d0))
	for _, v := range x[4:] {
		s := int64(v)
		r1 := s - x1
		r2 := r1 - d1
		r3 := r2 - dd1
		r4 := r3 - ddd1
		e[0] += abs64(s)
		e[1] += abs64(r1)
		e[2] += abs64(r2)
		e[3] += abs64(r3)
		e[4] += abs64(r4)
		x1, d1, dd1, ddd1 = s, r1, r2, r3
	}
	order := 0
	for o := 1; o <= 4; o++ {
		if e[o] < e[order] {
			order = o
		}
	}
	res := a.residual(x, order)
	partOrder, cost := a.partition(sf, res, n, order)
	if b := 8 + order*bps + 6 + cost; b < sf.bits {
		sf.kind, sf.order, sf.partOrder, sf.bits = subFixed, order, partOrder, b
	}
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

// residual computes the fixed-predictor residual of x into a.res.
func (a *analyzer) residual(x []int32, order int) []int32 {
	n := len(x)
	if cap(a.res) < n {
		a.res = make([]int32, n)
	}
	r := a.res[:n-order]
	switch order {
	case 0:
		copy(r, x)
	case 1:
		for i := 1; i < n; i++ {
			r[i-1] = x[i] - x[i-1]
		}
	case 2:
		for i := 2; i < n; i++ {
			r[i-2] = x[i] - 2*x[i-1] + x[i-2]
		}
	case 3:
		for i := 3; i < n; i++ {
			r[i-3] = x[i] - 3*x[i-1] + 3*x[i-2] - x[i-3]
		}
	case 4:
		for i := 4; i < n; i++ {
			r[i-4] = x[i] - 4*x[i-1] + 6*x[i-2] - 4*x[i-3] + x[i-4]
		}
	}
	return r
}

func zigzag(v int32) uint32 { return uint32(v<<1) ^ uint32(v>>31) }

// partition chooses the Rice partition order and parameters for the
// residual res of a block of n samples predicted with the given order, and
// returns the order and the estimated size of the partitions in bits.
func (a *analyzer) partition(sf *subframe, res []int32, n, order int) (int, int) {
	// The partition order must divide the block, and the first partition
	// must keep at least one residual after the warm-up samples.
	top := 0
	for p := 1; p <= maxPartitionOrder; p++ {
		if n%(1<<p) != 0 || n>>p <= order {
			break
		}
		top = p
	}
	parts := 1 << top
	if cap(a.sums) < parts {
		a.sums = make([]uint64, 1<<maxPartitionOrder)
	}
	sums := a.sums[:parts]
	size := n >> top
	for i := range sums {
		start, end := i*size-order, (i+1)*size-order
		if i == 0 {
			start = 0
		}
		var s uint64
		for _, v := range res[start:end] {
			s += uint64(zigzag(v))
		}
		sums[i] = s
	}
	bestOrder, bestCost := 0, -1
	var params [1 << maxPartitionOrder]uint8
	for p := top; p >= 0; p-- {
		parts := 1 << p
		size := n >> p
		cost := 0
		for i := range parts {
			count := size
			if i == 0 {
				count -= order
			}
			k, c := riceParam(sums[i], count)
			params[i] = uint8(k)
			cost += 4 + c
		}
		if bestCost < 0 || cost < bestCost {
			bestOrder, bestCost = p, cost
			copy(sf.params[:parts], params[:parts])
		}
		// Merge pairs for the next coarser order.
		for i := range parts / 2 {
			sums[i] = sums[2*i] + sums[2*i+1]
		}
	}
	return bestOrder, bestCost
}

// riceParam returns the Rice parameter for count zig-zag values summing to
// sum, and the estimated bits: count·(k+1) + sum>>k (an upper bound of the
// unary parts' total when sum is spread evenly).
func riceParam(sum uint64, count int) (int, int) {
	if count == 0 {
		return 0, 0
	}
	k := 0
	if mean := sum / uint64(count); mean > 0 {
		k = min(bits.Len64(mean)-1, maxRiceParam)
	}
	best, bestBits := 0, -1
	for c := max(0, k-1); c <= min(maxRiceParam, k+1); c++ {
		b := count*(c+1) + int(sum>>c)
		if bestBits < 0 || b < bestBits {
			best, bestBits = c, b
		}
	}
	return best, bestBits
}

// writeSubframe appends the chosen encoding of x.
func (a *analyzer) writeSubframe(bw *bitWriter, sf *subframe, x []int32, bps int) {
	switch sf.kind {
	case subConstant:
		bw.write(0x00, 8)
		bw.writeSigned(x[0], uint(bps))
	case subVerbatim:
		bw.write(0x01<<1, 8)
		for _, v := range x {
			bw.writeSigned(v, uint(bps))
		}
	case subFixed:
		bw.write(uint64(0x08|sf.order)<<1, 8)
		for _, v := range x[:sf.order] {
			bw.writeSigned(v, uint(bps))
		}
		res := a.residual(x, sf.order)
		bw.write(0, 2) // 4-bit Rice parameters
		bw.write(uint64(sf.partOrder), 4)
		n := len(x)
		size := n >> sf.partOrder
		start := 0
		for i := range 1 << sf.partOrder {
			end := (i+1)*size - sf.order
			k := uint(sf.params[i])
			bw.write(uint64(k), 4)
			for _, v := range res[start:end] {
				bw.writeRice(zigzag(v), k)
			}
			start = end
		}
	}
}
