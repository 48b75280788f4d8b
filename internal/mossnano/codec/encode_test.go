package codec_test

import (
	"math"
	"slices"
	"sync"
	"testing"
)

// TestEncodeTrailingPartialFrame: the partial last frame is dropped, and
// because the encoder is causal and masks padded rows, whatever follows the
// last whole frame cannot change the codes.
func TestEncodeTrailingPartialFrame(t *testing.T) {
	for _, name := range fixtures {
		m := fixtureModel(t, name)
		spf, ch := m.SamplesPerFrame(), m.Channels()
		wav := testWave(m, 4*spf+spf/2, 5)
		want, err := m.Encode(wav[:3*spf*ch])
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range []int{0, 1, spf / 3, spf - 1} {
			in := slices.Clone(wav[:(3*spf+tail)*ch])
			got, err := m.Encode(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%s: %d extra samples changed the codes", name, tail)
			}
		}
		four, err := m.Encode(wav)
		if err != nil {
			t.Fatal(err)
		}
		if len(four) != 4 || !slices.EqualFunc(four[:3], want, slices.Equal) {
			t.Errorf("%s: 4.5 frames encode to %d frames, or the first 3 differ", name, len(four))
		}
	}
}

func TestEncodeShortAndInvalid(t *testing.T) {
	m := fixtureModel(t, "tiny-a")
	ch := m.Channels()
	for _, n := range []int{0, 1, m.SamplesPerFrame() - 1} {
		codes, err := m.Encode(make([]float32, n*ch))
		if err != nil || codes == nil || len(codes) != 0 {
			t.Errorf("%d samples: %v frames, err %v; want 0 frames", n, len(codes), err)
		}
	}
	bad := map[string][]float32{
		"odd length": make([]float32, 2*m.SamplesPerFrame()*ch+1),
		"NaN":        testWave(m, 2*m.SamplesPerFrame(), 1),
		"Inf":        testWave(m, 2*m.SamplesPerFrame(), 1),
	}
	bad["NaN"][17] = float32(math.NaN())
	bad["Inf"][4000] = float32(math.Inf(-1))
	for name, wav := range bad {
		if _, err := m.Encode(wav); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestConcurrentUse runs Encode, Decode and Decoders on one Model from
// several goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	m := fixtureModel(t, "tiny-b")
	wav := testWave(m, 3*m.SamplesPerFrame(), 9)
	frames := testFrames(m, 6, 4)
	wantCodes, err := m.Encode(wav)
	if err != nil {
		t.Fatal(err)
	}
	wantWav, err := m.Decode(frames)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 12)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				switch g % 3 {
				case 0:
					c, err := m.Encode(wav)
					if err != nil || !slices.EqualFunc(c, wantCodes, slices.Equal) {
						errs <- "encode differs"
					}
				case 1:
					w, err := m.Decode(frames)
					if err != nil || !slices.Equal(w, wantWav) {
						errs <- "decode differs"
					}
				case 2:
					d := m.NewDecoder()
					var w []float32
					for _, f := range frames {
						w, err = d.Step(w, [][]int{f})
						if err != nil {
							errs <- err.Error()
						}
					}
					if len(w) != len(wantWav) {
						errs <- "stream length differs"
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestEncodeReusesBuffers: Encode reuses its buffers between calls, so a
// short clip encoded after a long one (stale data in every buffer, a
// zero-padded partial frame) must give the codes it gave before.
func TestEncodeReusesBuffers(t *testing.T) {
	for _, name := range fixtures {
		m := fixtureModel(t, name)
		spf, ch := m.SamplesPerFrame(), m.Channels()
		short := testWave(m, 2*spf+spf/3, 11)
		long := testWave(m, 9*spf, 12)
		want, err := m.Encode(short)
		if err != nil {
			t.Fatal(err)
		}
		wantLong, err := m.Encode(long)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := m.Encode(short)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s: short clip after a long one: codes differ", name)
			}
			gotLong, err := m.Encode(long[:9*spf*ch])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(gotLong, wantLong, slices.Equal) {
				t.Fatalf("%s: long clip after a short one: codes differ", name)
			}
		}
	}
}
