package audio

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	le = binary.LittleEndian
	be = binary.BigEndian
)

// noMin decodes without the minimum duration, for tiny hand-made files.
var noMin = Options{MinDuration: -1}

func planar(channels int, interleaved []float32) [][]float32 {
	out := make([][]float32, channels)
	for i, v := range interleaved {
		out[i%channels] = append(out[i%channels], v)
	}
	return out
}

func TestDecodeWAVVariants(t *testing.T) {
	u8 := []byte{0, 1, 64, 127, 128, 129, 200, 255}
	want8 := make([]float32, len(u8))
	for i, x := range u8 {
		want8[i] = float32(int(x)-128) / 128
	}

	v16 := ramp16(64)
	want16 := make([]float32, len(v16))
	for i, x := range v16 {
		want16[i] = float32(float64(x) / 32768)
	}

	v24 := []int32{-8388608, 8388607, 1, -1, 0, 0x123456, -0x654321}
	var b24, b24be, b32in32 []byte
	want24 := make([]float32, len(v24))
	for i, x := range v24 {
		b24 = append(b24, byte(x), byte(x>>8), byte(x>>16))
		b24be = append(b24be, byte(x>>16), byte(x>>8), byte(x))
		b32in32 = le.AppendUint32(b32in32, uint32(x)<<8) // 24 valid bits, left-justified
		want24[i] = float32(float64(x) / (1 << 23))
	}

	v32 := []int32{math.MinInt32, math.MaxInt32, 1 << 20, -12345678, 0, 3}
	var b32 []byte
	want32 := make([]float32, len(v32))
	for i, x := range v32 {
		b32 = le.AppendUint32(b32, uint32(x))
		want32[i] = float32(float64(x) / (1 << 31))
	}

	f32 := []float32{0.5, -1.25, 1e-40, -0, 3.75, 1e30, -0.999}
	var bf32, bf32be []byte
	for _, x := range f32 {
		bf32 = le.AppendUint32(bf32, math.Float32bits(x))
		bf32be = be.AppendUint32(bf32be, math.Float32bits(x))
	}
	f64 := []float64{0.1, -0.7, 1e-300, 2.5, -1}
	var bf64 []byte
	want64 := make([]float32, len(f64))
	for i, x := range f64 {
		bf64 = le.AppendUint64(bf64, math.Float64bits(x))
		want64[i] = float32(x)
	}

	// 12-bit samples left-justified in 16-bit containers.
	v12 := []int16{-2048 << 4, 2047 << 4, 1 << 4, 0}
	want12 := make([]float32, len(v12))
	for i, x := range v12 {
		want12[i] = float32(x) / 32768
	}

	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	alaw, ulaw := g711Table(t, "alaw"), g711Table(t, "ulaw")

	ds64 := func(dataSize uint64) chunk {
		b := le.AppendUint64(nil, 0) // RIFF size
		b = le.AppendUint64(b, dataSize)
		b = le.AppendUint64(b, 0) // sample count
		b = le.AppendUint32(b, 0) // table length
		return chunk{id: "ds64", body: b}
	}
	rf64 := riffFile("RF64", le, ds64(uint64(len(v16)*2)), fmtChunk(le, 1, 2, 16000, 4, 16),
		chunk{id: "data", body: pcm16(le, v16), size: u32(0xFFFFFFFF)},
		chunk{id: "LIST", body: []byte("INFOISFT\x04\x00\x00\x00test")})
	copy(rf64[4:], []byte{0xFF, 0xFF, 0xFF, 0xFF})

	streaming := func(size uint32) []byte {
		b := riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 16), chunk{id: "data", body: pcm16(le, v16), size: u32(size)})
		binary.LittleEndian.PutUint32(b[4:], size)
		return b
	}

	tests := []struct {
		name     string
		file     []byte
		rate     int
		channels int
		want     []float32 // interleaved
		format   string
	}{
		{"pcm8 unsigned", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 1, 8), chunk{id: "data", body: u8}), 8000, 1, want8, "WAV PCM 8-bit"},
		{"pcm16 stereo", simpleWAV(44100, 2, v16), 44100, 2, want16, "WAV PCM 16-bit"},
		{"pcm24", riffFile("RIFF", le, fmtChunk(le, 1, 1, 48000, 3, 24), chunk{id: "data", body: b24}), 48000, 1, want24, "WAV PCM 24-bit"},
		{"pcm32", riffFile("RIFF", le, fmtChunk(le, 1, 2, 96000, 8, 32), chunk{id: "data", body: b32}), 96000, 2, want32, "WAV PCM 32-bit"},
		{"pcm12 in 16", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 12), chunk{id: "data", body: pcm16(le, v12)}), 8000, 1, want12, "WAV PCM 16-bit"},
		{"float32", riffFile("RIFF", le, fmtChunk(le, 3, 1, 24000, 4, 32), chunk{id: "fact", body: le.AppendUint32(nil, 7)}, chunk{id: "data", body: bf32}), 24000, 1, f32, "WAV float 32-bit"},
		{"float64", riffFile("RIFF", le, fmtChunk(le, 3, 1, 22050, 8, 64), chunk{id: "data", body: bf64}), 22050, 1, want64, "WAV float 64-bit"},
		{"extensible pcm16", riffFile("RIFF", le, extFmtChunk(le, 2, 16000, 4, 16, 16, 1, nil), chunk{id: "data", body: pcm16(le, v16)}), 16000, 2, want16, "WAV PCM 16-bit"},
		{"extensible 24 in 32", riffFile("RIFF", le, extFmtChunk(le, 1, 48000, 4, 32, 24, 1, nil), chunk{id: "data", body: b32in32}), 48000, 1, want24, "WAV PCM 32-bit"},
		{"extensible float", riffFile("RIFF", le, extFmtChunk(le, 1, 48000, 4, 32, 32, 3, nil), chunk{id: "data", body: bf32}), 48000, 1, f32, "WAV float 32-bit"},
		{"rifx pcm16", riffFile("RIFX", be, fmtChunk(be, 1, 2, 32000, 4, 16), chunk{id: "data", body: pcm16(be, v16)}), 32000, 2, want16, "WAV PCM 16-bit"},
		{"rifx pcm24", riffFile("RIFX", be, fmtChunk(be, 1, 1, 32000, 3, 24), chunk{id: "data", body: b24be}), 32000, 1, want24, "WAV PCM 24-bit"},
		{"rifx float", riffFile("RIFX", be, fmtChunk(be, 3, 1, 32000, 4, 32), chunk{id: "data", body: bf32be}), 32000, 1, f32, "WAV float 32-bit"},
		{"rf64 ds64 size", rf64, 16000, 2, want16, "RF64 PCM 16-bit"},
		{"chunks before fmt", riffFile("RIFF", le,
			chunk{id: "LIST", body: []byte("INFOISFT\x0e\x00\x00\x00Lavf58.29.100\x00")},
			chunk{id: "JUNK", body: make([]byte, 28)},
			chunk{id: "fact", body: le.AppendUint32(nil, 64)},
			fmtChunk(le, 1, 1, 8000, 2, 16), chunk{id: "data", body: pcm16(le, v16)}), 8000, 1, want16, "WAV PCM 16-bit"},
		{"fmt after data", riffFile("RIFF", le, chunk{id: "data", body: pcm16(le, v16)}, fmtChunk(le, 1, 2, 8000, 4, 16)), 8000, 2, want16, "WAV PCM 16-bit"},
		{"odd chunk with pad", riffFile("RIFF", le, chunk{id: "junk", body: []byte{1, 2, 3}}, fmtChunk(le, 1, 1, 8000, 1, 8),
			chunk{id: "data", body: u8[:7]}, chunk{id: "LIST", body: []byte("INFO")}), 8000, 1, want8[:7], "WAV PCM 8-bit"},
		{"fmt with cbSize", riffFile("RIFF", le, chunk{id: "fmt ", body: append(fmtChunk(le, 1, 1, 8000, 2, 16).body, 0, 0)}, chunk{id: "data", body: pcm16(le, v16)}), 8000, 1, want16, "WAV PCM 16-bit"},
		{"data size 0 streams to EOF", streaming(0), 8000, 1, want16, "WAV PCM 16-bit"},
		{"data size FFFFFFFF streams to EOF", streaming(0xFFFFFFFF), 8000, 1, want16, "WAV PCM 16-bit"},
		{"truncated data keeps whole frames", riffFile("RIFF", le, fmtChunk(le, 1, 2, 8000, 4, 16), chunk{id: "data", body: pcm16(le, v16)[:4*5+3], size: u32(1000)}), 8000, 2, want16[:10], "WAV PCM 16-bit"},
		{"second data chunk ignored", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 16), chunk{id: "data", body: pcm16(le, v16[:8])}, chunk{id: "data", body: pcm16(le, v16)}), 8000, 1, want16[:8], "WAV PCM 16-bit"},
		{"a-law", riffFile("RIFF", le, fmtChunk(le, 6, 1, 8000, 1, 8), chunk{id: "data", body: all}), 8000, 1, alaw, "WAV A-law"},
		{"µ-law", riffFile("RIFF", le, fmtChunk(le, 7, 1, 8000, 1, 8), chunk{id: "data", body: all}), 8000, 1, ulaw, "WAV µ-law"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := DecodeWith(tc.file, noMin)
			if err != nil {
				t.Fatalf("DecodeWith: %v", err)
			}
			if clip.SampleRate != tc.rate || clip.Channels() != tc.channels || clip.Format != tc.format {
				t.Errorf("got %d Hz, %d channels, %q; want %d Hz, %d channels, %q",
					clip.SampleRate, clip.Channels(), clip.Format, tc.rate, tc.channels, tc.format)
			}
			if diff := cmp.Diff(planar(tc.channels, tc.want), clip.Samples); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

// g711Table reads the expected G.711 decodings, produced once by Python's
// audioop (alaw2lin/ulaw2lin, an independent implementation), scaled by
// 1/32768 as soundfile does.
func g711Table(t *testing.T, name string) []float32 {
	t.Helper()
	b, err := os.ReadFile("testdata/g711_audioop.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		var out []float32
		for _, f := range strings.Split(rest, ",") {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, float32(v)/32768)
		}
		if len(out) != 256 {
			t.Fatalf("%s table has %d entries", name, len(out))
		}
		return out
	}
	t.Fatalf("no %s table", name)
	return nil
}

