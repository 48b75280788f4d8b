package weights

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type goldenTensor struct {
	Name   string `json:"name"`
	DType  DType  `json:"dtype"`
	Shape  []int  `json:"shape"`
	Values []any  `json:"values"`
	Hex    string `json:"hex"`
}

func loadGolden(t *testing.T) map[string][]goldenTensor {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(readFile(t, "testdata/torch/golden.json"), &raw); err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]goldenTensor)
	for k, v := range raw {
		if k == "torch_version" {
			continue
		}
		var ts []goldenTensor
		if err := json.Unmarshal(v, &ts); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = ts
	}
	if len(out) != 3 {
		t.Fatalf("golden.json has %d files, want 3", len(out))
	}
	return out
}

// checkGolden compares loaded tensors with the golden: names in order, dtypes, shapes, the
// exact bytes, and the values decoded through the safetensors helpers.
func checkGolden(t *testing.T, got []Tensor, want []goldenTensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.DType != w.DType || !cmp.Equal(g.Shape, w.Shape) {
			t.Errorf("tensor %d: got %s %s %v, want %s %s %v", i, g.Name, g.DType, g.Shape, w.Name, w.DType, w.Shape)
			continue
		}
		if h := hex.EncodeToString(g.Data); h != w.Hex {
			t.Errorf("%s: data %s, want %s", g.Name, h, w.Hex)
		}
		if len(g.Data) != g.NumElements()*g.DType.Size() || len(w.Values) != g.NumElements() {
			t.Errorf("%s: %d bytes, %d golden values for %d elements", g.Name, len(g.Data), len(w.Values), g.NumElements())
			continue
		}
		for j, wv := range w.Values {
			var gv any
			es := g.DType.Size()
			b := g.Data[j*es : (j+1)*es]
			switch g.DType {
			case F32, F16, BF16:
				f, err := g.Float32()
				if err != nil {
					t.Fatal(err)
				}
				gv = float64(f[j])
			case F64:
				gv = math.Float64frombits(binary.LittleEndian.Uint64(b))
			case I64:
				gv = float64(int64(binary.LittleEndian.Uint64(b)))
			case I32:
				gv = float64(int32(binary.LittleEndian.Uint32(b)))
			case Bool:
				gv = b[0] == 1
			}
			if gv != wv {
				t.Errorf("%s[%d] = %v, want %v", g.Name, j, gv, wv)
			}
		}
	}
}

func TestTorchGolden(t *testing.T) {
	golden := loadGolden(t)
	for file, want := range golden {
		t.Run(file, func(t *testing.T) {
			got, err := LoadTorch(filepath.Join("testdata", "torch", file))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, got, want)
		})
		t.Run(file+"/deflated", func(t *testing.T) {
			// Torch stores records uncompressed; a re-zipped checkpoint must read the same.
			z := rezip(t, readFile(t, filepath.Join("testdata", "torch", file)), true)
			got, err := readTorch(bytes.NewReader(z), int64(len(z)))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, got, want)
		})
	}
}

// TestTorchTiedOwnData checks that tensors sharing a storage (tied weights, views of one
// buffer, one memoised tensor under two names) come out equal but with their own data.
func TestTorchTiedOwnData(t *testing.T) {
	for _, tc := range []struct{ file, a, b string }{
		{"testdata/torch/basic.pt", "emb.weight", "head.weight"},
		{"testdata/torch/proto4.pt", "shared_a", "shared_b"},
		{"testdata/torch/tiny-a-lm/pytorch_model.bin", "transformer.wte.weight", "text_lm_head.weight"},
		{"testdata/torch/tiny-a-lm/pytorch_model.bin", "audio_embeddings.3.weight", "audio_lm_heads.3.weight"},
	} {
		ts, err := LoadTorch(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]Tensor{}
		for _, x := range ts {
			byName[x.Name] = x
		}
		a, b := byName[tc.a], byName[tc.b]
		if len(a.Data) == 0 || !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("%s: %s and %s differ or are empty", tc.file, tc.a, tc.b)
		}
		a.Data[0] ^= 0xff
		if a.Data[0] == b.Data[0] {
			t.Errorf("%s: %s and %s share their data slice", tc.file, tc.a, tc.b)
		}
	}
}

