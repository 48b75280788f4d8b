package flac

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/audio"
)

// ffmpegPath finds ffmpeg; without it the test is skipped, except in CI.
func ffmpegPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg not found (CI must install it)")
		}
		t.Skip("ffmpeg not found")
	}
	return p
}

// decoded is what ffmpeg made of one stream.
type decoded struct {
	rate, channels int
	samples        []int16 // interleaved
}

// ffmpegDecode decodes FLAC streams with one ffmpeg run (process start-up
// dominates the cost), with CRC checking on: any message from ffmpeg fails
// the test. Each stream is converted to a 16-bit WAV file, whose header
// tells the rate and channel count ffmpeg read.
func ffmpegDecode(t testing.TB, streams ...[]byte) []decoded {
	t.Helper()
	ff := ffmpegPath(t)
	dir := t.TempDir()
	args := []string{"-nostdin", "-v", "error", "-err_detect", "crccheck+bitstream+buffer+explode"}
	for i, data := range streams {
		path := filepath.Join(dir, fmt.Sprintf("%d.flac", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-i", path)
	}
	for i := range streams {
		args = append(args, "-map", fmt.Sprintf("%d:a", i), "-map_metadata", "-1", "-bitexact", "-c:a", "pcm_s16le", filepath.Join(dir, fmt.Sprintf("%d.wav", i)))
	}
	if out, err := exec.Command(ff, args...).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	res := make([]decoded, len(streams))
	for i := range streams {
		wav, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.wav", i)))
		if err != nil {
			t.Fatal(err)
		}
		res[i] = parseWAV(t, wav)
	}
	return res
}

// parseWAV reads ffmpeg's 16-bit PCM WAV output (any rate, which
// internal/audio's decoder would bound).
func parseWAV(t testing.TB, b []byte) decoded {
	t.Helper()
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("ffmpeg wrote no WAV file")
	}
	var d decoded
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(binary.LittleEndian.Uint32(b[off+4:]))
		body := b[off+8 : min(len(b), off+8+size)]
		switch id {
		case "fmt ":
			d.channels = int(binary.LittleEndian.Uint16(body[2:]))
			d.rate = int(binary.LittleEndian.Uint32(body[4:]))
			if bits := binary.LittleEndian.Uint16(body[14:]); bits != 16 {
				t.Fatalf("WAV has %d-bit samples", bits)
			}
		case "data":
			d.samples = make([]int16, len(body)/2)
			for i := range d.samples {
				d.samples[i] = int16(binary.LittleEndian.Uint16(body[2*i:]))
			}
			return d
		}
		off += 8 + size + size%2
	}
	t.Fatalf("WAV without data")
	return d
}

func quantize(x []float32) []int16 {
	q := make([]int16, len(x))
	for i, v := range x {
		q[i] = audio.Quantize16(v)
	}
	return q
}

func loadSpeech(t testing.TB) []float32 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "en_2.wav"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := audio.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return c.Samples[0]
}

func sweep(n, rate int, f0, f1, amp float64) []float32 {
	x := make([]float32, n)
	dur := float64(n) / float64(rate)
	k := math.Log(f1 / f0)
	for i := range x {
		t := float64(i) / float64(rate)
		x[i] = float32(amp * math.Sin(2*math.Pi*f0*dur/k*(math.Exp(t/dur*k)-1)))
	}
	return x
}

