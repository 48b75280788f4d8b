package opus

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nanovox/nanovox/internal/audio"
)

// loadClip reads a mono test clip and converts it to rate.
func loadClip(t testing.TB, name string, rate int) []float32 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	clip, err := audio.Decode(data)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	x := clip.Samples[0]
	if clip.SampleRate != rate {
		if x, err = audio.Resample(x, clip.SampleRate, rate); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// interleave makes a stereo signal of the common length of l and r.
func interleave(l, r []float32) []float32 {
	n := min(len(l), len(r))
	return audio.Interleave(nil, l[:n], r[:n])
}

// channel extracts channel ch of an interleaved signal.
func channel(x []float32, channels, ch int) []float32 {
	out := make([]float32, len(x)/channels)
	for i := range out {
		out[i] = x[i*channels+ch]
	}
	return out
}

// sweep is a logarithmic sine sweep from f0 to f1 Hz at amplitude 0.5.
func sweep(rate, n int, f0, f1 float64) []float32 {
	x := make([]float32, n)
	k := math.Log(f1 / f0)
	dur := float64(n) / float64(rate)
	for i := range x {
		t := float64(i) / float64(rate)
		phase := 2 * math.Pi * f0 * dur / k * (math.Exp(t/dur*k) - 1)
		x[i] = float32(0.5 * math.Sin(phase))
	}
	return x
}

// encode runs the whole signal through an Encoder in chunks of the given
// sizes (cycled; whole frames of channels each) with a Flush after every
// chunk, and returns the stream and the stream's length after each Flush.
func encode(t testing.TB, x []float32, rate, channels, bitrate int, chunks []int) (stream []byte, flushed []int) {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, rate, channels, bitrate)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) == 0 {
		chunks = []int{len(x) / channels}
	}
	for i := 0; len(x) > 0; i++ {
		n := min(chunks[i%len(chunks)]*channels, len(x))
		if err := e.Write(x[:n]); err != nil {
			t.Fatal(err)
		}
		x = x[n:]
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
		flushed = append(flushed, buf.Len())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), flushed
}

// ffmpeg returns the path of ffmpeg, skipping the test when it is missing
// unless CI is set.
func ffmpeg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ffmpeg is required in CI: %v", err)
		}
		t.Skip("ffmpeg not installed")
	}
	return p
}

var (
	libopusOnce sync.Once
	libopusOK   bool
)

// decoderArgs selects ffmpeg's libopus decoder, the reference decoder, when
// ffmpeg has it; ffmpeg's own decoder otherwise (both honour pre-skip and end
// trimming).
func decoderArgs(t testing.TB, bin string) []string {
	libopusOnce.Do(func() {
		out, err := exec.Command(bin, "-hide_banner", "-decoders").Output()
		libopusOK = err == nil && bytes.Contains(out, []byte(" libopus "))
	})
	if !libopusOK {
		t.Log("ffmpeg has no libopus decoder; using its native Opus decoder")
		return nil
	}
	return []string{"-c:a", "libopus"}
}

// decodeFFmpeg decodes an Ogg Opus stream with ffmpeg to interleaved float32
// at rate and fails the test if ffmpeg reports anything at all at -v error
// (CRC mismatches, bad headers, truncated packets).
func decodeFFmpeg(t testing.TB, stream []byte, channels, rate int) []float32 {
	t.Helper()
	out, stderr, err := runFFmpeg(t, stream, channels, rate)
	if err != nil || stderr != "" {
		t.Fatalf("ffmpeg: %v\n%s", err, stderr)
	}
	return out
}

func runFFmpeg(t testing.TB, stream []byte, channels, rate int) ([]float32, string, error) {
	t.Helper()
	bin := ffmpeg(t)
	path := filepath.Join(t.TempDir(), "in.opus")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-nostdin", "-v", "error"}, decoderArgs(t, bin)...)
	args = append(args, "-i", path, "-f", "f32le", "-ac", fmt.Sprint(channels), "-ar", fmt.Sprint(rate), "-")
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	raw := stdout.Bytes()
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, strings.TrimSpace(stderr.String()), err
}

// barkEdges are the critical-band edges in Hz (Zwicker, "Subdivision of the
// audible frequency range into critical bands", JASA 1961), from 100 Hz up.
var barkEdges = []float64{100, 200, 300, 400, 510, 630, 770, 920, 1080, 1270, 1480,
	1720, 2000, 2320, 2700, 3150, 3700, 4400, 5300, 6400, 7700}

