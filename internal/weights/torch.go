package weights

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// errLegacyTorch is returned for checkpoints in the pre-1.6 (non-zip) torch.save format.
var errLegacyTorch = errors.New("legacy (pre-1.6, non-zip) torch.save format is not supported: re-save it with a current torch (torch.save(torch.load(path), path)) or convert it to safetensors")

// Limits on what an archive may make us allocate.
const (
	maxPickleSize   = 64 << 20 // data.pkl; real state dicts take a few KiB to a few MiB
	maxSmallRecord  = 64       // byteorder
	expansionFactor = 4        // output bytes per archive byte, see "PyTorch checkpoints" in doc.go
	expansionSlack  = 16 << 20
)

// LoadTorch reads a torch.save zip checkpoint and returns its tensors in state-dict order.
//
// Data is contiguous little-endian bytes owned by each tensor (copied or gathered from the
// storages, so views, offsets and non-contiguous strides are materialised). DTypes are
// the safetensors spellings: F32, F16, BF16, and also F64, I64, I32, I16, I8, U8 and BOOL; other
// torch dtypes (complex, quantized, float8, unsigned > 8 bit) are an error naming the tensor.
//
// The pickled object must be a dict of name → tensor (nn.Module.state_dict()). Nested dicts
// inside it are flattened with "."-joined names. A training checkpoint that nests the state
// dict under "state_dict", "model_state_dict", "model" or "module" (first one present whose
// value is a dict) is unwrapped and its other entries are ignored. Anything else is an error.
func LoadTorch(path string) ([]Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("torch checkpoint: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("torch checkpoint: %w", err)
	}
	ts, err := readTorch(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("torch checkpoint %s: %w", path, err)
	}
	return ts, nil
}

// readTorch is LoadTorch for a checkpoint of size bytes read through r.
func readTorch(r io.ReaderAt, size int64) ([]Tensor, error) {
	if size < 0 || size > math.MaxInt64/(2*expansionFactor) {
		return nil, fmt.Errorf("bad file size %d", size)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && (zr == nil || !errors.Is(err, zip.ErrInsecurePath)) {
		if isLegacy(r, size) {
			return nil, errLegacyTorch
		}
		return nil, fmt.Errorf("not a torch.save zip archive: %w", err)
	}
	files := make(map[string]*zip.File, len(zr.File))
	var roots []string
	for _, f := range zr.File {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("archive has two records named %q", clip(f.Name))
		}
		files[f.Name] = f
		if dir, rest, ok := strings.Cut(f.Name, "/"); ok && dir != "" && rest == "data.pkl" {
			roots = append(roots, dir)
		}
	}
	switch len(roots) {
	case 0:
		return nil, errors.New("archive has no <root>/data.pkl record: not a torch.save checkpoint")
	case 1:
	default:
		return nil, fmt.Errorf("archive has %d data.pkl records (%q, %q, ...)", len(roots), clip(roots[0]), clip(roots[1]))
	}
	root := roots[0]

	if f := files[root+"/byteorder"]; f != nil {
		b, err := readRecord(f, maxSmallRecord)
		if err != nil {
			return nil, err
		}
		switch order := strings.TrimSpace(string(b)); order {
		case "little":
		case "big":
			return nil, errors.New("big-endian checkpoint (byteorder \"big\") is not supported: re-save it on a little-endian machine")
		default:
			return nil, fmt.Errorf("unknown byteorder %q", clip(order))
		}
	}

	pkl, err := readRecord(files[root+"/data.pkl"], maxPickleSize)
	if err != nil {
		return nil, err
	}
	obj, err := unpickle(pkl, newEnv())
	if err != nil {
		return nil, fmt.Errorf("%s/data.pkl: %w", clip(root), err)
	}
	entries, err := stateDict(obj)
	if err != nil {
		return nil, err
	}

	budget := expansionFactor*size + expansionSlack
	plans := make([]plan, len(entries))
	var total int64
	for i, e := range entries {
		if plans[i], err = makePlan(e.name, e.t); err != nil {
			return nil, err
		}
		if total += plans[i].nbytes; total > budget {
			return nil, fmt.Errorf("tensors up to %q need more than %d bytes (%d× the %d byte file + 16 MiB): refusing views that expand the file this much (broadcast or overlapping views)",
				clip(e.name), budget, expansionFactor, size)
		}
	}
	out := make([]Tensor, len(entries))
	keys, groups := storageOrder(entries)
	for _, key := range keys {
		idx := groups[key]
		if err := loadStorage(r, size, files, root, entries[idx[0]].t.st, idx, plans, out, budget); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// isLegacy recognises the pre-1.6 formats: a bare pickle stream (it starts with the PROTO
// opcode of the magic number) or, before that, a tar archive.
func isLegacy(r io.ReaderAt, size int64) bool {
	var b [262]byte
	n, _ := r.ReadAt(b[:min(size, int64(len(b)))], 0)
	if n >= 2 && b[0] == opProto && b[1] >= 2 && b[1] <= 5 {
		return true
	}
	return n >= 262 && string(b[257:262]) == "ustar"
}

// readRecord reads a whole small record after checking its declared size.
func readRecord(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("record %s declares %d bytes (limit %d)", clip(f.Name), f.UncompressedSize64, limit)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", clip(f.Name), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", clip(f.Name), err)
	}
	if uint64(len(b)) != f.UncompressedSize64 {
		return nil, fmt.Errorf("record %s holds %d bytes, declares %d", clip(f.Name), len(b), f.UncompressedSize64)
	}
	return b, nil
}

