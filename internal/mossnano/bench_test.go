package mossnano

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/engine"
	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/mossnano/lm"
	"github.com/nanovox/nanovox/internal/mossnano/testmodel"
	"github.com/nanovox/nanovox/internal/tensor"
)

var (
	fullOnce sync.Once
	fullFam  *Family
	fullErr  error
)

// fullSize writes the release-shaped random checkpoint (bf16) once per
// process and loads it. Set NANOVOX_BENCH_MODEL to reuse a directory made by
// `nanovox dev mkmodel --preset nano-100m --dtype bfloat16`;
// NANOVOX_BENCH_MATMUL=bf16 or int8 loads it in that mode.
func fullSize(b *testing.B) *Family {
	fullOnce.Do(func() {
		dir := os.Getenv("NANOVOX_BENCH_MODEL")
		if dir == "" {
			d, err := os.MkdirTemp("", "nanovox-bench")
			if err != nil {
				fullErr = err
				return
			}
			defer os.RemoveAll(d)
			if fullErr = testmodel.Write(d, testmodel.Nano100M, testmodel.OpenMOSS, testmodel.BFloat16, 1); fullErr != nil {
				return
			}
			dir = d
		}
		if n, err := strconv.Atoi(os.Getenv("NANOVOX_BENCH_THREADS")); err == nil {
			tensor.SetThreads(n)
		}
		fullFam, fullErr = Load(filepath.Join(dir, "lm"), filepath.Join(dir, "codec"), Options{KeepBF16: true, Matmul: benchMatmul()})
	})
	if fullErr != nil {
		b.Fatal(fullErr)
	}
	return fullFam
}

// benchRef is a 5 s reference clip's codes (62 frames), the same for every
// benchmark.
func benchRef(f *Family) [][]int {
	ref := make([][]int, 62)
	for i := range ref {
		ref[i] = make([]int, f.LM.Config.NVQ)
		for c := range ref[i] {
			ref[i][c] = (i*31 + c*7) % 1024
		}
	}
	return ref
}

