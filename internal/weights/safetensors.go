package weights

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// maxSafetensorsHeader bounds the JSON header; real checkpoints use a few hundred KiB.
const maxSafetensorsHeader = 100 << 20

// SafetensorsFile is a parsed safetensors file.
type SafetensorsFile struct {
	// Metadata is the optional "__metadata__" string map of the header.
	Metadata map[string]string
	tensors  map[string]*Tensor
	names    []string
	unmap    func() error
}

// Names returns the tensor names in file order (by data offset).
func (f *SafetensorsFile) Names() []string { return f.names }

// Tensor returns the named tensor, or nil.
func (f *SafetensorsFile) Tensor(name string) *Tensor { return f.tensors[name] }

// Close releases the file's memory mapping. Tensor data must not be used afterwards.
func (f *SafetensorsFile) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	f.tensors = nil
	return err
}

// OpenSafetensors reads and validates a safetensors file, memory-mapping it where possible.
func OpenSafetensors(path string) (*SafetensorsFile, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := parseSafetensors(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("safetensors %s: %w", path, err)
	}
	f.unmap = unmap
	return f, nil
}

type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// parseSafetensors validates a whole safetensors file held in memory. The returned
// tensors alias data.
func parseSafetensors(data []byte) (*SafetensorsFile, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("file is %d bytes, too short for a header", len(data))
	}
	hlen := binary.LittleEndian.Uint64(data)
	if hlen > maxSafetensorsHeader {
		return nil, fmt.Errorf("header length %d exceeds the %d byte limit", hlen, maxSafetensorsHeader)
	}
	if hlen > uint64(len(data)-8) {
		return nil, fmt.Errorf("header length %d exceeds the file (%d bytes)", hlen, len(data))
	}
	header := data[8 : 8+hlen]
	body := data[8+hlen:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		return nil, fmt.Errorf("header is not a JSON object: %w", err)
	}
	f := &SafetensorsFile{tensors: make(map[string]*Tensor, len(raw))}
	type span struct {
		begin, end int64
		name       string
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("__metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: bad header entry: %w", name, err)
		}
		size := e.DType.Size()
		if size == 0 {
			return nil, fmt.Errorf("tensor %q: unknown dtype %q", name, e.DType)
		}
		if len(e.DataOffsets) != 2 {
			return nil, fmt.Errorf("tensor %q: data_offsets must have 2 entries, has %d", name, len(e.DataOffsets))
		}
		begin, end := e.DataOffsets[0], e.DataOffsets[1]
		if begin < 0 || end < begin || end > int64(len(body)) {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] outside the %d data bytes", name, begin, end, len(body))
		}
		numel := int64(1)
		shape := make([]int, len(e.Shape))
		for i, d := range e.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, fmt.Errorf("tensor %q: bad dimension %d in shape %v", name, d, e.Shape)
			}
			if d != 0 && numel > math.MaxInt64/8/d {
				return nil, fmt.Errorf("tensor %q: shape %v overflows", name, e.Shape)
			}
			numel *= d
			shape[i] = int(d)
		}
		if numel*int64(size) != end-begin {
			return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets give %d", name, e.Shape, e.DType, numel*int64(size), end-begin)
		}
		f.tensors[name] = &Tensor{Name: name, DType: e.DType, Shape: shape, Data: body[begin:end:end]}
		spans = append(spans, span{begin, end, name})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].name < spans[j].name
	})
	for i, s := range spans {
		if i > 0 && s.begin < spans[i-1].end {
			return nil, fmt.Errorf("tensors %q and %q overlap", spans[i-1].name, s.name)
		}
		f.names = append(f.names, s.name)
	}
	return f, nil
}

// errDuplicateTensor is returned by writeSafetensors when two tensors share a name.
var errDuplicateTensor = errors.New("duplicate tensor name")
