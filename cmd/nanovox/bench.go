package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	noNormalize, cold                  bool
	frames, runs                       int
	asJSON, realtime                   bool
	cpuProfile                         string
	seed                               uint64
	capacity                           capacityOptions
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

--capacity searches the largest number of concurrent streams that all stay
real time — every stream's RTF p95 below 0.9 and no underrun — for one mode
(default streamed), one voice kind (default saved), --frames and --matmul:
1, 2, 4, … streams until a count fails, then a bisection, each count measured
like one --streams entry (--runs rounds). A count that fails only by
underruns (RTF p95 below 0.9: a stall of the machine as often as a limit) is
measured once more and the repeat decides; the first measurement is printed
and listed under "repeated". The real-time limit is off during
the search, so every stream is admitted at once. It prints the per-count
table and the capacity; with --json one object whose "capacity" key holds
it beside the per-count "results" ("complete" is false when
--capacity-budget ran out: the capacity is then a lower bound; "at_bound"
is true when --capacity-max itself passed).

--cold measures each round as the first burst after an idle release (as
after 'serve --idle-release'): no warm-up round, and before every round the
buffers kept from finished requests (KV caches, codec decoders, encode
buffers) are dropped and their memory handed back to the system, so the
round's streams allocate and fault in their memory as they run. Saved
voices' prefixes stay cached. Without it a warm-up round of the same
streams runs first and the measured rounds show steady serving.

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
	f.BoolVar(&o.cold, "cold", false, "measure every round as the first burst after an idle release: no warm-up round, the buffers of finished requests dropped before each round")
	f.Uint64Var(&o.seed, "seed", 1, "base seed")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file (go tool pprof), from the first measured round on (after its warm-up round)")
	o.capacity.register(f)
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
	if o.capacity.on {
		if err := o.capacity.check(cmd, o); err != nil {
			return err
		}
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
	// The CPU profile starts with the first measured round, after its
	// configuration's warm-up (which pays one-time costs: page faults,
	// prefixes), and runs to the end.
	var measuring func()
	if o.cpuProfile != "" {
		pf, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		var start sync.Once
		measuring = func() {
			start.Do(func() {
				if err := pprof.StartCPUProfile(pf); err != nil {
					fmt.Fprintf(log, "bench: --cpuprofile: %v\n", err)
				}
			})
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	cfg := bench.Config{
		Text: o.text, RefPCM: ref, Frames: o.frames, Streams: streams, Runs: o.runs,
		Voices: voices, Modes: modes, Seed: o.seed, RealTime: o.realtime, Progress: log,
		Format: o.format, NoNormalize: o.noNormalize, Cold: o.cold, Measuring: measuring,
	}
	if o.cold {
		fmt.Fprintln(log, "bench: cold bursts: no warm-up round; kept buffers dropped and memory released before every round")
	}
	if o.capacity.on {
		return runCapacity(cmd, o, fam, cfg)
	}
	rs, err := bench.Run(ctx, fam, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "bench: done in %.1fs\n", time.Since(start).Seconds())
	if o.asJSON {
		return writeJSON(cmd, info, o, map[string]any{"results": rs})
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

// capacityOptions are bench's --capacity flags.
type capacityOptions struct {
	on     bool
	max    int
	budget time.Duration
}

func (c *capacityOptions) register(f *pflag.FlagSet) {
	f.BoolVar(&c.on, "capacity", false, "search the largest number of concurrent streams that all stay real time (every stream's RTF p95 < 0.9, no underrun) for one --modes (default streamed) and one --voices kind (default saved), with the real-time limit off; replaces --streams")
	f.IntVar(&c.max, "capacity-max", 64, "largest stream count the --capacity search tries")
	f.DurationVar(&c.budget, "capacity-budget", 15*time.Minute, "time the --capacity search may take; when spent, it reports the best count so far as a lower bound")
}

// check validates the --capacity flags and gives --modes and --voices
// their capacity defaults (one streamed mode, saved voices) when they were
// not set.
func (c *capacityOptions) check(cmd *cobra.Command, o *benchOptions) error {
	f := cmd.Flags()
	if f.Changed("streams") {
		return usagef("--streams and --capacity exclude each other: the search chooses the stream counts (bound it with --capacity-max)")
	}
	if c.max < 1 || c.budget < 0 {
		return usagef("--capacity-max must be at least 1 and --capacity-budget not negative")
	}
	if !f.Changed("modes") {
		o.modes = "streamed"
	}
	if !f.Changed("voices") {
		o.voices = "saved"
	}
	if len(parseList(o.modes)) != 1 || len(parseList(o.voices)) != 1 {
		return usagef("--capacity measures one mode and one voice kind: give --modes and --voices one value each")
	}
	o.streams = "1" // placeholder for the checks that follow; the search picks the counts
	return nil
}

// runCapacity runs the capacity search and prints its table and result,
// or with --json one object whose "capacity" key holds the count beside
// the per-count "results".
func runCapacity(cmd *cobra.Command, o *benchOptions, fam engine.Family, cfg bench.Config) error {
	log := cmd.ErrOrStderr()
	info := fam.Info()
	if cmd.Flags().Changed("realtime-limit") && o.realtime {
		fmt.Fprintln(log, "bench: --realtime-limit is ignored by --capacity")
	}
	fmt.Fprintf(log, "bench: capacity search up to %d streams, %s %s, real-time limit off, budget %s\n",
		o.capacity.max, cfg.Modes[0], cfg.Voices[0], o.capacity.budget)
	start := time.Now()
	c, err := bench.Capacity(cmd.Context(), fam, cfg, bench.CapacityConfig{Max: o.capacity.max, Budget: o.capacity.budget})
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "bench: done in %.1fs\n", time.Since(start).Seconds())
	if o.asJSON {
		return writeJSON(cmd, info, o, map[string]any{
			"mode": cfg.Modes[0], "voice": cfg.Voices[0], "capacity_max": o.capacity.max,
			"max_rtf_p95": bench.MaxRealTimeRTF, "realtime_limit": false,
			"capacity": c.Capacity, "at_bound": c.AtBound, "complete": c.Complete, "results": c.Results,
			"repeated": c.Repeated,
		})
	}
	bench.WriteCapacity(cmd.OutOrStdout(), c)
	return nil
}

// writeJSON prints one --json object: what every output says about the run
// (the model, the settings and the machine, so that a report can be
// compared with another) and the fields of this kind of run.
func writeJSON(cmd *cobra.Command, info engine.Info, o *benchOptions, fields map[string]any) error {
	out := map[string]any{
		"model": info.Name, "model_type": info.ModelType, "frames": o.frames, "runs": o.runs,
		"gomaxprocs": runtime.GOMAXPROCS(0), "matmul": info.Matmul.String(), "kernels": tensor.Kernels(),
		"host": bench.HostInfo(tensor.Kernels()),
	}
	maps.Copy(out, fields)
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