func TestDecodeErrors(t *testing.T) {
	v16 := pcm16(le, ramp16(8000))
	nan := le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.5)), math.Float32bits(float32(math.NaN())))
	inf64 := le.AppendUint64(nil, math.Float64bits(math.Inf(-1)))
	huge64 := le.AppendUint64(nil, math.Float64bits(1e300)) // finite, but Inf in float32
	data := chunk{id: "data", body: v16}
	tests := []struct {
		name string
		file []byte
		opts Options
		kind ErrorKind
		msg  string // exact message, or a prefix ending in "…"
	}{
		{"empty input", nil, Options{}, KindEmpty, "ref_audio is empty"},
		{"too large", simpleWAV(8000, 1, ramp16(8000)), Options{MaxInputBytes: 1000}, KindTooLarge, "ref_audio is 15.7 KiB; the limit is 1000 bytes"},
		{"zero channels", riffFile("RIFF", le, fmtChunk(le, 1, 0, 8000, 2, 16), data), Options{}, KindChannels, "ref_audio has 0 channels"},
		{"six channels", riffFile("RIFF", le, fmtChunk(le, 1, 6, 48000, 12, 16), data), Options{}, KindChannels, "ref_audio has 6 channels; only mono or stereo is supported"},
		{"six channels extensible", riffFile("RIFF", le, extFmtChunk(le, 6, 48000, 12, 16, 16, 1, nil), data), Options{}, KindChannels, "ref_audio has 6 channels; only mono or stereo is supported"},
		{"rate 0", riffFile("RIFF", le, fmtChunk(le, 1, 1, 0, 2, 16), data), Options{}, KindSampleRate, "ref_audio sample rate 0 Hz is outside 4000–192000 Hz"},
		{"rate 1", riffFile("RIFF", le, fmtChunk(le, 1, 1, 1, 2, 16), data), Options{}, KindSampleRate, "ref_audio sample rate 1 Hz is outside 4000–192000 Hz"},
		{"rate 4 GHz", riffFile("RIFF", le, fmtChunk(le, 1, 1, 0xFFFFFFFF, 2, 16), data), Options{}, KindSampleRate, "ref_audio sample rate 4294967295 Hz is outside 4000–192000 Hz"},
		{"bits 0", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 0), data), Options{}, KindMalformed, "ref_audio WAV has 0 bits per sample"},
		{"bits 7 in 2 bytes", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 7), data), Options{}, KindMalformed, "ref_audio WAV block align 2 does not match 1 channels of 7 bits"},
		{"bits 64 int", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 8, 64), data), Options{}, KindUnsupported, "ref_audio is 64-bit integer PCM; at most 32 bits is supported"},
		{"float16", riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 2, 16), data), Options{}, KindUnsupported, "ref_audio is 16-bit float; only 32- and 64-bit float are supported"},
		{"odd block align", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 3, 16), data), Options{}, KindMalformed, "ref_audio WAV block align 3 does not match 1 channels of 16 bits"},
		{"block align not a multiple of channels", riffFile("RIFF", le, fmtChunk(le, 1, 2, 8000, 3, 16), data), Options{}, KindMalformed, "ref_audio WAV block align 3 does not fit 2 channels"},
		{"block align 0", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 0, 16), data), Options{}, KindMalformed, "ref_audio WAV block align 0 does not fit 1 channels"},
		{"adpcm", riffFile("RIFF", le, fmtChunk(le, 2, 1, 8000, 256, 4), data), Options{}, KindUnsupported, "ref_audio WAV codec 0x0002 (MS ADPCM) is not supported; use PCM, float, A-law or µ-law"},
		{"extensible unknown guid", riffFile("RIFF", le, extFmtChunk(le, 1, 8000, 2, 16, 16, 1, []byte("nanovox!")), data), Options{}, KindUnsupported, "ref_audio WAV sub-format {00000001-0000-0010-6E616E6F766F7821} is not supported; use PCM or float"},
		{"extensible ambisonic guid", riffFile("RIFF", le, extFmtChunk(le, 1, 8000, 2, 16, 16, 0x00000001|0x72100000, nil), data), Options{}, KindUnsupported, "ref_audio WAV sub-format {72100001-…"},
		{"extensible too short", riffFile("RIFF", le, chunk{id: "fmt ", body: extFmtChunk(le, 1, 8000, 2, 16, 16, 1, nil).body[:30]}, data), Options{}, KindMalformed, "ref_audio WAV extensible fmt chunk is too short (30 bytes; need 40)"},
		{"extensible valid > container", riffFile("RIFF", le, extFmtChunk(le, 1, 8000, 2, 16, 24, 1, nil), data), Options{}, KindMalformed, "ref_audio WAV declares 24 valid bits in a 16-bit container"},
		{"fmt too short", riffFile("RIFF", le, chunk{id: "fmt ", body: make([]byte, 14)}, data), Options{}, KindMalformed, "ref_audio WAV fmt chunk is 14 bytes; need at least 16"},
		{"fmt truncated", riffFile("RIFF", le, chunk{id: "fmt ", body: make([]byte, 10), size: u32(16)}), Options{}, KindMalformed, "ref_audio WAV fmt chunk declares 16 bytes but only 10 remain"},
		{"no fmt", riffFile("RIFF", le, data), Options{}, KindMalformed, "ref_audio WAV has no fmt chunk"},
		{"no data", riffFile("RIFF", le, fmtChunk(le, 1, 1, 8000, 2, 16)), Options{}, KindMalformed, "ref_audio WAV has no data chunk"},
		{"huge LIST before fmt", riffFile("RIFF", le, chunk{id: "LIST", body: make([]byte, 8), size: u32(0x7FFFFFF0)}, fmtChunk(le, 1, 1, 8000, 2, 16), data), Options{}, KindMalformed,
			`ref_audio WAV has no fmt chunk: chunk "LIST" declares 2147483632 bytes but only 16040 remain`},
		{"truncated header", []byte("RIFF\x24\x00\x00\x00WAVEfm"), Options{}, KindMalformed, "ref_audio WAV has no fmt chunk"},
		{"riff too short", []byte("RIFF\x24\x00"), Options{}, KindMalformed, "ref_audio is a truncated RIFF file (6 bytes)"},
		{"riff not wave", []byte("RIFF\x04\x00\x00\x00AVI LIST"), Options{}, KindUnsupported, `ref_audio is a RIFF file of type "AVI ", not WAVE audio`},
		{"no frames", riffFile("RIFF", le, fmtChunk(le, 1, 2, 8000, 4, 16), chunk{id: "data", body: []byte{1, 2, 3}}), Options{}, KindEmpty, "ref_audio contains no audio samples"},
		{"nan float32", riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 4, 32), chunk{id: "data", body: nan}), noMin, KindNonFinite, "ref_audio contains a non-finite sample (NaN or infinity) at 0.000 s"},
		{"inf float64", riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 8, 64), chunk{id: "data", body: inf64}), noMin, KindNonFinite, "ref_audio contains a non-finite sample…"},
		{"float64 overflows float32", riffFile("RIFF", le, fmtChunk(le, 3, 1, 8000, 8, 64), chunk{id: "data", body: huge64}), noMin, KindNonFinite, "ref_audio contains a non-finite sample…"},
		{"ogg", []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"), Options{}, KindUnsupported, "ref_audio is Ogg (Vorbis/Opus/FLAC-in-Ogg), which is not supported; use WAV, FLAC or MP3"},
		{"m4a", []byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), Options{}, KindUnsupported, "ref_audio is MP4/M4A, which is not supported…"},
		{"aac adts", []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC}, Options{}, KindUnsupported, "ref_audio is AAC (ADTS), which is not supported; use WAV, FLAC or MP3"},
		{"base64 wav", []byte("UklGRiQAAABXQVZFZm10IBAAAAABAAEA"), Options{}, KindNotAudio, "ref_audio looks like base64 text or a data URL, not raw audio bytes; decode it first"},
		{"text", []byte("hello, this is not audio"), Options{}, KindNotAudio, "ref_audio is not a recognised audio file; supported formats are WAV, FLAC and MP3"},
		{"id3 then nothing", append([]byte("ID3\x04\x00\x00\x00\x00\x00\x02"), 0, 0), Options{}, KindNotAudio, "ref_audio has an ID3 tag but no MP3 or FLAC audio after it"},
		{"id3 huge size", []byte("ID3\x04\x00\x00\x7f\x7f\x7f\x7fxx"), Options{}, KindMalformed, "ref_audio has a truncated ID3 tag"},
		{"id3 short", []byte("ID3\x04"), Options{}, KindMalformed, "ref_audio has a truncated ID3 tag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := DecodeWith(tc.file, tc.opts)
			checkAudioError(t, clip, err, tc.kind, tc.msg)
		})
	}
}

