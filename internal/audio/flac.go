package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/mewkiz/flac/frame"
)

type flacInfo struct {
	rate, channels, bps int
	total               int64 // samples per channel; 0 = unknown
	md5                 [16]byte
}

// parseFLACMetadata reads the signature and the metadata blocks itself
// (bounded by the bytes present, never allocating from declared sizes) and
// returns STREAMINFO and the offset of the first audio frame.
func parseFLACMetadata(data []byte) (flacInfo, int, error) {
	var info flacInfo
	off := 4 // "fLaC"
	first := true
	for {
		if len(data)-off < 4 {
			return info, 0, errorf(KindMalformed, "ref_audio FLAC metadata is truncated")
		}
		h := binary.BigEndian.Uint32(data[off:])
		last, typ, size := h>>31 == 1, (h>>24)&0x7F, int(h&0xFFFFFF)
		off += 4
		if size > len(data)-off {
			return info, 0, errorf(KindMalformed, "ref_audio FLAC metadata block declares %d bytes but only %d remain", size, len(data)-off)
		}
		if first {
			if typ != 0 || size < 34 {
				return info, 0, errorf(KindMalformed, "ref_audio FLAC does not start with a STREAMINFO block")
			}
			b := data[off:]
			x := binary.BigEndian.Uint64(b[10:18])
			info.rate = int(x >> 44)
			info.channels = int(x>>41&0x7) + 1
			info.bps = int(x>>36&0x1F) + 1
			info.total = int64(x & (1<<36 - 1))
			copy(info.md5[:], b[18:34])
			first = false
		}
		off += size
		if last {
			return info, off, nil
		}
	}
}

// flacBPSCode maps a sample size to its frame-header code.
var flacBPSCode = map[int]byte{8: 1, 12: 2, 16: 4, 20: 5, 24: 6}

// decodeFLAC decodes a FLAC stream with github.com/mewkiz/flac, frame by
// frame, stopping as soon as MaxDuration is exceeded. A stream truncated
// mid-frame keeps the whole frames before the cut; bytes after the last of
// STREAMINFO's samples (e.g. an ID3v1 tag) are ignored.
func decodeFLAC(data []byte, o *Options) (*Clip, error) {
	info, off, err := parseFLACMetadata(data)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(info.channels, info.rate); err != nil {
		return nil, err
	}
	if _, ok := flacBPSCode[info.bps]; !ok {
		return nil, errorf(KindUnsupported, "ref_audio is %d-bit FLAC; only 8, 12, 16, 20 and 24 bits are supported", info.bps)
	}
	maxFrames := o.maxFrames(info.rate)
	if info.total > maxFrames {
		if err := o.checkDuration(info.total, info.rate); err != nil {
			return nil, err // exact duration from STREAMINFO
		}
		return nil, o.errTooLong()
	}
	hint := min(int64(len(data))*4, maxFrames)
	if info.total > 0 {
		hint = min(hint, info.total)
	}
	samples := make([][]float32, info.channels)
	for c := range samples {
		samples[c] = make([]float32, 0, hint)
	}
	scale := 1 / float32(int64(1)<<(info.bps-1))
	buf, copied := data, false
	pos := off
	var decoded int64
	short := false // the previous frame had fewer than 16 samples
	for pos < len(buf) {
		var patch []byte
		if p, ok := patchFLACHeader(buf[pos:], info.bps); ok {
			if !copied {
				buf, copied = bytes.Clone(buf), true
			}
			copy(buf[pos:], p)
			patch = p
		}
		r := bytes.NewReader(buf[pos:])
		fr, perr := parseFLACFrame(r)
		end := len(buf) - r.Len()
		if perr != nil && patch != nil && frameCRCMatches(data[pos:end]) && fr != nil && len(fr.Subframes) > 0 {
			// The header was rewritten so the library would not log; the
			// library's CRC-16 saw the rewritten bytes, ours the original.
			perr = nil
		}
		if perr != nil {
			switch {
			case errors.Is(perr, io.EOF) && decoded == 0:
				return nil, errorf(KindEmpty, "ref_audio FLAC has no audio frames")
			case errors.Is(perr, io.EOF):
			case errors.Is(perr, io.ErrUnexpectedEOF) && decoded > 0:
				// truncated file: keep the whole frames decoded so far
			case decoded > 0 && (info.total > 0 && decoded >= info.total || bytes.HasPrefix(data[pos:], []byte("TAG"))):
				// trailing junk after the last frame
			default:
				return nil, errorf(KindMalformed, "ref_audio FLAC frame at byte %d is corrupt: %v", pos, perr)
			}
			break
		}
		n := int(fr.BlockSize)
		if short {
			// Only the last frame may be shorter than 16 samples (FLAC
			// format); a stream of tiny frames is a CPU bomb.
			return nil, errorf(KindMalformed, "ref_audio FLAC frame before byte %d has fewer than 16 samples", pos)
		}
		short = n < 16
		if fr.Channels.Count() != info.channels || len(fr.Subframes) != info.channels {
			return nil, errorf(KindMalformed, "ref_audio FLAC frame at byte %d has %d channels; STREAMINFO says %d", pos, fr.Channels.Count(), info.channels)
		}
		if int(fr.BitsPerSample) != info.bps {
			return nil, errorf(KindMalformed, "ref_audio FLAC frame at byte %d has %d-bit samples; STREAMINFO says %d", pos, fr.BitsPerSample, info.bps)
		}
		if decoded+int64(n) > maxFrames {
			return nil, o.errTooLong()
		}
		for c, sf := range fr.Subframes {
			if len(sf.Samples) != n {
				return nil, errorf(KindMalformed, "ref_audio FLAC frame at byte %d is corrupt", pos)
			}
			dst := samples[c]
			for _, s := range sf.Samples {
				dst = append(dst, float32(s)*scale)
			}
			samples[c] = dst
		}
		decoded += int64(n)
		pos = end
	}
	return &Clip{SampleRate: info.rate, Samples: samples, Format: fmt.Sprintf("FLAC %d-bit", info.bps)}, nil
}

