package tensor

// panelCols is the width of one weight panel: 32 output features, two zmm or
// four ymm registers.
const panelCols = 32

// Packed reports whether Pack has moved the matrix into the panel layout.
func (m *Mat) Packed() bool { return m.pf32 != nil || m.pb16 != nil || m.pdot != nil || m.pq != nil }

// panels returns the number of 32-row panels of the packed layout.
func (m *Mat) panels() int { return (m.Rows + panelCols - 1) / panelCols }

// Pack rearranges the matrix into the layout of the SIMD matrix kernels:
// panels of 32 rows, each stored transposed ([Cols][32]), so that Linear
// streams the weights once, contiguously, whatever the number of input rows.
// It is what makes Linear fast; call it once per weight right after loading,
// before the matrix is shared between goroutines (Pack is not safe for
// concurrent use with anything else on m).
//
// The data is reordered in place when Rows is a multiple of 32 (no second
// copy of big weights); otherwise it is copied into a new, zero-padded slice.
// The F32 or BF16 slice passed to NewF32/NewBF16 is taken over: afterwards
// both fields are nil and m must be read through Row, AddRow, Linear and
// LinearRows. bfloat16 stays bfloat16. Pack is a no-op on an already packed
// matrix, on empty ones, and where no SIMD matrix kernel exists (pure-Go
// builds and CPUs without AVX2/FMA), where the row-major layout is the fast
// one for the portable code.
func (m *Mat) Pack() {
	if m.Packed() || m.Rows == 0 || m.Cols == 0 || !simdGEMM() {
		return
	}
	if m.BF16 != nil {
		m.pb16 = packPanels(m.BF16, m.Rows, m.Cols, false)
		m.BF16 = nil
		return
	}
	m.pf32 = packPanels(m.F32, m.Rows, m.Cols, false)
	m.F32 = nil
}

// packPanels reorders row-major src [rows, cols] into panels: [cols][32],
// or with pairs the dot layout [⌈cols/2⌉][32][2] (see PackBF16Dot). Full
// panels of an even row length occupy exactly the memory of their 32 rows,
// so they are transposed in place through a one-panel buffer; otherwise the
// output is a new, zeroed slice, which is the padding.
func packPanels[T float32 | uint16](src []T, rows, cols int, pairs bool) []T {
	np := (rows + panelCols - 1) / panelCols
	kp := cols // padded row length
	if pairs {
		kp = dotK(cols)
	}
	dst := src[:rows*cols]
	if rows%panelCols != 0 || kp != cols {
		dst = make([]T, np*panelCols*kp)
	}
	tmp := make([]T, panelCols*cols)
	for p := range np {
		r0 := p * panelCols
		nr := min(panelCols, rows-r0)
		copy(tmp, src[r0*cols:(r0+nr)*cols])
		clear(tmp[nr*cols:])
		out := dst[p*panelCols*kp : (p+1)*panelCols*kp]
		for r := range panelCols {
			row := tmp[r*cols : (r+1)*cols]
			for k, v := range row {
				if pairs {
					out[(k>>1)*2*panelCols+2*r+k&1] = v
				} else {
					out[k*panelCols+r] = v
				}
			}
		}
	}
	return dst
}

// panelRow reads row i of a packed matrix into dst, or adds it when add is set.
func (m *Mat) panelRow(i int, dst []float32, add bool) {
	if i < 0 || i >= m.Rows {
		panic("tensor: row index out of range")
	}
	if m.pdot != nil {
		m.dotRow(i, dst, add)
		return
	}
	if m.pq != nil {
		m.i8Row(i, dst, add)
		return
	}
	k := m.Cols
	base := (i/panelCols)*panelCols*k + i%panelCols
	if m.pb16 != nil {
		p := m.pb16[base : base+(k-1)*panelCols+1]
		for c := range dst {
			v := BF16ToF32(p[c*panelCols])
			if add {
				dst[c] += v
			} else {
				dst[c] = v
			}
		}
		return
	}
	p := m.pf32[base : base+(k-1)*panelCols+1]
	for c := range dst {
		if add {
			dst[c] += p[c*panelCols]
		} else {
			dst[c] = p[c*panelCols]
		}
	}
}