// bandLSD is the quality measure of the tests: the band log-spectral distance
// in dB between a reference and a decoded signal at the same rate and
// alignment. Both are cut into Hann-windowed frames of ~20–32 ms (a power of
// two) with 50 % overlap; each frame's power is summed in critical bands from
// 100 Hz up to 7.7 kHz (3.7 kHz at 8 kHz input), converted to dB with a floor
// 60 dB below the loudest reference band, and the frame's distance is the RMS
// over bands of the dB differences. The result is the mean over the active
// frames: those within 40 dB of the loudest reference frame.
//
// Unlike an SNR it ignores the phase and fine structure that Opus's SILK and
// hybrid modes legitimately change, but it still sees every fault that matters
// to a listener: a level error of g dB adds g dB, a dropped frame adds up to
// 60 dB on that frame, and a frame of misalignment compares different sounds.
func bandLSD(ref, dec []float32, rate int) float64 {
	n := 1
	for n < rate/50 {
		n *= 2
	}
	var bands [][2]int // FFT bin ranges [lo, hi)
	for i := 0; i+1 < len(barkEdges) && barkEdges[i+1] <= float64(rate)/2; i++ {
		lo := int(math.Round(barkEdges[i] * float64(n) / float64(rate)))
		hi := int(math.Round(barkEdges[i+1] * float64(n) / float64(rate)))
		bands = append(bands, [2]int{lo, max(hi, lo+1)})
	}
	frames := (min(len(ref), len(dec)) - n) / (n / 2)
	if frames <= 0 {
		return math.Inf(1)
	}
	spec := func(x []float32) (bandDB [][]float64, energy []float64) {
		buf := make([]complex128, n)
		for f := range frames {
			var e float64
			for i := range n {
				w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
				v := float64(x[f*n/2+i])
				buf[i] = complex(v*w, 0)
				e += v * v
			}
			fft(buf)
			db := make([]float64, len(bands))
			for b, r := range bands {
				var p float64
				for k := r[0]; k < r[1]; k++ {
					p += real(buf[k])*real(buf[k]) + imag(buf[k])*imag(buf[k])
				}
				db[b] = 10 * math.Log10(p+1e-30)
			}
			bandDB = append(bandDB, db)
			energy = append(energy, 10*math.Log10(e+1e-30))
		}
		return bandDB, energy
	}
	rb, re := spec(ref)
	db, _ := spec(dec)
	maxBand, maxFrame := math.Inf(-1), math.Inf(-1)
	for f := range frames {
		maxFrame = max(maxFrame, re[f])
		for _, v := range rb[f] {
			maxBand = max(maxBand, v)
		}
	}
	var sum float64
	active := 0
	for f := range frames {
		if re[f] < maxFrame-40 {
			continue
		}
		floor := maxBand - 60
		for _, v := range rb[f] {
			floor = max(floor, v-40)
		}
		var acc float64
		counted := 0
		for b := range bands {
			r, d := max(rb[f][b], floor), max(db[f][b], floor)
			if r == floor && d == floor {
				continue
			}
			acc += (r - d) * (r - d)
			counted++
		}
		if counted > 0 {
			sum += math.Sqrt(acc / float64(counted))
		}
		active++
	}
	return sum / float64(active)
}

// lag returns the delay of dec against ref, in samples, that maximises their
// cross-correlation within ±maxLag: 0 for an aligned decoder output.
func lag(ref, dec []float32, maxLag int) int {
	n := 1
	for n < len(ref)+len(dec) {
		n *= 2
	}
	a := make([]complex128, n)
	b := make([]complex128, n)
	for i, v := range ref {
		a[i] = complex(float64(v), 0)
	}
	for i, v := range dec {
		b[i] = complex(float64(v), 0)
	}
	fft(a)
	fft(b)
	for i := range a {
		a[i] = cmplx.Conj(a[i]) * b[i]
	}
	// The inverse transform is the forward one on conjugates.
	for i := range a {
		a[i] = cmplx.Conj(a[i])
	}
	fft(a)
	best, bestLag := math.Inf(-1), 0
	for l := -maxLag; l <= maxLag; l++ {
		if v := real(a[(l+n)%n]); v > best {
			best, bestLag = v, l
		}
	}
	return bestLag
}

// fft is an in-place radix-2 FFT; len(a) is a power of two.
func fft(a []complex128) {
	n := len(a)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		step := cmplx.Exp(complex(0, -2*math.Pi/float64(size)))
		for start := 0; start < n; start += size {
			w := complex(1, 0)
			for k := range size / 2 {
				u, v := a[start+k], a[start+k+size/2]*w
				a[start+k], a[start+k+size/2] = u+v, u-v
				w *= step
			}
		}
	}
}

// oggPage is one parsed page of a stream, for structural checks.
type oggPage struct {
	flags   byte
	granule int64
	serial  uint32
	seq     uint32
	packets [][]byte
	crcOK   bool
}

// parseOgg splits a stream into pages. It does not handle packets that span
// pages, which our encoder never writes.
func parseOgg(t testing.TB, b []byte) []oggPage {
	t.Helper()
	var pages []oggPage
	for len(b) > 0 {
		if len(b) < pageHeaderLen || string(b[:4]) != "OggS" {
			t.Fatalf("page %d: no capture pattern", len(pages))
		}
		nseg := int(b[26])
		segs := b[pageHeaderLen : pageHeaderLen+nseg]
		size := pageHeaderLen + nseg
		for _, s := range segs {
			size += int(s)
		}
		if size > len(b) {
			t.Fatalf("page %d: truncated", len(pages))
		}
		p := oggPage{
			flags:   b[5],
			granule: int64(binary.LittleEndian.Uint64(b[6:])),
			serial:  binary.LittleEndian.Uint32(b[14:]),
			seq:     binary.LittleEndian.Uint32(b[18:]),
		}
		page := bytes.Clone(b[:size])
		want := binary.LittleEndian.Uint32(page[22:])
		clear(page[22:26])
		p.crcOK = oggCRC(0, page) == want
		body := b[pageHeaderLen+nseg : size]
		start, cur := 0, 0
		for _, s := range segs {
			cur += int(s)
			if s < 255 {
				p.packets = append(p.packets, body[start:cur])
				start = cur
			}
		}
		if start != cur {
			t.Fatalf("page %d: a packet continues on the next page", len(pages))
		}
		pages = append(pages, p)
		b = b[size:]
	}
	return pages
}