// checkAudioError asserts err is an *Error of kind with message msg (or,
// when msg ends in "…", with that prefix).
func checkAudioError(t *testing.T, clip *Clip, err error, kind ErrorKind, msg string) {
	t.Helper()
	var aerr *Error
	if !errors.As(err, &aerr) {
		t.Fatalf("got clip %v, err %v (%T); want *Error", clip != nil, err, err)
	}
	if clip != nil {
		t.Errorf("got a clip along with error %v", err)
	}
	if aerr.Kind != kind {
		t.Errorf("kind = %v, want %v (%q)", aerr.Kind, kind, aerr.Msg)
	}
	if p, ok := strings.CutSuffix(msg, "…"); ok {
		if !strings.HasPrefix(aerr.Msg, p) {
			t.Errorf("message %q does not start with %q", aerr.Msg, p)
		}
	} else if aerr.Msg != msg {
		t.Errorf("message %q, want %q", aerr.Msg, msg)
	}
}

func TestDurationLimits(t *testing.T) {
	mono := func(frames int) []byte { return simpleWAV(8000, 1, make([]int16, frames)) }
	stereo := func(frames int) []byte { return simpleWAV(8000, 2, make([]int16, 2*frames)) }
	tests := []struct {
		name string
		file []byte
		opts Options
		msg  string // "" = accepted
	}{
		{"0.31 s", mono(2480), Options{}, "ref_audio is 0.31 s; must be 0.5–30 s"},
		{"exactly 0.5 s", mono(4000), Options{}, ""},
		{"one frame short of 0.5 s", mono(3999), Options{}, "ref_audio is 0.4999 s; must be 0.5–30 s"},
		{"exactly 30 s", mono(240000), Options{}, ""},
		{"one frame over 30 s", mono(240001), Options{}, "ref_audio is 30.0001 s; must be 0.5–30 s"},
		{"31.5 s", mono(252000), Options{}, "ref_audio is 31.50 s; must be 0.5–30 s"},
		// Frames, not interleaved values: 0.4 s of stereo is 6400 values.
		{"stereo 0.4 s", stereo(3200), Options{}, "ref_audio is 0.40 s; must be 0.5–30 s"},
		{"stereo 0.6 s", stereo(4800), Options{}, ""},
		{"stereo 20 s", stereo(160000), Options{}, ""},
		{"custom bounds short", mono(8000), Options{MinDuration: 2e9, MaxDuration: 5e9}, "ref_audio is 1.00 s; must be 2–5 s"},
		{"custom bounds long", mono(48000), Options{MinDuration: 2e9, MaxDuration: 5e9}, "ref_audio is 6.00 s; must be 2–5 s"},
		{"one frame", mono(1), Options{}, "ref_audio is 0.0001 s; must be 0.5–30 s"},
		{"no minimum", mono(1), Options{MinDuration: -1}, ""},
		{"no minimum, too long", mono(48000), Options{MinDuration: -1, MaxDuration: 5e9}, "ref_audio is 6.00 s; must be at most 5 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := DecodeWith(tc.file, tc.opts)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			checkAudioError(t, clip, err, KindDuration, tc.msg)
		})
	}
}

