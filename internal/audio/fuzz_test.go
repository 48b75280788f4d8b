package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"runtime"
	"testing"
)

// fuzzAllocLimit is what one Decode may allocate. The largest legitimate
// result is 30 s of 192 kHz stereo (46 MB of float32) plus slice growth.
const fuzzAllocLimit = 256 << 20

// decodeSeeds are nasty inputs for every format: truncations, lying sizes,
// impossible formats, garbage after valid magic.
func decodeSeeds(t testing.TB) [][]byte {
	d := chunk{id: "data", body: pcm16(le, ramp16(64))}
	fmt16 := fmtChunk(le, 1, 1, 8000, 2, 16)
	seeds := [][]byte{
		nil,
		[]byte("RIFF"),
		[]byte("RIFF\x00\x00\x00\x00WAVE"),
		[]byte("RIFF\xff\xff\xff\xffWAVEfmt "),
		[]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00"),
		simpleWAV(8000, 1, ramp16(64)),
		simpleWAV(48000, 2, ramp16(64)),
		riffFile("RIFF", le, fmt16, chunk{id: "data", body: []byte{1, 2, 3}, size: u32(0x7FFFFFFF)}),
		riffFile("RIFF", le, chunk{id: "fmt ", body: fmt16.body, size: u32(0xFFFFFFF0)}, d),
		riffFile("RIFF", le, chunk{id: "LIST", body: nil, size: u32(0xFFFFFFFF)}, fmt16, d),
		riffFile("RIFF", le, fmtChunk(le, 1, 0, 8000, 2, 16), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 6, 8000, 12, 16), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 3, 16), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 0, 16), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 0), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 1, 7), d),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 8, 64), d),
		riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 8, 64), d),
		riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 4, 32), chunk{id: "data", body: []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f}}),
		riffFile("RIFF", le, d, fmt16),
		riffFile("RIFF", le, extFmtChunk(le, 2, 8000, 4, 16, 16, 1, []byte("unknown!")), d),
		riffFile("RIFF", le, extFmtChunk(le, 2, 8000, 4, 16, 16, 0x55, nil), d),
		riffFile("RIFF", le, extFmtChunk(le, 2, 8000, 4, 16, 16, 3, nil), d),
		riffFile("RIFX", be, fmtChunk(be, 1, 2, 8000, 4, 16), chunk{id: "data", body: pcm16(be, ramp16(64))}),
		riffFile("RF64", le, chunk{id: "ds64", body: make([]byte, 28)}, fmt16, chunk{id: "data", body: pcm16(le, ramp16(8)), size: u32(0xFFFFFFFF)}),
		riffFile("RF64", le, chunk{id: "ds64", body: bytes.Repeat([]byte{0xff}, 28)}, fmt16, chunk{id: "data", body: pcm16(le, ramp16(8)), size: u32(0xFFFFFFFF)}),
		riffFile("RIFF", le, fmtChunk(le, 7, 1, 8000, 1, 8), chunk{id: "data", body: []byte{0, 1, 2, 3, 4}}),
		riffFile("RIFF", le, fmtChunk(le, 1, 1, 0xFFFFFFFF, 2, 16), d),
		[]byte("fLaC"),
		[]byte("fLaC\x00\x00\x00\x22"),
		append([]byte("fLaC\x80\xff\xff\xff"), make([]byte, 40)...),
		[]byte("ID3\x04\x00\x00\x7f\x7f\x7f\x7f"),
		append([]byte("ID3\x04\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00"), "fLaC"...),
		{0xFF, 0xFB, 0x90, 0x64},
		append([]byte{0xFF, 0xFB, 0x90, 0x64}, bytes.Repeat([]byte{0xFF, 0xFB, 0x00}, 300)...),
		[]byte("OggS\x00"),
		[]byte("UklGRiQAAABXQVZF"),
		bytes.Repeat([]byte{0xFF}, 1000),
	}
	for _, name := range []string{"testdata/s8_8k_mono.flac", "testdata/s24_24k_stereo.flac", "testdata/sine440_44k_mono.mp3", "testdata/sine_22k_stereo_id3.mp3"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b[:min(len(b), 3000)])
		if len(b) > 600 {
			garbled := bytes.Clone(b[:600])
			for i := 120; i < len(garbled); i += 7 {
				garbled[i] ^= 0x5a
			}
			seeds = append(seeds, garbled)
		}
	}
	// A FLAC STREAMINFO that claims 8 channels, 32-bit, 65535-sample blocks.
	si := []byte("fLaC\x80\x00\x00\x22\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00")
	si = binary.BigEndian.AppendUint64(si, uint64(44100)<<44|7<<41|31<<36|1<<35)
	seeds = append(seeds, append(si, make([]byte, 16)...))
	return seeds
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		clip, err := DecodeWith(data, noMin)
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > fuzzAllocLimit {
			t.Fatalf("Decode of %d bytes allocated %d MB", len(data), d>>20)
		}
		if err != nil {
			var aerr *Error
			if !errors.As(err, &aerr) || aerr.Msg == "" || aerr.Kind < KindNotAudio || aerr.Kind > KindTooLarge {
				t.Fatalf("error %v (%T) is not a user-facing *Error", err, err)
			}
			if clip != nil {
				t.Fatal("clip and error")
			}
			return
		}
		checkClip(t, clip)
	})
}