// encode writes x in one Write and closes.
func encode(t testing.TB, x []float32, rate, channels int) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, rate, channels, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(x); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstDiff returns the index of the first difference, or -1.
func firstDiff(a, b []int16) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// signals returns the test inputs, interleaved for the channel count.
func signals(t testing.TB, rate, channels int) map[string][]float32 {
	rng := rand.New(rand.NewPCG(uint64(rate), uint64(channels)))
	n := max(rate/2, 2*BlockSize+123) // several blocks at every rate
	mono := map[string][]float32{
		"sweep":   sweep(n, rate, 50, float64(rate)*0.45, 0.7),
		"noise":   make([]float32, n),
		"silence": make([]float32, n/3+5),
		"square":  make([]float32, n/2),
		"hostile": make([]float32, 5000),
	}
	for i := range mono["noise"] {
		mono["noise"][i] = float32(rng.NormFloat64() * 0.5) // clips now and then
	}
	for i := range mono["square"] {
		mono["square"][i] = float32(1 - 2*((i/37)%2))
	}
	h := mono["hostile"]
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e30, 1, -1, 0.99999, -1.5}
	for i := range h {
		h[i] = specials[rng.IntN(len(specials))]
	}
	if rate == 48000 {
		mono["speech"] = loadSpeech(t)
	}
	if channels == 1 {
		return mono
	}
	out := map[string][]float32{}
	for name, x := range mono {
		// Right: a different signal, so swapped channels are caught.
		r := make([]float32, len(x))
		for i := range r {
			r[i] = 0.3 * float32(math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
		}
		out[name] = audio.Interleave(nil, x, r)
		out[name+"-dual"] = audio.Interleave(nil, x, x) // side is silence
	}
	// A centred source with decorrelated noise: mid/side wins, with odd
	// L+R sums (mid's rounding must be undone exactly).
	sw, nz := mono["sweep"], mono["noise"]
	ms := make([]float32, 0, 2*len(sw))
	for i := range sw {
		d := 0.01 * nz[i]
		ms = append(ms, sw[i]+d, sw[i]-d)
	}
	out["midside"] = ms
	return out
}

// TestLosslessFFmpeg is the main check: ffmpeg, with CRC checking, decodes
// exactly the quantized input, sample for sample, at each rate and channel
// count, and reads the right rate and channel count. The signals of one rate
// and channel count go into one stream, one after another, so ffmpeg runs
// twice per stream, not per signal.
func TestLosslessFFmpeg(t *testing.T) {
	ffmpegPath(t)
	type stream struct {
		rate, ch int
		want     []int16
	}
	var streams []stream
	var data [][]byte
	for _, rate := range []int{8000, 22050, 24000, 44100, 48000, 7350, 100000, 655350} {
		for _, ch := range []int{1, 2} {
			sigs := signals(t, rate, ch)
			var x []float32
			for _, name := range slices.Sorted(maps.Keys(sigs)) {
				if rate > 48000 && name != "sweep" {
					continue // the rate test needs one signal
				}
				x = append(x, sigs[name]...)
			}
			streams = append(streams, stream{rate, ch, quantize(x)})
			data = append(data, encode(t, x, rate, ch))
			if rate == 48000 {
				speech := encode(t, sigs["speech"], rate, ch)
				t.Logf("speech %dch: %d bytes, %.1f %% of 16-bit PCM", ch, len(speech), 100*float64(len(speech))/float64(2*len(sigs["speech"])))
			}
		}
	}
	for i, got := range ffmpegDecode(t, data...) {
		s := streams[i]
		if got.rate != s.rate || got.channels != s.ch {
			t.Errorf("%d Hz %dch: ffmpeg read %d Hz %dch", s.rate, s.ch, got.rate, got.channels)
		}
		if j := firstDiff(got.samples, s.want); j >= 0 {
			t.Errorf("%d Hz %dch: decoded %d samples of %d, first difference at %d", s.rate, s.ch, len(got.samples), len(s.want), j)
		}
	}
}

