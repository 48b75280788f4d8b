package codec_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanovox/nanovox/internal/mossnano/codec"
	"github.com/nanovox/nanovox/internal/tensor"
)

// TestMLPBlocking checks that the MLP's row blocks (spread over the pool in
// passes of more than codec.SetMLPRows rows) change nothing: encode codes,
// whole decodes and a batched decode step are the same bit for bit with
// blocks of 3 rows as unblocked, in each arithmetic mode, with one thread
// (For hands all rows to one call) and two.
func TestMLPBlocking(t *testing.T) {
	old := tensor.Threads()
	t.Cleanup(func() { tensor.SetThreads(old) })
	for _, threads := range []int{1, 2} {
		tensor.SetThreads(threads)
		t.Run(fmt.Sprintf("threads=%d", threads), testMLPBlocking)
	}
}

func testMLPBlocking(t *testing.T) {
	dir := filepath.Join(fixtureDir("tiny-a"), "codec")
	frames := longFrames(t, "tiny-a")[:12]
	modes := []struct {
		name string
		opt  codec.Options
		ok   bool
	}{
		{"f32", codec.Options{}, true},
		{"bf16", codec.Options{Matmul: tensor.BF16}, tensor.HasBF16Dot()},
		{"int8", codec.Options{Matmul: tensor.Int8}, tensor.HasInt8Dot()},
	}
	for _, md := range modes {
		if !md.ok {
			continue
		}
		t.Run(md.name, func(t *testing.T) {
			m, err := codec.Load(dir, md.opt)
			if err != nil {
				t.Fatal(err)
			}
			wav := testWave(m, 6*m.SamplesPerFrame(), 9)
			type result struct {
				codes [][]int
				whole []float32
				batch [][]float32
			}
			run := func(block int) result {
				defer codec.SetMLPRows(block)()
				var r result
				if r.codes, err = m.Encode(wav); err != nil {
					t.Fatal(err)
				}
				if r.whole, err = m.Decode(frames); err != nil {
					t.Fatal(err)
				}
				decs := make([]*codec.Decoder, 5)
				fr := make([][]int, len(decs))
				r.batch = make([][]float32, len(decs))
				for i := range decs {
					decs[i] = m.NewDecoder()
					if _, err := decs[i].Step(nil, frames[:i]); err != nil {
						t.Fatal(err)
					}
					fr[i] = frames[i+2]
				}
				if err := m.NewBatch().Step(decs, fr, r.batch); err != nil {
					t.Fatal(err)
				}
				return r
			}
			want, got := run(1<<30), run(3)
			for i := range want.codes {
				if !slices.Equal(got.codes[i], want.codes[i]) {
					t.Fatalf("encode frame %d: codes %v in blocks, %v unblocked", i, got.codes[i], want.codes[i])
				}
			}
			if !bitsEqual(got.whole, want.whole) {
				d, at := maxAbsDiff(t, got.whole, want.whole)
				t.Fatalf("whole decode differs by %g at %d", d, at)
			}
			for i := range want.batch {
				if !bitsEqual(got.batch[i], want.batch[i]) {
					d, at := maxAbsDiff(t, got.batch[i], want.batch[i])
					t.Fatalf("batched stream %d differs by %g at %d", i, d, at)
				}
			}
		})
	}
}
