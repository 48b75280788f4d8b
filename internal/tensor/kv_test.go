package tensor

import "testing"

// TestHeadMajorKVs stores rows into head-major blocks of every storage,
// grows them with CopyRows and reads the values back with At: each must be
// the stored one as the storage rounds it (RoundBF16, QuantizeI8).
func TestHeadMajorKVs(t *testing.T) {
	const blocks, heads, hd = 2, 3, 4
	for _, tc := range []struct {
		name  string
		store KVStore
		bytes int
	}{{"f32", KVFloat32, 4 * hd}, {"bf16", KVBFloat16, 2 * hd}, {"int8", KVInt8, hd + 4}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.store.HeadBytes(hd); got != tc.bytes {
				t.Errorf("HeadBytes(%d) = %d, want %d", hd, got, tc.bytes)
			}
			row := func(b, r, h int, neg bool) []float32 {
				x := make([]float32, hd)
				for i := range x {
					x[i] = float32(b*1000+r*100+h*10+i) + 0.3
					if neg {
						x[i] = -x[i]
					}
				}
				return x
			}
			// want is element i of a head row as the storage keeps it.
			want := func(x []float32, i int) float32 {
				switch tc.store {
				case KVBFloat16:
					return BF16ToF32(F32ToBF16(x[i]))
				case KVInt8:
					q := make([]int8, len(x))
					s := QuantizeI8(q, x)
					return float32(q[i]) * s
				}
				return x[i]
			}
			check := func(kvs []KV, rows int) {
				t.Helper()
				for b := range kvs {
					if got := kvs[b].Store(); got != tc.store {
						t.Fatalf("Store() = %d, want %d", got, tc.store)
					}
					for r := range rows {
						for h := range heads {
							kr, vr := row(b, r, h, false), row(b, r, h, true)
							for i := range hd {
								k, v := kvs[b].At(r*kvs[b].Stride+h*kvs[b].HeadStride+i, hd)
								if k != want(kr, i) || v != want(vr, i) {
									t.Fatalf("block %d row %d head %d [%d] = %v/%v, want %v/%v", b, r, h, i, k, v, want(kr, i), want(vr, i))
								}
							}
						}
					}
				}
			}
			const rows = 3
			kvs := MakeHeadMajorKVs(tc.store, blocks, heads, rows, hd)
			for b := range kvs {
				if kvs[b].Stride != hd || kvs[b].HeadStride != rows*hd {
					t.Fatalf("stride %d, head stride %d, want %d, %d", kvs[b].Stride, kvs[b].HeadStride, hd, rows*hd)
				}
				for r := range rows {
					for h := range heads {
						kvs[b].Put(r*kvs[b].Stride+h*kvs[b].HeadStride, row(b, r, h, false), row(b, r, h, true))
					}
				}
			}
			check(kvs, rows)
			grown := MakeHeadMajorKVs(tc.store, blocks, heads, 2*rows+1, hd)
			for b := range grown {
				grown[b].CopyRows(&kvs[b], rows, heads, hd)
			}
			check(grown, rows)
		})
	}
}

// TestPutPairs: with BF16Sums, Put stores a value row in its row pair
// (element c of row r of head h at h·HeadStride + (r−r%2)·hd + 2c + r%2,
// rounded to bfloat16) and the key as usual; every element is written
// once, by its own row, for head sizes below and above Put's 64-element
// parts.
func TestPutPairs(t *testing.T) {
	for _, hd := range []int{2, 6, 64, 130} {
		const heads, rows = 3, 6
		hs := (rows + 2) * hd // room to spare after each head
		kv := KV{K16: make([]uint16, heads*hs), V16: make([]uint16, heads*hs), Stride: hd, HeadStride: hs, BF16Scores: true, BF16Sums: true}
		// Every element a distinct bfloat16 value (exact, so rounding
		// cannot make two rows alike).
		bits := func(r, h, c int) uint16 { return uint16(0x3f80 + (h*rows+r)*hd + c) }
		val := func(r, h, c int) float32 { return BF16ToF32(bits(r, h, c)) }
		for r := range rows {
			for h := range heads {
				k, v := make([]float32, hd), make([]float32, hd)
				for c := range hd {
					k[c], v[c] = -val(r, h, c), val(r, h, c)
				}
				kv.Put(r*hd+h*hs, k, v)
			}
		}
		for h := range heads {
			for r := range rows {
				for c := range hd {
					want := bits(r, h, c)
					if got := kv.V16[h*hs+(r-r%2)*hd+2*c+r%2]; got != want {
						t.Fatalf("hd %d: value of row %d head %d element %d = %#x, want %#x", hd, r, h, c, got, want)
					}
					if got := kv.K16[h*hs+r*hd+c]; got != 0x8000|want {
						t.Fatalf("hd %d: key of row %d head %d element %d = %#x", hd, r, h, c, got)
					}
				}
			}
		}
	}
}

// TestFaultInKVs: faulting fresh blocks in leaves them as they were (all
// zero) for every storage, and blocks without some of the slices (no
// scales, say) are fine.
func TestFaultInKVs(t *testing.T) {
	for _, s := range []KVStore{KVFloat32, KVBFloat16, KVInt8} {
		kvs := MakeHeadMajorKVs(s, 3, 4, 1500, 64) // a few pages per slice
		FaultInKVs(kvs)
		FaultInKVs(nil)
		for b := range kvs {
			for o := 0; o < 4*1500*64; o++ {
				if k, v := kvs[b].At(o, 64); k != 0 || v != 0 {
					t.Fatalf("store %d block %d element %d: %v/%v after FaultInKVs", s, b, o, k, v)
				}
			}
		}
	}
}
