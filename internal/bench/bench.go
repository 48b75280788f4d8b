// Package bench measures end-to-end speech generation through the engine:
// time to first audio, real-time factor, chunk arrival jitter and underruns,
// aggregate throughput and peak memory, for buffered and streamed requests,
// one stream and many, with a saved (prefix-cached) voice or an inline clip.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nanovox/nanovox/internal/audio/encode"
	"github.com/nanovox/nanovox/internal/engine"
)

// Config describes a benchmark run.
type Config struct {
	Text string
	// RefPCM is the reference clip (interleaved at the family's rate).
	RefPCM []float32
	// Frames per request (the model's stop decision is ignored so every run
	// generates exactly this many frames per text chunk).
	Frames  int
	Streams []int
	Runs    int
	// Voices lists "saved" (prefix cached, warmed before measuring),
	// "distinct" (saved voices, a different one per concurrent stream, each
	// prefix cached: a server with that many voices in use) and/or "inline"
	// (the clip is encoded and its prompt prefilled on every request).
	Voices []string
	// Modes lists "buffered" and/or "streamed".
	Modes []string
	// FirstChunkFrames and ChunkFrames are the streamed chunk sizes.
	FirstChunkFrames, ChunkFrames int
	Seed                          uint64
	// RealTime turns on the engine's real-time limit, as the server does
	// by default (engine.Config.RealTime).
	RealTime bool
	// Progress, if set, receives a line per finished configuration.
	Progress io.Writer
	// Format, if set, encodes every chunk as the server would for that
	// response_format (mono, the model's rate) before it counts as arrived:
	// TTFA and RTF then include the encoder. Empty: the raw samples.
	Format string
	// NoNormalize skips the family's text normalization.
	NoNormalize bool
	// Cold measures every round as the first burst after an idle release:
	// no warm-up round, and before each round the family's kept buffers
	// (KV caches, decoders, encode buffers) are dropped and the freed
	// memory handed back to the system, as the engine does after
	// --idle-release. Saved voices' prefixes stay cached, as in a server.
	Cold bool
	// Measuring, if set, is called before the first measured round of
	// each configuration: after its warm-up round and the saved voices'
	// prefixes (bench --cpuprofile starts its profile there).
	Measuring func()
}

// Percentiles is a p50/p95 pair.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

// Result is one (mode, streams, voice) configuration.
type Result struct {
	Mode       string      `json:"mode"`
	Streams    int         `json:"streams"`
	Voice      string      `json:"voice"`
	TTFAms     Percentiles `json:"ttfa_ms"`
	RTF        Percentiles `json:"rtf"`
	JitterMs   Percentiles `json:"jitter_ms"`
	MaxGapMs   float64     `json:"max_gap_ms"`
	Underruns  int         `json:"underruns"`
	FramesPerS float64     `json:"frames_per_s"`
	PeakRSSMB  float64     `json:"peak_rss_mb"`
	// StreamLimit is how many requests the engine let run at once at the
	// end (Config.RealTime), else the stream count.
	StreamLimit int `json:"stream_limit"`
	// StartLimit is the real-time limit the engine's start-up calibration
	// set before the first request (Config.RealTime; 0 without).
	StartLimit  int     `json:"start_limit,omitempty"`
	Requests    int     `json:"requests"`
	AudioPerReq float64 `json:"audio_s_per_request"`
	// Cold: every round was a burst after an idle release (Config.Cold).
	Cold bool `json:"cold,omitempty"`
}

// one request's measurements
type sample struct {
	ttfa    time.Duration
	wall    time.Duration
	audio   float64
	frames  int
	gaps    []float64 // arrival gap minus the previous chunk's audio, ms
	maxGap  float64
	underrn int
}

// Run measures every configuration with a fresh engine per configuration.
func Run(ctx context.Context, fam engine.Family, cfg Config) ([]Result, error) {
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.FirstChunkFrames <= 0 {
		cfg.FirstChunkFrames = 1
	}
	if cfg.ChunkFrames <= 0 {
		cfg.ChunkFrames = 7
	}
	var out []Result
	for _, voice := range cfg.Voices {
		for _, mode := range cfg.Modes {
			for _, streams := range cfg.Streams {
				r, err := runConfig(ctx, fam, cfg, mode, voice, streams)
				if err != nil {
					return out, err
				}
				out = append(out, r)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "  %-8s %2d stream(s) %-6s  TTFA p50 %6.0f ms  RTF p50 %.3f  %.1f frames/s\n",
						mode, streams, voice, r.TTFAms.P50, r.RTF.P50, r.FramesPerS)
				}
			}
		}
	}
	return out, nil
}