// TestLosslessGo decodes with the module's FLAC decoder (github.com/mewkiz/flac
// through internal/audio), which runs without ffmpeg and checks every
// frame's CRC and the STREAMINFO MD5 where set.
func TestLosslessGo(t *testing.T) {
	for _, rate := range []int{8000, 48000} {
		for _, ch := range []int{1, 2} {
			for name, x := range signals(t, rate, ch) {
				if name == "hostile" || strings.HasPrefix(name, "silence") || strings.HasSuffix(name, "-dual") {
					continue // short, or covered by ffmpeg
				}
				data := encode(t, x, rate, ch)
				clip, err := audio.DecodeWith(data, audio.Options{MinDuration: -1})
				if err != nil {
					t.Fatalf("%d Hz %dch %s: %v", rate, ch, name, err)
				}
				var got []int16
				for i := range clip.Samples[0] {
					for c := range ch {
						got = append(got, int16(math.Round(float64(clip.Samples[c][i])*32768)))
					}
				}
				if i := firstDiff(got, quantize(x)); i >= 0 {
					t.Errorf("%d Hz %dch %s: first difference at %d of %d", rate, ch, name, i, len(got))
				}
			}
		}
	}
}

// TestDamageDetected is the negative control: the comparison and ffmpeg's
// CRC check must reject a stream with one flipped bit in a frame, and the
// sample comparison must reject a one-LSB or one-sample offset.
func TestDamageDetected(t *testing.T) {
	ffmpegPath(t)
	x := loadSpeech(t)
	data := encode(t, x, 48000, 1)
	damaged := bytes.Clone(data)
	damaged[len(damaged)/2] ^= 0x10
	path := filepath.Join(t.TempDir(), "bad.flac")
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-err_detect", "crccheck+bitstream+buffer+explode", "-i", path, "-f", "s16le", "-y", os.DevNull).CombinedOutput()
	if err == nil && len(out) == 0 {
		t.Errorf("ffmpeg accepted a stream with a flipped bit")
	}
	want := quantize(x)
	off := append([]int16{0}, want[:len(want)-1]...)
	plus := append([]int16(nil), want...)
	plus[1000]++
	if firstDiff(off, want) < 0 || firstDiff(plus, want) < 0 {
		t.Errorf("the comparison misses a shifted or changed sample")
	}
}

