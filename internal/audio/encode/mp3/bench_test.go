package mp3

import (
	"io"
	"testing"
)

// BenchmarkEncode reports the real-time factor (encoding time / audio
// duration) of 48 kHz mono speech at the default bitrate, fed in 100 ms
// chunks as the server streams it. cpu-rtf is the same ratio in process
// CPU time.
func BenchmarkEncode(b *testing.B) {
	x, rate, _ := readWAV(b, "testdata/speech48k.wav")
	const chunk = 4800
	b.ReportAllocs()
	b.SetBytes(int64(len(x) * 2))
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		e, err := NewEncoder(io.Discard, rate, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		for s := 0; s < len(x); s += chunk {
			if err := e.Write(x[s:min(s+chunk, len(x))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	audio := float64(len(x)) / float64(rate) * float64(b.N)
	b.ReportMetric(b.Elapsed().Seconds()/audio, "rtf")
	// On a loaded machine wall time overstates the cost; CPU time of the
	// process (one core with -cpu 1, including GC) does not.
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/audio, "cpu-rtf")
	}
}
