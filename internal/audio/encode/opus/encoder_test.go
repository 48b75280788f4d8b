package opus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Quality thresholds for bandLSD, in dB. They sit between what this encoder
// measures on the test clips (in parentheses) and what the damaged signals of
// TestQualityMeasureRejectsDamage measure (6 dB level error, one frame in
// five dropped: 3–5.6 dB, one frame of delay: 7–10 dB, swapped channels:
// 12–16 dB).
const (
	lsdDefault    = 2.5 // mono speech at the default 32 kbit/s (0.6–1.7)
	lsdLow        = 3.0 // mono speech at 12 kbit/s (2.0–2.1)
	lsdHigh       = 1.0 // mono speech at 128 kbit/s (0.3)
	lsdSweep      = 3.0 // sine sweep at the default bitrate (2.0)
	lsdSweepLow   = 4.0 // sine sweep, 16 kHz input, 12 kbit/s (2.9)
	lsdStereo     = 3.0 // stereo speech at the default 64 kbit/s (1.7–2.1)
	lsdStereoLow  = 5.0 // stereo speech at 32 kbit/s (3.9–4.0)
	lsdStereoHigh = 1.5 // stereo speech at 128 kbit/s (0.8–1.0)
)

// maxLag is the largest cross-correlation lag accepted between input and
// decoded output: 1 ms. SILK and hybrid coding shift the waveform by a sample
// or two; a wrong pre-skip shifts it by hundreds.
func maxLag(rate int) int { return rate / 1000 }

type qualityCase struct {
	name     string
	signal   string // "en_2.wav", "jp_2.wav", "sweep", "stereo" (en_2 left, jp_2 right)
	rate     int
	bitrate  int
	maxLSD   float64
	long     bool  // only with NANOVOX_LONG_TESTS
	chunks   []int // Write sizes in samples per channel, cycled
	channels int
}

var qualityCases = []qualityCase{
	{name: "speech48k", signal: "en_2.wav", rate: 48000, maxLSD: lsdDefault},
	{name: "speech48k_low", signal: "en_2.wav", rate: 48000, bitrate: 12000, maxLSD: lsdLow},
	{name: "speech48k_high", signal: "en_2.wav", rate: 48000, bitrate: 128000, maxLSD: lsdHigh},
	{name: "speech24k", signal: "en_2.wav", rate: 24000, maxLSD: lsdDefault},
	{name: "speech16k", signal: "en_2.wav", rate: 16000, maxLSD: lsdDefault, chunks: []int{1234, 77, 4800}},
	{name: "sweep48k", signal: "sweep", rate: 48000, maxLSD: lsdSweep},
	{name: "stereo48k", signal: "stereo", rate: 48000, maxLSD: lsdStereo, chunks: []int{3840}},
	{name: "jp48k", signal: "jp_2.wav", rate: 48000, maxLSD: lsdDefault, long: true},
	{name: "speech12k", signal: "en_2.wav", rate: 12000, maxLSD: lsdDefault, long: true},
	{name: "speech8k", signal: "en_2.wav", rate: 8000, maxLSD: lsdDefault, long: true},
	{name: "speech16k_low", signal: "en_2.wav", rate: 16000, bitrate: 12000, maxLSD: lsdLow, long: true},
	{name: "sweep16k_low", signal: "sweep", rate: 16000, bitrate: 12000, maxLSD: lsdSweepLow, long: true},
	{name: "stereo48k_low", signal: "stereo", rate: 48000, bitrate: 32000, maxLSD: lsdStereoLow, long: true},
	{name: "stereo48k_high", signal: "stereo", rate: 48000, bitrate: 128000, maxLSD: lsdStereoHigh, long: true},
	{name: "stereo16k", signal: "stereo", rate: 16000, maxLSD: lsdStereo, long: true},
}

func (c qualityCase) input(t testing.TB) (x []float32, channels int) {
	switch c.signal {
	case "sweep":
		return sweep(c.rate, 2*c.rate, 100, 0.45*float64(c.rate)), 1
	case "stereo":
		return interleave(loadClip(t, "en_2.wav", c.rate), loadClip(t, "jp_2.wav", c.rate)), 2
	}
	return loadClip(t, c.signal, c.rate), 1
}

