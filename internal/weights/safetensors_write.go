package weights

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// writeSafetensors serialises tensors in the given order with optional metadata. The
// header is padded with spaces to a multiple of 8 bytes, as the reference
// implementation does, so every tensor starts 8-byte aligned relative to the
// data section.
func writeSafetensors(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header := make(map[string]any, len(tensors)+1)
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for i := range tensors {
		t := &tensors[i]
		if _, dup := header[t.Name]; dup || t.Name == "__metadata__" {
			return fmt.Errorf("safetensors: %w: %q", errDuplicateTensor, t.Name)
		}
		if t.DType.Size() == 0 {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		if want := t.NumElements() * t.DType.Size(); len(t.Data) != want {
			return fmt.Errorf("safetensors: tensor %q: shape %v of %s needs %d bytes, has %d", t.Name, t.Shape, t.DType, want, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = map[string]any{
			"dtype":        t.DType,
			"shape":        shape,
			"data_offsets": [2]int64{off, off + int64(len(t.Data))},
		}
		off += int64(len(t.Data))
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: encode header: %w", err)
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var lenbuf [8]byte
	binary.LittleEndian.PutUint64(lenbuf[:], uint64(len(hb)))
	if _, err := bw.Write(lenbuf[:]); err != nil {
		return err
	}
	if _, err := bw.Write(hb); err != nil {
		return err
	}
	for i := range tensors {
		if _, err := bw.Write(tensors[i].Data); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteSafetensorsFile writes tensors to path atomically (temporary file, then rename).
func WriteSafetensorsFile(path string, tensors []Tensor, metadata map[string]string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := writeSafetensors(tmp, tensors, metadata); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// SortedByName returns tensors sorted by name, the order the Python library writes.
func SortedByName(ts []Tensor) []Tensor {
	out := append([]Tensor(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
