package mp3

// bitWriter writes MSB-first into a zeroed byte slice.
type bitWriter struct {
	buf []byte
	pos int // in bits
}

func (w *bitWriter) put(v uint32, n int) {
	for n > 0 {
		byteIdx, used := w.pos>>3, w.pos&7
		free := 8 - used
		take := min(free, n)
		bitsv := byte(v>>(n-take)) & byte(1<<take-1)
		w.buf[byteIdx] |= bitsv << (free - take)
		w.pos += take
		n -= take
	}
}

// writeHuffman writes g's big_values and count1 regions.
func (w *bitWriter) writeHuffman(g *granule, sfb *[23]int) {
	n := 2 * g.bigValues
	r1 := min(sfb[g.region0+1], n)
	r2 := min(sfb[min(g.region0+g.region1+2, 22)], n)
	for i := 0; i < n; i += 2 {
		t := g.table[2]
		if i < r1 {
			t = g.table[0]
		} else if i < r2 {
			t = g.table[1]
		}
		if t == 0 {
			continue // all-zero region: nothing is coded
		}
		w.pair(t, g.ix[i], g.ix[i+1])
	}
	qc := &quadCodes[0]
	if g.count1B {
		qc = &quadCodes[1]
	}
	for i := n; i < n+4*g.count1; i += 4 {
		var v int
		for j := 0; j < 4; j++ {
			if g.ix[i+j] != 0 {
				v |= 8 >> j
			}
		}
		w.put(uint32(qc.code[v]), int(qc.len[v]))
		for j := 0; j < 4; j++ {
			if x := g.ix[i+j]; x != 0 {
				w.put(sign(x), 1)
			}
		}
	}
}

func sign(x int32) uint32 {
	if x < 0 {
		return 1
	}
	return 0
}

// pair writes one value pair with table t: code, then per value its
// linbits (if escaped) and sign, as ISO/IEC 11172-3 2.4.2.7 orders them.
func (w *bitWriter) pair(t int, x, y int32) {
	ax, ay := abs(x), abs(y)
	lb := linbits[t]
	tree := t
	switch {
	case t >= 24:
		tree = 24
	case t >= 16:
		tree = 16
	}
	pc := &pairCodes[tree]
	cx, cy := ax, ay
	if lb > 0 {
		cx, cy = min(ax, 15), min(ay, 15)
	}
	k := int(cx)*pc.size + int(cy)
	w.put(pc.code[k], int(pc.len[k]))
	if lb > 0 && ax >= 15 {
		w.put(uint32(ax-15), lb)
	}
	if ax != 0 {
		w.put(sign(x), 1)
	}
	if lb > 0 && ay >= 15 {
		w.put(uint32(ay-15), lb)
	}
	if ay != 0 {
		w.put(sign(y), 1)
	}
}

func abs(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}
