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
