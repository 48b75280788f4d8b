package tensor

import (
	"runtime"
	"testing"
)

func TestMatmulParseString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Matmul
		bad  bool
	}{
		{"", F32, false}, {"f32", F32, false}, {"bf16", BF16, false}, {"int8", Int8, false},
		{"F32", F32, true}, {"fp16", F32, true}, {"int4", F32, true}, {" f32", F32, true},
	} {
		got, err := ParseMatmul(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseMatmul(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
		if !tc.bad && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	if s := Matmul(9).String(); s != "Matmul(9)" {
		t.Errorf("Matmul(9).String() = %q", s)
	}
}

func TestMatmulFallback(t *testing.T) {
	cases := []struct {
		m         Matmul
		supported bool
		bf16Dot   bool
	}{
		{F32, true, false},
		// arm64 keeps the bfloat16 dot products to the language model
		// (see BF16Dot).
		{BF16, HasBF16Dot(), runtime.GOARCH != "arm64"},
		{Int8, HasInt8Dot(), HasBF16Dot() && runtime.GOARCH != "arm64"},
	}
	for _, tc := range cases {
		if got := tc.m.Supported(); got != tc.supported {
			t.Errorf("%v.Supported() = %v, want %v", tc.m, got, tc.supported)
		}
		want := tc.m
		if !tc.supported {
			want = F32
		}
		if got := tc.m.Available(); got != want {
			t.Errorf("%v.Available() = %v, want %v", tc.m, got, want)
		}
		if got := tc.m.BF16Dot(); got != tc.bf16Dot {
			t.Errorf("%v.BF16Dot() = %v, want %v", tc.m, got, tc.bf16Dot)
		}
	}
}

// TestPackAs checks which layout each mode packs a matrix into, including
// the fallback to Pack for a matrix PackInt8 declines (too long a row).
func TestPackAs(t *testing.T) {
	layout := func(m *Mat) string {
		switch {
		case m.pq != nil:
			return "int8"
		case m.pdot != nil:
			return "bf16dot"
		case m.pf32 != nil || m.pb16 != nil:
			return "panels"
		}
		return "rows"
	}
	plain := "rows"
	if simdGEMM() {
		plain = "panels"
	}
	for _, tc := range []struct {
		mode Matmul
		cols int
		want string
	}{
		{F32, 64, plain},
		{BF16, 64, "bf16dot"},
		{Int8, 64, "int8"},
		{Int8, maxInt8Cols + 2, plain},
	} {
		m := NewF32(2, tc.cols, make([]float32, 2*tc.cols))
		m.PackAs(tc.mode)
		if got := layout(m); got != tc.want {
			t.Errorf("PackAs(%v) of a 2×%d matrix: layout %s, want %s", tc.mode, tc.cols, got, tc.want)
		}
	}
}