func runConfig(ctx context.Context, fam engine.Family, cfg Config, mode, voice string, streams int) (Result, error) {
	info := fam.Info()
	// Drop the buffers earlier configurations left for reuse, so each
	// configuration's memory is its own.
	engine.ReleaseIdle(fam)
	e := engine.New(fam, engine.Config{MaxStreams: streams, Queue: streams, RealTime: cfg.RealTime, PrefixCacheBytes: 1 << 30})
	defer e.Close(context.Background())
	var saved []*engine.Voice // request i speaks with saved[i mod len]
	p := fam.DefaultParams()
	p.MaxFrames = cfg.Frames
	p.IgnoreEOS = true
	if cfg.NoNormalize {
		p.Normalize = false
	}
	enc := func() (*encode.Output, error) { return nil, nil }
	if cfg.Format != "" {
		f, err := encode.ParseFormat(cfg.Format)
		if err != nil {
			return Result{}, err
		}
		enc = func() (*encode.Output, error) {
			return encode.NewOutput(io.Discard, encode.OutputOptions{Format: f, InRate: info.SampleRate, InChannels: info.Channels, Channels: 1})
		}
	}
	req := func(i int) engine.Request {
		r := engine.Request{Text: cfg.Text, Params: p}
		r.Params.Seed = cfg.Seed + uint64(i)
		if n := len(saved); n > 0 {
			r.Voice = saved[(i%n+n)%n]
		} else {
			r.RefPCM = cfg.RefPCM
		}
		if mode == "streamed" {
			r.FirstChunkFrames, r.ChunkFrames = cfg.FirstChunkFrames, cfg.ChunkFrames
			r.RampChunks = true // as the server streams
		} else {
			r.FirstChunkFrames, r.ChunkFrames = 1<<20, 1<<20
		}
		return r
	}
	if voice == "saved" || voice == "distinct" {
		v, err := e.Encode(ctx, cfg.RefPCM)
		if err != nil {
			return Result{}, err
		}
		n := 1
		if voice == "distinct" {
			n = streams
		}
		// Distinct voices share the codes but not their keys, so each has
		// its own prefix in the cache, as different voices would.
		for k := range n {
			vk := *v
			vk.Key = fmt.Sprintf("bench-voice-%d", k)
			saved = append(saved, &vk)
		}
		// Warm the prefix cache (and everything else): one request per voice.
		for k := range n {
			w := req(k)
			w.Params.MaxFrames = 1
			if _, err := drain(ctx, e, w, info, enc); err != nil {
				return Result{}, err
			}
		}
	}
	// As serve does after its warm-up: start the real-time limit from
	// measured steps.
	var cal engine.Calibration
	if cfg.RealTime {
		var err error
		if cal, err = e.Calibrate(ctx, cfg.RefPCM); err != nil {
			return Result{}, err
		}
	}
	if !cfg.Cold {
		if err := warm(ctx, e, req, info, enc, streams, cfg.Frames); err != nil {
			return Result{}, err
		}
	}
	// What the warm-up left for reuse stays, as in a serving process; the
	// rest goes back to the system before the peak is measured.
	debug.FreeOSMemory()
	resetPeakRSS()
	if cfg.Measuring != nil {
		cfg.Measuring()
	}
	var all []sample
	var totalFrames int
	var totalWall time.Duration
	for run := range cfg.Runs {
		if cfg.Cold {
			engine.ReleaseIdle(fam)
		}
		var wg sync.WaitGroup
		res := make([]sample, streams)
		errs := make([]error, streams)
		start := time.Now()
		for i := range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = drain(ctx, e, req(run*streams+i), info, enc)
			}()
		}
		wg.Wait()
		totalWall += time.Since(start)
		for i := range streams {
			if errs[i] != nil {
				return Result{}, errs[i]
			}
			totalFrames += res[i].frames
		}
		all = append(all, res...)
	}
	r := Result{Mode: mode, Streams: streams, Voice: voice, Requests: len(all), PeakRSSMB: peakRSSMB(), StreamLimit: e.StreamLimit(), StartLimit: cal.Limit, Cold: cfg.Cold}
	var ttfa, rtf, gaps []float64
	for _, s := range all {
		ttfa = append(ttfa, float64(s.ttfa.Microseconds())/1000)
		rtf = append(rtf, s.wall.Seconds()/s.audio)
		gaps = append(gaps, s.gaps...)
		r.MaxGapMs = math.Max(r.MaxGapMs, s.maxGap)
		r.Underruns += s.underrn
		r.AudioPerReq = s.audio
	}
	r.TTFAms = pct(ttfa)
	r.RTF = pct(rtf)
	r.JitterMs = pct(gaps)
	r.FramesPerS = float64(totalFrames) / totalWall.Seconds()
	return r, nil
}