// TestTorchTinyA checks the torch conversion of the tiny-a LM against its safetensors file,
// byte for byte and in the same order.
func TestTorchTinyA(t *testing.T) {
	st, err := OpenSafetensors("../../testdata/tiny-a/lm/model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := LoadTorch("testdata/torch/tiny-a-lm/pytorch_model.bin")
	if err != nil {
		t.Fatal(err)
	}
	names := st.Names()
	if len(got) != len(names) {
		t.Fatalf("got %d tensors, safetensors has %d", len(got), len(names))
	}
	for i, name := range names {
		w, g := st.Tensor(name), got[i]
		if g.Name != name || g.DType != w.DType || !cmp.Equal(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("tensor %d: got %s %s %v (%d bytes), want %s %s %v (%d bytes)", i,
				g.Name, g.DType, g.Shape, len(g.Data), name, w.DType, w.Shape, len(w.Data))
		}
	}
	for _, f := range []string{"config.json", "tokenizer.model"} {
		if !bytes.Equal(readFile(t, "testdata/torch/tiny-a-lm/"+f), readFile(t, "../../testdata/tiny-a/lm/"+f)) {
			t.Errorf("testdata/torch/tiny-a-lm/%s differs from testdata/tiny-a/lm/%s", f, f)
		}
	}
}

func TestTorchLegacy(t *testing.T) {
	tar := make([]byte, 1024)
	copy(tar[257:], "ustar")
	for name, data := range map[string][]byte{
		"legacy.pt":   readFile(t, "testdata/torch/legacy.pt"),
		"tar":         tar,
		"bare pickle": newPB().proto(2).op(opNone, opStop).bytes(),
	} {
		_, err := readTorch(bytes.NewReader(data), int64(len(data)))
		if !errors.Is(err, errLegacyTorch) || !strings.Contains(err.Error(), "safetensors") {
			t.Errorf("%s: err = %v, want errLegacyTorch", name, err)
		}
	}
	_, err := LoadTorch("testdata/torch/legacy.pt")
	if !errors.Is(err, errLegacyTorch) || !strings.Contains(err.Error(), "legacy.pt") {
		t.Errorf("LoadTorch: err = %v, want errLegacyTorch naming the file", err)
	}
}

func TestLoadTorchMissingFile(t *testing.T) {
	_, err := LoadTorch(filepath.Join(t.TempDir(), "nope.bin"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

// TestTorchArchive covers archive-level behaviour with hand-made zips.
func TestTorchArchive(t *testing.T) {
	one := tspec{name: "w", class: "FloatStorage", key: "0", numel: 4, size: []int64{2, 2}, stride: []int64{2, 1}}
	four := f32bytes(1, 2, 3, 4)
	bigEndian := makeZip(t, rec{"archive/data.pkl", statePickle(one), false}, rec{"archive/data/0", four, false},
		rec{"archive/byteorder", []byte("big"), false})

	tests := []struct {
		name string
		zip  []byte
		want string // error substring; "" = success
	}{
		{"ok", makeZip(t, rec{"archive/data.pkl", statePickle(one), false}, rec{"archive/data/0", four, false},
			rec{"archive/byteorder", []byte("little"), false}, rec{"archive/version", []byte("3\n"), false}), ""},
		{"any root name", makeZip(t, rec{"x/data.pkl", statePickle(one), false}, rec{"x/data/0", four, false}), ""},
		{"big endian", bigEndian, "big-endian"},
		{"bad byteorder", makeZip(t, rec{"a/data.pkl", statePickle(one), false}, rec{"a/data/0", four, false},
			rec{"a/byteorder", []byte("middle"), false}), "unknown byteorder"},
		{"missing data.pkl", makeZip(t, rec{"archive/data/0", four, false}), "no <root>/data.pkl"},
		{"data.pkl too deep", makeZip(t, rec{"a/b/data.pkl", statePickle(one), false}), "no <root>/data.pkl"},
		{"two roots", makeZip(t, rec{"a/data.pkl", statePickle(one), false}, rec{"b/data.pkl", statePickle(one), false}), "2 data.pkl records"},
		{"duplicate record", makeZip(t, rec{"a/data.pkl", statePickle(one), false}, rec{"a/data/0", four, false},
			rec{"a/data/0", four, false}), "two records named"},
		{"storage key missing", makeZip(t, rec{"a/data.pkl", statePickle(one), false}, rec{"a/data/1", four, false}),
			`tensor "w": storage record a/data/0 is missing`},
		{"record shorter than declared", makeZip(t, rec{"a/data.pkl", statePickle(one), false}, rec{"a/data/0", four[:12], false}),
			"holds 12 bytes, the pickle declares 16"},
		{"view past storage", makeZip(t, rec{"a/data.pkl", statePickle(tspec{name: "v", class: "FloatStorage", key: "0", numel: 4,
			offset: 1, size: []int64{2, 2}, stride: []int64{2, 1}}), false}, rec{"a/data/0", four, false}),
			`tensor "v": view (offset 1, size [2 2], stride [2 1]) of torch.float32 needs 5 elements, storage "0" holds 16 bytes`},
		{"transposed view past storage", makeZip(t, rec{"a/data.pkl", statePickle(tspec{name: "v", class: "FloatStorage", key: "0", numel: 4,
			size: []int64{2, 3}, stride: []int64{1, 2}}), false}, rec{"a/data/0", four, false}), "needs 6 elements"},
		{"unsupported dtype", makeZip(t, rec{"a/data.pkl", statePickle(tspec{name: "c", class: "ComplexFloatStorage", key: "0", numel: 2,
			size: []int64{2}, stride: []int64{1}}), false}, rec{"a/data/0", four, false}), `tensor "c": dtype torch.complex64 is not supported`},
		{"broadcast over budget", makeZip(t, rec{"a/data.pkl", statePickle(tspec{name: "b", class: "FloatStorage", key: "0", numel: 1,
			size: []int64{1 << 30}, stride: []int64{0}}), false}, rec{"a/data/0", four[:4], false}), "refusing"},
		{"data.pkl bomb", zipWithRaw(t, "a/data.pkl", make([]byte, 1<<16), 1<<40), "declares 1099511627776 bytes (limit 67108864)"},
		{"data.pkl size lies", zipWithRaw(t, "a/data.pkl", statePickle(one), 10), "a/data.pkl"},
		{"storage bomb", zipWithRaw(t, "a/data/0", make([]byte, 1<<16), 1<<40,
			rec{"a/data.pkl", statePickle(tspec{name: "w", class: "FloatStorage", key: "0", numel: 1 << 36,
				size: []int64{1 << 30}, stride: []int64{1}}), false}), "refusing"},
		{"sparse view of a deflated storage", makeZip(t, rec{"a/data.pkl", statePickle(tspec{name: "s", class: "FloatStorage", key: "0", numel: 1 << 23,
			size: []int64{2}, stride: []int64{1<<23 - 1}}), false}, rec{"a/data/0", make([]byte, 1<<25), true}), "exceed the"},
		{"not a zip", []byte("hello, this is not a checkpoint at all"), "not a torch.save zip archive"},
		{"empty", nil, "not a torch.save zip archive"},
		{"forbidden global", makeZip(t, rec{"a/data.pkl", newPB().proto(2).global("os", "system").str("true").op(opTuple1, opReduce, opStop).bytes(), false}),
			"global os.system, which is not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readTorch(bytes.NewReader(tc.zip), int64(len(tc.zip)))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].Name != "w" || !bytes.Equal(got[0].Data, four) || !cmp.Equal(got[0].Shape, []int{2, 2}) {
					t.Errorf("got %+v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
			t.Log(err)
		})
	}
}

// TestTorchTruncated cuts a real checkpoint at many points; every cut must be an error.
func TestTorchTruncated(t *testing.T) {
	data := readFile(t, "testdata/torch/basic.pt")
	for _, n := range []int{0, 1, 4, 30, 100, len(data) / 3, len(data) / 2, len(data) - 23, len(data) - 22, len(data) - 1} {
		if _, err := readTorch(bytes.NewReader(data[:n]), int64(n)); err == nil {
			t.Errorf("cut at %d of %d: no error", n, len(data))
		}
	}
	// A lying size: the reader claims more bytes than the data has.
	if _, err := readTorch(bytes.NewReader(data[:100]), int64(len(data))); err == nil {
		t.Error("short reader: no error")
	}
}

// TestTorchNothingExecuted makes sure a malicious checkpoint does not run its payload.
func TestTorchNothingExecuted(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "pwned")
	payloads := [][]byte{
		newPB().proto(2).global("os", "system").str("touch "+canary).op(opTuple1, opReduce, opStop).bytes(),
		newPB().proto(4).sstr("builtins").sstr("eval").op(opStackGlobal).str("open('"+canary+"','w')").op(opTuple1, opReduce, opStop).bytes(),
		newPB().proto(2).global("__builtin__", "getattr").global("os", "system").str("x").op(opTuple2, opReduce, opStop).bytes(),
		// Hidden inside a tensor: the storage class slot.
		newPB().proto(2).op(opEmptyDict).str("w").global("torch._utils", "_rebuild_tensor_v2").op(opMark, opMark).str("storage").
			global("subprocess", "Popen").str("0").str("cpu").int(1).op(opTuple, opBinPersID).bytes(),
	}
	want := []forbiddenGlobalError{{"os", "system"}, {"builtins", "eval"}, {"__builtin__", "getattr"}, {"subprocess", "Popen"}}
	for i, p := range payloads {
		z := makeZip(t, rec{"archive/data.pkl", p, false})
		_, err := readTorch(bytes.NewReader(z), int64(len(z)))
		var ge *forbiddenGlobalError
		if !errors.As(err, &ge) || *ge != want[i] {
			t.Errorf("payload %d: err = %v, want forbiddenGlobalError %v", i, err, want[i])
		}
		if !strings.Contains(err.Error(), want[i].Module+"."+want[i].Name) {
			t.Errorf("payload %d: error %q does not name the global", i, err)
		}
	}
	if _, err := os.Stat(canary); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("canary file exists: %v", err)
	}
}

func FuzzReadTorch(f *testing.F) {
	for _, name := range []string{"basic.pt", "nested.pt", "proto4.pt", "legacy.pt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "torch", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	one := tspec{name: "w", class: "FloatStorage", key: "0", numel: 4, size: []int64{2, 2}, stride: []int64{1, 2}}
	f.Add(makeZip(f, rec{"a/data.pkl", statePickle(one), false}, rec{"a/data/0", f32bytes(1, 2, 3, 4), false}))
	f.Add(makeZip(f, rec{"a/data.pkl", statePickle(one), true}, rec{"a/data/0", f32bytes(1, 2, 3, 4), true}))
	f.Add(zipWithRaw(f, "a/data.pkl", make([]byte, 100), 1<<40))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := readTorch(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, x := range ts {
			if len(x.Data) != x.NumElements()*x.DType.Size() || x.DType.Size() == 0 {
				t.Fatalf("tensor %q: %d bytes for %s %v", x.Name, len(x.Data), x.DType, x.Shape)
			}
		}
	})
}

func BenchmarkLoadTorchTinyA(b *testing.B) {
	data := readFile(b, "testdata/torch/tiny-a-lm/pytorch_model.bin")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := readTorch(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