func longTests(t *testing.T) {
	if os.Getenv("NANOVOX_LONG_TESTS") == "" {
		t.Skip("long test; set NANOVOX_LONG_TESTS=1")
	}
}

// TestQuality encodes speech and a sweep, decodes with ffmpeg, and checks the
// exact decoded length, the alignment and the band log-spectral distance of
// every channel, and (stereo) that the channels are not swapped.
func TestQuality(t *testing.T) {
	ffmpeg(t)
	for _, c := range qualityCases {
		t.Run(c.name, func(t *testing.T) {
			if c.long {
				longTests(t)
			}
			t.Parallel() // mostly waiting for ffmpeg
			x, channels := c.input(t)
			frames := len(x) / channels
			stream, _ := encode(t, x, c.rate, channels, c.bitrate, c.chunks)

			// ffmpeg honours pre-skip and end trimming: exactly the input,
			// counted at the 48 kHz the decoder runs at.
			dec48 := decodeFFmpeg(t, stream, channels, 48000)
			if got, want := len(dec48)/channels, frames*48000/c.rate; got != want {
				t.Errorf("decoded %d samples per channel at 48 kHz; want %d", got, want)
			}
			dec := dec48
			if c.rate != 48000 {
				dec = decodeFFmpeg(t, stream, channels, c.rate)
			}
			if len(dec) != len(x) {
				t.Fatalf("decoded %d samples at %d Hz; want %d", len(dec), c.rate, len(x))
			}
			seconds := float64(frames) / float64(c.rate)
			t.Logf("%d bytes, %.1f kbit/s", len(stream), float64(len(stream))*8/seconds/1000)
			for ch := range channels {
				ref, got := channel(x, channels, ch), channel(dec, channels, ch)
				if l := lag(ref, got, c.rate/50); abs(l) > maxLag(c.rate) {
					t.Errorf("channel %d: decoded output lags the input by %d samples", ch, l)
				}
				lsd := bandLSD(ref, got, c.rate)
				t.Logf("channel %d: band LSD %.2f dB (max %.1f)", ch, lsd, c.maxLSD)
				if lsd > c.maxLSD {
					t.Errorf("channel %d: band LSD %.2f dB > %.1f dB", ch, lsd, c.maxLSD)
				}
				if channels == 2 {
					other := channel(dec, channels, 1-ch)
					if swapped := bandLSD(ref, other, c.rate); swapped <= c.maxLSD {
						t.Errorf("channel %d resembles decoded channel %d (LSD %.2f dB): swapped or mixed", ch, 1-ch, swapped)
					}
				}
			}
		})
	}
}

// TestQualityMeasureRejectsDamage is the negative control: the measures of
// TestQuality must reject an encoder that drops frames, gets the level wrong,
// is a frame late, or swaps channels.
func TestQualityMeasureRejectsDamage(t *testing.T) {
	ffmpeg(t)
	const rate = 48000
	fl := rate / 50
	x := interleave(loadClip(t, "en_2.wav", rate), loadClip(t, "jp_2.wav", rate))
	stream, _ := encode(t, x, rate, 2, 0, nil)
	dec := decodeFFmpeg(t, stream, 2, rate)
	ref, good := channel(x, 2, 0), channel(dec, 2, 0)
	if lsd := bandLSD(ref, good, rate); lsd > lsdStereo {
		t.Fatalf("undamaged: band LSD %.2f dB > %.1f dB", lsd, lsdStereo)
	}

	scaled := make([]float32, len(good))
	for i, v := range good {
		scaled[i] = v / 2
	}
	droppedF := append([]float32(nil), good...)
	for f := 0; f*fl < len(droppedF); f += 5 {
		clear(droppedF[f*fl : min(len(droppedF), (f+1)*fl)])
	}
	late := append(make([]float32, fl), good[:len(good)-fl]...)
	damaged := []struct {
		name string
		dec  []float32
	}{
		{"half level", scaled},
		{"every fifth frame dropped", droppedF},
		{"one frame late", late},
		{"channels swapped", channel(dec, 2, 1)},
	}
	// Judge each damage by the strictest threshold that undamaged stereo at
	// this bitrate passes, and the looser mono ones too.
	for _, d := range damaged {
		lsd := bandLSD(ref, d.dec, rate)
		t.Logf("%s: band LSD %.2f dB", d.name, lsd)
		if lsd <= lsdStereo || lsd <= lsdLow {
			t.Errorf("%s: band LSD %.2f dB passes the %.1f dB threshold", d.name, lsd, max(lsdStereo, lsdLow))
		}
	}
	if l := lag(ref, late, fl*2); abs(l) <= maxLag(rate) {
		t.Errorf("one frame late: lag %d passes the %d-sample limit", l, maxLag(rate))
	}
}

