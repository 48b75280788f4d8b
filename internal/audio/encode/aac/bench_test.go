package aac

import (
	"io"
	"testing"
)

// BenchmarkEncode encodes 3 s of 48 kHz mono speech at the default bitrate in
// 100 ms chunks, as the server streams it, and reports the real-time factor
// (encoding time / audio duration; the budget is 0.03): rtf in wall time,
// cpu-rtf in process CPU time, which a loaded machine does not inflate. Run
// it with -cpu 1.
func BenchmarkEncode(b *testing.B) {
	x := loadS16(b, "en_2_48k_3s.s16")
	const chunk = 4800
	b.SetBytes(int64(len(x) * 4))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		e, err := NewEncoder(io.Discard, 48000, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < len(x); j += chunk {
			if err := e.Write(x[j:min(j+chunk, len(x))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	audio := float64(len(x)) / 48000 * float64(b.N)
	b.ReportMetric(b.Elapsed().Seconds()/audio, "rtf")
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/audio, "cpu-rtf")
	}
}
