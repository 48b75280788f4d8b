package tensor

import "fmt"

// KV is a block of cached key and value rows for Attend, AttendKV2 and
// AttendWindows: head h of row r is K[r·Stride + h·HeadStride :][:headDim]
// (and likewise in V). With HeadStride 0 the heads of a row are adjacent
// (HeadStride = head size): Stride is d for a plain [rows, d] cache and 3d
// for the rows of a fused q|k|v buffer. A head-major cache
// [heads][rows][headDim] has Stride = headDim and HeadStride = rows·headDim,
// which keeps the keys a head reads contiguous. Keys are addressed by a
// logical index j: row j itself, or with Ring > 0, row (First+j) mod Ring of
// a ring buffer of Ring rows.
//
// K16 and V16, when set instead of K and V, hold the keys and values as
// bfloat16 (same layout): half the memory, read and widened exactly, so the
// result is the one over the widened values, bit for bit. Attend,
// AttendKV2 and AttendWindows read them.
//
// BF16Scores (with K16, and an even head size; only AttendWindows reads
// BF16Scores and BF16Sums) computes the scores as bfloat16 dot products,
// the bfloat16 mode's arithmetic for products: the query is rounded to
// bfloat16 (nearest even, denormals to zero) and each score is one chain
// over pairs of head dimensions, (acc + q₁k₁) + q₀k₀ with every sum rounded
// to float32 and denormals flushed (VDPBF16PS's definition), from zero,
// then times scale. The rest of the contract is unchanged.
//
// BF16Sums (with BF16Scores) computes the weighted sums as bfloat16 dot
// products too, over values stored in row pairs: physical rows 2m and 2m+1
// of a head interleaved, element c of row r of head h at
//
//	V16[h·HeadStride + (r−r%2)·hd + 2c + r%2]
//
// (keys stay as above). It needs the head-major layout (Stride = hd,
// HeadStride at least rows·hd) and pairs that never straddle: an even Ring,
// or without a ring values for an even number of rows (the keys' rows
// rounded up). Each probability p_j is rounded to bfloat16 (as the queries
// are), and each output value is one chain over the pairs of rows that
// overlap the row's window, in order, (acc + p₁v₁) + p₀v₀ with every sum
// rounded to float32 and denormals flushed (VDPBF16PS's definition), from
// zero; the key of a pair outside the window enters with p = 0, so its
// value must be finite (the only way a key outside a window can touch a
// result). Pairs follow physical rows, so a ring whose rows are positions
// modulo an even Ring pairs keys exactly as a whole sequence from position
// 0 does.
//
// K8 and V8, when set instead, hold the keys and values as signed bytes,
// each head of a row with its own float32 scale: head h of row r stands for
// K8[o:o+headDim]·KS[o/headDim], o = r·Stride + h·HeadStride (likewise V8
// and VS), as QuantizeI8 writes them. They need the head-major layout
// (Stride = headDim, HeadStride a multiple of headDim covering the rows)
// and no ring. Attend and AttendKV2 read them directly: a score is ((q·k)·scale)·ks, k the bytes
// widened exactly, and the weight of a value row p·vs, both rounded to
// float32. AttendWindows dequantizes them (k·ks, rounded to float32) and
// attends over those float32 values.
type KV struct {
	K, V       []float32
	K16, V16   []uint16
	K8, V8     []int8
	KS, VS     []float32
	Stride     int
	HeadStride int  // 0: the head size
	Ring       int  // 0: no ring
	First      int  // ring row of logical key 0; 0 <= First < Ring
	BF16Scores bool // scores as bfloat16 dot products (see above)
	BF16Sums   bool // weighted sums as bfloat16 dot products over row pairs
}

// headStride returns the offset between heads of a row.
func (kv *KV) headStride(hd int) int {
	if kv.HeadStride == 0 {
		return hd
	}
	return kv.HeadStride
}

// bf16 reports whether the keys and values are stored as bfloat16.
func (kv *KV) bf16() bool { return kv.K16 != nil }

// i8 reports whether the keys and values are stored as scaled bytes.
func (kv *KV) i8() bool { return kv.K8 != nil }

// checkI8 returns why the int8 block kv cannot hold rows rows of heads ×
// hd, or "".
func (kv *KV) checkI8(rows, heads, hd int) string {
	switch {
	case kv.K != nil || kv.V != nil || kv.K16 != nil || kv.V16 != nil || kv.V8 == nil || kv.KS == nil || kv.VS == nil:
		return "int8 keys need int8 values, both with scales, and no other storage"
	case kv.Ring != 0 || kv.BF16Scores || kv.BF16Sums || hd < 1 || kv.Stride != hd || kv.HeadStride%hd != 0 || kv.HeadStride < 0:
		return fmt.Sprintf("int8 keys need the head-major layout without a ring (stride %d, head stride %d, head size %d)", kv.Stride, kv.HeadStride, hd)
	}
	if rows == 0 || heads == 0 {
		return ""
	}
	if heads > 1 && kv.headStride(hd) < rows*hd {
		return fmt.Sprintf("int8 keys need the head-major layout: head stride %d overlaps %d rows of %d", kv.HeadStride, rows, hd)
	}
	end := (rows-1)*kv.Stride + (heads-1)*kv.headStride(hd)
	if len(kv.K8) < end+hd || len(kv.V8) < end+hd || len(kv.KS) <= end/hd || len(kv.VS) <= end/hd {
		return fmt.Sprintf("int8 keys %d / values %d / scales %d, %d too short for %d rows of %d heads × %d", len(kv.K8), len(kv.V8), len(kv.KS), len(kv.VS), rows, heads, hd)
	}
	return ""
}

