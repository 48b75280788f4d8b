package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// WAVHeaderSize is the size of the plain RIFF PCM header we write.
const WAVHeaderSize = 44

// maxWAVData is the largest data chunk a RIFF size field can describe.
const maxWAVData = 0xFFFFFFFF - 36

// AppendWAVHeader appends a 44-byte RIFF/WAVE header for 16-bit PCM with
// dataBytes of audio. dataBytes < 0 means "unknown" (streaming): both size
// fields are then 0xFFFFFFFF, which readers (including Decode) take as
// "until end of file".
func AppendWAVHeader(dst []byte, sampleRate, channels int, dataBytes int64) []byte {
	riff, data := uint32(0xFFFFFFFF), uint32(0xFFFFFFFF)
	if dataBytes >= 0 && dataBytes <= maxWAVData {
		riff, data = uint32(36+dataBytes), uint32(dataBytes)
	}
	le := binary.LittleEndian
	dst = append(dst, "RIFF"...)
	dst = le.AppendUint32(dst, riff)
	dst = append(dst, "WAVEfmt "...)
	dst = le.AppendUint32(dst, 16)
	dst = le.AppendUint16(dst, wavPCM)
	dst = le.AppendUint16(dst, uint16(channels))
	dst = le.AppendUint32(dst, uint32(sampleRate))
	dst = le.AppendUint32(dst, uint32(sampleRate*channels*2)) // byte rate
	dst = le.AppendUint16(dst, uint16(channels*2))            // block align
	dst = le.AppendUint16(dst, 16)                            // bits per sample
	dst = append(dst, "data"...)
	return le.AppendUint32(dst, data)
}

// EncodeWAV returns a complete 16-bit PCM WAV file of interleaved samples
// (channels per frame), quantized with Quantize16.
func EncodeWAV(samples []float32, sampleRate, channels int) []byte {
	b := make([]byte, 0, WAVHeaderSize+2*len(samples))
	b = AppendWAVHeader(b, sampleRate, channels, int64(2*len(samples)))
	return AppendPCM16(b, samples)
}

// WAVWriter writes a 16-bit PCM WAV stream chunk by chunk. The header is
// written first with "unknown" sizes, so a reader of a half-written file or
// of a pipe still gets valid audio; Close patches the real sizes when the
// destination can be rewritten (an io.WriterAt such as *os.File, or a
// seekable io.WriteSeeker). Close never closes the destination.
type WAVWriter struct {
	w        io.Writer
	channels int
	start    int64 // header offset in w; -1 if w cannot be patched
	n        int64 // data bytes written
	buf      []byte
	err      error // sticky
	closed   bool
}

// NewWAVWriter writes the header to w and returns a writer for samples.
func NewWAVWriter(w io.Writer, sampleRate, channels int) (*WAVWriter, error) {
	if sampleRate <= 0 || channels <= 0 || channels > 0xFFFF/2 {
		return nil, fmt.Errorf("wav writer: bad format %d Hz, %d channels", sampleRate, channels)
	}
	ww := &WAVWriter{w: w, channels: channels, start: -1}
	if s, ok := w.(io.Seeker); ok {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			ww.start = pos // a pipe fails here and stays unpatched
		}
	}
	if _, err := w.Write(AppendWAVHeader(nil, sampleRate, channels, -1)); err != nil {
		return nil, fmt.Errorf("wav writer: write header: %w", err)
	}
	return ww, nil
}

// WriteSamples quantizes interleaved float samples (the writer's channel
// count per frame) and writes them.
func (w *WAVWriter) WriteSamples(samples []float32) error {
	w.buf = AppendPCM16(w.buf[:0], samples)
	_, err := w.Write(w.buf)
	return err
}

// Write writes raw 16-bit little-endian PCM bytes.
func (w *WAVWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("wav writer: write after Close")
	}
	if w.n+int64(len(p)) > maxWAVData {
		w.err = errors.New("wav writer: audio exceeds the 4 GiB WAV limit")
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.n += int64(n)
	if err != nil {
		w.err = fmt.Errorf("wav writer: %w", err)
	}
	return n, w.err
}

// DataBytes returns the number of PCM bytes written so far.
func (w *WAVWriter) DataBytes() int64 { return w.n }

// Close pads an odd-sized data chunk and, if possible, patches the sizes in
// the header. It returns the first error the writer met.
func (w *WAVWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if w.n%2 == 1 {
		if _, err := w.w.Write([]byte{0}); err != nil {
			w.err = fmt.Errorf("wav writer: pad: %w", err)
			return w.err
		}
	}
	if w.start < 0 {
		return nil
	}
	le := binary.LittleEndian
	riff := le.AppendUint32(nil, uint32(36+w.n+w.n%2))
	data := le.AppendUint32(nil, uint32(w.n))
	switch d := w.w.(type) {
	case io.WriterAt:
		if _, err := d.WriteAt(riff, w.start+4); err != nil {
			w.err = fmt.Errorf("wav writer: patch header: %w", err)
		} else if _, err := d.WriteAt(data, w.start+40); err != nil {
			w.err = fmt.Errorf("wav writer: patch header: %w", err)
		}
	case io.WriteSeeker:
		end := w.start + WAVHeaderSize + w.n + w.n%2
		for _, p := range []struct {
			off int64
			b   []byte
		}{{w.start + 4, riff}, {w.start + 40, data}} {
			if _, err := d.Seek(p.off, io.SeekStart); err != nil {
				w.err = fmt.Errorf("wav writer: patch header: %w", err)
				return w.err
			}
			if _, err := d.Write(p.b); err != nil {
				w.err = fmt.Errorf("wav writer: patch header: %w", err)
				return w.err
			}
		}
		if _, err := d.Seek(end, io.SeekStart); err != nil {
			w.err = fmt.Errorf("wav writer: patch header: %w", err)
		}
	}
	return w.err
}