// parseFLACFrame parses one frame. The library is not hardened against every
// malformed input, so a panic inside it becomes an error here: this is the
// boundary between our validated world and its parser.
func parseFLACFrame(r io.Reader) (fr *frame.Frame, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return frame.Parse(r)
}

// patchFLACHeader returns a rewritten copy of the frame header at the start
// of b when the library would mis-handle it: sample-rate codes 0x2 (176.4
// kHz) and 0x7 (24 kHz) make mewkiz/flac write a line to the global logger
// for every frame, so they become 0x0 ("see STREAMINFO", which is the rate
// we use anyway); a sample-size code of 0 ("see STREAMINFO") is decoded by
// the library as 0-bit, so it becomes the explicit code. The CRC-8 is
// recomputed, and only a header whose CRC-8 was valid is touched.
func patchFLACHeader(b []byte, bps int) ([]byte, bool) {
	if len(b) < 5 || b[0] != 0xFF || b[1]&0xFE != 0xF8 {
		return nil, false
	}
	bsCode, srCode, bpsCode := b[2]>>4, b[2]&0x0F, b[3]>>1&0x07
	if srCode != 0x2 && srCode != 0x7 && bpsCode != 0 {
		return nil, false
	}
	n := 4 + utf8Len(b[4])
	switch bsCode {
	case 6:
		n++
	case 7:
		n += 2
	}
	switch srCode {
	case 12:
		n++
	case 13, 14:
		n += 2
	}
	if n < 5 || n >= len(b) || crc8(b[:n]) != b[n] {
		return nil, false
	}
	p := bytes.Clone(b[:n+1])
	if srCode == 0x2 || srCode == 0x7 {
		p[2] &^= 0x0F
	}
	if bpsCode == 0 {
		p[3] = p[3]&^0x0E | flacBPSCode[bps]<<1
	}
	p[n] = crc8(p[:n])
	return p, true
}

// utf8Len is the length of FLAC's UTF-8-like coded frame number from its
// first byte, or 0 (invalid) which makes the header too short to patch.
func utf8Len(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	case c&0xFC == 0xF8:
		return 5
	case c&0xFE == 0xFC:
		return 6
	case c == 0xFE:
		return 7
	}
	return -4
}

// crc8 is FLAC's header CRC (polynomial x^8+x^2+x+1, initial value 0).
func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// frameCRCMatches checks FLAC's frame CRC-16 over a whole frame whose last
// two bytes are the CRC.
func frameCRCMatches(f []byte) bool {
	return len(f) >= 3 && crc16(f[:len(f)-2]) == binary.BigEndian.Uint16(f[len(f)-2:])
}

// crc16 is FLAC's frame CRC (polynomial 0x8005, initial value 0).
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c ^= uint16(x) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
	}
	return c
}
