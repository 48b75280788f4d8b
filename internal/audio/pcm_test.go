package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuantize16(t *testing.T) {
	tests := []struct {
		x    float32
		want int16
	}{
		{0, 0},
		{1, 32767},
		{-1, -32767},
		{2, 32767},
		{-2, -32767},
		{float32(math.Inf(1)), 32767},
		{float32(math.Inf(-1)), -32767},
		{float32(math.NaN()), 0},
		// Half-way cases round away from zero (the product is taken in
		// float32, where these are exactly x.5).
		{16383.5 / 32767, 16384},
		{-16383.5 / 32767, -16384},
		{1.5 / 32767, 2},
		{-1.5 / 32767, -2},
		{0.5 / 32767, 1},
		{-0.5 / 32767, -1},
		{0.49 / 32767, 0},
		{-0.49 / 32767, 0},
		{2.51 / 32767, 3},
		{32766.5 / 32767, 32767},
		{0.5, 16384}, // 16383.5 → 16384
		{-0.25, -8192},
	}
	for _, tc := range tests {
		if got := Quantize16(tc.x); got != tc.want {
			t.Errorf("Quantize16(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}

func TestAppendPCM16(t *testing.T) {
	got := AppendPCM16([]byte{0xAA}, []float32{0, 1, -1, 0.5, -16383.5 / 32767})
	want := []byte{0xAA, 0, 0, 0xFF, 0x7F, 0x01, 0x80, 0x00, 0x40, 0x00, 0xC0}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

func TestMonoDownmix(t *testing.T) {
	stereo := []float32{
		0.5, 0.25, // 0.375
		1, -1, // 0
		1, 1, // 1
		-0.3, -0.7, // -0.5
		1.5, 1.5, // clipped after averaging
		3.0 / 32767, 0, // 1.5/32767 → 2: averaged in float32 before rounding
		0.1, 0.2, // float32(0.1)+float32(0.2) rounded, halved
		9, // unpaired: ignored
	}
	wantMono := []float32{0.375, 0, 1, -0.5, 1.5, 1.5 / 32767, float32(float32(0.1)+float32(0.2)) / 2}
	if diff := cmp.Diff(wantMono, Downmix(nil, stereo)); diff != "" {
		t.Errorf("Downmix (-want +got):\n%s", diff)
	}
	var want []byte
	for _, v := range []int16{12288, 0, 32767, -16384, 32767, 2, 4915} {
		want = binary.LittleEndian.AppendUint16(want, uint16(v))
	}
	if got := AppendPCM16Mono(nil, stereo); !bytes.Equal(got, want) {
		t.Errorf("AppendPCM16Mono = % x, want % x", got, want)
	}
}

func TestInterleave(t *testing.T) {
	got := Interleave([]float32{9}, []float32{1, 2, 3}, []float32{4, 5})
	if diff := cmp.Diff([]float32{9, 1, 4, 2, 5}, got); diff != "" {
		t.Error(diff)
	}
}

// handWAVHeader is the 44-byte header written out field by field.
func handWAVHeader(rate, channels, data uint32) []byte {
	h := []byte{
		'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E',
		'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, byte(channels), 0,
		0, 0, 0, 0, 0, 0, 0, 0, byte(2 * channels), 0, 16, 0,
		'd', 'a', 't', 'a', 0, 0, 0, 0,
	}
	binary.LittleEndian.PutUint32(h[4:], data+36)
	binary.LittleEndian.PutUint32(h[24:], rate)
	binary.LittleEndian.PutUint32(h[28:], rate*2*channels)
	binary.LittleEndian.PutUint32(h[40:], data)
	return h
}

func TestWAVHeader(t *testing.T) {
	tests := []struct {
		rate, channels int
		data           int64
		want           []byte
	}{
		{48000, 1, 96000, handWAVHeader(48000, 1, 96000)},
		{48000, 2, 0, handWAVHeader(48000, 2, 0)},
		{24000, 1, 4294967259, handWAVHeader(24000, 1, 4294967259)}, // largest describable
		{48000, 1, -1, func() []byte {
			h := handWAVHeader(48000, 1, 0)
			copy(h[4:], "\xff\xff\xff\xff")
			copy(h[40:], "\xff\xff\xff\xff")
			return h
		}()},
	}
	for _, tc := range tests {
		got := AppendWAVHeader(nil, tc.rate, tc.channels, tc.data)
		if len(got) != WAVHeaderSize || !bytes.Equal(got, tc.want) {
			t.Errorf("AppendWAVHeader(%d, %d, %d) =\n% x\nwant\n% x", tc.rate, tc.channels, tc.data, got, tc.want)
		}
	}
}

func TestEncodeWAVRoundTrip(t *testing.T) {
	x := sine(4800, 440, 48000, 0.9)
	b := EncodeWAV(x, 48000, 1)
	if !bytes.Equal(b[:44], handWAVHeader(48000, 1, uint32(2*len(x)))) {
		t.Fatalf("header % x", b[:44])
	}
	clip, err := DecodeWith(b, noMin)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range clip.Samples[0] {
		if want := float32(Quantize16(x[i])) / 32768; v != want {
			t.Fatalf("sample %d: %v, want %v", i, v, want)
		}
	}
}

// seekBuffer is an in-memory io.WriteSeeker that is not an io.WriterAt.
type seekBuffer struct {
	b   []byte
	pos int
}

func (s *seekBuffer) Write(p []byte) (int, error) {
	if need := s.pos + len(p); need > len(s.b) {
		s.b = append(s.b, make([]byte, need-len(s.b))...)
	}
	copy(s.b[s.pos:], p)
	s.pos += len(p)
	return len(p), nil
}

func (s *seekBuffer) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		s.pos = int(off)
	case io.SeekCurrent:
		s.pos += int(off)
	case io.SeekEnd:
		s.pos = len(s.b) + int(off)
	}
	return int64(s.pos), nil
}

func TestWAVWriter(t *testing.T) {
	chunks := [][]float32{sine(480, 440, 48000, 0.5), sine(1000, 300, 48000, 0.25), nil, sine(7, 100, 48000, 1)}
	var all []float32
	for _, c := range chunks {
		all = append(all, c...)
	}
	wantPCM := AppendPCM16(nil, all)
	write := func(t *testing.T, w io.Writer) {
		t.Helper()
		ww, err := NewWAVWriter(w, 48000, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if err := ww.WriteSamples(c); err != nil {
				t.Fatal(err)
			}
		}
		if ww.DataBytes() != int64(len(wantPCM)) {
			t.Errorf("DataBytes = %d, want %d", ww.DataBytes(), len(wantPCM))
		}
		if err := ww.Close(); err != nil {
			t.Fatal(err)
		}
		if err := ww.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := ww.WriteSamples(all); err == nil {
			t.Error("write after Close succeeded")
		}
	}
	patched := append(handWAVHeader(48000, 1, uint32(len(wantPCM))), wantPCM...)

	t.Run("file is patched", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out.wav")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("prefix")) // the WAV need not start at offset 0
		write(t, f)
		f.Close()
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got[6:], patched) {
			t.Errorf("file header % x, want % x", got[6:50], patched[:44])
		}
	})
	t.Run("write seeker is patched", func(t *testing.T) {
		var sb seekBuffer
		write(t, &sb)
		if !bytes.Equal(sb.b, patched) {
			t.Errorf("header % x, want % x", sb.b[:44], patched[:44])
		}
		if sb.pos != len(sb.b) {
			t.Errorf("position %d left mid-stream (len %d)", sb.pos, len(sb.b))
		}
	})
	t.Run("pipe keeps streaming sizes and decodes", func(t *testing.T) {
		var buf bytes.Buffer
		write(t, &buf)
		got := buf.Bytes()
		if !bytes.Equal(got[4:8], []byte{0xff, 0xff, 0xff, 0xff}) || !bytes.Equal(got[40:44], []byte{0xff, 0xff, 0xff, 0xff}) {
			t.Errorf("streaming header % x", got[:44])
		}
		if !bytes.Equal(got[44:], wantPCM) {
			t.Error("PCM differs")
		}
		clip, err := DecodeWith(got, noMin)
		if err != nil {
			t.Fatal(err)
		}
		if clip.Frames() != len(all) {
			t.Errorf("decoded %d frames, want %d", clip.Frames(), len(all))
		}
	})
	t.Run("odd byte count is padded", func(t *testing.T) {
		var sb seekBuffer
		ww, _ := NewWAVWriter(&sb, 8000, 1)
		ww.Write([]byte{1, 2, 3})
		if err := ww.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(handWAVHeader(8000, 1, 3), 1, 2, 3, 0)
		binary.LittleEndian.PutUint32(want[4:], 36+4)
		if !bytes.Equal(sb.b, want) {
			t.Errorf("got % x\nwant % x", sb.b, want)
		}
	})
	t.Run("write error is sticky", func(t *testing.T) {
		ww, err := NewWAVWriter(&failAfter{n: 50}, 8000, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := ww.WriteSamples(make([]float32, 100)); err == nil {
			t.Fatal("no error")
		}
		if err := ww.WriteSamples(make([]float32, 1)); err == nil {
			t.Error("error not sticky")
		}
		if err := ww.Close(); err == nil {
			t.Error("Close forgot the error")
		}
	})
	if _, err := NewWAVWriter(&bytes.Buffer{}, 0, 1); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := NewWAVWriter(&failAfter{n: 10}, 8000, 1); err == nil {
		t.Error("header write error not reported")
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteFileAtomic(t *testing.T) {
	listDir := func(t *testing.T, dir string) []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	t.Run("success", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "a.wav")
		err := WriteFileAtomic(path, func(w io.Writer) error {
			ww, err := NewWAVWriter(w, 48000, 1)
			if err != nil {
				return err
			}
			if err := ww.WriteSamples(sine(100, 440, 48000, 0.5)); err != nil {
				return err
			}
			return ww.Close()
		})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if !bytes.Equal(b[:44], handWAVHeader(48000, 1, 200)) {
			t.Errorf("header not patched through WriteFileAtomic: % x", b[:44])
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o644 {
			t.Errorf("mode %v", st.Mode())
		}
		if names := listDir(t, dir); len(names) != 1 {
			t.Errorf("dir holds %v", names)
		}
	})
	t.Run("error leaves nothing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "b.wav")
		err := WriteFileAtomic(path, func(w io.Writer) error {
			w.Write([]byte("partial"))
			return errDiskFull
		})
		if !errors.Is(err, errDiskFull) {
			t.Fatalf("err = %v", err)
		}
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("dir holds %v", names)
		}
	})
	t.Run("error keeps the old file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "c.wav")
		os.WriteFile(path, []byte("old"), 0o600)
		WriteFileAtomic(path, func(w io.Writer) error {
			w.Write([]byte("new"))
			return errDiskFull
		})
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("old file became %q", b)
		}
		if names := listDir(t, dir); len(names) != 1 {
			t.Errorf("dir holds %v", names)
		}
		// Success replaces it and keeps its mode.
		if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		st, _ := os.Stat(path)
		if string(b) != "new" || st.Mode().Perm() != 0o600 {
			t.Errorf("got %q mode %v", b, st.Mode())
		}
	})
	t.Run("panic leaves nothing", func(t *testing.T) {
		dir := t.TempDir()
		func() {
			defer func() { recover() }()
			WriteFileAtomic(filepath.Join(dir, "d.wav"), func(w io.Writer) error {
				w.Write([]byte("partial"))
				panic("boom")
			})
		}()
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("dir holds %v", names)
		}
	})
	t.Run("missing dir", func(t *testing.T) {
		err := WriteFileAtomic(filepath.Join(t.TempDir(), "no", "such", "e.wav"), func(io.Writer) error { return nil })
		if err == nil {
			t.Error("no error")
		}
	})
}
