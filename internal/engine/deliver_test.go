package engine

import (
	"fmt"
	"testing"
)

// TestFirstChunkDuringPrompts: a ramped stream's first chunk is one frame,
// or two while the step being generated carries other requests' prompts (a
// long step that would leave a one-frame chunk playing dry); an explicit
// larger first chunk is kept, and a stream that ends flushes what it has.
func TestFirstChunkDuringPrompts(t *testing.T) {
	const spf = 4 // samples per frame, mono
	frame := Output{Samples: make([]float32, spf), Frame: []int{1}}
	for _, tc := range []struct {
		name       string
		prompting  bool
		ramp       bool
		first      int // first chunk target, frames
		outs       []Output
		wantFrames []int // frames of each chunk handed over
	}{
		{"alone", false, true, 1, []Output{frame, frame, frame}, []int{1, 1, 1}},
		{"prompting", true, true, 1, []Output{frame, frame, frame}, []int{2, 1}},
		{"not ramped", true, false, 1, []Output{frame, frame}, []int{1, 1}},
		{"bigger first chunk", true, true, 3, []Output{frame, frame, frame}, []int{3}},
		{"ends after one frame", true, true, 1, []Output{{Samples: frame.Samples, Frame: []int{1}, Done: true}}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{}
			e.prompting.Store(tc.prompting)
			s := &Stream{e: e, out: make(chan Chunk, 8), firstTarget: tc.first * spf, target: spf,
				ramp: tc.ramp, rate: 1 << 20, frameSamples: spf, channels: 1}
			for _, o := range tc.outs {
				s.deliver(o)
			}
			close(s.out)
			var got []int
			for c := range s.out {
				got = append(got, c.Frames)
			}
			if len(got) != len(tc.wantFrames) {
				t.Fatalf("chunks of %v frames, want %v", got, tc.wantFrames)
			}
			for i := range got {
				if got[i] != tc.wantFrames[i] {
					t.Fatalf("chunks of %v frames, want %v", got, tc.wantFrames)
				}
			}
		})
	}
}

// TestChunkBuffers: a chunk's buffer is allocated for the chunk's size once
// (a streamed chunk of 4 frames holds exactly 4 frames), and a buffered
// request's single chunk, of unknown length, starts from maxPresizeFrames
// and grows: never from the "whole response" target.
func TestChunkBuffers(t *testing.T) {
	const spf, ch = 6, 2
	frame := Output{Samples: make([]float32, spf*ch), Frame: []int{1}}
	for _, tc := range []struct {
		name      string
		target    int // frames
		frames    int
		wantCap   []int // capacity of each chunk, samples
		wantChunk []int // frames of each chunk
	}{
		{"streamed", 4, 8, []int{4 * spf * ch, 4 * spf * ch}, []int{4, 4}},
		{"buffered", 1 << 40, 3, []int{maxPresizeFrames * spf * ch}, []int{3}},
		{"buffered, longer", 1 << 40, 20, nil, []int{20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stream{e: &Engine{}, out: make(chan Chunk, 8), firstTarget: tc.target * spf, target: tc.target * spf,
				rate: 1 << 20, frameSamples: spf, channels: ch}
			for i := range tc.frames {
				o := frame
				o.Done = i == tc.frames-1
				s.deliver(o)
			}
			close(s.out)
			var caps, frames []int
			for c := range s.out {
				caps, frames = append(caps, cap(c.Samples)), append(frames, c.Frames)
				if len(c.Samples) != c.Frames*spf*ch {
					t.Fatalf("chunk of %d frames holds %d samples", c.Frames, len(c.Samples))
				}
			}
			if fmt.Sprint(frames) != fmt.Sprint(tc.wantChunk) || (tc.wantCap != nil && fmt.Sprint(caps) != fmt.Sprint(tc.wantCap)) {
				t.Fatalf("chunks of %v frames, capacities %v; want %v and %v", frames, caps, tc.wantChunk, tc.wantCap)
			}
		})
	}
}
