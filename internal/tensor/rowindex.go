package tensor

import "math"

// IndexRows keeps a row-major copy of a packed matrix's rows beside its
// panels, so that Row and AddRow read Cols contiguous values. In a panel a
// row's values lie a panel row apart (one cache line per value for float32
// and bfloat16 panels, per four values for int8), which makes a lookup in a
// large table dozens to hundreds of cache misses: the tied embeddings and
// heads of the language model are such tables, read for every frame. The
// copy holds exactly the values the panels hold (int8 bytes and row scale,
// bfloat16 or float32 values), so no result changes; it costs the matrix's
// size again (Bytes counts it). No-op on an unpacked or already indexed
// matrix.
func (m *Mat) IndexRows() {
	if !m.Packed() || m.rf32 != nil || m.rb16 != nil || m.ri8 != nil {
		return
	}
	n, k := m.Rows, m.Cols
	switch {
	case m.pq != nil:
		m.ri8, m.ri8s = make([]int8, n*k), make([]float32, n)
		plen := i8PanelLen(k)
		for i := range n {
			_, m.ri8s[i] = m.i8Trailer(i)
			base := (i/panelCols)*plen + (i%panelCols)*quantStep
			row := m.ri8[i*k : (i+1)*k]
			for c := range row {
				row[c] = m.pq[base+(c/quantStep)*quantStep*panelCols+c%quantStep]
			}
		}
	case m.pf32 != nil:
		m.rf32 = make([]float32, n*k)
		for i := range n {
			m.panelRow(i, m.rf32[i*k:(i+1)*k], false)
		}
	default: // bfloat16 panels (plain or dot layout): widened exactly
		m.rb16 = make([]uint16, n*k)
		row := make([]float32, k)
		for i := range n {
			m.panelRow(i, row, false)
			for c, v := range row {
				m.rb16[i*k+c] = uint16(math.Float32bits(v) >> 16)
			}
		}
	}
}

// indexBytes is the size of the row index.
func (m *Mat) indexBytes() int64 {
	return int64(len(m.rf32))*4 + int64(len(m.rb16))*2 + int64(len(m.ri8)) + int64(len(m.ri8s))*4
}

// rowChunk is how many values indexRow converts at a time on the stack.
const rowChunk = 256

// indexRow reads row i from the row index into dst (len Cols), or adds it,
// and reports whether the matrix has one. Each value is what the panels
// give (float32(q)·scale for int8, the exact widening of bfloat16), added
// to dst in float32 as panelRow adds it.
func (m *Mat) indexRow(i int, dst []float32, add bool) bool {
	if m.rf32 == nil && m.rb16 == nil && m.ri8 == nil {
		return false
	}
	if i < 0 || i >= m.Rows {
		panic("tensor: row index out of range")
	}
	k := m.Cols
	if m.rf32 != nil {
		if row := m.rf32[i*k : (i+1)*k]; add {
			Add(dst, row)
		} else {
			copy(dst, row)
		}
		return true
	}
	var buf [rowChunk]float32
	for c0 := 0; c0 < k; c0 += rowChunk {
		c1 := min(c0+rowChunk, k)
		t := dst[c0:c1]
		if add {
			t = buf[:c1-c0]
		}
		if m.ri8 != nil {
			dequantRows(t, m.ri8[i*k+c0:i*k+c1], m.ri8s[i:i+1], c1-c0)
		} else {
			WidenBF16(t, m.rb16[i*k+c0:i*k+c1])
		}
		if add {
			Add(dst[c0:c1], t)
		}
	}
	return true
}