// TestStreamingPrefixes checks that the bytes written by the time each Flush
// returns decode, on their own, to the same samples as the start of the whole
// stream: as many as the complete frames written so far allow.
func TestStreamingPrefixes(t *testing.T) {
	ffmpeg(t)
	const rate = 48000
	x := loadClip(t, "en_2.wav", rate)
	chunks := []int{7200, 11, 3000, 24000, 500}
	stream, flushed := encode(t, x, rate, 1, 0, chunks)
	full := decodeFFmpeg(t, stream, 1, rate)

	written := 0
	checked := 0
	for i, n := range flushed {
		written = min(len(x), written+chunks[i%len(chunks)])
		if i != 0 && i != 3 && i != 8 { // keep ffmpeg runs few
			continue
		}
		prefix := stream[:n]
		dec := decodeFFmpeg(t, prefix, 1, rate)
		// Every complete 20 ms frame was encoded and flushed; the decoder
		// drops the pre-skip and nothing at the end (no end-of-stream yet).
		want := (written/960)*960 - 312
		if got := len(dec); got != want {
			t.Errorf("after chunk %d (%d samples written): prefix of %d bytes decodes to %d samples; want %d", i, written, n, got, want)
			continue
		}
		for j := range dec {
			if dec[j] != full[j] {
				t.Errorf("after chunk %d: sample %d of the prefix is %g; the whole stream has %g", i, j, dec[j], full[j])
				break
			}
		}
		checked++
	}
	if checked != 3 {
		t.Fatalf("checked only %d prefixes", checked)
	}
}

// TestPageStructure checks the container without ffmpeg: CRCs, page
// sequence, flags, the two headers and every granule position.
func TestPageStructure(t *testing.T) {
	for _, c := range []struct {
		rate, channels, frames int
		chunks                 []int
	}{
		{48000, 1, 48000*6/5 + 17, []int{480, 2000}}, // more than one full page
		{16000, 2, 16000/2 + 5, []int{320}},
		{8000, 1, 100, nil},
		{24000, 1, 0, nil},
	} {
		t.Run(fmt.Sprintf("%d_%d_%d", c.rate, c.channels, c.frames), func(t *testing.T) {
			x := make([]float32, c.frames*c.channels)
			for i := range x {
				x[i] = float32(math.Sin(float64(i) / 7))
			}
			stream, _ := encode(t, x, c.rate, c.channels, 0, c.chunks)
			pages := parseOgg(t, stream)
			if len(pages) < 3 {
				t.Fatalf("%d pages; want headers and audio", len(pages))
			}
			for i, p := range pages {
				if !p.crcOK {
					t.Errorf("page %d: bad CRC", i)
				}
				if p.seq != uint32(i) || p.serial != pages[0].serial {
					t.Errorf("page %d: sequence %d serial %x", i, p.seq, p.serial)
				}
				var wantFlags byte
				switch i {
				case 0:
					wantFlags = flagBOS
				case len(pages) - 1:
					wantFlags = flagEOS
				}
				if p.flags != wantFlags {
					t.Errorf("page %d: flags %#x; want %#x", i, p.flags, wantFlags)
				}
				if i < 2 && (len(p.packets) != 1 || p.granule != 0) {
					t.Errorf("header page %d: %d packets, granule %d", i, len(p.packets), p.granule)
				}
			}
			head := pages[0].packets[0]
			wantHead := []byte("OpusHead\x01")
			wantHead = append(wantHead, byte(c.channels))
			wantHead = binary.LittleEndian.AppendUint16(wantHead, 312)
			wantHead = binary.LittleEndian.AppendUint32(wantHead, uint32(c.rate))
			wantHead = append(wantHead, 0, 0, 0)
			if !bytes.Equal(head, wantHead) {
				t.Errorf("OpusHead % x; want % x", head, wantHead)
			}
			tags := pages[1].packets[0]
			if !bytes.HasPrefix(tags, []byte("OpusTags")) || len(tags) < 16 ||
				int(binary.LittleEndian.Uint32(tags[8:]))+16 != len(tags) {
				t.Errorf("OpusTags malformed: %q", tags)
			}

			packets := 0
			for i, p := range pages[2:] {
				if len(p.packets) == 0 || len(p.packets) > pagePackets {
					t.Errorf("audio page %d: %d packets", i, len(p.packets))
				}
				for _, pk := range p.packets {
					if d := tocMillis(pk[0]); d != 20 || pk[0]&3 != 0 {
						t.Errorf("packet %d: TOC %#x is not one 20 ms frame", packets, pk[0])
					}
					packets++
				}
				last := i == len(pages)-3
				want := int64(packets * 960)
				if last {
					want = 312 + int64(c.frames)*48000/int64(c.rate)
					if want > int64(packets*960) || want <= int64((packets-len(p.packets))*960) {
						t.Errorf("final granule %d trims more than the last page holds", want)
					}
				}
				if p.granule != want {
					t.Errorf("audio page %d (last %v): granule %d; want %d", i, last, p.granule, want)
				}
			}
			frameLen := c.rate / 50
			lookahead := 312 * c.rate / 48000
			if want := (c.frames + lookahead + frameLen - 1) / frameLen; packets != want {
				t.Errorf("%d packets; want %d", packets, want)
			}
		})
	}
}

