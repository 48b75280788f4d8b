package aac

import "math"

// frameLen is the number of new samples per channel in one AAC-LC frame and
// the number of spectral lines its MDCT produces.
const frameLen = 1024

// mdct computes the AAC long-window MDCT (ISO/IEC 14496-3 subpart 4, 4.6.11):
//
//	X[k] = 2 · Σ_{n=0}^{2047} z[n] · cos(2π/2048 · (n + n0) · (k + ½)),  n0 = 1024/2 + ½
//
// where z is the sine-windowed input block of 2048 samples. It folds the block
// into a 1024-point DCT-IV and computes that with a 512-point complex FFT and
// pre/post twiddles, all tables precomputed. The decoder's IMDCT uses 2/N, so
// this pair reconstructs perfectly after windowing and overlap-add.
type mdct struct {
	window   [2 * frameLen]float64 // sine window, w[n] = sin(π/2048 · (n+½))
	preCos   [frameLen / 2]float64 // exp(-iπ(n+¼)/1024)
	preSin   [frameLen / 2]float64
	postCos  [frameLen / 2]float64 // exp(-iπk/1024), times the output scale
	postSin  [frameLen / 2]float64
	twCos    [frameLen / 4]float64 // FFT twiddles exp(-2πik/512)
	twSin    [frameLen / 4]float64
	bitrev   [frameLen / 2]uint16
	re, im   [frameLen / 2]float64
	u        [frameLen]float64
	windowed [2 * frameLen]float64
}

// newMDCT builds the tables; scale multiplies every output coefficient (the
// spec's factor 2 and the float-to-16-bit-PCM scale are folded into it).
func newMDCT(scale float64) *mdct {
	m := &mdct{}
	const n = 2 * frameLen
	for i := range m.window {
		m.window[i] = math.Sin(math.Pi / n * (float64(i) + 0.5))
	}
	const h = frameLen / 2
	for i := 0; i < h; i++ {
		a := -math.Pi * (float64(i) + 0.25) / frameLen
		m.preCos[i], m.preSin[i] = math.Cos(a), math.Sin(a)
		b := -math.Pi * float64(i) / frameLen
		m.postCos[i], m.postSin[i] = scale*math.Cos(b), scale*math.Sin(b)
	}
	for i := 0; i < h/2; i++ {
		a := -2 * math.Pi * float64(i) / h
		m.twCos[i], m.twSin[i] = math.Cos(a), math.Sin(a)
	}
	bits := 0
	for 1<<bits < h {
		bits++
	}
	for i := 0; i < h; i++ {
		r := 0
		for b := 0; b < bits; b++ {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		m.bitrev[i] = uint16(r)
	}
	return m
}

// transform writes the 1024 coefficients of the 2048-sample block x (not yet
// windowed) to out.
func (m *mdct) transform(x []float64, out []float64) {
	const q = frameLen / 2 // quarter of the block
	const h = frameLen / 2
	x = x[:2*frameLen]
	out = out[:frameLen]
	z := &m.windowed
	for i := range z {
		z[i] = x[i] * m.window[i]
	}
	// Fold the windowed block [a b c d] (quarters of 512) into the DCT-IV
	// input u = (-c_r - d, a - b_r), where _r reverses a quarter.
	u := &m.u
	for i := 0; i < q; i++ {
		u[i] = -z[3*q-1-i] - z[3*q+i]
		u[q+i] = z[i] - z[2*q-1-i]
	}
	// DCT-IV of length 1024 via a 512-point complex FFT:
	// v[n] = (u[2n] + i·u[1023-2n]) · exp(-iπ(n+¼)/1024), stored bit-reversed.
	for i := 0; i < h; i++ {
		a, b := u[2*i], u[frameLen-1-2*i]
		j := m.bitrev[i]
		m.re[j] = a*m.preCos[i] - b*m.preSin[i]
		m.im[j] = a*m.preSin[i] + b*m.preCos[i]
	}
	m.fft()
	// W[k] = V[k] · exp(-iπk/1024); X[2k] = Re W[k], X[1023-2k] = -Im W[k].
	for k := 0; k < h; k++ {
		a, b := m.re[k], m.im[k]
		out[2*k] = a*m.postCos[k] - b*m.postSin[k]
		out[frameLen-1-2*k] = -(a*m.postSin[k] + b*m.postCos[k])
	}
}

// fft is an in-place iterative radix-2 decimation-in-time FFT of the
// bit-reversed input in m.re, m.im.
func (m *mdct) fft() {
	const n = frameLen / 2
	re, im := &m.re, &m.im
	for size := 2; size <= n; size <<= 1 {
		half := size >> 1
		step := n / size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				wr, wi := m.twCos[k*step], m.twSin[k*step]
				i, j := start+k, start+k+half
				tr := re[j]*wr - im[j]*wi
				ti := re[j]*wi + im[j]*wr
				re[j], im[j] = re[i]-tr, im[i]-ti
				re[i], im[i] = re[i]+tr, im[i]+ti
			}
		}
	}
}