// dequantI8 returns the float32 values of the first rows rows of the int8
// block kv (heads × hd each), head-major in buf (grown as needed).
func (kv *KV) dequantI8(rows, heads, hd int, buf *[]float32) KV {
	per := rows * hd
	if cap(*buf) < 2*heads*per {
		*buf = make([]float32, 2*heads*per)
	}
	b := (*buf)[:2*heads*per]
	hs := kv.headStride(hd)
	for h := range heads {
		o := h * hs
		dequantRows(b[h*per:(h+1)*per], kv.K8[o:o+per], kv.KS[o/hd:o/hd+rows], hd)
		dequantRows(b[(heads+h)*per:(heads+h+1)*per], kv.V8[o:o+per], kv.VS[o/hd:o/hd+rows], hd)
	}
	return KV{K: b[:heads*per], V: b[heads*per:], Stride: hd, HeadStride: per}
}

// dequantRows sets dst[r·hd+c] = float32(q[r·hd+c])·s[r] for the len(s)
// rows.
func dequantRows(dst []float32, q []int8, s []float32, hd int) {
	if dequantRowsSIMD(dst, q, s, hd) {
		return
	}
	for r, f := range s {
		dequantRow(dst[r*hd:(r+1)*hd], q[r*hd:(r+1)*hd], f)
	}
}

// dequantRow sets dst[i] = float32(q[i])·s.
func dequantRow(dst []float32, q []int8, s float32) {
	for i, v := range q[:len(dst)] {
		dst[i] = float32(v) * s
	}
}

// rows8 widens n rows of hd signed bytes of src, from element offset o and
// Stride apart, into buf [n][hd] (their exact values, unscaled) and returns
// it.
func (kv *KV) rows8(src []int8, o, n, hd int, buf []float32) []float32 {
	for i := range n {
		row := src[o+i*kv.Stride : o+i*kv.Stride+hd]
		for c, v := range row {
			buf[i*hd+c] = float32(v)
		}
	}
	return buf[:n*hd]
}

// rows16 widens n rows of hd bfloat16 values of src, from element offset o
// and Stride apart, into buf [n][hd] and returns it.
func (kv *KV) rows16(src []uint16, o, n, hd int, buf []float32) []float32 {
	if kv.Stride == hd { // contiguous rows (a head-major ring)
		WidenBF16(buf[:n*hd], src[o:o+n*hd])
		return buf[:n*hd]
	}
	for i := range n {
		WidenBF16(buf[i*hd:(i+1)*hd], src[o+i*kv.Stride:o+i*kv.Stride+hd])
	}
	return buf[:n*hd]
}

// row returns the physical row of logical key j.
func (kv *KV) row(j int) int {
	if kv.Ring == 0 {
		return j
	}
	r := kv.First + j
	if r >= kv.Ring {
		r -= kv.Ring
	}
	return r
}

// KVStore is how a KV block holds its keys and values.
type KVStore uint8

const (
	KVFloat32  KVStore = iota // K and V
	KVBFloat16                // K16 and V16
	KVInt8                    // K8 and V8, scaled by KS and VS
)

// Store returns how kv holds its keys and values.
func (kv *KV) Store() KVStore {
	switch {
	case kv.K8 != nil:
		return KVInt8
	case kv.K16 != nil:
		return KVBFloat16
	}
	return KVFloat32
}

// HeadBytes returns the memory one head of one row of keys (or of values)
// of hd elements takes in storage s, its int8 scale included.
func (s KVStore) HeadBytes(hd int) int {
	switch s {
	case KVBFloat16:
		return 2 * hd
	case KVInt8:
		return hd + 4
	}
	return 4 * hd
}

// MakeHeadMajorKVs returns n empty blocks of storage s for rows rows of
// heads × hd each, head-major (Stride = hd, HeadStride = rows·hd: the rows
// of a head contiguous), one per layer of a cache, say. They share one
// allocation per element type, big enough for huge pages (see MakeHuge),
// block i's keys followed by its values.
func MakeHeadMajorKVs(s KVStore, n, heads, rows, hd int) []KV {
	per := heads * rows * hd
	kvs := make([]KV, n)
	for i := range kvs {
		kvs[i] = KV{Stride: hd, HeadStride: rows * hd}
	}
	switch s {
	case KVBFloat16:
		slab := MakeHuge16(2 * n * per)
		for i := range kvs {
			kvs[i].K16, kvs[i].V16 = halves(slab, i, per)
		}
	case KVInt8:
		slab, scales := MakeHuge8(2*n*per), MakeHuge(2*n*heads*rows)
		for i := range kvs {
			kvs[i].K8, kvs[i].V8 = halves(slab, i, per)
			kvs[i].KS, kvs[i].VS = halves(scales, i, heads*rows)
		}
	default:
		slab := MakeHuge(2 * n * per)
		for i := range kvs {
			kvs[i].K, kvs[i].V = halves(slab, i, per)
		}
	}
	return kvs
}

