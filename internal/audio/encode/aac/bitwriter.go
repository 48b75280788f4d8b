package aac

// bitWriter appends bits MSB-first to a byte slice, as AAC's bitstream
// syntax requires.
type bitWriter struct {
	buf   []byte
	acc   uint64 // pending bits, right-aligned
	nbits uint   // number of pending bits in acc (< 8 after each put)
}

// put appends the low n bits of v (n ≤ 32).
func (w *bitWriter) put(v uint32, n uint) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.nbits += n
	for w.nbits >= 8 {
		w.nbits -= 8
		w.buf = append(w.buf, byte(w.acc>>w.nbits))
	}
}

// align pads with zero bits to the next byte boundary.
func (w *bitWriter) align() {
	if w.nbits > 0 {
		w.put(0, 8-w.nbits)
	}
}

// bitLen is the number of bits written so far.
func (w *bitWriter) bitLen() int { return len(w.buf)*8 + int(w.nbits) }
