package weights

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLayouts(t *testing.T) {
	tests := []struct {
		dir   string
		files []string
	}{
		{"../../testdata/tiny-a/lm", []string{"model.safetensors"}},
		{"../../testdata/tiny-a/codec", []string{"model-00001-of-00001.safetensors"}},
		{"../../testdata/tiny-b/lm", []string{"model.safetensors"}},
		{"testdata/torch/tiny-a-lm", []string{"pytorch_model.bin"}},
	}
	for _, tc := range tests {
		s, err := Open(tc.dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		if diff := cmp.Diff(tc.files, s.Files()); diff != "" {
			t.Errorf("%s files (-want +got):\n%s", tc.dir, diff)
		}
		if len(s.Names()) == 0 {
			t.Errorf("%s: no tensors", tc.dir)
		}
		s.Close()
	}
}

// TestTorchEqualsSafetensors: the torch.save conversion of tiny-a's LM holds
// exactly the safetensors tensors (tied copies included).
func TestTorchEqualsSafetensors(t *testing.T) {
	a, err := Open("../../testdata/tiny-a/lm")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open("testdata/torch/tiny-a-lm")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if diff := cmp.Diff(a.Names(), b.Names()); diff != "" {
		t.Fatalf("names (-safetensors +torch):\n%s", diff)
	}
	for _, n := range a.Names() {
		ta, tb := a.Tensor(n), b.Tensor(n)
		if ta.DType != tb.DType || !cmp.Equal(ta.Shape, tb.Shape) || !bytes.Equal(ta.Data, tb.Data) {
			t.Errorf("%s differs: %s %v vs %s %v", n, ta.DType, ta.Shape, tb.DType, tb.Shape)
		}
	}
}

func TestDirectoryVariants(t *testing.T) {
	src := "../../testdata/tiny-b/lm/model.safetensors"
	t.Run("any safetensors name", func(t *testing.T) {
		d := t.TempDir()
		copyFile(t, src, filepath.Join(d, "weights-b.safetensors"))
		s, err := Open(d)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if !s.Has("transformer.wte.weight") {
			t.Fatal("tensor missing")
		}
	})
	t.Run("index with missing shard", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors"}}`), 0o644)
		_, err := Open(d)
		if err == nil || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("index escaping the dir", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"../x.safetensors"}}`), 0o644)
		if _, err := Open(d); err == nil || !strings.Contains(err.Error(), "invalid shard") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad index json", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "model.safetensors.index.json"), []byte(`{`), 0o644)
		if _, err := Open(d); err == nil {
			t.Fatal("want error")
		}
	})
	t.Run("no weights", func(t *testing.T) {
		if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no weights") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("not a dir", func(t *testing.T) {
		if _, err := Open(src); err == nil {
			t.Fatal("want error")
		}
	})
	t.Run("truncated file", func(t *testing.T) {
		d := t.TempDir()
		b, _ := os.ReadFile(src)
		os.WriteFile(filepath.Join(d, "model.safetensors"), b[:len(b)/2], 0o644)
		if _, err := Open(d); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("corrupt torch file", func(t *testing.T) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "pytorch_model.bin"), []byte("not a zip"), 0o644)
		if _, err := Open(d); err == nil {
			t.Fatal("want error")
		}
	})
}

func TestTypedGetters(t *testing.T) {
	s, err := Open("../../testdata/tiny-a/lm")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Mat(1024, 64, true, "transformer.wte.weight"); err != nil {
		t.Fatal(err)
	}
	m, err := s.Mat(1024, 64, true, "nope", "transformer.wte.weight")
	if err != nil || !m.IsBF16() {
		t.Fatalf("alias lookup: %v (bf16 %v)", err, m != nil && m.IsBF16())
	}
	m, err = s.Mat(1024, 64, false, "transformer.wte.weight")
	if err != nil || m.IsBF16() {
		t.Fatalf("f32 conversion: %v", err)
	}
	_, err = s.Mat(64, 1024, true, "transformer.wte.weight")
	var se *ShapeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `"transformer.wte.weight" has shape [1024 64], config implies [64 1024]`) {
		t.Fatalf("shape error = %v", err)
	}
	_, err = s.F32([]int{3}, "missing.a", "missing.b")
	var me *MissingError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), `missing tensor "missing.a"`) {
		t.Fatalf("missing error = %v", err)
	}
	if u := s.Unused(); len(u) == 0 {
		t.Fatal("Unused should list untouched tensors")
	}
}
