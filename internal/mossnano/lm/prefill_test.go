package lm

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/nanovox/nanovox/internal/tensor"
)

// TestPrefillHeadCacheExact: a prefill that starts from the cached head
// (Model.prefill) stores the same bits as one that runs every prompt row
// through the stack, in every mode, for references of one frame and more.
func TestPrefillHeadCacheExact(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		ref := readGolden(t, fixture, "long.json").RefCodes
		for _, opts := range []Options{{KeepBF16: true}, {Matmul: tensor.BF16}, {Matmul: tensor.Int8}} {
			m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, frames := range []int{1, 2, len(ref)} {
				r := ref[:frames]
				n := m.prefixLen(r)
				want := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), n, m.globalKV)
				m.forwardRows(context.Background(), want, m.PrefixRows(r))
				got := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), 1, m.globalKV)
				m.prefill(context.Background(), got, r)
				if got.n != n || want.n != n {
					t.Fatalf("%s %v %d frames: %d and %d rows cached, want %d", fixture, opts.Matmul, frames, got.n, want.n, n)
				}
				diffs := 0
				for l := range m.Config.GPT2.NLayer {
					for _, key := range []bool{true, false} {
						for h := range got.nh {
							for p := range n {
								for i := range got.hd {
									a, b := cacheValue(got, l, key, h, p, i), cacheValue(want, l, key, h, p, i)
									if math.Float32bits(a) != math.Float32bits(b) {
										if diffs < 5 {
											t.Errorf("%s %v %d frames: layer %d key=%v head %d position %d [%d]: %g, full prefill %g",
												fixture, opts.Matmul, frames, l, key, h, p, i, a, b)
										}
										diffs++
									}
								}
							}
						}
					}
				}
			}
		}
	}
}
