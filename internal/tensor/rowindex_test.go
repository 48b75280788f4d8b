package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// packing is one way to pack a matrix; pack reports whether it did.
type packing struct {
	name string
	pack func(*Mat) bool
}

// packings returns the packed layouts of the kernels (the dot-product ones
// report false on CPUs without them).
func packings() []packing {
	return []packing{
		{"panels", func(m *Mat) bool { m.Pack(); return m.Packed() }},
		{"bf16dot", (*Mat).PackBF16Dot},
		{"int8", (*Mat).PackInt8},
	}
}

// TestIndexRows checks that a packed matrix's rows read the same, bit for
// bit, from the row index as from its panels (Row, and AddRow onto other
// values), on every kernel set, and that Bytes counts the index.
func TestIndexRows(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	packs := packings()
	for _, sh := range [][2]int{{1, 1}, {33, 7}, {64, 768}, {70, 300}, {5, 513}} {
		n, k := sh[0], sh[1]
		for _, tm := range testMats(r, n, k) {
			for _, p := range packs {
				name := fmt.Sprintf("%dx%d %s %s", n, k, tm.name, p.name)
				w := tm.mk()
				if !p.pack(w) {
					continue
				}
				base := make([]float32, k)
				for c := range base {
					base[c] = float32(r.NormFloat64())
				}
				// The panels' rows, before the index exists.
				rows, sums := make([][]float32, n), make([][]float32, n)
				for i := range n {
					rows[i] = w.Row(i, make([]float32, k))
					sums[i] = append([]float32(nil), base...)
					w.AddRow(sums[i], i)
				}
				before := w.Bytes()
				w.IndexRows()
				w.IndexRows() // idempotent
				if got := w.Bytes() - before; got != w.indexBytes() || got < int64(n*k) {
					t.Fatalf("%s: Bytes grew by %d, index holds %d", name, got, w.indexBytes())
				}
				for _, im := range impls() {
					useImpl(t, im)
					for i := range n {
						got := w.Row(i, make([]float32, k))
						acc := append([]float32(nil), base...)
						w.AddRow(acc, i)
						for c := range k {
							if math.Float32bits(got[c]) != math.Float32bits(rows[i][c]) {
								t.Fatalf("%s %v: Row %d col %d = %v, panels %v", name, im, i, c, got[c], rows[i][c])
							}
							if math.Float32bits(acc[c]) != math.Float32bits(sums[i][c]) {
								t.Fatalf("%s %v: AddRow %d col %d = %v, panels %v", name, im, i, c, acc[c], sums[i][c])
							}
						}
					}
				}
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s: Row(%d) did not panic", name, n)
						}
					}()
					w.Row(n, make([]float32, k))
				}()
			}
		}
	}
	// Unpacked matrices have no index.
	m := NewF32(2, 2, []float32{1, 2, 3, 4})
	m.IndexRows()
	if m.indexBytes() != 0 {
		t.Fatal("IndexRows indexed an unpacked matrix")
	}
}
