package lm

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nanovox/nanovox/internal/tensor"
)

// TestPrefillHeadCacheExact: a prefill that starts from the cached head
// (Model.prefill) stores the same bits as one that runs every prompt row
// through the stack, in every mode, for references of one frame and more.
func TestPrefillHeadCacheExact(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		ref := readGolden(t, fixture, "long.json").RefCodes
		for _, opts := range []Options{{KeepBF16: true}, {Matmul: tensor.BF16}, {Matmul: tensor.Int8}} {
			m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, frames := range []int{1, 2, len(ref)} {
				r := ref[:frames]
				n := m.prefixLen(r)
				want := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), n, m.globalKV)
				m.forwardRows(context.Background(), want, m.PrefixRows(r))
				got := newKVCache(m.Config.GPT2.NLayer, m.Config.GPT2.NHead, m.Config.HeadDim(), 1, m.globalKV)
				m.prefill(context.Background(), got, r)
				if got.n != n || want.n != n {
					t.Fatalf("%s %v %d frames: %d and %d rows cached, want %d", fixture, opts.Matmul, frames, got.n, want.n, n)
				}
				diffs := 0
				for l := range m.Config.GPT2.NLayer {
					for _, key := range []bool{true, false} {
						for h := range got.nh {
							for p := range n {
								for i := range got.hd {
									a, b := cacheValue(got, l, key, h, p, i), cacheValue(want, l, key, h, p, i)
									if math.Float32bits(a) != math.Float32bits(b) {
										if diffs < 5 {
											t.Errorf("%s %v %d frames: layer %d key=%v head %d position %d [%d]: %g, full prefill %g",
												fixture, opts.Matmul, frames, l, key, h, p, i, a, b)
										}
										diffs++
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestLocalQKVExact: every row of the local transformer's lookup table is
// the product its step computes for that input alone, bit for bit, and
// frames generated with the table equal those computed without it.
func TestLocalQKVExact(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		// Widened to float32 at load, as the release's checkpoint is held:
		// the table is built for float32 weights only.
		m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.localQKV == nil {
			t.Fatalf("%s: no local table in the f32 mode", fixture)
		}
		cfg := m.Config
		H := cfg.Hidden()
		b := &m.local.blocks[0]
		x, h, qkv := make([]float32, H), make([]float32, H), make([]float32, 3*H)
		for c := range cfg.NVQ {
			k := 1
			if c > 0 {
				k = cfg.AudioCodebookSizes[c-1]
			}
			for _, code := range []int{0, k / 3, k - 1} {
				if c == 0 {
					m.wte.Row(cfg.AudioAssistantSlotTokenID, x)
				} else {
					m.audioEmb[c-1].Row(code, x)
				}
				if m.local.wpe != nil {
					m.local.wpe.AddRow(x, c+1)
				}
				tensor.LayerNorm(h, x, 1, b.ln1W, b.ln1B, float32(cfg.GPT2.LayerNormEpsilon))
				tensor.Linear(qkv, h, 1, b.attnW, b.attnB)
				row := m.localQKV[c][code*3*H : (code+1)*3*H]
				for i := range qkv {
					if math.Float32bits(qkv[i]) != math.Float32bits(row[i]) {
						t.Fatalf("%s step %d code %d [%d]: table %g, computed %g", fixture, c+1, code, i, row[i], qkv[i])
					}
				}
			}
		}
		g := readGolden(t, fixture, "long.json")
		var frames [2][][]int
		for k, noTable := range []bool{false, true} {
			gen, err := m.NewGeneration(g.RefCodes, nil, g.Text, sampledParams(3))
			if err != nil {
				t.Fatal(err)
			}
			st := m.NewStepper()
			st.noTable = noTable
			for !gen.Done() && len(frames[k]) < 40 {
				evs, err := st.Step([]*Generation{gen})
				if err != nil {
					t.Fatal(err)
				}
				if evs[0].Kind == EventFrame {
					frames[k] = append(frames[k], evs[0].Frame)
				}
			}
		}
		if len(frames[0]) == 0 {
			t.Fatalf("%s: no frames", fixture)
		}
		if diff := cmp.Diff(frames[0], frames[1]); diff != "" {
			t.Errorf("%s: frames with the table differ (-table +computed):\n%s", fixture, diff)
		}
	}
}

// TestOwnPrefixOnePassExact: a generation without a shared prefix computes
// its prefix in the pass of its first chunk's rows (Stepper.Step); its
// prefix cache and the chunk's keys and values hold the bits of a separate
// prefill (NewPrefix) followed by the chunk's pass, alone and beside a
// generation that is already decoding, in every mode.
func TestOwnPrefixOnePassExact(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		g := readGolden(t, fixture, "long.json")
		for _, opts := range []Options{{KeepBF16: true}, {Matmul: tensor.BF16}, {Matmul: tensor.Int8}} {
			m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, frames := range []int{1, len(g.RefCodes)} {
				ref := g.RefCodes[:frames]
				pre, err := m.NewPrefix(ref)
				if err != nil {
					t.Fatal(err)
				}
				p := sampledParams(3)
				for _, beside := range []bool{false, true} {
					name := fmt.Sprintf("%s/%v/%d frames/beside=%v", fixture, opts.Matmul, frames, beside)
					want, err := m.NewGeneration(nil, pre, g.Text, p)
					if err != nil {
						t.Fatal(err)
					}
					got, err := m.NewGeneration(ref, nil, g.Text, p)
					if err != nil {
						t.Fatal(err)
					}
					wantEv, err := m.NewStepper().Step([]*Generation{want})
					if err != nil {
						t.Fatal(err)
					}
					gens := []*Generation{got}
					if beside {
						// A generation past its prompt shares the pass.
						op := sampledParams(4)
						op.IgnoreEOS = true
						other, err := m.NewGeneration(nil, pre, "Another one.", op)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := other.Next(context.Background()); err != nil {
							t.Fatal(err)
						}
						gens = []*Generation{other, got}
					}
					evs, err := m.NewStepper().Step(gens)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(wantEv[0], evs[len(evs)-1]); diff != "" {
						t.Errorf("%s: first event (-separate +one pass):\n%s", name, diff)
					}
					if got.pre.n != pre.cache.n || got.cache.n != want.cache.n {
						t.Fatalf("%s: %d+%d rows cached, want %d+%d", name, got.pre.n, got.cache.n, pre.cache.n, want.cache.n)
					}
					if d := cacheBitDiffs(got.pre, pre.cache, pre.cache.n); d != 0 {
						t.Errorf("%s: prefix cache differs from NewPrefix's in %d values", name, d)
					}
					if d := cacheBitDiffs(got.cache, want.cache, want.cache.n); d != 0 {
						t.Errorf("%s: chunk cache differs in %d values", name, d)
					}
				}
			}
		}
	}
}

// cacheBitDiffs counts the cached keys and values of the first n positions
// whose bits differ between a and b.
func cacheBitDiffs(a, b *kvCache, n int) int {
	diffs := 0
	for l := range a.layers {
		for _, key := range []bool{true, false} {
			for h := range a.nh {
				for p := range n {
					for i := range a.hd {
						if math.Float32bits(cacheValue(a, l, key, h, p, i)) != math.Float32bits(cacheValue(b, l, key, h, p, i)) {
							diffs++
						}
					}
				}
			}
		}
	}
	return diffs
}
