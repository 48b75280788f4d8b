package audio

import (
	"math"
	"time"
)

// Clip is decoded audio at its original rate and channel count.
type Clip struct {
	// SampleRate is in Hz.
	SampleRate int
	// Samples is planar: one slice per channel (1 or 2), all the same length.
	// Integer sources are scaled to [-1, 1); float sources are passed through
	// unchanged (finite, but possibly beyond ±1).
	Samples [][]float32
	// Format describes the source for logs, e.g. "WAV PCM 16-bit" or "FLAC 24-bit".
	Format string
}

// Channels returns the number of channels.
func (c *Clip) Channels() int { return len(c.Samples) }

// Frames returns the number of samples per channel.
func (c *Clip) Frames() int {
	if len(c.Samples) == 0 {
		return 0
	}
	return len(c.Samples[0])
}

// Duration returns Frames / SampleRate.
func (c *Clip) Duration() time.Duration { return framesDuration(int64(c.Frames()), c.SampleRate) }

func framesDuration(frames int64, rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(frames) * 1e9 / float64(rate)))
}
