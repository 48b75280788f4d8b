package nano

import (
	"fmt"
	"testing"

	"github.com/nanovox/nanovox/internal/tensor"
)

// TestKVCacheLayout: positions stored with put keep their values through
// growth (which re-lays every head out at the new capacity) and reset;
// kv() addresses head h of position p at K[p·Stride + h·HeadStride].
// With bfloat16 storage the values read back are the stored ones rounded.
func TestKVCacheLayout(t *testing.T) {
	for _, bf16 := range []bool{false, true} {
		t.Run(fmt.Sprintf("bf16=%v", bf16), func(t *testing.T) { testKVCacheLayout(t, bf16) })
	}
}

func testKVCacheLayout(t *testing.T, bf16 bool) {
	const layers, heads, hd = 2, 3, 4
	size := 4
	if bf16 {
		size = 2
	}
	want := func(x float32) float32 {
		if bf16 {
			return tensor.BF16ToF32(tensor.F32ToBF16(x))
		}
		return x
	}
	get := func(kv tensor.KV, o int) (float32, float32) {
		if bf16 {
			return tensor.BF16ToF32(kv.K16[o]), tensor.BF16ToF32(kv.V16[o])
		}
		return kv.K[o], kv.V[o]
	}
	val := func(l, p, h, i int, v bool) float32 {
		x := float32(l*10000 + p*100 + h*10 + i)
		if v {
			x = -x
		}
		return x
	}
	fill := func(c *kvCache, from, to int) {
		for p := from; p < to; p++ {
			c.reserve(p + 1)
			for l := range layers {
				k := make([]float32, heads*hd)
				v := make([]float32, heads*hd)
				for h := range heads {
					for i := range hd {
						k[h*hd+i], v[h*hd+i] = val(l, p, h, i, false), val(l, p, h, i, true)
					}
				}
				c.put(l, p, k, v)
			}
			c.n = p + 1
		}
	}
	check := func(name string, c *kvCache, n int) {
		t.Helper()
		if c.n != n {
			t.Fatalf("%s: %d positions, want %d", name, c.n, n)
		}
		for l := range layers {
			kv := c.kv(l)
			for p := range n {
				for h := range heads {
					for i := range hd {
						o := p*kv.Stride + h*kv.HeadStride + i
						k, v := get(kv, o)
						if k != want(val(l, p, h, i, false)) || v != want(val(l, p, h, i, true)) {
							t.Fatalf("%s: layer %d pos %d head %d [%d] = %v/%v, want %v/%v", name, l, p, h, i, k, v, want(val(l, p, h, i, false)), want(val(l, p, h, i, true)))
						}
					}
				}
			}
		}
	}
	for _, capacity := range []int{1, 2, 5, 64} {
		c := newKVCache(layers, heads, hd, capacity, bf16)
		fill(c, 0, 3)
		check("after 3", c, 3)
		fill(c, 3, 40) // grows at least once for every capacity but 64
		check("after growth", c, 40)
		if got := c.bytes(); got != int64(2*layers*40*heads*hd*size) {
			t.Errorf("bytes %d", got)
		}
		c.reset()
		check("reset", c, 0)
		fill(c, 0, 7)
		check("refilled", c, 7)
	}
}
