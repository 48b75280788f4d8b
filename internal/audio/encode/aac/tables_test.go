package aac

import (
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// TestHuffmanBooks checks every codebook transcribed from ISO/IEC 14496-3
// annex 4.A: entry counts, that each code fits its length, that no code is a
// prefix of another and that the Kraft sum is exactly 1 (all AAC books are
// complete codes, so a mistyped length or code breaks one of these).
func TestHuffmanBooks(t *testing.T) {
	type book struct {
		name    string
		codes   []uint32
		lens    []uint8
		entries int
		maxLen  int
	}
	widen := func(c []uint16) []uint32 {
		out := make([]uint32, len(c))
		for i, v := range c {
			out[i] = uint32(v)
		}
		return out
	}
	tests := []book{
		{"scalefactor", scfCodes[:], scfLens[:], 121, 19},
	}
	wantEntries := []int{0, 81, 81, 81, 81, 81, 81, 64, 64, 169, 169, 289}
	for cb := 1; cb <= 11; cb++ {
		bk := books[cb]
		tests = append(tests, book{fmt.Sprintf("book %d", cb), widen(bk.codes), bk.lens, wantEntries[cb], 16})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.codes) != tt.entries || len(tt.lens) != tt.entries {
				t.Fatalf("%d codes, %d lengths; want %d", len(tt.codes), len(tt.lens), tt.entries)
			}
			kraft := new(big.Rat)
			words := make([]string, len(tt.codes))
			for i, c := range tt.codes {
				l := int(tt.lens[i])
				if l < 1 || l > tt.maxLen {
					t.Fatalf("entry %d: length %d", i, l)
				}
				if c>>l != 0 {
					t.Fatalf("entry %d: code %#x does not fit %d bits", i, c, l)
				}
				kraft.Add(kraft, big.NewRat(1, 1<<l))
				words[i] = fmt.Sprintf("%0*b", l, c)
			}
			if kraft.Cmp(big.NewRat(1, 1)) != 0 {
				t.Errorf("Kraft sum %v, want 1", kraft)
			}
			sort.Strings(words)
			for i := 1; i < len(words); i++ {
				if strings.HasPrefix(words[i], words[i-1]) {
					t.Errorf("%s is a prefix of %s", words[i-1], words[i])
				}
			}
		})
	}
}

// TestBookShapes checks the tuple parameters against the codebook sizes.
func TestBookShapes(t *testing.T) {
	for cb := 1; cb <= 11; cb++ {
		bk := books[cb]
		n := 1
		for i := 0; i < bk.dim; i++ {
			n *= bk.mod
		}
		if n != len(bk.codes) {
			t.Errorf("book %d: mod^dim = %d, %d codes", cb, n, len(bk.codes))
		}
		wantMod := 2*bk.maxAbs + 1
		if bk.unsigned {
			wantMod = bk.maxAbs + 1
		}
		if bk.mod != wantMod {
			t.Errorf("book %d: mod %d, want %d", cb, bk.mod, wantMod)
		}
	}
}

// TestBandTables checks the scalefactor band offsets: 0 to 1024, strictly
// increasing, multiples of 4 (the 4-tuple books need it), and
// num_swb_long_window bands.
func TestBandTables(t *testing.T) {
	for idx, off := range swbOffsets {
		if len(off) != numSwbLong[idx]+1 {
			t.Errorf("rate %d: %d bands, want %d", sampleRates[idx], len(off)-1, numSwbLong[idx])
		}
		if off[0] != 0 || off[len(off)-1] != frameLen {
			t.Errorf("rate %d: offsets span %d..%d", sampleRates[idx], off[0], off[len(off)-1])
		}
		for i := 1; i < len(off); i++ {
			if off[i] <= off[i-1] || off[i]%4 != 0 {
				t.Errorf("rate %d: offset[%d] = %d after %d", sampleRates[idx], i, off[i], off[i-1])
			}
		}
		if len(off)-1 > maxBands {
			t.Errorf("rate %d: %d bands > maxBands", sampleRates[idx], len(off)-1)
		}
	}
}

// TestEscapeBits checks the escape length against its definition at the
// boundaries of each prefix length.
func TestEscapeBits(t *testing.T) {
	tests := []struct {
		v    int32
		want int
	}{{16, 5}, {31, 5}, {32, 7}, {63, 7}, {64, 9}, {4095, 19}, {4096, 21}, {8191, 21}}
	for _, tt := range tests {
		if got := escapeBits(tt.v); got != tt.want {
			t.Errorf("escapeBits(%d) = %d, want %d", tt.v, got, tt.want)
		}
		var w bitWriter
		writeEscape(&w, tt.v)
		if w.bitLen() != tt.want {
			t.Errorf("writeEscape(%d) wrote %d bits, want %d", tt.v, w.bitLen(), tt.want)
		}
	}
}

// TestSpectralBits checks the specialized bit counter against the generic
// codeword index used when writing, on random values each book can code.
func TestSpectralBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for cb := 1; cb <= 11; cb++ {
		bk := &books[cb]
		q := make([]int32, 64)
		for trial := 0; trial < 200; trial++ {
			for i := range q {
				lim := bk.maxAbs
				if cb == 11 && trial%2 == 1 {
					lim = maxQuant
				}
				q[i] = rng.Int32N(int32(2*lim+1)) - int32(lim)
			}
			want := 0
			for i := 0; i < len(q); i += bk.dim {
				idx, extra := bookIndex(bk, q[i:i+bk.dim])
				want += int(bk.lens[idx]) + extra
			}
			if got := spectralBits(cb, q); got != want {
				t.Fatalf("book %d: spectralBits %d, generic count %d for %v", cb, got, want, q)
			}
		}
	}
}

// TestPlannedBitsMatchWritten checks that the rate loop's bit count equals
// what write emits, across noise-to-masker ratios from near-lossless
// (escapes, long sections) to nearly empty frames.
func TestPlannedBitsMatchWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	e, err := NewEncoder(io.Discard, 44100, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := e.chans[0]
	cur := make([]float64, frameLen)
	for trial := 0; trial < 6; trial++ {
		for i := range cur {
			switch trial % 3 {
			case 0: // noise
				cur[i] = (rng.Float64()*2 - 1) * pcmScale * 0.9
			case 1: // a loud tone: large quantized values, escapes
				cur[i] = pcmScale * math.Sin(float64(i)*0.05)
			default: // quiet
				cur[i] = (rng.Float64()*2 - 1) * 30
			}
		}
		c.analyze(e.m, cur)
		for lr := c.zeroAt - 40; lr <= c.zeroAt+1; lr += 2.5 {
			planned := c.plan(lr)
			var w bitWriter
			c.write(&w)
			if w.bitLen() != planned {
				t.Fatalf("trial %d, lr %.1f: planned %d bits, wrote %d", trial, lr, planned, w.bitLen())
			}
		}
	}
}
