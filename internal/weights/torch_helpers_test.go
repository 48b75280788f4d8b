package weights

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// pb assembles pickles by hand for the tests.
type pb struct{ b []byte }

func newPB() *pb { return &pb{} }

func (p *pb) op(ops ...byte) *pb { p.b = append(p.b, ops...); return p }

func (p *pb) proto(v byte) *pb { return p.op(opProto, v) }

// str writes BINUNICODE.
func (p *pb) str(s string) *pb {
	p.op(opBinUnicode)
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	p.b = append(p.b, s...)
	return p
}

// sstr writes SHORT_BINUNICODE.
func (p *pb) sstr(s string) *pb {
	p.op(opShortBinUnicode, byte(len(s)))
	p.b = append(p.b, s...)
	return p
}

// int writes the smallest integer opcode, as Python does.
func (p *pb) int(n int64) *pb {
	switch {
	case n >= 0 && n < 256:
		return p.op(opBinInt1, byte(n))
	case n >= 0 && n < 65536:
		p.op(opBinInt2)
		p.b = binary.LittleEndian.AppendUint16(p.b, uint16(n))
		return p
	case n >= math.MinInt32 && n <= math.MaxInt32:
		p.op(opBinInt)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(int32(n)))
		return p
	}
	p.op(opLong1, 8)
	p.b = binary.LittleEndian.AppendUint64(p.b, uint64(n))
	return p
}

func (p *pb) float(f float64) *pb {
	p.op(opBinFloat)
	p.b = binary.BigEndian.AppendUint64(p.b, math.Float64bits(f))
	return p
}

func (p *pb) global(module, name string) *pb {
	p.op(opGlobal)
	p.b = append(p.b, module+"\n"+name+"\n"...)
	return p
}

func (p *pb) ints(xs []int64) *pb {
	p.op(opMark)
	for _, x := range xs {
		p.int(x)
	}
	return p.op(opTuple)
}

// put and get write LONG_BINPUT and LONG_BINGET.
func (p *pb) put(i uint32) *pb {
	p.op(opLongBinPut)
	p.b = binary.LittleEndian.AppendUint32(p.b, i)
	return p
}

func (p *pb) get(i uint32) *pb {
	p.op(opLongBinGet)
	p.b = binary.LittleEndian.AppendUint32(p.b, i)
	return p
}

func (p *pb) bytes() []byte { return p.b }

// tspec describes one tensor of a hand-made state dict.
type tspec struct {
	name   string
	class  string // storage class in module torch, e.g. "FloatStorage"
	key    string
	numel  int64 // of the storage
	offset int64
	size   []int64
	stride []int64
}

// tensorArgs writes the REDUCE of _rebuild_tensor_v2 for t, as torch 1.x/2.x do.
func (p *pb) tensor(t tspec) *pb {
	p.global("torch._utils", "_rebuild_tensor_v2").op(opMark)
	p.op(opMark).str("storage").global("torch", t.class).str(t.key).str("cpu").int(t.numel).op(opTuple, opBinPersID)
	p.int(t.offset).ints(t.size).ints(t.stride).op(opNewFalse)
	return p.global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opTuple, opReduce)
}

// statePickle writes an OrderedDict state dict of the given tensors (protocol 2).
func statePickle(ts ...tspec) []byte {
	p := newPB().proto(2).global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opMark)
	for _, t := range ts {
		p.str(t.name).tensor(t)
	}
	return p.op(opSetItems, opStop).bytes()
}

// rec is one zip record.
type rec struct {
	name    string
	data    []byte
	deflate bool
}

func makeZip(t testing.TB, recs ...rec) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, r := range recs {
		h := &zip.FileHeader{Name: r.name, Method: zip.Store}
		if r.deflate {
			h.Method = zip.Deflate
		}
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawRecord writes a record with a lying header: deflated payload, declared sizes as given.
func zipWithRaw(t testing.TB, name string, payload []byte, declared uint64, recs ...rec) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(payload)
	fw.Close()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, r := range recs {
		f, err := w.CreateHeader(&zip.FileHeader{Name: r.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(r.data)
	}
	f, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(comp.Bytes())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rezip rewrites every record of a zip, deflating them when deflate is set.
func rezip(t testing.TB, src []byte, deflate bool) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	var recs []rec
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		recs = append(recs, rec{name: f.Name, data: b.Bytes(), deflate: deflate})
	}
	return makeZip(t, recs...)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordOf returns a record of a zip held in memory.
func recordOf(t testing.TB, src []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			b.ReadFrom(rc)
			rc.Close()
			return b.Bytes()
		}
	}
	t.Fatalf("no record %s", name)
	return nil
}

// naiveGather materialises a view index by index: the reference for gather.
func naiveGather(storage []byte, es, offset int64, size, stride []int64) []byte {
	numel := int64(1)
	for _, d := range size {
		numel *= d
	}
	out := make([]byte, 0, numel*es)
	for flat := int64(0); flat < numel; flat++ {
		rem, pos := flat, offset
		for d := len(size) - 1; d >= 0; d-- {
			pos += (rem % size[d]) * stride[d]
			rem /= size[d]
		}
		out = append(out, storage[pos*es:(pos+1)*es]...)
	}
	return out
}