// tocMillis returns the frame duration a TOC byte signals (RFC 6716 §3.1).
func tocMillis(toc byte) float64 {
	config := int(toc >> 3)
	switch {
	case config < 12: // SILK: 10, 20, 40, 60 ms
		return []float64{10, 20, 40, 60}[config%4]
	case config < 16: // hybrid: 10, 20 ms
		return []float64{10, 20}[config%2]
	default: // CELT: 2.5, 5, 10, 20 ms
		return []float64{2.5, 5, 10, 20}[config%4]
	}
}

// TestFFprobeTimestamps checks our granule positions the way ffmpeg reads
// them: it derives every packet's timestamp from the page granules, so a
// wrong granule shows up as a gap or overlap.
func TestFFprobeTimestamps(t *testing.T) {
	ffmpeg(t)
	probe, err := exec.LookPath("ffprobe")
	if err != nil {
		t.Skip("ffprobe not installed")
	}
	const rate, frames = 24000, 24000*3 + 101
	x := sweep(rate, frames, 200, 5000)
	stream, _ := encode(t, x, rate, 1, 0, []int{2400, 50000})
	path := filepath.Join(t.TempDir(), "a.opus")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(probe, "-v", "error", "-show_entries", "packet=pts,duration", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v\n%s", err, out)
	}
	var pts, dur []int
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 2 {
			continue
		}
		p, err1 := strconv.Atoi(f[0])
		d, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("ffprobe line %q", line)
		}
		pts, dur = append(pts, p), append(dur, d)
	}
	if len(pts) == 0 {
		t.Fatalf("ffprobe listed no packets:\n%s", out)
	}
	for i := range pts {
		if pts[i] != i*960-312 {
			t.Fatalf("packet %d: pts %d; want %d", i, pts[i], i*960-312)
		}
	}
	// ffmpeg shortens the last packet by the end trim.
	total := pts[len(pts)-1] + dur[len(dur)-1]
	if want := frames * 48000 / rate; total != want {
		t.Errorf("stream ends at %d; want %d", total, want)
	}
}