// loadStorage materialises the tensors idx that view storage st. Stored (uncompressed)
// records, which is what torch writes, are read in place: contiguous tensors straight into
// their output, and when some view is not contiguous the used extent of the storage once.
// Compressed records are inflated once.
func loadStorage(r io.ReaderAt, size int64, files map[string]*zip.File, root string, st *storage, idx []int, plans []plan, out []Tensor, budget int64) error {
	first := plans[idx[0]].name
	name := root + "/data/" + st.key
	f := files[name]
	if f == nil {
		return fmt.Errorf("tensor %q: storage record %s is missing from the archive", clip(first), clip(name))
	}
	if f.UncompressedSize64 < uint64(st.nbytes) {
		return fmt.Errorf("tensor %q: storage record %s holds %d bytes, the pickle declares %d", clip(first), clip(name), f.UncompressedSize64, st.nbytes)
	}
	lo, hi := int64(math.MaxInt64), int64(0)
	contiguous := true
	for _, i := range idx {
		p := &plans[i]
		if p.nbytes == 0 {
			continue
		}
		lo, hi = min(lo, p.lo), max(hi, p.hi)
		contiguous = contiguous && p.contiguous
	}
	if hi == 0 {
		lo = 0
	}

	var src io.ReaderAt
	var window []byte // storage bytes [base, base+len(window))
	var base int64
	switch f.Method {
	case zip.Store:
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("storage record %s: %w", clip(name), err)
		}
		if f.CompressedSize64 != f.UncompressedSize64 || off < 0 || off > size || f.CompressedSize64 > uint64(size-off) {
			return fmt.Errorf("storage record %s: %d bytes at offset %d do not fit the %d byte file", clip(name), f.CompressedSize64, off, size)
		}
		src = io.NewSectionReader(r, off, hi)
		if !contiguous {
			window, base = make([]byte, hi-lo), lo
			if _, err := src.ReadAt(window, lo); err != nil {
				return fmt.Errorf("storage record %s: %w", clip(name), err)
			}
		}
	default:
		if hi > budget {
			return fmt.Errorf("storage record %s: %d bytes exceed the %d byte budget", clip(name), hi, budget)
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("storage record %s: %w", clip(name), err)
		}
		window = make([]byte, hi)
		_, err = io.ReadFull(rc, window)
		rc.Close()
		if err != nil {
			return fmt.Errorf("storage record %s: %w", clip(name), err)
		}
	}

	for _, i := range idx {
		p := &plans[i]
		data := make([]byte, p.nbytes)
		switch {
		case p.nbytes == 0:
		case window != nil:
			gather(data, window, base, p)
		default:
			if _, err := src.ReadAt(data, p.lo); err != nil {
				return fmt.Errorf("tensor %q: storage record %s: %w", clip(p.name), clip(name), err)
			}
		}
		out[i] = Tensor{Name: p.name, DType: p.dtype, Shape: p.shape, Data: data}
	}
	return nil
}
