package aac

import (
	"io"
	"testing"
)

// BenchmarkEncode encodes 3 s of 48 kHz mono speech at the default bitrate
// and reports the real-time factor (encoding time / audio duration) on one
// goroutine; the budget is 0.03.
func BenchmarkEncode(b *testing.B) {
	x := loadS16(b, "en_2_48k_3s.s16")
	const chunk = 4800
	b.SetBytes(int64(len(x) * 4))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
}
