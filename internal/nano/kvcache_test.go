package nano

import "testing"

// TestKVCacheLayout: positions stored with put keep their values through
// growth (which re-lays every head out at the new capacity) and reset;
// kv() addresses head h of position p at K[p·Stride + h·HeadStride].
func TestKVCacheLayout(t *testing.T) {
	const layers, heads, hd = 2, 3, 4
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
						if kv.K[o] != val(l, p, h, i, false) || kv.V[o] != val(l, p, h, i, true) {
							t.Fatalf("%s: layer %d pos %d head %d [%d] = %v/%v, want %v/%v", name, l, p, h, i, kv.K[o], kv.V[o], val(l, p, h, i, false), val(l, p, h, i, true))
						}
					}
				}
			}
		}
	}
	for _, capacity := range []int{1, 2, 5, 64} {
		c := newKVCache(layers, heads, hd, capacity)
		fill(c, 0, 3)
		check("after 3", c, 3)
		fill(c, 3, 40) // grows at least once for every capacity but 64
		check("after growth", c, 40)
		if got := c.bytes(); got != int64(2*layers*40*heads*hd*4) {
			t.Errorf("bytes %d", got)
		}
		c.reset()
		check("reset", c, 0)
		fill(c, 0, 7)
		check("refilled", c, 7)
	}
}
