package lm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// golden is the part of the reference's generation files the LM tests use.
type golden struct {
	Text           string      `json:"text"`
	TextChunks     []string    `json:"text_chunks"`
	TextTokenIDs   [][]int     `json:"text_token_ids"`
	PromptIDs      [][][]int   `json:"prompt_ids"`
	RefCodes       [][]int     `json:"ref_codes"`
	Frames         [][]int     `json:"frames"`
	FramesPerChunk []int       `json:"frames_per_chunk"`
	MaxFrames      int         `json:"max_frames"`
	RepPenalty     float64     `json:"repetition_penalty"`
	Debug          []debugInfo `json:"debug_per_chunk"`
}

type debugInfo struct {
	Step0GlobalHidden []float64 `json:"step0_global_hidden"`
}

func readGolden(t *testing.T, fixture, name string) *golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../testdata", fixture, "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func loadFixture(t *testing.T, fixture string) *Model {
	t.Helper()
	m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), Options{KeepBF16: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func goldenParams(g *golden, budget int) Params {
	p := DefaultParams()
	p.Greedy = true
	p.RepetitionPenalty = g.RepPenalty
	p.MaxNewFrames = g.MaxFrames
	p.MaxTextTokens = budget
	p.FramesPerToken = 0 // the reference has no runaway guard
	return p
}

// run generates all frames of a request alone.
func run(t *testing.T, gen *Generation) (frames [][]int, perChunk []int) {
	t.Helper()
	perChunk = []int{0}
	for {
		ev, err := gen.Next(context.Background())
		if errors.Is(err, ErrDone) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case EventFrame:
			frames = append(frames, ev.Frame)
			perChunk[len(perChunk)-1]++
		case EventChunkEnd:
			if !ev.Last {
				perChunk = append(perChunk, 0)
			}
		}
	}
	return frames, perChunk
}

// TestGoldenGeneration runs each fixture's weights as stored (tiny-a's
// bfloat16 ones widened exactly by the kernels) and widened to float32 at
// load, as the release's float32 checkpoint is held: with the local
// transformer's lookup table (Model.localQKV), built for float32 weights.
func TestGoldenGeneration(t *testing.T) {
	for _, fixture := range []string{"tiny-a", "tiny-b"} {
		for _, storage := range []string{"bf16", "f32"} {
			m, err := Load(filepath.Join("../../../testdata", fixture, "lm"), Options{KeepBF16: storage == "bf16"})
			if err != nil {
				t.Fatal(err)
			}
			if (m.localQKV != nil) != !m.local.blocks[0].attnW.IsBF16() || storage == "f32" && m.localQKV == nil {
				t.Fatalf("%s %s: local table %v", fixture, storage, m.localQKV != nil)
			}
			for _, tc := range []struct {
				file   string
				budget int
			}{{"canonical.json", 75}, {"long.json", 20}} {
				t.Run(fixture+"/"+storage+"/"+tc.file, func(t *testing.T) {
					g := readGolden(t, fixture, tc.file)
					gen, err := m.NewGeneration(g.RefCodes, nil, g.Text, goldenParams(g, tc.budget))
					if err != nil {
						t.Fatal(err)
					}
					var chunks []string
					var ids [][]int
					for i, c := range gen.Chunks() {
						chunks = append(chunks, c.Text)
						ids = append(ids, c.TokenIDs)
						var prompt [][]int
						rows := m.PromptRows(g.RefCodes, c.TokenIDs)
						w := m.Config.NVQ + 1
						for r := 0; r < len(rows); r += w {
							prompt = append(prompt, append([]int(nil), rows[r:r+w]...))
						}
						if i < len(g.PromptIDs) {
							if diff := cmp.Diff(g.PromptIDs[i], prompt); diff != "" {
								t.Errorf("chunk %d prompt rows (-want +got):\n%s", i, diff)
							}
						}
					}
					if diff := cmp.Diff(g.TextChunks, chunks); diff != "" {
						t.Fatalf("text chunks (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(g.TextTokenIDs, ids); diff != "" {
						t.Fatalf("text token ids (-want +got):\n%s", diff)
					}
					frames, perChunk := run(t, gen)
					if diff := cmp.Diff(g.FramesPerChunk, perChunk); diff != "" {
						t.Errorf("frames per chunk (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(g.Frames, frames); diff != "" {
						t.Errorf("frames (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}