// FaultInKVs writes a zero to every memory page of the blocks' keys, values
// and scales, so that the page faults of fresh memory are taken now (on a
// goroutine that can afford them) rather than on the first writes of a
// decode step. The blocks must be fresh from MakeHeadMajorKVs: all zero.
func FaultInKVs(kvs []KV) {
	const page = 4096
	for i := range kvs {
		kv := &kvs[i]
		faultIn(kv.K, page/4)
		faultIn(kv.V, page/4)
		faultIn(kv.KS, page/4)
		faultIn(kv.VS, page/4)
		faultIn(kv.K16, page/2)
		faultIn(kv.V16, page/2)
		faultIn(kv.K8, page)
		faultIn(kv.V8, page)
	}
}

func faultIn[T float32 | uint16 | int8](x []T, perPage int) {
	for i := 0; i < len(x); i += perPage {
		x[i] = 0
	}
}

// halves returns the two per-element parts of block i of slab, capacity
// capped so that appending never runs into the next part.
func halves[T any](slab []T, i, per int) (k, v []T) {
	return slab[2*i*per : (2*i+1)*per : (2*i+1)*per], slab[(2*i+1)*per : (2*i+2)*per : (2*i+2)*per]
}

// Put stores the key and value of one head of one row, k and v (hd =
// len(k) elements each), at element offset o = r·Stride + h·HeadStride:
// rounded to bfloat16 (RoundBF16) or quantized (QuantizeI8, the scale at
// o/hd) as the block's storage needs, the value into its row pair with
// BF16Sums.
func (kv *KV) Put(o int, k, v []float32) {
	hd := len(k)
	switch {
	case kv.K8 != nil:
		kv.KS[o/hd] = QuantizeI8(kv.K8[o:o+hd], k)
		kv.VS[o/hd] = QuantizeI8(kv.V8[o:o+hd], v)
	case kv.K16 != nil:
		RoundBF16(kv.K16[o:o+hd], k)
		if kv.BF16Sums {
			kv.putPair(o, v)
			return
		}
		RoundBF16(kv.V16[o:o+hd], v)
	default:
		copy(kv.K[o:o+hd], k)
		copy(kv.V[o:o+hd], v)
	}
}

// putPair stores value row v of the head-major block (Stride = hd) at
// element offset o, rounded to bfloat16, into its row pair (see BF16Sums):
// element c of row r at (r−r%2)·hd + 2c + r%2 from the head's start.
func (kv *KV) putPair(o int, v []float32) {
	hd := len(v)
	odd := o % kv.headStride(hd) / hd % 2
	dst := kv.V16[o-odd*hd+odd:]
	var buf [64]uint16 // rounded a part at a time, on the stack
	for c0 := 0; c0 < hd; c0 += len(buf) {
		part := v[c0:min(c0+len(buf), hd)]
		RoundBF16(buf[:len(part)], part)
		d := dst[2*c0:]
		for c, x := range buf[:len(part)] {
			d[2*c] = x
		}
	}
}

// CopyRows copies the first n rows of the heads of src, head-major blocks
// of hd-element heads of the same storage (of any number of rows), into
// kv: how a cache keeps its rows when it grows.
func (kv *KV) CopyRows(src *KV, n, heads, hd int) {
	dh, sh := kv.headStride(hd), src.headStride(hd)
	for h := range heads {
		d, s := h*dh, h*sh
		switch {
		case kv.K8 != nil:
			copy(kv.K8[d:d+n*hd], src.K8[s:])
			copy(kv.V8[d:d+n*hd], src.V8[s:])
			copy(kv.KS[d/hd:d/hd+n], src.KS[s/hd:])
			copy(kv.VS[d/hd:d/hd+n], src.VS[s/hd:])
		case kv.K16 != nil:
			copy(kv.K16[d:d+n*hd], src.K16[s:])
			copy(kv.V16[d:d+n*hd], src.V16[s:])
		default:
			copy(kv.K[d:d+n*hd], src.K[s:])
			copy(kv.V[d:d+n*hd], src.V[s:])
		}
	}
}

// At returns the key and value that element o of a head of hd elements
// stands for: widened from bfloat16, or the int8 element times its scale.
func (kv *KV) At(o, hd int) (k, v float32) {
	switch {
	case kv.K8 != nil:
		return float32(kv.K8[o]) * kv.KS[o/hd], float32(kv.V8[o]) * kv.VS[o/hd]
	case kv.K16 != nil:
		return BF16ToF32(kv.K16[o]), BF16ToF32(kv.V16[o])
	}
	return kv.K[o], kv.V[o]
}