// realClip is what the test reads from a demo clip's bytes itself.
type realClip struct {
	rate, channels, frames int
	samples                []int16
}

// parsePCM16WAV is an independent reader for the simple demo files: find
// the fmt and data chunks by search, read the little-endian fields.
func parsePCM16WAV(t *testing.T, b []byte) realClip {
	t.Helper()
	f := bytes.Index(b, []byte("fmt "))
	d := bytes.Index(b, []byte("data"))
	if f < 0 || d < 0 || le.Uint16(b[f+8:]) != 1 || le.Uint16(b[f+22:]) != 16 {
		t.Fatal("not a plain PCM16 WAV")
	}
	n := int(le.Uint32(b[d+4:])) / 2
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(le.Uint16(b[d+8+2*i:]))
	}
	ch := int(le.Uint16(b[f+10:]))
	return realClip{rate: int(le.Uint32(b[f+12:])), channels: ch, frames: n / ch, samples: s}
}

func TestDecodeRealClips(t *testing.T) {
	tests := []struct {
		file   string
		rate   int
		frames int
		format string
	}{
		{"en_2.wav", 44100, 347287, "WAV PCM 16-bit"},
		{"jp_2.wav", 44100, 113778, "WAV PCM 16-bit"},
		{"zh_3.wav", 16000, 125568, "WAV PCM 16-bit"}, // has a LIST chunk before data
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("../../testdata/real/clips/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			clip, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			ref := parsePCM16WAV(t, b)
			if ref.rate != tc.rate || ref.frames != tc.frames || ref.channels != 1 {
				t.Fatalf("independent parse: %+v", ref)
			}
			if clip.SampleRate != tc.rate || clip.Channels() != 1 || clip.Frames() != tc.frames || clip.Format != tc.format {
				t.Fatalf("got %d Hz × %d ch × %d frames %q", clip.SampleRate, clip.Channels(), clip.Frames(), clip.Format)
			}
			for i, v := range ref.samples {
				if want := float32(v) / 32768; clip.Samples[0][i] != want {
					t.Fatalf("sample %d = %v, want %v", i, clip.Samples[0][i], want)
				}
			}
		})
	}

	// en_6 is FLAC behind a .wav name. testdata/en_6.flac-d.sha256 is the
	// SHA-256 of `flac -d --force-raw-format --endian=little --sign=signed`
	// (Debian flac 1.4.2) output; we re-quantize our floats (exact for
	// 16-bit) and hash the same byte layout. The stream's own STREAMINFO MD5
	// (computed by the encoder) is checked as well.
	t.Run("en_6.wav (FLAC)", func(t *testing.T) {
		b, err := os.ReadFile("../../testdata/real/clips/en_6.wav")
		if err != nil {
			t.Fatal(err)
		}
		clip, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if clip.SampleRate != 44100 || clip.Channels() != 1 || clip.Frames() != 343980 || clip.Format != "FLAC 16-bit" {
			t.Fatalf("got %d Hz × %d ch × %d frames %q", clip.SampleRate, clip.Channels(), clip.Frames(), clip.Format)
		}
		raw := make([]byte, 0, 2*clip.Frames())
		for _, x := range clip.Samples[0] {
			v := x * 32768
			if v != float32(int16(v)) {
				t.Fatalf("sample %v is not a 16-bit value", x)
			}
			raw = le.AppendUint16(raw, uint16(int16(v)))
		}
		want, err := os.ReadFile("testdata/en_6.flac-d.sha256")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		if got := hex.EncodeToString(sum[:]); got != strings.Fields(string(want))[0] {
			t.Errorf("sha256 of decoded PCM = %s, want %s (flac -d)", got, want)
		}
		md5 := md5Sum(raw)
		info, _, err := parseFLACMetadata(b)
		if err != nil {
			t.Fatal(err)
		}
		if md5 != info.md5 {
			t.Errorf("MD5 of decoded PCM %x != STREAMINFO MD5 %x", md5, info.md5)
		}
	})
}