// warm runs streams concurrent requests of frames frames once, unmeasured,
// so that every stream's state (codec decoder windows, KV caches) has been
// used before, as in a server that is already serving this many streams:
// finished requests hand that memory to the next ones, while fresh memory
// costs page faults on first touch (several ms per MiB on virtual
// machines). The measured rounds then show steady serving.
func warm(ctx context.Context, e *engine.Engine, req func(int) engine.Request, info engine.Info, enc func() (*encode.Output, error), streams, frames int) error {
	var wg sync.WaitGroup
	errs := make([]error, streams)
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := req(-1 - i)
			r.Params.MaxFrames = frames
			_, errs[i] = drain(ctx, e, r, info, enc)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drain runs one request and measures it. Playback is simulated from the
// first chunk's arrival: a chunk that arrives after the audio before it has
// finished playing is an underrun.
func drain(ctx context.Context, e *engine.Engine, req engine.Request, info engine.Info, enc func() (*encode.Output, error)) (sample, error) {
	var s sample
	start := time.Now()
	out, err := enc()
	if err != nil {
		return s, err
	}
	st, err := e.Submit(ctx, req)
	if err != nil {
		return s, err
	}
	defer st.Close()
	var last time.Time
	var prevAudio float64 // seconds of the previous chunk
	var playEnd time.Time
	for {
		c, err := st.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		if out != nil {
			if err := out.Write(c.Samples); err != nil {
				return s, err
			}
			if err := out.Flush(); err != nil {
				return s, err
			}
		}
		now := time.Now()
		sec := float64(len(c.Samples)/info.Channels) / float64(info.SampleRate)
		if last.IsZero() {
			s.ttfa = now.Sub(start)
			playEnd = now
		} else {
			gap := now.Sub(last).Seconds()*1000 - prevAudio*1000
			s.gaps = append(s.gaps, gap)
			s.maxGap = math.Max(s.maxGap, now.Sub(last).Seconds()*1000)
			if now.After(playEnd) {
				s.underrn++
				playEnd = now
			}
		}
		playEnd = playEnd.Add(time.Duration(sec * float64(time.Second)))
		last, prevAudio = now, sec
		s.audio += sec
		s.frames += c.Frames
	}
	if out != nil {
		if err := out.Close(); err != nil {
			return s, err
		}
	}
	s.wall = time.Since(start)
	return s, nil
}

func pct(v []float64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	sort.Float64s(v)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(v)))) - 1
		return v[max(0, min(i, len(v)-1))]
	}
	return Percentiles{P50: at(0.5), P95: at(0.95)}
}

// resetPeakRSS resets the kernel's peak-RSS counter (Linux; ignored elsewhere).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMB returns the process's peak resident set (VmHWM) in MiB, or NaN.
func peakRSSMB() float64 { return procStatusMB("VmHWM:") }

// RSSMB returns the current resident set in MiB (VmRSS), or NaN.
func RSSMB() float64 { return procStatusMB("VmRSS:") }

// procStatusMB reads a kB field of /proc/self/status as MiB (NaN if absent).
func procStatusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return math.NaN()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	return math.NaN()
}

// WriteTable prints results as a human-readable table.
func WriteTable(w io.Writer, rs []Result) {
	fmt.Fprintf(w, "%-9s %7s %-6s %18s %15s %18s %9s %9s %10s %6s\n", "mode", "streams", "voice", "TTFA ms p50/p95", "RTF p50/p95", "jitter ms p50/p95", "underruns", "frames/s", "peak RSS", "limit")
	for _, r := range rs {
		fmt.Fprintf(w, "%-9s %7d %-6s %8.0f /%8.0f %7.3f /%6.3f %8.1f /%8.1f %9d %9.1f %7.0f MiB %6d\n",
			r.Mode, r.Streams, r.Voice, r.TTFAms.P50, r.TTFAms.P95, r.RTF.P50, r.RTF.P95, r.JitterMs.P50, r.JitterMs.P95, r.Underruns, r.FramesPerS, r.PeakRSSMB, r.StreamLimit)
	}
}