// TestCRC checks the Ogg CRC against the CRC-32 check value (poly 0x04c11db7,
// init 0, no reflection, no final xor: the complement of CRC-32/CKSUM's
// 0x765e7680) and against the pages of an Ogg file made by ffmpeg, and shows
// that ffmpeg does verify it, so the ffmpeg tests would catch a wrong CRC.
func TestCRC(t *testing.T) {
	if got := oggCRC(0, []byte("123456789")); got != 0x89a1897f {
		t.Errorf("oggCRC(123456789) = %#x; want 0x89a1897f", got)
	}
	bin := ffmpeg(t)
	path := filepath.Join(t.TempDir(), "ref.ogg")
	out, err := exec.Command(bin, "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1",
		"-c:a", "flac", "-f", "ogg", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	ref, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range parseOggLoose(t, ref) {
		if !p {
			t.Errorf("ffmpeg's page %d: our CRC differs from ffmpeg's", i)
		}
	}

	stream, _ := encode(t, sweep(48000, 48000, 100, 8000), 48000, 1, 0, nil)
	bad := bytes.Clone(stream)
	bad[len(bad)-10] ^= 0x40
	_, stderr, _ := runFFmpeg(t, bad, 1, 48000)
	if !strings.Contains(stderr, "CRC mismatch") {
		t.Errorf("ffmpeg did not report the corrupted page (stderr %q); the CRC is not being checked", stderr)
	}
}

// parseOggLoose returns, for each page of an arbitrary Ogg file, whether its
// CRC matches ours. It tolerates packets spanning pages.
func parseOggLoose(t *testing.T, b []byte) []bool {
	var ok []bool
	for len(b) >= pageHeaderLen {
		nseg := int(b[26])
		size := pageHeaderLen + nseg
		for _, s := range b[pageHeaderLen : pageHeaderLen+nseg] {
			size += int(s)
		}
		page := bytes.Clone(b[:size])
		want := binary.LittleEndian.Uint32(page[22:])
		clear(page[22:26])
		ok = append(ok, oggCRC(0, page) == want)
		b = b[size:]
	}
	if len(ok) < 2 || len(b) != 0 {
		t.Fatalf("ffmpeg's file: %d pages, %d bytes left over", len(ok), len(b))
	}
	return ok
}

// TestAwkwardInput feeds signals that must not break the encoder: silence,
// noise, a full-scale square wave, out-of-range, NaN and infinite samples.
func TestAwkwardInput(t *testing.T) {
	const rate = 48000
	n := rate / 5
	rng := rand.New(rand.NewPCG(1, 2))
	signals := map[string]func(i int) float32{
		"silence": func(int) float32 { return 0 },
		"noise":   func(int) float32 { return 2*rng.Float32() - 1 },
		"square":  func(i int) float32 { return float32(1 - 2*(i/50%2)) },
		"huge":    func(i int) float32 { return float32(1e30 * math.Sin(float64(i))) },
		"nan": func(i int) float32 {
			return []float32{float32(math.NaN()), 0.3, float32(math.Inf(1)), float32(math.Inf(-1))}[i%4]
		},
	}
	for name, f := range signals {
		for _, channels := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s_%d", name, channels), func(t *testing.T) {
				x := make([]float32, n*channels)
				for i := range x {
					x[i] = f(i)
				}
				stream, _ := encode(t, x, rate, channels, 0, []int{333})
				parseOgg(t, stream)
				if _, err := exec.LookPath("ffmpeg"); err != nil || channels == 1 || name == "silence" || name == "noise" {
					return // keep ffmpeg runs few; these three stereo signals are the extreme ones
				}
				dec := decodeFFmpeg(t, stream, channels, rate)
				if len(dec) != len(x) {
					t.Errorf("decoded %d samples; want %d", len(dec), len(x))
				}
				for i, v := range dec {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || math.Abs(float64(v)) > 2 {
						t.Fatalf("decoded sample %d is %g", i, v)
					}
				}
			})
		}
	}
}

func TestEmptyStream(t *testing.T) {
	stream, _ := encode(t, nil, 48000, 1, 0, nil)
	pages := parseOgg(t, stream)
	if last := pages[len(pages)-1]; last.flags != flagEOS || last.granule != 312 {
		t.Errorf("last page flags %#x granule %d; want EOS, 312", last.flags, last.granule)
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return
	}
	out, stderr, err := runFFmpeg(t, stream, 1, 48000)
	if err != nil || len(out) != 0 {
		t.Errorf("ffmpeg: %d samples, %v, %s", len(out), err, stderr)
	}
}

