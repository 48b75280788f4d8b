package lm

import (
	"testing"

	"github.com/nanovox/nanovox/internal/tensor"
)

// TestKVCacheLayout: positions stored with put keep their values through
// growth (which re-lays every head out at the new capacity) and reset;
// kv() addresses head h of position p at K[p·Stride + h·HeadStride].
// With bfloat16 storage the values read back are the stored ones rounded,
// with int8 storage each head's row quantized (tensor.QuantizeI8) and its
// scale at KS[(p·Stride + h·HeadStride)/hd].
func TestKVCacheLayout(t *testing.T) {
	for _, c := range []struct {
		name  string
		store tensor.KVStore
	}{{"f32", tensor.KVFloat32}, {"bf16", tensor.KVBFloat16}, {"int8", tensor.KVInt8}} {
		t.Run(c.name, func(t *testing.T) { testKVCacheLayout(t, c.store, false) })
		t.Run(c.name+"/grow-ahead", func(t *testing.T) { testKVCacheLayout(t, c.store, true) })
	}
}

// testKVCacheLayout with growAhead also checks that the doubled block is
// on its way once seven eighths of the capacity are in use, that growth
// adopts it, and that reset drops it.
func testKVCacheLayout(t *testing.T, store tensor.KVStore, growAhead bool) {
	const layers, heads, hd = 2, 3, 4
	size := map[tensor.KVStore]int{tensor.KVFloat32: 4, tensor.KVBFloat16: 2, tensor.KVInt8: 1}[store]
	// want returns element i of a head row as stored.
	want := func(row []float32, i int) float32 {
		switch store {
		case tensor.KVBFloat16:
			return tensor.BF16ToF32(tensor.F32ToBF16(row[i]))
		case tensor.KVInt8:
			q := make([]int8, len(row))
			s := tensor.QuantizeI8(q, row)
			return float32(q[i]) * s
		}
		return row[i]
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
			cap0, ahead := c.cap, c.ahead
			c.reserve(p + 1)
			switch {
			case p+1 > cap0 && growAhead && cap0 >= 8:
				// From eight positions on, the block was prepared at the
				// latest one position before it was needed.
				if ahead == nil || c.cap != 2*cap0 {
					t.Fatalf("growth to %d positions from %d: block ahead %v, capacity %d", p+1, cap0, ahead != nil, c.cap)
				}
			case growAhead && p+1 > c.cap-c.cap/8:
				if c.ahead == nil || c.aheadCap != 2*c.cap {
					t.Fatalf("%d of %d positions: no block of %d on its way", p+1, c.cap, 2*c.cap)
				}
			case !growAhead && c.ahead != nil:
				t.Fatalf("%d of %d positions: a block on its way without growAhead", p+1, c.cap)
			}
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
						k, v := kv.At(o, hd)
						krow, vrow := make([]float32, hd), make([]float32, hd)
						for e := range hd {
							krow[e], vrow[e] = val(l, p, h, e, false), val(l, p, h, e, true)
						}
						if wk, wv := want(krow, i), want(vrow, i); k != wk || v != wv {
							t.Fatalf("%s: layer %d pos %d head %d [%d] = %v/%v, want %v/%v", name, l, p, h, i, k, v, wk, wv)
						}
					}
				}
			}
		}
	}
	for _, capacity := range []int{1, 2, 5, 64} {
		c := newKVCache(layers, heads, hd, capacity, store)
		c.growAhead = growAhead
		fill(c, 0, 3)
		check("after 3", c, 3)
		fill(c, 3, 40) // grows at least once for every capacity but 64
		check("after growth", c, 40)
		wantBytes := int64(2 * layers * 40 * heads * hd * size)
		if store == tensor.KVInt8 {
			wantBytes += 2 * layers * 40 * heads * 4 // the scales
		}
		if got := c.bytes(); got != wantBytes {
			t.Errorf("bytes %d, want %d", got, wantBytes)
		}
		c.reset()
		if c.ahead != nil {
			t.Fatal("reset kept the block on its way")
		}
		check("reset", c, 0)
		fill(c, 0, 7)
		check("refilled", c, 7)
		if !growAhead {
			continue
		}
		// A request that ends in the last eighth: reset adopts the
		// prepared block once it has arrived (empty, doubled), and drops
		// one still on its way.
		cap0 := c.cap
		fill(c, 7, cap0-cap0/8+1)
		kvs := <-c.ahead // wait for it, and hand it back
		ch := make(chan []tensor.KV, 1)
		ch <- kvs
		c.ahead = ch
		c.reset()
		if c.ahead != nil || c.cap != 2*cap0 {
			t.Fatalf("reset after an arrived block: capacity %d, want %d; block kept on its way %v", c.cap, 2*cap0, c.ahead != nil)
		}
		check("reset with the block adopted", c, 0)
		fill(c, 0, 9)
		check("refilled after adoption", c, 9)
		c.ahead, c.aheadCap = make(chan []tensor.KV), 4*cap0 // never arrives
		c.reset()
		if c.ahead != nil || c.cap != 2*cap0 {
			t.Fatalf("reset with a block still on its way: capacity %d, want %d", c.cap, 2*cap0)
		}
	}
}
