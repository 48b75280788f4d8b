package audio

import "math"

// Quantize16 converts a float sample to 16-bit PCM as the reference does:
// round(clip(x, -1, 1) · 32767), with the product taken in float32 (the
// waveform's dtype) and rounded half away from zero. NaN becomes 0.
func Quantize16(x float32) int16 {
	switch {
	case x != x:
		return 0
	case x > 1:
		x = 1
	case x < -1:
		x = -1
	}
	p := float32(x * 32767) // explicit conversion: rounded to float32, never fused
	return int16(math.Round(float64(p)))
}

// AppendPCM16 appends samples (any channel layout, typically interleaved) as
// 16-bit little-endian PCM.
func AppendPCM16(dst []byte, samples []float32) []byte {
	dst = grow(dst, 2*len(samples))
	for _, x := range samples {
		v := uint16(Quantize16(x))
		dst = append(dst, byte(v), byte(v>>8))
	}
	return dst
}

// AppendPCM16Mono appends interleaved stereo (L, R, L, R, …) as mono 16-bit
// little-endian PCM: each pair becomes (L+R)/2, computed in float32, then
// quantized. A trailing unpaired sample is ignored.
func AppendPCM16Mono(dst []byte, stereo []float32) []byte {
	n := len(stereo) / 2
	dst = grow(dst, 2*n)
	for i := 0; i < n; i++ {
		v := uint16(Quantize16(mix(stereo[2*i], stereo[2*i+1])))
		dst = append(dst, byte(v), byte(v>>8))
	}
	return dst
}

// mix is the float32 average (L+R)/2.
func mix(l, r float32) float32 { return float32(l+r) / 2 }

// Downmix appends the mono average (L+R)/2 of interleaved stereo to dst.
func Downmix(dst, stereo []float32) []float32 {
	n := len(stereo) / 2
	for i := 0; i < n; i++ {
		dst = append(dst, mix(stereo[2*i], stereo[2*i+1]))
	}
	return dst
}

// Interleave appends left and right as L, R, L, R, … to dst. The shorter
// length wins.
func Interleave(dst, left, right []float32) []float32 {
	n := min(len(left), len(right))
	dst = growF(dst, 2*n)
	for i := 0; i < n; i++ {
		dst = append(dst, left[i], right[i])
	}
	return dst
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}

func growF(b []float32, n int) []float32 {
	if cap(b)-len(b) < n {
		nb := make([]float32, len(b), len(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}
