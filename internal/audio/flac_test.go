package audio

import (
	"bytes"
	"encoding/binary"
	"log"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// captureLog redirects the standard logger for the duration of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })
	return &buf
}

func expectedFixture(f flacFixture) [][]float32 {
	sig := fixtureSignal(f.frames, f.channels, f.bits)
	want := make([][]float32, f.channels)
	for c := range sig {
		for _, v := range sig[c] {
			want[c] = append(want[c], float32(float64(v)/float64(int64(1)<<(f.bits-1))))
		}
	}
	return want
}

func TestDecodeFLACFixtures(t *testing.T) {
	logs := captureLog(t)
	for _, f := range flacFixtures {
		t.Run(f.file, func(t *testing.T) {
			clip, err := DecodeWith(readTestdata(t, "testdata/"+f.file), noMin)
			if err != nil {
				t.Fatal(err)
			}
			if clip.SampleRate != f.rate || clip.Channels() != f.channels || clip.Frames() != f.frames {
				t.Fatalf("got %d Hz × %d ch × %d frames", clip.SampleRate, clip.Channels(), clip.Frames())
			}
			if diff := cmp.Diff(expectedFixture(f), clip.Samples); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
	// mewkiz/flac logs once per frame for 24 kHz streams unless the
	// header is rewritten; a server must not spew that.
	if logs.Len() != 0 {
		t.Errorf("decoding wrote to the standard logger:\n%s", logs.String())
	}
}

// flacFrames returns the byte offsets of the audio frames of a valid stream
// (and the end), found with the library directly.
func flacFrames(t *testing.T, b []byte) []int {
	t.Helper()
	_, off, err := parseFLACMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	offs := []int{off}
	r := bytes.NewReader(b[off:])
	for r.Len() > 0 {
		if _, err := frame.Parse(r); err != nil {
			t.Fatalf("frame at %d: %v", offs[len(offs)-1], err)
		}
		offs = append(offs, len(b)-r.Len())
	}
	return offs
}

func TestFLACSampleSizeFromStreamInfo(t *testing.T) {
	// Rewrite every frame header to say "sample size: see STREAMINFO"
	// (code 0, legal FLAC) with valid CRCs; the library would decode such
	// frames as 0-bit, so the decoder must restore the explicit code.
	f := flacFixtures[3] // 16-bit stereo
	orig := readTestdata(t, "testdata/"+f.file)
	b := bytes.Clone(orig)
	offs := flacFrames(t, b)
	for i := 0; i+1 < len(offs); i++ {
		h := b[offs[i]:]
		if h[3]>>1&7 != 4 {
			t.Fatalf("frame %d: unexpected sample size code %d", i, h[3]>>1&7)
		}
		h[3] &^= 0x0E
		n := 4 + utf8Len(h[4]) // this fixture has no extra block-size/rate bytes
		if bs := h[2] >> 4; bs == 6 {
			n++
		} else if bs == 7 {
			n += 2
		}
		h[n] = crc8(h[:n])
		fr := b[offs[i]:offs[i+1]]
		binary.BigEndian.PutUint16(fr[len(fr)-2:], crc16(fr[:len(fr)-2]))
	}
	if bytes.Equal(b, orig) {
		t.Fatal("nothing rewritten")
	}
	clip, err := DecodeWith(b, noMin)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(expectedFixture(f), clip.Samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func TestCRCCheckValues(t *testing.T) {
	// Catalogue check values for "123456789": CRC-8/SMBUS and CRC-16/UMTS
	// (a.k.a. BUYPASS), the parameters FLAC uses.
	if got := crc8([]byte("123456789")); got != 0xF4 {
		t.Errorf("crc8 = %#x, want 0xf4", got)
	}
	if got := crc16([]byte("123456789")); got != 0xFEE8 {
		t.Errorf("crc16 = %#x, want 0xfee8", got)
	}
}

// setStreamInfo rewrites STREAMINFO's packed rate/channels/bps/total word.
func setStreamInfo(b []byte, rate, channels, bps int, total int64) []byte {
	b = bytes.Clone(b)
	x := uint64(rate)<<44 | uint64(channels-1)<<41 | uint64(bps-1)<<36 | uint64(total)
	binary.BigEndian.PutUint64(b[8+10:], x)
	return b
}

func TestDecodeFLACEdgeCases(t *testing.T) {
	en6 := readTestdata(t, "../../testdata/real/clips/en_6.wav")
	full, err := Decode(en6)
	if err != nil {
		t.Fatal(err)
	}
	info, first, _ := parseFLACMetadata(en6)

	t.Run("truncated keeps whole frames", func(t *testing.T) {
		clip, err := Decode(en6[:len(en6)*6/10])
		if err != nil {
			t.Fatal(err)
		}
		n := clip.Frames()
		if n == 0 || n >= full.Frames() || n%4096 != 0 {
			t.Fatalf("frames = %d (full %d); want a whole number of 4096-sample blocks", n, full.Frames())
		}
		if !slices.Equal(clip.Samples[0], full.Samples[0][:n]) {
			t.Error("truncated decode is not a prefix of the full decode")
		}
	})
	t.Run("trailing ID3v1 tag ignored", func(t *testing.T) {
		b := append(bytes.Clone(en6), []byte("TAG"+strings.Repeat("x", 125))...)
		clip, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(clip.Samples[0], full.Samples[0]) {
			t.Error("samples differ")
		}
	})
	t.Run("ID3v2 prefix", func(t *testing.T) {
		tag := append([]byte("ID3\x03\x00\x00\x00\x00\x00\x14"), make([]byte, 20)...)
		clip, err := Decode(append(tag, en6...))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(clip.Samples[0], full.Samples[0]) {
			t.Error("samples differ")
		}
	})

	tests := []struct {
		name string
		file []byte
		opts Options
		kind ErrorKind
		msg  string
	}{
		{"six channels", setStreamInfo(en6, 44100, 6, 16, info.total), Options{}, KindChannels, "ref_audio has 6 channels; only mono or stereo is supported"},
		{"rate 0", setStreamInfo(en6, 0, 1, 16, info.total), Options{}, KindSampleRate, "ref_audio sample rate 0 Hz is outside 4000–192000 Hz"},
		{"32-bit", setStreamInfo(en6, 44100, 1, 32, info.total), Options{}, KindUnsupported, "ref_audio is 32-bit FLAC; only 8, 12, 16, 20 and 24 bits are supported"},
		{"4-bit", setStreamInfo(en6, 44100, 1, 4, info.total), Options{}, KindUnsupported, "ref_audio is 4-bit FLAC…"},
		{"bps disagrees with frames", setStreamInfo(en6, 44100, 1, 24, info.total), Options{}, KindMalformed, "ref_audio FLAC frame at byte 86 has 16-bit samples; STREAMINFO says 24"},
		{"channels disagree with frames", setStreamInfo(en6, 44100, 2, 16, info.total), Options{}, KindMalformed, "ref_audio FLAC frame at byte 86 has 1 channels; STREAMINFO says 2"},
		{"too long, total known", en6, Options{MaxDuration: 1e9}, KindDuration, "ref_audio is 7.80 s; must be 0.5–1 s"},
		{"too long, total unknown", setStreamInfo(en6, 44100, 1, 16, 0), Options{MaxDuration: 1e9}, KindDuration, "ref_audio is longer than 1 s; must be 0.5–1 s"},
		{"too short", en6[:9000], Options{}, KindDuration, "ref_audio is 0.09 s; must be 0.5–30 s"},
		{"magic only", []byte("fLaC"), Options{}, KindMalformed, "ref_audio FLAC metadata is truncated"},
		{"streaminfo truncated", en6[:20], Options{}, KindMalformed, "ref_audio FLAC metadata block declares 34 bytes but only 12 remain"},
		{"first block not streaminfo", append([]byte("fLaC\x84\x00\x00\x04"), 0, 0, 0, 0), Options{}, KindMalformed, "ref_audio FLAC does not start with a STREAMINFO block"},
		{"no frames", en6[:first], Options{}, KindEmpty, "ref_audio contains no audio samples"},
		{"garbage frames", append(bytes.Clone(en6[:first]), []byte(strings.Repeat("garbage!", 100))...), Options{}, KindMalformed, "ref_audio FLAC frame at byte 86 is corrupt: …"},
		{"corrupt byte in a frame", func() []byte { b := bytes.Clone(en6); b[20000] ^= 0x40; return b }(), Options{}, KindMalformed, "ref_audio FLAC frame at byte …"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := DecodeWith(tc.file, tc.opts)
			checkAudioError(t, clip, err, tc.kind, tc.msg)
		})
	}
}

func TestFLACPatchedFrameStillCRCChecked(t *testing.T) {
	// The 24 kHz fixture's headers are rewritten before parsing; a
	// corrupted byte inside such a frame must still be caught by our own
	// CRC-16 over the original bytes.
	captureLog(t) // flacFrames uses the library directly, which logs
	b := readTestdata(t, "testdata/"+flacFixtures[0].file)
	offs := flacFrames(t, b)
	b = bytes.Clone(b)
	b[(offs[1]+offs[2])/2] ^= 0x01
	_, err := DecodeWith(b, noMin)
	checkAudioError(t, nil, err, KindMalformed, "ref_audio FLAC frame at byte …")
}

// encodeFLAC writes 16-bit mono 8 kHz frames of the given block sizes with
// the library's encoder (verbatim subframes).
func encodeFLAC(t *testing.T, blocks ...int) []byte {
	t.Helper()
	var buf bytes.Buffer
	total := 0
	for _, n := range blocks {
		total += n
	}
	info := &meta.StreamInfo{BlockSizeMin: 16, BlockSizeMax: 4096, SampleRate: 8000, NChannels: 1, BitsPerSample: 16, NSamples: uint64(total)}
	enc, err := flac.NewEncoder(&buf, info)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range blocks {
		s := make([]int32, n)
		for k := range s {
			s[k] = int32(k*97%2000 - 1000)
		}
		f := &frame.Frame{
			Header:    frame.Header{HasFixedBlockSize: false, BlockSize: uint16(n), SampleRate: 8000, Channels: frame.ChannelsMono, BitsPerSample: 16},
			Subframes: []*frame.Subframe{{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, Samples: s, NSamples: n}},
		}
		if err := enc.WriteFrame(f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFLACTinyBlocks(t *testing.T) {
	clip, err := DecodeWith(encodeFLAC(t, 4096, 4096, 8), noMin)
	if err != nil {
		t.Fatalf("short last frame rejected: %v", err)
	}
	if clip.Frames() != 8200 {
		t.Errorf("frames = %d", clip.Frames())
	}
	_, err = DecodeWith(encodeFLAC(t, 4096, 8, 8, 8), noMin)
	checkAudioError(t, nil, err, KindMalformed, "ref_audio FLAC frame before byte …")
}

func TestPatchFLACHeader(t *testing.T) {
	// hdr builds a frame header: sync, codes, coded number, the optional
	// block-size and sample-rate bytes, CRC-8.
	hdr := func(bs, sr, bps byte, num []byte, extra ...byte) []byte {
		h := []byte{0xFF, 0xF8, bs<<4 | sr, 0x00<<4 | bps<<1}
		h = append(h, num...)
		h = append(h, extra...)
		return append(h, crc8(h))
	}
	withCRC := func(h []byte) []byte { h = bytes.Clone(h); h[len(h)-1] = crc8(h[:len(h)-1]); return h }
	tests := []struct {
		name string
		in   []byte
		want []byte // nil: not patched
	}{
		{"24 kHz code", hdr(0xC, 0x7, 4, []byte{0x05}), withCRC(hdr(0xC, 0x0, 4, []byte{0x05}))},
		{"176.4 kHz code, 16-bit block size, 2-byte number", hdr(0x7, 0x2, 4, []byte{0xC2, 0x80}, 0x0F, 0xFF), withCRC(hdr(0x7, 0x0, 4, []byte{0xC2, 0x80}, 0x0F, 0xFF))},
		{"bps from STREAMINFO, 8-bit block size, rate in kHz", hdr(0x6, 0xC, 0, []byte{0x00}, 0x1F, 0x30), withCRC(hdr(0x6, 0xC, 4, []byte{0x00}, 0x1F, 0x30))},
		{"bps from STREAMINFO, rate in Hz, 7-byte number", hdr(0x1, 0xD, 0, []byte{0xFE, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81}, 0xAC, 0x44), withCRC(hdr(0x1, 0xD, 4, []byte{0xFE, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81}, 0xAC, 0x44))},
		{"44.1 kHz code, explicit bps", hdr(0xC, 0x9, 4, []byte{0x05}), nil},
		{"bad CRC-8", func() []byte { h := hdr(0xC, 0x7, 4, []byte{0x05}); h[len(h)-1]++; return h }(), nil},
		{"invalid coded number", hdr(0xC, 0x7, 4, []byte{0xFF}), nil},
		{"truncated", hdr(0xC, 0x7, 4, []byte{0x05})[:5], nil},
		{"no sync", append([]byte{0xFF, 0xF0}, hdr(0xC, 0x7, 4, []byte{0x05})[2:]...), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append(bytes.Clone(tc.in), 0xAA, 0xBB) // frame data follows
			got, ok := patchFLACHeader(in, 16)
			if tc.want == nil {
				if ok {
					t.Errorf("patched to % x", got)
				}
				return
			}
			if !ok || !bytes.Equal(got, tc.want) {
				t.Errorf("got % x (%v), want % x", got, ok, tc.want)
			}
		})
	}
}

func TestErrorKindString(t *testing.T) {
	want := map[ErrorKind]string{
		KindNotAudio: "not_audio", KindUnsupported: "unsupported", KindMalformed: "malformed",
		KindChannels: "channels", KindSampleRate: "sample_rate", KindNonFinite: "non_finite",
		KindEmpty: "empty", KindDuration: "duration", KindTooLarge: "too_large",
		0: "ErrorKind(0)", 99: "ErrorKind(99)",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), s)
		}
	}
	var err error = &Error{Kind: KindEmpty, Msg: "m"}
	if err.Error() != "m" {
		t.Error("Error() is not the message")
	}
}