// TestStreamingPrefixes checks that the bytes written after each Flush form a
// valid stream holding exactly the samples written so far (all but fewer
// than 16 per channel), with Writes that split frames.
func TestStreamingPrefixes(t *testing.T) {
	ffmpegPath(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ch := range []int{1, 2} {
		x := loadSpeech(t)
		if ch == 2 {
			x = audio.Interleave(nil, x, sweep(len(x), 48000, 100, 8000, 0.4))
		}
		want := quantize(x)
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, 48000, ch, 0)
		if err != nil {
			t.Fatal(err)
		}
		var prefixes [][]byte
		var frames []int
		writes := 0
		for i := 0; i < len(x); {
			k := min(1+rng.IntN(9000), len(x)-i)
			if err := e.Write(x[i : i+k]); err != nil {
				t.Fatal(err)
			}
			i += k
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
			if writes++; writes%8 != 1 && i < len(x) {
				continue // decode a handful of prefixes, not all
			}
			prefixes = append(prefixes, bytes.Clone(buf.Bytes()))
			frames = append(frames, i/ch)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		prefixes = append(prefixes, buf.Bytes())
		frames = append(frames, len(x)/ch)
		if len(prefixes) < 4 {
			t.Fatalf("only %d prefixes checked", len(prefixes)-1)
		}
		for k, got := range ffmpegDecode(t, prefixes...) {
			n := len(got.samples) / ch
			held := frames[k] - n
			if held < 0 || held >= minBlockSize || (k == len(prefixes)-1 && held != 0) {
				t.Errorf("%dch after %d frames: %d decodable", ch, frames[k], n)
			}
			if j := firstDiff(got.samples, want[:min(len(want), len(got.samples))]); j >= 0 {
				t.Errorf("%dch prefix of %d frames: first difference at %d", ch, frames[k], j)
			}
		}
	}
}

// TestSeekableWriterGetsStreamInfo checks that a file gets the total, the
// MD5, and block and frame sizes at Close, and that the encoder leaves the
// file offset at the end (it starts at a non-zero offset here).
func TestSeekableWriterGetsStreamInfo(t *testing.T) {
	for _, tc := range []struct {
		ch    int
		flush bool
	}{{1, true}, {2, true}, {1, false}} {
		ch := tc.ch
		x := loadSpeech(t)
		if ch == 2 {
			x = audio.Interleave(nil, x, x)
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "out.flac"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write([]byte("junk")); err != nil {
			t.Fatal(err)
		}
		e, err := NewEncoder(f, 48000, ch, 0)
		if err != nil {
			t.Fatal(err)
		}
		e.Write(x[:3000*ch])
		if tc.flush {
			e.Flush()
		}
		e.Write(x[3000*ch:])
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("tail")); err != nil {
			t.Fatal(err)
		}
		all, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(all, []byte("tail")) {
			t.Fatalf("the offset was not restored to the end after Close")
		}
		data := all[4 : len(all)-4]
		si := data[8:42]
		v := binary.BigEndian.Uint64(si[10:])
		total := v & (1<<36 - 1)
		frames := len(x) / ch
		if total != uint64(frames) {
			t.Errorf("%dch: STREAMINFO total %d, want %d", ch, total, frames)
		}
		var pcm []byte
		for _, q := range quantize(x) {
			pcm = binary.LittleEndian.AppendUint16(pcm, uint16(q))
		}
		if sum := md5.Sum(pcm); !bytes.Equal(si[18:34], sum[:]) {
			t.Errorf("%dch: STREAMINFO MD5 %x, want %x", ch, si[18:34], sum)
		}
		minB, maxB := binary.BigEndian.Uint16(si[0:]), binary.BigEndian.Uint16(si[2:])
		// Without the Flush every block but the last is full, and
		// min = max although the frames use variable-blocksize headers;
		// ffmpeg and the Go decoder go by the headers.
		wantMin := 3000
		if !tc.flush {
			wantMin = BlockSize
		}
		if int(minB) != wantMin || maxB != BlockSize {
			t.Errorf("%dch: block sizes %d–%d, want %d–%d", ch, minB, maxB, wantMin, BlockSize)
		}
		if clip, err := audio.Decode(data); err != nil || len(clip.Samples[0]) != frames {
			t.Errorf("%dch: Go decoder: %v", ch, err)
		}
		minF, maxF := int(si[4])<<16|int(si[5])<<8|int(si[6]), int(si[7])<<16|int(si[8])<<8|int(si[9])
		if minF == 0 || maxF < minF {
			t.Errorf("%dch: frame sizes %d–%d", ch, minF, maxF)
		}
		if got := ffmpegDecode(t, data)[0].samples; firstDiff(got, quantize(x)) >= 0 {
			t.Errorf("%dch: decode differs at %d", ch, firstDiff(got, quantize(x)))
		}
	}
}

func TestStreamedHeaderIsUnknown(t *testing.T) {
	data := encode(t, make([]float32, 100), 48000, 1)
	si := data[8:42]
	v := binary.BigEndian.Uint64(si[10:])
	if string(data[:4]) != "fLaC" || int(v>>44) != 48000 || v>>41&7 != 0 || v>>36&31 != 15 || v&(1<<36-1) != 0 {
		t.Errorf("STREAMINFO %x", si)
	}
	if !bytes.Equal(si[18:34], make([]byte, 16)) {
		t.Errorf("streamed MD5 is not zero")
	}
}

func TestArguments(t *testing.T) {
	tests := []struct {
		rate, ch, bitrate int
		ok                bool
	}{
		{48000, 1, 0, true}, {1, 2, 0, true}, {655350, 2, 0, true},
		{0, 1, 0, false}, {655351, 1, 0, false}, {-1, 1, 0, false},
		{48000, 0, 0, false}, {48000, 3, 0, false}, {48000, 1, 128000, false}, {48000, 1, -1, false},
	}
	for _, tt := range tests {
		_, err := NewEncoder(&bytes.Buffer{}, tt.rate, tt.ch, tt.bitrate)
		if (err == nil) != tt.ok {
			t.Errorf("NewEncoder(%d Hz, %d ch, %d bit/s): err = %v", tt.rate, tt.ch, tt.bitrate, err)
		}
		if SupportedRate(tt.rate) != (tt.rate >= 1 && tt.rate <= MaxSampleRate) {
			t.Errorf("SupportedRate(%d) = %v", tt.rate, SupportedRate(tt.rate))
		}
	}
}

func TestWriteAfterClose(t *testing.T) {
	e, _ := NewEncoder(&bytes.Buffer{}, 48000, 1, 0)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Write([]float32{0}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := e.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v", err)
	}
	if e.Delay() != 0 {
		t.Errorf("Delay = %d", e.Delay())
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("boom")
	}
	w.n--
	return len(p), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	e, err := NewEncoder(&failWriter{n: 1}, 48000, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(make([]float32, BlockSize)); err == nil {
		t.Fatal("no error from a failing writer")
	}
	if err := e.Write(make([]float32, 10)); err == nil {
		t.Error("error not sticky")
	}
	if _, err := NewEncoder(&failWriter{}, 48000, 1, 0); err == nil {
		t.Error("NewEncoder ignores a failing header write")
	}
}

// TestSteadyStateAllocations checks that encoding full blocks allocates
// nothing once the buffers have grown.
func TestSteadyStateAllocations(t *testing.T) {
	for _, ch := range []int{1, 2} {
		x := sweep(BlockSize*ch, 48000, 100, 5000, 0.5)
		e, _ := NewEncoder(discard{}, 48000, ch, 0)
		e.Write(x)
		if a := testing.AllocsPerRun(20, func() { e.Write(x) }); a != 0 {
			t.Errorf("%dch: %v allocations per block", ch, a)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestCompresses guards against silently falling back to verbatim
// subframes: speech must shrink well below 16-bit PCM.
func TestCompresses(t *testing.T) {
	x := loadSpeech(t)
	data := encode(t, x, 48000, 1)
	if ratio := float64(len(data)) / float64(2*len(x)); ratio > 0.75 {
		t.Errorf("speech is %.0f %% of PCM", 100*ratio)
	}
	if data := encode(t, make([]float32, 48000), 48000, 1); len(data) > 400 {
		t.Errorf("1 s of silence takes %d bytes", len(data))
	}
}

func TestUTF8(t *testing.T) {
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0}}, {0x7F, []byte{0x7F}}, {0x80, []byte{0xC2, 0x80}},
		{0x7FF, []byte{0xDF, 0xBF}}, {0x800, []byte{0xE0, 0xA0, 0x80}},
		{1<<36 - 1, []byte{0xFE, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF}},
		{1 << 31, []byte{0xFE, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80}},
		{1<<31 - 1, []byte{0xFD, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF}},
	}
	for _, tt := range tests {
		if got := appendUTF8(nil, tt.v); !bytes.Equal(got, tt.want) {
			t.Errorf("appendUTF8(%#x) = %x, want %x", tt.v, got, tt.want)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	x := loadSpeech(b)
	for _, ch := range []int{1, 2} {
		in := x
		if ch == 2 {
			in = audio.Interleave(nil, x, x[100:])
		}
		b.Run(fmt.Sprintf("ch=%d", ch), func(b *testing.B) {
			e, _ := NewEncoder(discard{}, 48000, ch, 0)
			start := time.Now()
			for b.Loop() {
				for i := 0; i < len(in); i += 1920 * ch {
					e.Write(in[i:min(i+1920*ch, len(in))])
				}
				e.Flush()
			}
			sec := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(sec/(float64(len(in)/ch)/48000), "rtf")
		})
	}
}
