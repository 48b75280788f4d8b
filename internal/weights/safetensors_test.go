package weights

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	in := []Tensor{
		{Name: "a.weight", DType: F32, Shape: []int{2, 3}, Data: f32bytes(1, 2, 3, 4, 5, 6)},
		{Name: "b", DType: BF16, Shape: []int{2}, Data: []byte{0x80, 0x3f, 0x00, 0xc0}}, // 1.0, -2.0
		{Name: "c", DType: F16, Shape: []int{3}, Data: []byte{0x00, 0x3c, 0x00, 0xb8, 0x01, 0x00}},
		{Name: "scalar", DType: F32, Shape: []int{}, Data: f32bytes(7)},
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteSafetensorsFile(path, in, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	f, err := OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if diff := cmp.Diff([]string{"a.weight", "b", "c", "scalar"}, f.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if f.Metadata["format"] != "pt" {
		t.Errorf("metadata = %v", f.Metadata)
	}
	tests := []struct {
		name string
		want []float32
	}{
		{"a.weight", []float32{1, 2, 3, 4, 5, 6}},
		{"b", []float32{1, -2}},
		{"c", []float32{1, -0.5, 5.960464477539063e-08}}, // f16 subnormal widens exactly
		{"scalar", []float32{7}},
	}
	for _, tc := range tests {
		got, err := f.Tensor(tc.name).Float32()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	bf, err := f.Tensor("b").BFloat16()
	if err != nil || bf[0] != 0x3f80 || bf[1] != 0xc000 {
		t.Errorf("BFloat16 = %x, %v", bf, err)
	}
	if _, err := f.Tensor("a.weight").BFloat16(); err == nil {
		t.Error("BFloat16 on F32 tensor: want error")
	}
}

func TestSafetensorsFixtures(t *testing.T) {
	for _, p := range []string{
		"../../testdata/tiny-a/lm/model.safetensors",
		"../../testdata/tiny-a/codec/model-00001-of-00001.safetensors",
		"../../testdata/tiny-b/lm/model.safetensors",
		"../../testdata/tiny-b/codec/model.safetensors",
	} {
		f, err := OpenSafetensors(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(f.Names()) == 0 {
			t.Errorf("%s: no tensors", p)
		}
		for _, n := range f.Names() {
			if _, err := f.Tensor(n).Float32(); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		f.Close()
	}
}

// header builds a file from a literal JSON header and a data section.
func safetensorsBytes(js string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(js)))
	b.WriteString(js)
	b.Write(data)
	return b.Bytes()
}

func TestSafetensorsParseErrors(t *testing.T) {
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 1<<62)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"short", []byte{1, 2, 3}, "too short"},
		{"huge header length", huge, "exceeds the"},
		{"header past end", safetensorsBytes(`{}`, nil)[:9], "exceeds the file"},
		{"not json", safetensorsBytes(`{nope`, nil), "not a JSON object"},
		{"array header", safetensorsBytes(`[1,2]`, nil), "not a JSON object"},
		{"unknown dtype", safetensorsBytes(`{"a":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}}`, []byte{0}), "unknown dtype"},
		{"offsets past data", safetensorsBytes(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 4)), "outside"},
		{"negative offset", safetensorsBytes(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, make([]byte, 4)), "outside"},
		{"size mismatch", safetensorsBytes(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "needs 12 bytes"},
		{"negative dim", safetensorsBytes(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), "bad dimension"},
		{"overflow", safetensorsBytes(`{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,0]}}`, nil), "overflows"},
		{"one offset", safetensorsBytes(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, make([]byte, 4)), "2 entries"},
		{"overlap", safetensorsBytes(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)), "overlap"},
		{"bad metadata", safetensorsBytes(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
		{"wrong types", safetensorsBytes(`{"a":{"dtype":"F32","shape":"x","data_offsets":[0,4]}}`, make([]byte, 4)), "bad header entry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSafetensors(tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseSafetensors: err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestSafetensorsTruncated(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tiny-b/lm/model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trunc.safetensors")
	if err := os.WriteFile(path, src[:len(src)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSafetensors(path); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("Open truncated: err = %v", err)
	}
}

func TestSafetensorsWriteErrors(t *testing.T) {
	var b bytes.Buffer
	if err := writeSafetensors(&b, []Tensor{{Name: "a", DType: F32, Shape: []int{1}, Data: f32bytes(1)}, {Name: "a", DType: F32, Shape: []int{1}, Data: f32bytes(1)}}, nil); err == nil {
		t.Error("duplicate: want error")
	}
	if err := writeSafetensors(&b, []Tensor{{Name: "a", DType: F32, Shape: []int{2}, Data: f32bytes(1)}}, nil); err == nil {
		t.Error("short data: want error")
	}
	if err := writeSafetensors(&b, []Tensor{{Name: "a", DType: "X", Shape: []int{1}, Data: []byte{1}}}, nil); err == nil {
		t.Error("bad dtype: want error")
	}
}

func FuzzParseSafetensors(f *testing.F) {
	f.Add(safetensorsBytes(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(safetensorsBytes(`{"__metadata__":{"k":"v"},"a":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(safetensorsBytes(`{"a":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}}`, nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parseSafetensors(data)
		if err != nil {
			return
		}
		for _, n := range file.Names() {
			tt := file.Tensor(n)
			if tt.DType.isFloat() {
				if _, err := tt.Float32(); err != nil {
					t.Fatalf("valid tensor %q failed to convert: %v", n, err)
				}
			}
		}
	})
}
