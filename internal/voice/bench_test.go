package voice

import (
	"fmt"
	"testing"
)

func BenchmarkDecodeFile(b *testing.B) {
	v := testVoice("bench", 375, 16, 1)
	data, _, err := encodeFile(&v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeFile(data, DefaultMaxFrames); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeFile(b *testing.B) {
	v := testVoice("bench", 375, 16, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := encodeFile(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet is the per-request cost of looking up a saved voice.
func BenchmarkGet(b *testing.B) {
	s, _, err := Open(b.TempDir(), Options{Model: testModel, NumCodebooks: 16, CodebookSize: 1024})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Add(testVoice(fmt.Sprintf("v%d", i), 375, 16, i), false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get("v7"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpen loads a directory of 50 full-length voices.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s, _, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		if _, err := s.Add(testVoice(fmt.Sprintf("v%d", i), 375, 16, i), false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Open(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
