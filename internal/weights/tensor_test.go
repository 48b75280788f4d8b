package weights

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// f32bytes encodes v as little-endian float32 tensor data.
func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func TestDecodeUnsupported(t *testing.T) {
	tt := Tensor{Name: "i", DType: I64, Shape: []int{1}, Data: make([]byte, 8)}
	if _, err := tt.Float32(); err == nil || !strings.Contains(err.Error(), "cannot be converted") {
		t.Fatalf("err = %v", err)
	}
}

// TestDecodeCopyEqualsLoop: the byte copy of little-endian hosts and the
// element-by-element decoding of the others give the same bits, NaN
// payloads and signed zeros included.
func TestDecodeCopyEqualsLoop(t *testing.T) {
	raw := make([]byte, 4*1000+2)
	for i := range raw {
		raw[i] = byte(i*131 + i/7)
	}
	copy(raw, f32bytes(float32(math.NaN()), float32(math.Copysign(0, -1)), float32(math.Inf(1))))
	for _, tc := range []Tensor{
		{Name: "f32", DType: F32, Shape: []int{1000}, Data: raw[:4000]},
		{Name: "bf16", DType: BF16, Shape: []int{2001}, Data: raw[:4002]},
		{Name: "empty", DType: BF16, Shape: []int{0}, Data: nil},
	} {
		decode := func(native bool) ([]float32, []uint16) {
			old := nativeLittleEndian
			nativeLittleEndian = native
			defer func() { nativeLittleEndian = old }()
			f, err := tc.Float32()
			if err != nil {
				t.Fatal(err)
			}
			var b []uint16
			if tc.DType == BF16 {
				if b, err = tc.BFloat16(); err != nil {
					t.Fatal(err)
				}
			}
			return f, b
		}
		f1, b1 := decode(true)
		f2, b2 := decode(false)
		if len(f1) != tc.NumElements() || len(f1) != len(f2) || len(b1) != len(b2) {
			t.Fatalf("%s: lengths %d/%d, %d/%d", tc.Name, len(f1), len(f2), len(b1), len(b2))
		}
		for i := range f1 {
			if math.Float32bits(f1[i]) != math.Float32bits(f2[i]) {
				t.Fatalf("%s[%d]: copy %08x, loop %08x", tc.Name, i, math.Float32bits(f1[i]), math.Float32bits(f2[i]))
			}
		}
		for i := range b1 {
			if b1[i] != b2[i] {
				t.Fatalf("%s[%d]: copy %04x, loop %04x", tc.Name, i, b1[i], b2[i])
			}
		}
	}
}