func TestNewEncoderErrors(t *testing.T) {
	for _, c := range []struct{ rate, channels, bitrate int }{
		{44100, 1, 0}, {96000, 1, 0}, {0, 1, 0}, {-48000, 1, 0},
		{48000, 0, 0}, {48000, 3, 0}, {48000, -1, 0},
		{48000, 1, 5999}, {48000, 1, 510001}, {48000, 2, -1},
	} {
		if e, err := NewEncoder(&bytes.Buffer{}, c.rate, c.channels, c.bitrate); err == nil || e != nil {
			t.Errorf("NewEncoder(%d Hz, %d ch, %d bit/s) = %v, %v; want an error", c.rate, c.channels, c.bitrate, e, err)
		}
	}
	for _, rate := range []int{8000, 12000, 16000, 24000, 48000} {
		if !SupportedRate(rate) {
			t.Errorf("SupportedRate(%d) = false", rate)
		}
		for _, ch := range []int{1, 2} {
			for _, br := range []int{0, MinBitrate, MaxBitrate} {
				if _, err := NewEncoder(&bytes.Buffer{}, rate, ch, br); err != nil {
					t.Errorf("NewEncoder(%d, %d, %d): %v", rate, ch, br, err)
				}
			}
		}
	}
	for _, rate := range []int{11025, 22050, 32000, 44100, 96000} {
		if SupportedRate(rate) {
			t.Errorf("SupportedRate(%d) = true", rate)
		}
	}
}

func TestUseErrors(t *testing.T) {
	e, err := NewEncoder(&bytes.Buffer{}, 48000, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Delay() != 0 {
		t.Errorf("Delay() = %d", e.Delay())
	}
	if err := e.Write(make([]float32, 3)); err == nil {
		t.Error("Write of 3 samples to a stereo encoder succeeded")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"Write": func() error { return e.Write(make([]float32, 2)) },
		"Flush": e.Flush,
		"Close": e.Close,
	} {
		if err := f(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v; want ErrClosed", name, err)
		}
	}
}

// failWriter accepts n bytes, then fails every write.
type failWriter struct{ n int }

var errSink = errors.New("sink failed")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		w.n = 0
		return 0, errSink
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriterErrorIsSticky(t *testing.T) {
	for _, budget := range []int{0, 50, 2000} {
		e, err := NewEncoder(&failWriter{n: budget}, 48000, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		x := sweep(48000, 48000*2, 100, 1000)
		var first error
		for len(x) > 0 && first == nil {
			n := min(len(x), 4800)
			first = e.Write(x[:n])
			x = x[n:]
			if first == nil {
				first = e.Flush()
			}
		}
		if first == nil {
			first = e.Close()
		}
		if !errors.Is(first, errSink) {
			t.Fatalf("budget %d: first error %v; want the writer's", budget, first)
		}
		if err := e.Write(make([]float32, 960)); !errors.Is(err, errSink) {
			t.Errorf("budget %d: Write after failure: %v", budget, err)
		}
		if err := e.Close(); !errors.Is(err, errSink) {
			t.Errorf("budget %d: Close after failure: %v", budget, err)
		}
	}
}

// raceEnabled is set by race_test.go under -race, which allocates behind
// our back and slows the encoder tenfold.
var raceEnabled bool

func TestWriteDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	e, err := NewEncoder(discard{}, 48000, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := loadClip(t, "en_2.wav", 48000)
	// Warm up: the page buffers grow to their working size.
	if err := e.Write(x[:48000*2]); err != nil {
		t.Fatal(err)
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		off := (i * 960) % (len(x) - 960)
		i++
		if err := e.Write(x[off : off+960]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("Write allocates %.2f times per 20 ms frame", allocs)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkEncode measures the real-time factor of encoding 48 kHz mono
// speech at the default bitrate, flushing every 100 ms: "rtf" is wall-clock
// seconds per second of audio (run with -cpu 1; the encoder is
// single-threaded), "cpu-rtf" the process's CPU seconds per second of audio,
// which stays meaningful on a machine shared with other work.
func BenchmarkEncode(b *testing.B) {
	x := loadClip(b, "en_2.wav", 48000)
	b.SetBytes(int64(len(x) * 4))
	cpu0, cpuOK := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		e, err := NewEncoder(discard{}, 48000, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(x); off += 4800 {
			if err := e.Write(x[off:min(len(x), off+4800)]); err != nil {
				b.Fatal(err)
			}
			if err := e.Flush(); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	audioSeconds := float64(b.N) * float64(len(x)) / 48000
	b.ReportMetric(b.Elapsed().Seconds()/audioSeconds, "rtf")
	if cpu1, ok := cpuTime(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/audioSeconds, "cpu-rtf")
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
