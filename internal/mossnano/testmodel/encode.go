package testmodel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/x448/float16"

	"github.com/nanovox/nanovox/internal/tensor"
	"github.com/nanovox/nanovox/internal/weights"
)

func storageDType(d DType) (weights.DType, error) {
	switch d {
	case Float32:
		return weights.F32, nil
	case BFloat16:
		return weights.BF16, nil
	case Float16:
		return weights.F16, nil
	}
	return "", fmt.Errorf("testmodel: unknown dtype %q (float32, bfloat16, float16)", d)
}

// encodeTensor stores float32 values in the requested dtype
// (round to nearest even for the half types).
func encodeTensor(name string, shape []int, vals []float32, d DType) weights.Tensor {
	sd, _ := storageDType(d)
	var b []byte
	switch sd {
	case weights.F32:
		b = make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case weights.BF16:
		b = make([]byte, 2*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint16(b[2*i:], tensor.F32ToBF16(v))
		}
	case weights.F16:
		b = make([]byte, 2*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(v).Bits())
		}
	}
	return weights.Tensor{Name: name, DType: sd, Shape: append([]int(nil), shape...), Data: b}
}

// writeIndex writes a Hugging Face model.safetensors.index.json mapping every
// tensor to file.
func writeIndex(path string, ts []weights.Tensor, file string) error {
	var total int64
	wm := make(map[string]string, len(ts))
	for _, t := range ts {
		wm[t.Name] = file
		total += int64(len(t.Data))
	}
	b, err := json.MarshalIndent(map[string]any{
		"metadata":   map[string]any{"total_size": total},
		"weight_map": wm,
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
