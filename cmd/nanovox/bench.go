package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nanovox/nanovox/internal/audio"
	"github.com/nanovox/nanovox/internal/bench"
	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/tensor"
)

type benchOptions struct {
	modelFlags
	refAudio, voiceName, dataDir, text string
	streams, modes, voices             string
	format                             string
	noNormalize                        bool
	frames, runs                       int
	asJSON, realtime                   bool
	cpuProfile                         string
	seed                               uint64
}

const benchText = "This benchmark sentence is long enough to make one natural chunk of speech for nanovox."

func newBenchCmd() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure TTFA, real-time factor, chunk jitter, throughput and peak memory",
		Long: `bench runs requests through the same engine the server uses (no HTTP) and
reports, per (mode, streams, voice): time to first audio p50/p95, real-time
factor p50/p95 (a stream's wall time / its audio duration), chunk inter-arrival
jitter p50/p95 (gap minus the audio in the previous chunk; negative = ahead),
underruns (a chunk arriving after the audio before it has finished playing,
playback starting at the first chunk), aggregate frames/s, peak RSS, and the
real-time limit the engine ended with ("limit": how many of the concurrent
requests it ran at once; see 'serve --realtime-limit').

The model's stop decision is ignored: every request generates exactly --frames
frames, so runs are comparable. "saved" voices are encoded once and their
prompt prefix is cached (warmed before measuring); "distinct" is saved voices
with a different voice for each concurrent stream, each prefix cached (a
server with that many voices in use); "inline" voices send the clip with
every request (encode + full prefill each time). Without --ref-audio
a synthetic 5 s clip is used. For the numbers in docs/performance.md use the
full-size random checkpoint of 'nanovox dev mkmodel --preset nano-100m'.

The header and --json's "host" name the machine (OS, architecture, CPU
model, CPU count, kernel set, detected instruction-set features), so that a
report can be compared with the per-CPU plan in docs/performance.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd, o)
		},
	}
	f := cmd.Flags()
	o.modelFlags.register(f)
	f.StringVar(&o.refAudio, "ref-audio", "", "reference clip (default: a synthetic 5 s clip)")
	f.StringVar(&o.voiceName, "voice", "", "use this saved voice (implies --voices saved)")
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory of saved voices")
	f.StringVar(&o.text, "text", benchText, "text of every request (one chunk)")
	f.IntVar(&o.frames, "frames", 50, "frames per request (12.5 frames = 1 s; EOS is ignored)")
	f.StringVar(&o.streams, "streams", "1", "comma-separated concurrent stream counts, e.g. 1,4,8")
	f.BoolVar(&o.realtime, "realtime-limit", true, "as 'serve --realtime-limit': run only as many of the concurrent requests at once as the machine steps faster than real time, queue the rest")
	f.IntVar(&o.runs, "runs", 3, "rounds per configuration")
	f.StringVar(&o.modes, "modes", "buffered,streamed", "modes to measure")
	f.StringVar(&o.voices, "voices", "saved,inline", "voice kinds to measure: saved, distinct, inline")
	f.BoolVar(&o.asJSON, "json", false, "print one JSON object with a results array")
	f.StringVar(&o.format, "format", "", "encode every chunk as this response_format (mp3, opus, aac, flac, wav, pcm) before it counts as arrived, as the server does (default: raw samples, no encoding)")
	f.BoolVar(&o.noNormalize, "no-normalize", false, "skip the text normalization that requests run by default")
	f.Uint64Var(&o.seed, "seed", 1, "base seed")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured runs to this file (go tool pprof)")
	return cmd
}

// syntheticClip is a deterministic voice-like signal of the given length,
// interleaved: channel c is the signal scaled by 1 − 0.1·c.
func syntheticClip(rate, channels int, seconds float64) []float32 {
	n := int(seconds * float64(rate))
	r := rand.New(rand.NewPCG(7, 7))
	out := make([]float32, 0, channels*n)
	for i := range n {
		t := float64(i) / float64(rate)
		f0 := 140 + 30*math.Sin(2*math.Pi*0.7*t)
		var v float64
		for h := 1; h <= 6; h++ {
			v += math.Sin(2*math.Pi*f0*float64(h)*t) / float64(h)
		}
		env := 0.5 + 0.5*math.Sin(2*math.Pi*3*t)
		v = 0.2*v*env + 0.01*r.NormFloat64()
		for c := range channels {
			out = append(out, float32((1-0.1*float64(c))*v))
		}
	}
	return out
}

func parseList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runBench(cmd *cobra.Command, o *benchOptions) error {
	if o.format != "" && !validFormat(o.format) {
		return usagef("--format %q is not supported (mp3, opus, aac, flac, wav, pcm)", o.format)
	}
	ctx := cmd.Context()
	var streams []int
	for _, s := range parseList(o.streams) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return usagef("--streams: %q is not a positive integer", s)
		}
		streams = append(streams, n)
	}
	modes := parseList(o.modes)
	for _, m := range modes {
		if m != "buffered" && m != "streamed" {
			return usagef("--modes: %q is not buffered or streamed", m)
		}
	}
	voices := parseList(o.voices)
	for _, v := range voices {
		if v != "saved" && v != "distinct" && v != "inline" {
			return usagef("--voices: %q is not saved, distinct or inline", v)
		}
	}
	if o.frames < 1 || o.runs < 1 || len(streams) == 0 || len(modes) == 0 || len(voices) == 0 {
		return usagef("--frames, --runs, --streams, --modes and --voices must be positive / non-empty")
	}
	var savedCodes *engine.Voice
	if o.voiceName != "" {
		v, _, err := loadSavedVoice(o.dataDir, o.voiceName)
		if err != nil {
			return err
		}
		savedCodes = v
		voices = []string{"saved"}
	}
	var refData []byte
	if o.refAudio != "" {
		b, err := os.ReadFile(o.refAudio)
		if err != nil {
			return err
		}
		refData = b
	}
	log := cmd.ErrOrStderr()
	fam, err := o.open(ctx, log)
	if err != nil {
		return err
	}
	defer fam.Close()
	info := fam.Info()
	var ref []float32
	switch {
	case refData != nil:
		r, err := audio.PrepareReference(refData, audio.Options{TargetRate: info.SampleRate})
		if err != nil {
			return fmt.Errorf("--ref-audio: %w", err)
		}
		ref = r.Interleaved()
	case savedCodes == nil:
		ref = syntheticClip(info.SampleRate, info.Channels, 5)
	}
	if savedCodes != nil {
		fam = savedVoiceFamily{Family: fam, v: savedCodes}
		ref = make([]float32, 2*info.SampleRate) // placeholder, never encoded
	}
	fmt.Fprintf(log, "bench: %s, %d frames per request (%.1f s), %d run(s), GOMAXPROCS %d, matmul %s, kernels %s, RSS after load %.0f MiB\n",
		info.ModelType, o.frames, float64(o.frames)*info.FrameDuration(), o.runs, runtime.GOMAXPROCS(0), info.Matmul, tensor.Kernels(), bench.RSSMB())
	host := bench.HostInfo(tensor.Kernels())
	fmt.Fprintf(log, "bench: host %s\n", host)
	if o.cpuProfile != "" {
		pf, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	rs, err := bench.Run(ctx, fam, bench.Config{
		Text: o.text, RefPCM: ref, Frames: o.frames, Streams: streams, Runs: o.runs,
		Voices: voices, Modes: modes, Seed: o.seed, RealTime: o.realtime, Progress: log,
		Format: o.format, NoNormalize: o.noNormalize,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "bench: done in %.1fs\n", time.Since(start).Seconds())
	if o.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"model": info.Name, "model_type": info.ModelType, "frames": o.frames, "runs": o.runs,
			"gomaxprocs": runtime.GOMAXPROCS(0), "matmul": info.Matmul.String(), "kernels": tensor.Kernels(), "host": host, "results": rs,
		})
	}
	bench.WriteTable(cmd.OutOrStdout(), rs)
	return nil
}

// savedVoiceFamily makes EncodeReference return a saved voice's codes, so
// bench --voice NAME measures that voice.
type savedVoiceFamily struct {
	engine.Family
	v *engine.Voice
}

func (s savedVoiceFamily) EncodeReference(ctx context.Context, _ []float32) (*engine.Voice, error) {
	return &engine.Voice{Codes: s.v.Codes}, nil
}
