package audio

import (
	"errors"
	"fmt"
	"io"

	"github.com/hajimehoshi/go-mp3"
)

type mp3Header struct {
	layer     int // 1, 2 or 3
	rate      int
	mono      bool
	frameSize int // bytes, including the header
}

var (
	mp3Rates = [4][3]int{ // [version bits][rate index]
		0: {11025, 12000, 8000},  // MPEG 2.5
		2: {22050, 24000, 16000}, // MPEG 2
		3: {44100, 48000, 32000}, // MPEG 1
	}
	mp3Bitrates = [2][4][16]int{ // kbit/s: [lsf][layer][index]
		{ // MPEG 1
			1: {0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
			2: {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
			3: {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		},
		{ // MPEG 2 and 2.5
			1: {0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
			2: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
			3: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		},
	}
)

// parseMP3Header decodes an MPEG audio frame header at the start of b. Free
// format (bitrate index 0) is rejected, as go-mp3 rejects it.
func parseMP3Header(b []byte) (mp3Header, bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return mp3Header{}, false
	}
	version, layerBits := b[1]>>3&3, b[1]>>1&3
	brIdx, srIdx := b[2]>>4, b[2]>>2&3
	if version == 1 || layerBits == 0 || brIdx == 0 || brIdx == 15 || srIdx == 3 || b[3]&3 == 2 {
		return mp3Header{}, false
	}
	h := mp3Header{layer: 4 - int(layerBits), rate: mp3Rates[version][srIdx], mono: b[3]>>6 == 3}
	lsf := 0
	if version != 3 {
		lsf = 1
	}
	bitrate := mp3Bitrates[lsf][h.layer][brIdx] * 1000
	pad := int(b[2] >> 1 & 1)
	switch {
	case h.layer == 1:
		h.frameSize = (12*bitrate/h.rate + pad) * 4
	case h.layer == 3 && lsf == 1:
		h.frameSize = 72*bitrate/h.rate + pad
	default:
		h.frameSize = 144*bitrate/h.rate + pad
	}
	return h, h.frameSize > 4
}

// mp3Confirmed guards sniffing of untagged data: a lone 0xFFEx pair is too
// common in random bytes, so the next frame must follow the first (or the
// data must end with the first frame).
func mp3Confirmed(data []byte, h mp3Header) bool {
	next := h.frameSize
	if next == len(data) {
		return true
	}
	h2, ok := parseMP3Header(data[min(next, len(data)):])
	return ok && h2.layer == h.layer && h2.rate == h.rate
}

// opaqueReader hides bytes.Reader's Seek so go-mp3 does not pre-scan the
// whole stream to compute its length.
type opaqueReader struct{ b []byte }

func (r *opaqueReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// decodeMP3 decodes MPEG-1/2/2.5 layer III with github.com/hajimehoshi/go-mp3.
// data starts at the first frame (any ID3v2 tags already skipped).
//
// go-mp3 always produces 16-bit stereo (mono duplicated), truncating its
// float output toward zero with a 32767 scale, and does not remove the
// encoder delay/padding that ffmpeg-based loaders trim using LAME's gapless
// header (about 1105 extra leading samples). Mono sources are detected from
// the first frame header's channel mode and returned as one channel.
func decodeMP3(data []byte, o *Options) (clip *Clip, err error) {
	h, ok := parseMP3Header(data)
	if !ok {
		return nil, errorf(KindMalformed, "ref_audio MP3 has no valid frame header")
	}
	if h.layer != 3 {
		return nil, errorf(KindUnsupported, "ref_audio is MPEG layer %d audio; only MP3 (layer III) is supported", h.layer)
	}
	channels := 2
	if h.mono {
		channels = 1
	}
	if err := checkFormat(channels, h.rate); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil { // see parseFLACFrame
			clip, err = nil, errorf(KindMalformed, "ref_audio MP3 data is corrupt (decoder panic: %v)", p)
		}
	}()
	d, err := mp3.NewDecoder(&opaqueReader{b: data})
	if err != nil {
		return nil, errorf(KindMalformed, "ref_audio MP3 data is corrupt: %v", err)
	}
	if d.SampleRate() != h.rate {
		return nil, errorf(KindMalformed, "ref_audio MP3 sample rate is inconsistent (%d vs %d Hz)", d.SampleRate(), h.rate)
	}
	maxFrames := o.maxFrames(h.rate)
	samples := make([][]float32, channels)
	for c := range samples {
		samples[c] = make([]float32, 0, min(int64(len(data))*12, maxFrames))
	}
	buf := make([]byte, 1<<14)
	var frames int64
	pending := 0 // bytes of an incomplete 4-byte frame kept at buf[:pending]
	for {
		n, rerr := d.Read(buf[pending:])
		n += pending
		whole := n &^ 3
		if frames+int64(whole/4) > maxFrames {
			return nil, o.errTooLong()
		}
		for i := 0; i < whole; i += 4 {
			l := int16(uint16(buf[i]) | uint16(buf[i+1])<<8)
			samples[0] = append(samples[0], float32(l)/32768)
			if channels == 2 {
				r := int16(uint16(buf[i+2]) | uint16(buf[i+3])<<8)
				samples[1] = append(samples[1], float32(r)/32768)
			}
		}
		frames += int64(whole / 4)
		pending = copy(buf, buf[whole:n])
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			if frames > 0 {
				break // keep what decoded before the damage, like a truncated file
			}
			return nil, errorf(KindMalformed, "ref_audio MP3 data is corrupt: %v", rerr)
		}
	}
	version := "MPEG-1"
	switch {
	case h.rate <= 12000:
		version = "MPEG-2.5"
	case h.rate < 32000:
		version = "MPEG-2"
	}
	return &Clip{SampleRate: h.rate, Samples: samples, Format: fmt.Sprintf("MP3 (%s layer III)", version)}, nil
}
