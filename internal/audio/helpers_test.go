package audio

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// byteOrder is what the test builders need from binary.LittleEndian/BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// chunk is one RIFF chunk for test files; size overrides the declared size
// when non-nil (to lie about it).
type chunk struct {
	id   string
	body []byte
	size *uint32
}

func u32(v uint32) *uint32 { return &v }

// riffFile assembles a RIFF-style file by hand, independently of the
// package's writer: container id, size, "WAVE", chunks with pad bytes.
func riffFile(container string, order byteOrder, chunks ...chunk) []byte {
	var body []byte
	body = append(body, "WAVE"...)
	for _, c := range chunks {
		body = append(body, c.id...)
		size := uint32(len(c.body))
		if c.size != nil {
			size = *c.size
		}
		body = order.AppendUint32(body, size)
		body = append(body, c.body...)
		if len(c.body)%2 == 1 && c.size == nil {
			body = append(body, 0)
		}
	}
	out := append([]byte(container), order.AppendUint32(nil, uint32(len(body)))...)
	return append(out, body...)
}

// fmtChunk is a 16-byte WAVEFORMAT body (byte rate computed).
func fmtChunk(order byteOrder, tag, channels uint16, rate uint32, blockAlign, bits uint16) chunk {
	b := order.AppendUint16(nil, tag)
	b = order.AppendUint16(b, channels)
	b = order.AppendUint32(b, rate)
	b = order.AppendUint32(b, rate*uint32(blockAlign))
	b = order.AppendUint16(b, blockAlign)
	b = order.AppendUint16(b, bits)
	return chunk{id: "fmt ", body: b}
}

// extFmtChunk is a 40-byte WAVE_FORMAT_EXTENSIBLE body whose sub-format
// GUID is {subTag-0000-0010-8000-00aa00389b71}, or a custom GUID tail.
func extFmtChunk(order byteOrder, channels uint16, rate uint32, blockAlign, bits, valid uint16, subTag uint32, tail []byte) chunk {
	c := fmtChunk(order, 0xFFFE, channels, rate, blockAlign, bits)
	b := order.AppendUint16(c.body, 22)
	b = order.AppendUint16(b, valid)
	b = order.AppendUint32(b, 1<<channels-1) // channel mask: the first speakers
	b = order.AppendUint32(b, subTag)
	b = order.AppendUint16(b, 0)
	b = order.AppendUint16(b, 0x0010)
	if tail == nil {
		tail = []byte{0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}
	}
	c.body = append(b, tail...)
	return c
}

// pcm16 encodes interleaved int16 values.
func pcm16(order byteOrder, v []int16) []byte {
	var b []byte
	for _, x := range v {
		b = order.AppendUint16(b, uint16(x))
	}
	return b
}

// simpleWAV is a little-endian PCM16 file of interleaved values.
func simpleWAV(rate uint32, channels uint16, v []int16) []byte {
	return riffFile("RIFF", binary.LittleEndian,
		fmtChunk(binary.LittleEndian, 1, channels, rate, 2*channels, 16),
		chunk{id: "data", body: pcm16(binary.LittleEndian, v)})
}

// ramp16 returns n deterministic, varied int16 values covering the range.
func ramp16(n int) []int16 {
	v := make([]int16, n)
	x := uint32(12345)
	for i := range v {
		x = x*1664525 + 1013904223
		v[i] = int16(x >> 16)
	}
	v[0], v[n-1] = math.MinInt16, math.MaxInt16
	return v
}

// sine returns n samples of amp·sin(2π f i / rate) in float32.
func sine(n int, f, rate, amp float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(amp * math.Sin(2*math.Pi*f*float64(i)/rate))
	}
	return s
}

func md5Sum(b []byte) [16]byte { return md5.Sum(b) }

func asError(err error, target **Error) bool { return errors.As(err, target) }

func itoa(n int) string { return strconv.Itoa(n) }
