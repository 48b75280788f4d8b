package mp3

import (
	"math"
	"math/bits"
)

// maxQuant is the largest magnitude a linbits table can code: 15 + 2^13 - 1.
const maxQuant = 15 + 1<<13 - 1

// granule is the coded form of one granule of one channel: the side-info
// fields and the quantized lines they describe.
type granule struct {
	ix         [576]int32 // signed quantized values
	part23     int        // Huffman bits (no scalefactors are sent)
	bigValues  int        // pairs in the big_values region
	count1     int        // quadruples in the count1 region
	globalGain int
	table      [3]int
	region0    int // region0_count
	region1    int // region1_count
	count1B    bool
}

// quantizer holds the per-granule scratch of the rate loop.
type quantizer struct {
	sfb    *[23]int
	cutoff int // lines at and above are zeroed (low-pass)
	xr     *[576]float64
	peak   float64 // largest xr34
	lo     int     // smallest gain that keeps every value codable
	xr34   [576]float64
	mag    [576]int32 // |ix| for the gain being tried

	// Per scalefactor band, costs of coding its pairs with each table (bits
	// including sign bits), for the band's part below the big_values end.
	bandMax  [22]int32
	bandCost [22][len(smallTables) + 2]int32
	bandEsc  [22]int32
	pre      [23][len(smallTables) + 2]int32 // prefix sums of bandCost
	preEsc   [23]int32
	sufMax   [23]int32 // largest magnitude in bands b..nb-1
}

const (
	tree16 = len(smallTables)     // bandCost column of tables 16..23 (without linbits)
	tree24 = len(smallTables) + 1 // bandCost column of tables 24..31
	noCost = 1 << 24
)

// prepare takes a granule's MDCT lines (zeroing them above the cut-off)
// and computes what every trial quantization needs.
func (q *quantizer) prepare(xr *[576]float64) {
	q.xr = xr
	q.peak = 0
	for i := range xr {
		if i >= q.cutoff {
			xr[i] = 0
		}
		a := math.Abs(xr[i])
		// |x|^(3/4) as sqrt(x·sqrt(x)): far cheaper than math.Pow.
		q.xr34[i] = math.Sqrt(a * math.Sqrt(a))
		q.peak = max(q.peak, q.xr34[i])
	}
	// The lowest gain whose largest value still fits the linbits tables.
	q.lo = 0
	if r := q.peak / (maxQuant - 0.5); r > 1 {
		q.lo = int(math.Ceil(210 + 16.0/3*math.Log2(r)))
	}
	for q.lo < 255 && int(q.peak*quantStep[q.lo]+0.4054) > maxQuant {
		q.lo++
	}
}

// silent reports whether the granule has nothing to code.
func (q *quantizer) silent() bool { return q.peak == 0 }

// finish quantizes with gain and fills g, signs included.
func (q *quantizer) finish(gain int, g *granule) {
	*g = granule{globalGain: 210} // for silence: any gain, nothing coded
	if q.silent() {
		return
	}
	q.bits(gain, g)
	for i := range g.ix {
		v := q.mag[i]
		if q.xr[i] < 0 {
			v = -v
		}
		g.ix[i] = v
	}
}

// bits quantizes with global gain gain, chooses the regions and tables and
// returns the Huffman bits, recording the choice in g.
func (q *quantizer) bits(gain int, g *granule) int {
	step := quantStep[gain]
	if int(q.peak*step+0.4054) > maxQuant {
		return math.MaxInt32
	}
	end := 0
	for i := 0; i < q.cutoff; i++ {
		v := int32(q.xr34[i]*step + 0.4054)
		q.mag[i] = v
		if v != 0 {
			end = i + 1
		}
	}
	for i := q.cutoff; i < 576; i++ {
		q.mag[i] = 0
	}
	g.globalGain = gain
	end = (end + 1) &^ 1
	// count1 region: quadruples of magnitudes <= 1 at the top.
	c1 := end
	for c1 >= 4 && q.mag[c1-1] <= 1 && q.mag[c1-2] <= 1 && q.mag[c1-3] <= 1 && q.mag[c1-4] <= 1 {
		c1 -= 4
	}
	g.bigValues = c1 / 2
	g.count1 = (end - c1) / 4
	var costA, costB int
	for i := c1; i < end; i += 4 {
		v := q.mag[i]<<3 | q.mag[i+1]<<2 | q.mag[i+2]<<1 | q.mag[i+3]
		s := bits.OnesCount32(uint32(v))
		costA += int(quadCodes[0].len[v]) + s
		costB += 4 + s
	}
	g.count1B = costB < costA
	total := min(costA, costB)
	if c1 == 0 {
		g.table = [3]int{}
		g.region0, g.region1 = 0, 0
		g.part23 = total
		return total
	}
	total += q.bigValueBits(c1, g)
	g.part23 = total
	return total
}