// checkClip asserts what Decode promises about a successful result.
func checkClip(t *testing.T, clip *Clip) {
	t.Helper()
	if n := clip.Channels(); n < 1 || n > 2 {
		t.Fatalf("%d channels", n)
	}
	if clip.SampleRate < MinSampleRate || clip.SampleRate > MaxSampleRate {
		t.Fatalf("rate %d", clip.SampleRate)
	}
	if clip.Frames() == 0 || clip.Duration() > DefaultMaxDuration {
		t.Fatalf("%d frames, %v", clip.Frames(), clip.Duration())
	}
	for _, ch := range clip.Samples {
		if len(ch) != clip.Frames() {
			t.Fatal("ragged channels")
		}
		for _, v := range ch {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatal("non-finite sample")
			}
		}
	}
}

// FuzzDecodeWAV builds WAV files from fuzzed header fields and checks the
// frame count the decoder reports against the declared and present sizes.
func FuzzDecodeWAV(f *testing.F) {
	f.Add(uint16(1), uint16(1), uint32(8000), uint16(2), uint16(16), uint32(10), []byte("0123456789abcdef"), false, true)
	f.Add(uint16(1), uint16(2), uint32(44100), uint16(4), uint16(16), uint32(0), []byte("0123456789abcdef"), false, false)
	f.Add(uint16(3), uint16(1), uint32(48000), uint16(4), uint16(32), uint32(0xFFFFFFFF), []byte{0, 0, 0x80, 0x3f, 0, 0, 0x80, 0xbf}, true, true)
	f.Add(uint16(0xFFFE), uint16(2), uint32(16000), uint16(6), uint16(24), uint32(12), make([]byte, 13), false, true)
	f.Add(uint16(1), uint16(0), uint32(8000), uint16(0), uint16(0), uint32(1<<31), []byte{1}, true, false)
	f.Add(uint16(1), uint16(1), uint32(8000), uint16(1), uint16(7), uint32(5), []byte{1, 2, 3, 4, 5}, false, true)
	f.Add(uint16(1), uint16(1), uint32(8000), uint16(8), uint16(64), uint32(8), make([]byte, 8), false, true)
	f.Fuzz(func(t *testing.T, tag, channels uint16, rate uint32, blockAlign, bits uint16, dataSize uint32, payload []byte, bigEndian, fmtFirst bool) {
		var order byteOrder = le
		container := "RIFF"
		if bigEndian {
			order, container = be, "RIFX"
		}
		var fc chunk
		if tag == 0xFFFE {
			fc = extFmtChunk(order, channels, rate, blockAlign, bits, bits, 1, nil)
		} else {
			fc = fmtChunk(order, tag, channels, rate, blockAlign, bits)
		}
		dc := chunk{id: "data", body: payload, size: &dataSize}
		var file []byte
		if fmtFirst {
			file = riffFile(container, order, fc, dc)
		} else if dataSize == 0 || dataSize == 0xFFFFFFFF || int64(dataSize) > int64(len(payload)) {
			return // a data chunk that runs to EOF cannot precede fmt
		} else {
			file = riffFile(container, order, dc, fc)
		}
		clip, err := DecodeWith(file, noMin)
		if err != nil {
			var aerr *Error
			if !errors.As(err, &aerr) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		checkClip(t, clip)
		present := len(payload)
		if dataSize != 0 && dataSize != 0xFFFFFFFF && int64(dataSize) <= int64(present) {
			present = int(dataSize)
		}
		if want := present / int(blockAlign); clip.Frames() != want {
			t.Fatalf("frames %d, want %d (data %d declared, %d present, block %d)", clip.Frames(), want, dataSize, len(payload), blockAlign)
		}
	})
}

// FuzzPCMRoundTrip checks that what EncodeWAV writes, Decode reads back as
// Quantize16(x)/32768.
func FuzzPCMRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}, uint8(1))
	f.Add([]byte{0xdb, 0x0f, 0x49, 0x40, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, ch uint8) {
		channels := int(ch%2) + 1
		var x []float32
		for i := 0; i+4 <= len(raw); i += 4 {
			x = append(x, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
		}
		x = x[:len(x)/channels*channels]
		if len(x) == 0 {
			return
		}
		clip, err := DecodeWith(EncodeWAV(x, 8000, channels), noMin)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			q := Quantize16(v)
			if q == math.MinInt16 {
				t.Fatalf("Quantize16(%v) = -32768", v)
			}
			if got := clip.Samples[i%channels][i/channels]; got != float32(q)/32768 {
				t.Fatalf("sample %d: %v → %v, want %v", i, v, got, float32(q)/32768)
			}
		}
	})
}
