package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/tensor"
)

// bin is the nanovox binary built once for the tests that run it as a user would.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nanovox-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "nanovox")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("build nanovox: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const fixtures = "../../testdata"

// result is one run of the binary.
type result struct {
	stdout, stderr []byte
	code           int
}

func runBin(t *testing.T, stdin []byte, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{stdout: so.Bytes(), stderr: se.Bytes()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

type goldenFile struct {
	Text           string   `json:"text"`
	TextChunks     []string `json:"text_chunks"`
	Frames         [][]int  `json:"frames"`
	FramesPerChunk []int    `json:"frames_per_chunk"`
	MaxFrames      int      `json:"max_frames"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// parseWAV checks a plain 16-bit PCM RIFF header and returns rate, channels, samples.
func parseWAV(t *testing.T, b []byte) (int, int, []int16) {
	t.Helper()
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		t.Fatalf("not a plain RIFF WAV header: % x", b[:min(len(b), 44)])
	}
	le := binary.LittleEndian
	if le.Uint32(b[4:]) != uint32(len(b)-8) || le.Uint32(b[40:]) != uint32(len(b)-44) {
		t.Fatalf("RIFF sizes %d/%d do not match the file (%d bytes)", le.Uint32(b[4:]), le.Uint32(b[40:]), len(b))
	}
	if le.Uint16(b[20:]) != 1 || le.Uint16(b[34:]) != 16 {
		t.Fatalf("format %d, %d bits; want PCM 16", le.Uint16(b[20:]), le.Uint16(b[34:]))
	}
	ch, rate := int(le.Uint16(b[22:])), int(le.Uint32(b[24:]))
	if le.Uint32(b[28:]) != uint32(rate*ch*2) || le.Uint16(b[32:]) != uint16(ch*2) {
		t.Fatal("byte rate / block align inconsistent")
	}
	s := make([]int16, (len(b)-44)/2)
	for i := range s {
		s[i] = int16(le.Uint16(b[44+2*i:]))
	}
	return rate, ch, s
}

func quant(x float64) int {
	x = math.Max(-1, math.Min(1, x))
	return int(math.Round(float64(float32(x) * 32767)))
}

// TestSayGolden runs `nanovox say` on both fixtures and checks the codes and
// the audio against the reference implementation's golden files.
func TestSayGolden(t *testing.T) {
	for _, fx := range []string{"tiny-a", "tiny-b"} {
		for _, tc := range []struct {
			name   string
			budget string
		}{{"canonical", "75"}, {"long", "20"}} {
			for _, channels := range []int{1, 2} {
				t.Run(fx+"/"+tc.name+"/"+string(rune('0'+channels)), func(t *testing.T) {
					var g goldenFile
					readJSON(t, filepath.Join(fixtures, fx, "golden", tc.name+".json"), &g)
					dir := t.TempDir()
					out, codes := filepath.Join(dir, "out.wav"), filepath.Join(dir, "codes.json")
					r := runBin(t, nil, nil, "say",
						"--model", filepath.Join(fixtures, fx, "lm"), "--codec", filepath.Join(fixtures, fx, "codec"),
						"--ref-audio", filepath.Join(fixtures, fx, "ref.wav"), "--text", g.Text, "--greedy",
						"--max-text-tokens", tc.budget, "--max-frames", "40", "--channels", string(rune('0'+channels)),
						"--codes-out", codes, "--out", out, "--no-normalize") // the goldens speak the raw text
					if r.code != 0 {
						t.Fatalf("exit %d: %s", r.code, r.stderr)
					}
					if !strings.Contains(string(r.stderr), "RTF") {
						t.Errorf("no summary on stderr: %s", r.stderr)
					}
					var got goldenFile
					readJSON(t, codes, &got)
					if !equalJSON(got.Frames, g.Frames) || !equalJSON(got.FramesPerChunk, g.FramesPerChunk) || !equalJSON(got.TextChunks, g.TextChunks) {
						t.Fatalf("codes differ from golden:\ngot  %v %v\nwant %v %v", got.FramesPerChunk, got.TextChunks, g.FramesPerChunk, g.TextChunks)
					}
					b, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					rate, ch, pcm := parseWAV(t, b)
					want := readF32(t, filepath.Join(fixtures, fx, "golden", tc.name+".f32"))
					if rate != 48000 || ch != channels || len(pcm) != len(want)/2*channels {
						t.Fatalf("wav %d Hz %d ch %d samples; want 48000 Hz %d ch %d", rate, ch, len(pcm), channels, len(want)/2*channels)
					}
					// Length = frames·3840 plus the OpenMOSS pauses.
					pauses := 0
					for i, c := range g.TextChunks[:len(g.TextChunks)-1] {
						_ = i
						if len(strings.Fields(c)) <= 4 {
							pauses += 19200
						} else {
							pauses += 11520
						}
					}
					if n := len(pcm) / channels; n != len(g.Frames)*3840+pauses {
						t.Fatalf("%d samples per channel; want %d frames·3840 + %d", n, len(g.Frames), pauses)
					}
					worst := 0
					for i := range len(want) / 2 {
						l, rr := float64(want[2*i]), float64(want[2*i+1])
						var exp []int
						if channels == 1 {
							exp = []int{quant(float64(float32(float32(l)+float32(rr)) / 2))}
						} else {
							exp = []int{quant(l), quant(rr)}
						}
						for c, e := range exp {
							d := int(pcm[i*channels+c]) - e
							worst = max(worst, d, -d)
						}
					}
					if worst > 1 {
						t.Fatalf("PCM differs from the golden waveform by %d LSB (allowed 1)", worst)
					}
				})
			}
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestSayInputsAndOutputs(t *testing.T) {
	lm, cd, ref := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec"), filepath.Join(fixtures, "tiny-a", "ref.wav")
	base := []string{"say", "--model", lm, "--codec", cd, "--ref-audio", ref, "--greedy", "--max-frames", "10"}
	dir := t.TempDir()
	// Text from stdin, raw PCM to stdout.
	r := runBin(t, []byte("Hello world. This is a tiny test.\n"), nil, append(base, "--format", "pcm", "--out", "-", "--quiet")...)
	if r.code != 0 {
		t.Fatalf("stdin/stdout: exit %d: %s", r.code, r.stderr)
	}
	if len(r.stdout) != 4*3840*2 || len(r.stderr) != 0 {
		t.Fatalf("stdout %d bytes (want %d), stderr %q", len(r.stdout), 4*3840*2, r.stderr)
	}
	// The same from a text file into a WAV: identical samples.
	tf := filepath.Join(dir, "t.txt")
	os.WriteFile(tf, []byte("Hello world. This is a tiny test."), 0o644)
	out := filepath.Join(dir, "o.wav")
	if r := runBin(t, nil, nil, append(base, "--text-file", tf, "--out", out)...); r.code != 0 {
		t.Fatalf("text-file: %s", r.stderr)
	}
	b, _ := os.ReadFile(out)
	if !bytes.Equal(b[44:], r.stdout) {
		t.Fatal("WAV data differs from the raw PCM of the same request")
	}
	// A WAV on stdout is a valid stream with "unknown" sizes.
	r2 := runBin(t, nil, nil, append(base, "--text", "Hello world. This is a tiny test.", "--out", "-")...)
	if r2.code != 0 || string(r2.stdout[:4]) != "RIFF" || !bytes.Equal(r2.stdout[44:], r.stdout) {
		t.Fatalf("wav to stdout: exit %d", r2.code)
	}
	// Seeded sampling is reproducible.
	s1 := runBin(t, nil, nil, "say", "--model", lm, "--codec", cd, "--ref-audio", ref, "--seed", "42", "--text", "Seeded run.", "--out", "-", "--format", "pcm", "-q")
	s2 := runBin(t, nil, nil, "say", "--model", lm, "--codec", cd, "--ref-audio", ref, "--seed", "42", "--text", "Seeded run.", "--out", "-", "--format", "pcm", "-q")
	if s1.code != 0 || !bytes.Equal(s1.stdout, s2.stdout) {
		t.Fatalf("seeded runs differ (exit %d %s)", s1.code, s1.stderr)
	}
	// A dev model directory (lm/ + codec/) works with --model alone.
	dev := filepath.Join(dir, "dev")
	if r := runBin(t, nil, nil, "dev", "mkmodel", "--preset", "tiny", "--layout", "mlx", "--dtype", "bfloat16", "--out", dev); r.code != 0 {
		t.Fatalf("mkmodel: %s", r.stderr)
	}
	if r := runBin(t, nil, nil, "say", "--model", dev, "--ref-audio", ref, "--text", "Hi there.", "--seed", "3", "--max-frames", "5", "--out", filepath.Join(dir, "dev.wav")); r.code != 0 {
		t.Fatalf("say on dev model: %s", r.stderr)
	}
}

// TestSayMatmul runs say with the bfloat16 and the int8 products: a complete WAV,
// the mode named in the load line (or the fallback warned about on CPUs
// without AVX512_BF16).
func TestSayMatmul(t *testing.T) {
	lm, cd, ref := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec"), filepath.Join(fixtures, "tiny-a", "ref.wav")
	for _, tc := range []struct {
		mode string
		has  bool
	}{{"bf16", tensor.HasBF16Dot()}, {"int8", tensor.HasInt8Dot()}} {
		out := filepath.Join(t.TempDir(), tc.mode+".wav")
		r := runBin(t, nil, nil, "say", "--model", lm, "--codec", cd, "--ref-audio", ref, "--greedy", "--max-frames", "10",
			"--matmul", tc.mode, "--text", "Hello world. This is a tiny test.", "--out", out)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.mode, r.code, r.stderr)
		}
		want := "matmul " + tc.mode
		if !tc.has {
			want = "computing in f32"
		}
		if !strings.Contains(string(r.stderr), want) {
			t.Fatalf("%s: stderr %q does not mention %q", tc.mode, r.stderr, want)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// Whole frames of 3840 samples per channel, 16-bit.
		if len(b) <= 44 || string(b[:4]) != "RIFF" {
			t.Fatalf("%s: output: %d bytes, header %q", tc.mode, len(b), b[:min(4, len(b))])
		}
		channels := int(binary.LittleEndian.Uint16(b[22:]))
		if channels < 1 || (len(b)-44)%(channels*2*3840) != 0 {
			t.Fatalf("%s: output: %d bytes of %d-channel audio: not whole frames", tc.mode, len(b)-44, channels)
		}
	}
}

// TestSayValidation checks the seed's validation matrix: a clear message, a
// non-zero exit and no output file.
func TestSayValidation(t *testing.T) {
	lm, cd, ref := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec"), filepath.Join(fixtures, "tiny-a", "ref.wav")
	dir := t.TempDir()
	notAudio := filepath.Join(dir, "notaudio.wav")
	os.WriteFile(notAudio, []byte("this is not audio at all, just text pretending"), 0o644)
	short := filepath.Join(dir, "short.wav")
	os.WriteFile(short, wavBytes(48000, 1, 0.3), 0o644)
	long := filepath.Join(dir, "long.wav")
	os.WriteFile(long, wavBytes(8000, 1, 31), 0o644)
	six := filepath.Join(dir, "six.wav")
	os.WriteFile(six, wavBytes(16000, 6, 1), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte(" \n\t "), 0o644)
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"no ref audio", []string{"--text", "hi"}, "", "--ref-audio is required"},
		{"preset voice", []string{"--voice", "alloy", "--text", "hi"}, "", `no saved voice`},
		{"instruct", []string{"--ref-audio", ref, "--instruct", "whisper", "--text", "hi"}, "", "--instruct is not supported"},
		{"language", []string{"--ref-audio", ref, "--language", "en", "--text", "hi"}, "", `--language "en" is not supported`},
		{"zero temperature", []string{"--ref-audio", ref, "--temperature", "0", "--text", "hi"}, "", "--temperature must be in (0, 5]"},
		{"negative temperature", []string{"--ref-audio", ref, "--temperature", "-1", "--text", "hi"}, "", "--temperature must be in (0, 5]"},
		{"infinite temperature", []string{"--ref-audio", ref, "--temperature", "+Inf", "--text", "hi"}, "", "--temperature must be in (0, 5]"},
		{"nan temperature", []string{"--ref-audio", ref, "--temperature", "NaN", "--text", "hi"}, "", "--temperature must be in (0, 5]"},
		{"temperature above the server's bound", []string{"--ref-audio", ref, "--temperature", "7", "--text", "hi"}, "", "--temperature must be in (0, 5], is 7"},
		{"huge top-k", []string{"--ref-audio", ref, "--top-k", "70000", "--text", "hi"}, "", "--top-k must be in [0, 65536]"},
		{"infinite repetition penalty", []string{"--ref-audio", ref, "--repetition-penalty", "+Inf", "--text", "hi"}, "", "--repetition-penalty must be in (0, 10]"},
		{"zero max frames", []string{"--ref-audio", ref, "--max-frames", "0", "--text", "hi"}, "", "--max-frames must be a positive integer"},
		{"fractional max frames", []string{"--ref-audio", ref, "--max-frames", "1.5", "--text", "hi"}, "", "invalid argument"},
		{"negative text tokens", []string{"--ref-audio", ref, "--max-text-tokens", "-3", "--text", "hi"}, "", "--max-text-tokens must be a positive integer"},
		{"empty text", []string{"--ref-audio", ref, "--text", "   "}, "", "the text is empty"},
		{"empty text file", []string{"--ref-audio", ref, "--text-file", empty}, "", "the text is empty"},
		{"empty stdin", []string{"--ref-audio", ref}, "\n", "the text is empty"},
		{"missing text file", []string{"--ref-audio", ref, "--text-file", filepath.Join(dir, "nope.txt")}, "", "--text-file"},
		{"text and file", []string{"--ref-audio", ref, "--text", "a", "--text-file", empty}, "", "mutually exclusive"},
		{"bad format", []string{"--ref-audio", ref, "--format", "ogg", "--text", "hi"}, "", `--format "ogg" is not supported`},
		{"out is a directory", []string{"--ref-audio", ref, "--text", "hi", "--out", dir}, "", "is a directory"},
		{"out in a missing directory", []string{"--ref-audio", ref, "--text", "hi", "--out", filepath.Join(dir, "nope", "x.wav")}, "", "does not exist"},
		{"speed too high", []string{"--ref-audio", ref, "--text", "hi", "--speed", "5"}, "", "--speed must be in [0.25, 4]"},
		{"sample rate too low", []string{"--ref-audio", ref, "--text", "hi", "--sample-rate", "4000"}, "", "--sample-rate must be in [8000, 48000]"},
		{"bad channels", []string{"--ref-audio", ref, "--channels", "3", "--text", "hi"}, "", "--channels must be 1 or 2"},
		{"bad top-p", []string{"--ref-audio", ref, "--top-p", "1.5", "--text", "hi"}, "", "--top-p must be in (0, 1]"},
		{"missing ref file", []string{"--ref-audio", filepath.Join(dir, "nope.wav"), "--text", "hi"}, "", "--ref-audio"},
		{"not audio", []string{"--ref-audio", notAudio, "--text", "hi"}, "", "not a recognised audio file; supported formats are WAV, FLAC and MP3"},
		{"too short", []string{"--ref-audio", short, "--text", "hi"}, "", "ref_audio is 0.30 s; must be 0.5–30 s"},
		{"too long", []string{"--ref-audio", long, "--text", "hi"}, "", "must be 0.5–30 s"},
		{"six channels", []string{"--ref-audio", six, "--text", "hi"}, "", "6 channels"},
		{"no audio generated", []string{"--ref-audio", ref, "--seed", "4", "--text", "Hi."}, "", "the model generated no audio"},
		{"missing model", []string{"--model", filepath.Join(dir, "nomodel"), "--ref-audio", ref, "--text", "hi"}, "", "does not exist"},
		{"bad matmul", []string{"--ref-audio", ref, "--matmul", "int4", "--text", "hi"}, "", `--matmul "int4": want f32, bf16 or int8`},
		{"matmul and f32 weights", []string{"--ref-audio", ref, "--matmul", "bf16", "--f32-weights", "--text", "hi"}, "", "--matmul bf16 and --f32-weights exclude each other"},
		{"int8 and f32 weights", []string{"--ref-audio", ref, "--matmul", "int8", "--f32-weights", "--text", "hi"}, "", "--matmul int8 and --f32-weights exclude each other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".wav")
			args := append([]string{"say", "--model", lm, "--codec", cd, "--out", out}, tc.args...)
			var stdin []byte
			if tc.stdin != "" {
				stdin = []byte(tc.stdin)
			}
			r := runBin(t, stdin, []string{"NANOVOX_DATA_DIR=" + filepath.Join(dir, "data")}, args...)
			if r.code == 0 {
				t.Fatalf("exit 0; stderr %s", r.stderr)
			}
			if !strings.Contains(string(r.stderr), tc.want) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("an output file was written")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp") {
					t.Fatalf("temp file left: %s", e.Name())
				}
			}
		})
	}
}

// wavBytes makes a PCM16 WAV of a quiet sine.
func wavBytes(rate, channels int, seconds float64) []byte {
	n := int(float64(rate) * seconds)
	samples := make([]float32, 0, n*channels)
	for i := range n {
		v := float32(0.25 * math.Sin(2*math.Pi*220*float64(i)/float64(rate)))
		for range channels {
			samples = append(samples, v)
		}
	}
	return audio.EncodeWAV(samples, rate, channels)
}

// TestSayInterrupt: Ctrl-C in the middle of a long generation leaves no
// output file and no temporary file behind.
func TestSayInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "long.wav")
	text := strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 400)
	cmd := exec.Command(bin, "say", "--model", filepath.Join(fixtures, "tiny-a", "lm"), "--codec", filepath.Join(fixtures, "tiny-a", "codec"),
		"--ref-audio", filepath.Join(fixtures, "tiny-a", "ref.wav"), "--max-text-tokens", "20", "--text", text, "--out", out)
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the temp file exists: generation is under way.
	deadline := time.Now().Add(20 * time.Second)
	for {
		ents, _ := os.ReadDir(dir)
		if len(ents) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v (stderr %s); want 130 after interrupt", err, se.String())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("files left after interrupt: %v", ents)
	}
}

// TestServeFlagValidation: bad serve flags are refused with a clear message
// before anything is loaded or bound.
func TestServeFlagValidation(t *testing.T) {
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle-release", "-1s"}, "--idle-release must not be negative"},
		{[]string{"--max-streams", "0"}, "--max-streams must be at least 1"},
		{[]string{"--body-memory-mb", "0"}, "--body-memory-mb must be at least 1"},
		{[]string{"--clip-decodes", "0"}, "--clip-decodes must be at least 1"},
		{[]string{"--body-timeout", "-1s"}, "--body-timeout must not be negative"},
		{[]string{"--max-connections", "-1"}, "--max-connections must not be negative"},
		{[]string{"--matmul", "fp8"}, `--matmul "fp8": want f32, bf16 or int8`},
	} {
		r := runBin(t, nil, nil, append([]string{"serve", "--model", lm, "--codec", cd, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(string(r.stderr), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure mentioning %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestTuneGC: the collector target is gcPercent unless GOGC is set.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Fatalf("GOGC unset: target %d, want %d", got, gcPercent)
	}
	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: target changed to %d", got)
	}
}

// TestKernelsEnv: NANOVOX_KERNELS picks the kernel set (named in the load
// line; the modes that need AVX-512 fall back with a warning under avx2),
// and a name the CPU or the word list does not know fails before anything
// runs.
func TestKernelsEnv(t *testing.T) {
	lm, cd, ref := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec"), filepath.Join(fixtures, "tiny-a", "ref.wav")
	say := func(env []string, matmul string) result {
		out := filepath.Join(t.TempDir(), "k.wav")
		return runBin(t, nil, env, "say", "--model", lm, "--codec", cd, "--ref-audio", ref, "--greedy", "--max-frames", "4",
			"--matmul", matmul, "--text", "Hello world.", "--out", out)
	}
	r := say([]string{"NANOVOX_KERNELS=generic"}, "bf16")
	if r.code != 0 || !strings.Contains(string(r.stderr), "kernels generic") || !strings.Contains(string(r.stderr), "computing in f32") {
		t.Fatalf("generic: exit %d, stderr %q", r.code, r.stderr)
	}
	if tensor.Kernels() != "generic" {
		r := say([]string{"NANOVOX_KERNELS=avx2"}, "bf16")
		if r.code != 0 || !strings.Contains(string(r.stderr), "kernels avx2") || !strings.Contains(string(r.stderr), "--matmul bf16 needs") {
			t.Fatalf("avx2: exit %d, stderr %q", r.code, r.stderr)
		}
	}
	r = say([]string{"NANOVOX_KERNELS=sse9"}, "f32")
	if r.code != 2 || !strings.Contains(string(r.stderr), `NANOVOX_KERNELS: kernels "sse9": want avx512, avx2, neon or generic`) {
		t.Fatalf("bad name: exit %d, stderr %q", r.code, r.stderr)
	}
}