// bigValueBits chooses region0_count, region1_count and the three tables
// for the big_values region [0, n) and returns its Huffman bits.
func (q *quantizer) bigValueBits(n int, g *granule) int {
	sfb := q.sfb
	nb := 0 // bands touching [0, n)
	for nb < 22 && sfb[nb] < n {
		b := nb
		lo, hi := sfb[b], min(sfb[b+1], n)
		var m int32
		for i := lo; i < hi; i++ {
			m = max(m, q.mag[i])
		}
		q.bandMax[b] = m
		q.bandCost[b] = [len(smallTables) + 2]int32{}
		for t := range smallTables {
			if int(m) > smallTables[t].max {
				q.bandCost[b][t] = noCost
			}
		}
		var esc int32
		for i := lo; i < hi; i += 2 {
			x, y := q.mag[i], q.mag[i+1]
			s := int32(0)
			if x != 0 {
				s++
			}
			if y != 0 {
				s++
			}
			for t, st := range smallTables {
				if int(m) <= st.max {
					pc := &pairCodes[st.table]
					q.bandCost[b][t] += int32(pc.len[int(x)*pc.size+int(y)]) + s
				}
			}
			xe, ye := min(x, 15), min(y, 15)
			if x >= 15 {
				esc++
			}
			if y >= 15 {
				esc++
			}
			q.bandCost[b][tree16] += int32(pairCodes[16].len[xe*16+ye]) + s
			q.bandCost[b][tree24] += int32(pairCodes[24].len[xe*16+ye]) + s
		}
		q.bandEsc[b] = esc
		nb++
	}

	// Prefix sums over bands turn every region's cost into a subtraction.
	for b := 0; b < nb; b++ {
		for t := range q.pre[b] {
			q.pre[b+1][t] = q.pre[b][t] + q.bandCost[b][t]
		}
		q.preEsc[b+1] = q.preEsc[b] + q.bandEsc[b]
	}
	q.sufMax[nb] = 0
	for b := nb - 1; b >= 0; b-- {
		q.sufMax[b] = max(q.sufMax[b+1], q.bandMax[b])
	}

	// Region 2 runs from band b2 to the end: its cost depends on b2 only.
	var c2s, t2s [23]int
	for b2 := 0; b2 <= nb; b2++ {
		c2s[b2], t2s[b2] = q.regionCost(b2, nb, q.sufMax[b2])
	}

	best := math.MaxInt
	// Region boundaries must fall on band edges (sfb[r0+1], sfb[r0+r1+2]);
	// boundaries at or past n leave later regions empty.
	var m0 int32
	for r0 := 0; r0 < 16; r0++ {
		b1 := min(r0+1, nb)
		m0 = max(m0, q.bandMax[b1-1])
		c0, t0 := q.regionCost(0, b1, m0)
		if c0 >= best {
			break // region0 only grows
		}
		var m1 int32
		for r1 := 0; r1 < 8; r1++ {
			b2 := r0 + r1 + 2
			if b2 > 22 {
				break
			}
			b2 = min(b2, nb)
			if b2 > b1 {
				m1 = max(m1, q.bandMax[b2-1])
			}
			c1, t1 := q.regionCost(b1, b2, m1)
			c2, t2 := c2s[b2], t2s[b2]
			if c := c0 + c1 + c2; c < best {
				best = c
				g.region0, g.region1 = r0, r1
				g.table = [3]int{t0, t1, t2}
			}
			if b2 == nb {
				break // later region1 sizes code the same
			}
		}
		if b1 == nb {
			break
		}
	}
	return best
}

// regionCost returns the bits and the cheapest table for bands [b0, b1),
// whose largest magnitude is m.
func (q *quantizer) regionCost(b0, b1 int, m int32) (int, int) {
	if b0 >= b1 || m == 0 {
		return 0, 0
	}
	lo, hi := &q.pre[b0], &q.pre[b1]
	best, table := math.MaxInt, 0
	if m <= 15 {
		for t := firstTable[m]; t < len(smallTables); t++ {
			if c := int(hi[t] - lo[t]); c < best {
				best, table = c, smallTables[t].table
			}
		}
		return best, table
	}
	// Escapes: the smallest linbits that holds m-15 in each family.
	esc := int(q.preEsc[b1] - q.preEsc[b0])
	t16, t24 := escTable[bits.Len32(uint32(m-15))][0], escTable[bits.Len32(uint32(m-15))][1]
	best, table = int(hi[tree16]-lo[tree16])+esc*linbits[t16], t16
	if c := int(hi[tree24]-lo[tree24]) + esc*linbits[t24]; c < best {
		best, table = c, t24
	}
	return best, table
}

// firstTable[m] is the index in smallTables of the first table that can
// code magnitude m; escTable[n] the tables of the 16 and 24 families with
// the fewest linbits >= n.
var (
	firstTable [16]int
	escTable   [14][2]int
)

func init() {
	for m := range firstTable {
		for firstTable[m] = 0; smallTables[firstTable[m]].max < m; firstTable[m]++ {
		}
	}
	for n := range escTable {
		for t := 23; t >= 16; t-- {
			if linbits[t] >= n {
				escTable[n][0] = t
			}
		}
		for t := 31; t >= 24; t-- {
			if linbits[t] >= n {
				escTable[n][1] = t
			}
		}
	}
}