// newJobs prepares n jobs with a 5 s reference and a one-chunk text, stepped
// once (the prefill) so that the benchmark measures steady frames.
func newJobs(b *testing.B, f *Family, n int) []engine.Job {
	ref := benchRef(f)
	p := f.DefaultParams()
	p.IgnoreEOS = true
	p.MaxFrames = 1 << 20
	var jobs []engine.Job
	for i := range n {
		p.Seed = uint64(i)
		j, err := f.Prepare(context.Background(), &engine.Voice{Codes: ref}, nil, "A benchmark sentence of ordinary length for one chunk.", p)
		if err != nil {
			b.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if _, err := f.NewStepper().Step(jobs); err != nil {
		b.Fatal(err)
	}
	return jobs
}

// BenchmarkFrameStep is one full frame (global transformer, local
// transformer and heads, sampling, streaming codec decode) for 1, 4 and 8
// streams stepped together on the full-size checkpoint. ns/op is per step;
// frames/s counts all streams.
func BenchmarkFrameStep(b *testing.B) {
	f := fullSize(b)
	for _, n := range []int{1, 4, 8} {
		b.Run("streams="+itoa(n), func(b *testing.B) {
			jobs := newJobs(b, f, n)
			st := f.NewStepper()
			b.ResetTimer()
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := st.Step(jobs); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkFramePipeline is BenchmarkFrameStep as the engine runs it: the
// codec decode of step t on a second goroutine while step t+1 generates
// (engine.Pipeline). ns/op is per step.
func BenchmarkFramePipeline(b *testing.B) {
	f := fullSize(b)
	for _, n := range []int{1, 4, 8} {
		b.Run("streams="+itoa(n), func(b *testing.B) {
			jobs := newJobs(b, f, n)
			st := f.NewStepper().(engine.Pipeline)
			var pending any
			b.ResetTimer()
			cpu := cpuTime(b)
			for b.Loop() {
				done := make(chan error, 1)
				if pending != nil {
					go func(g any) {
						_, err := st.Render(g)
						done <- err
					}(pending)
				} else {
					done <- nil
				}
				g, err := st.Generate(jobs)
				if err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				pending = g
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkFrameParts splits one stream's frame into the language model and
// the codec decode (and 8 streams' step: lm-8, codec-8), times the language
// model's step that starts 1 or 8 requests of a saved voice (prompt-1,
// prompt-8), and the two steps of a new inline voice: the 5 s clip's encode
// and its prompt prefix (the prefill of 62 frames of codes).
func BenchmarkFrameParts(b *testing.B) {
	f := fullSize(b)
	b.Run("lm", func(b *testing.B) {
		jobs := newJobs(b, f, 1)
		st := f.LM.NewStepper()
		g := jobs[0].(*job).gen
		for b.Loop() {
			if _, err := st.Step([]*lm.Generation{g}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lm-8", func(b *testing.B) {
		jobs := newJobs(b, f, 8)
		st := f.LM.NewStepper()
		gens := make([]*lm.Generation, len(jobs))
		for i, j := range jobs {
			gens[i] = j.(*job).gen
		}
		for b.Loop() {
			if _, err := st.Step(gens); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("codec-8", func(b *testing.B) {
		decs := make([]*codec.Decoder, 8)
		frames, out := make([][]int, 8), make([][]float32, 8)
		for s := range decs {
			decs[s] = f.Codec.NewDecoder()
			frames[s] = make([]int, f.LM.Config.NVQ)
		}
		bt := f.Codec.NewBatch()
		for i := 0; b.Loop(); i++ {
			for s := range frames {
				for c := range frames[s] {
					frames[s][c] = (i + s*5 + c*13) % 1024
				}
				out[s] = out[s][:0]
			}
			if err := bt.Step(decs, frames, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("codec", func(b *testing.B) {
		d := f.Codec.NewDecoder()
		frame := [][]int{make([]int, f.LM.Config.NVQ)}
		var buf []float32
		var err error
		for i := 0; b.Loop(); i++ {
			for c := range frame[0] {
				frame[0][c] = (i + c*13) % 1024
			}
			if buf, err = d.Step(buf[:0], frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The step that starts n requests with a saved voice (its prefix
	// cached): the prompt of each request's text after the prefix, then its
	// first frame. The jobs are ended (untimed) so that their caches are
	// reused, as in a serving process.
	for _, n := range []int{1, 8} {
		b.Run("prompt-"+itoa(n), func(b *testing.B) {
			ref := benchRef(f)
			v := &engine.Voice{Codes: ref, Key: "bench"}
			pre, err := f.NewPrefix(context.Background(), v)
			if err != nil {
				b.Fatal(err)
			}
			p := f.DefaultParams()
			p.IgnoreEOS = true
			p.MaxFrames = 1
			st := f.LM.NewStepper()
			gens := make([]*lm.Generation, n)
			for b.Loop() {
				b.StopTimer()
				for i := range gens {
					p.Seed = uint64(i)
					j, err := f.Prepare(context.Background(), v, pre, "This benchmark sentence is long enough to make one natural chunk of speech for nanovox.", p)
					if err != nil {
						b.Fatal(err)
					}
					gens[i] = j.(*job).gen
				}
				b.StartTimer()
				if _, err := st.Step(gens); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := st.Step(gens); err != nil { // ends them: no compute
					b.Fatal(err)
				}
				for _, g := range gens {
					if !g.Done() {
						b.Fatal("job not done after its frame")
					}
				}
				b.StartTimer()
			}
		})
	}
	b.Run("prefix-5s", func(b *testing.B) {
		ref := benchRef(f)
		cpu := cpuTime(b)
		for b.Loop() {
			if _, err := f.LM.NewPrefix(ref); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("encode-5s", func(b *testing.B) {
		pcm := make([]float32, 2*5*48000)
		for i := range pcm {
			pcm[i] = float32((i*7919)%2001-1000) / 4000
		}
		cpu := cpuTime(b)
		for b.Loop() {
			if _, err := f.EncodeReference(context.Background(), pcm); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start (cpuTime), all threads
// together: on a shared machine, where other work stretches wall time,
// it moves less than ns/op does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func itoa(n int) string {
	return string(rune('0' + n))
}

// benchMatmul is the mode NANOVOX_BENCH_MATMUL names (f32 when unset or
// unknown).
func benchMatmul() tensor.Matmul {
	m, _ := tensor.ParseMatmul(os.Getenv("NANOVOX_BENCH_MATMUL"))
	return m
}

// BenchmarkLongUtterance compares the frames of a long request (375
// frames, 30 s: the default max_new_frames) with those of short ones (50
// frames, 4 s), one stream, lm and codec decode as FrameStep runs them.
// The two are stepped alternately, frame by frame, so that a shared
// machine's changing speed affects both alike; each short request is
// replaced by a fresh one when it ends. long-ms and short-ms are the mean
// wall time of a frame's step, long-cpu-ms and short-cpu-ms its CPU time
// (all threads), long/short the ratio of the wall times. The first step of
// each request (its prompt) is not counted.
func BenchmarkLongUtterance(b *testing.B) {
	f := fullSize(b)
	const long, short = 375, 50
	ref := benchRef(f)
	st := f.NewStepper()
	start := func(frames int) engine.Job {
		p := f.DefaultParams()
		p.IgnoreEOS = true
		p.MaxFrames = frames
		j, err := f.Prepare(context.Background(), &engine.Voice{Codes: ref}, nil, "A benchmark sentence of ordinary length for one chunk.", p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Step([]engine.Job{j}); err != nil {
			b.Fatal(err)
		}
		return j
	}
	var wall, cpu [2]time.Duration
	var frames [2]int
	step := func(j engine.Job, k int) {
		t0, c0 := time.Now(), cpuTime(b)
		outs, err := st.Step([]engine.Job{j})
		if err != nil {
			b.Fatal(err)
		}
		if outs[0].Frame != nil {
			wall[k] += time.Since(t0)
			cpu[k] += cpuTime(b) - c0
			frames[k]++
		}
	}
	for b.Loop() {
		l, s := start(long), start(short)
		for !l.Done() {
			step(l, 0)
			if s.Done() {
				s = start(short)
			}
			step(s, 1)
		}
		for !s.Done() {
			step(s, 1)
		}
	}
	ms := func(d time.Duration, n int) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	b.ReportMetric(ms(wall[0], frames[0]), "long-ms")
	b.ReportMetric(ms(wall[1], frames[1]), "short-ms")
	b.ReportMetric(ms(cpu[0], frames[0]), "long-cpu-ms")
	b.ReportMetric(ms(cpu[1], frames[1]), "short-cpu-ms")
	b.ReportMetric(ms(wall[0], frames[0])/ms(wall[1], frames[1]), "long/short")
}
