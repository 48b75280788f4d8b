package mp3

import (
	"io"
	"testing"
)

// BenchmarkEncode reports the real-time factor (encoding time / audio
// duration) of 48 kHz mono speech at the default bitrate, fed in 100 ms
// chunks as the server streams it.
func BenchmarkEncode(b *testing.B) {
	x, rate, _ := readWAV(b, "testdata/speech48k.wav")
	const chunk = 4800
	b.ReportAllocs()
	b.SetBytes(int64(len(x) * 2))
	b.ResetTimer()
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
	audio := float64(len(x)) / float64(rate)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/audio, "rtf")
}
