package audio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// WAV format tags we decode.
const (
	wavPCM        = 0x0001
	wavFloat      = 0x0003
	wavALaw       = 0x0006
	wavMuLaw      = 0x0007
	wavExtensible = 0xFFFE
)

// ksDataFormatSuffix is the tail shared by every KSDATAFORMAT_SUBTYPE_* GUID
// whose first field is a WAVE format tag.
var ksDataFormatSuffix = []byte{0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

type wavFormat struct {
	tag        uint16 // after resolving WAVE_FORMAT_EXTENSIBLE
	channels   int
	rate       int
	blockAlign int
	bits       int // container bits per sample
}

// decodeWAV reads RIFF (little-endian), RIFX (big-endian) and RF64/BW64 WAVE
// files. Chunks may come in any order; a data chunk whose size is 0 or
// 0xFFFFFFFF (streaming writers) or larger than the bytes present extends to
// the end of the input, and only whole frames are used.
func decodeWAV(data []byte, o *Options) (*Clip, error) {
	var order binary.ByteOrder = binary.LittleEndian
	container := string(data[:4])
	if container == "RIFX" {
		order = binary.BigEndian
	}
	rf64 := container == "RF64" || container == "BW64"

	var (
		fmtBody            []byte
		audio              []byte
		haveData           bool
		ds64Data           uint64
		haveDS64           bool
		badChunk           string // first chunk whose size ran past the input
		badSize, badRemain uint64
	)
	off := 12
scan:
	for off+8 <= len(data) {
		id := string(data[off : off+4])
		size := uint64(order.Uint32(data[off+4:]))
		body := off + 8
		remain := uint64(len(data) - body)
		switch id {
		case "data":
			n := size
			if rf64 && size == 0xFFFFFFFF && haveDS64 {
				n = ds64Data
			}
			toEOF := size == 0 || n == 0xFFFFFFFF || n > remain
			if toEOF {
				n = remain
			}
			if !haveData {
				audio, haveData = data[body:body+int(n)], true
			}
			if toEOF {
				break scan
			}
		case "fmt ":
			if size > remain {
				return nil, errorf(KindMalformed, "ref_audio WAV fmt chunk declares %d bytes but only %d remain", size, remain)
			}
			if fmtBody == nil {
				fmtBody = data[body : body+int(size)]
			}
		case "ds64":
			if rf64 && size >= 28 && size <= remain {
				ds64Data = binary.LittleEndian.Uint64(data[body+8:])
				haveDS64 = true
			}
		}
		if size > remain {
			badChunk, badSize, badRemain = id, size, remain
			break
		}
		off = body + int(size) + int(size&1)
	}

	if fmtBody == nil || !haveData {
		missing := "fmt"
		if fmtBody != nil {
			missing = "data"
		}
		if badChunk != "" {
			return nil, errorf(KindMalformed, "ref_audio WAV has no %s chunk: chunk %q declares %d bytes but only %d remain", missing, printable([]byte(badChunk)), badSize, badRemain)
		}
		return nil, errorf(KindMalformed, "ref_audio WAV has no %s chunk", missing)
	}
	f, err := parseWAVFormat(fmtBody, order)
	if err != nil {
		return nil, err
	}
	frames := len(audio) / f.blockAlign
	if err := o.checkDuration(int64(frames), f.rate); err != nil && frames > 0 {
		return nil, err // before allocating anything for the samples
	}
	samples := make([][]float32, f.channels)
	for c := range samples {
		samples[c] = make([]float32, frames)
	}
	if err := convertWAV(samples, audio[:frames*f.blockAlign], f, order); err != nil {
		return nil, err
	}
	name := container
	if name == "RIFF" || name == "RIFX" {
		name = "WAV"
	}
	return &Clip{SampleRate: f.rate, Samples: samples, Format: name + " " + f.describe()}, nil
}

func parseWAVFormat(b []byte, order binary.ByteOrder) (wavFormat, error) {
	if len(b) < 16 {
		return wavFormat{}, errorf(KindMalformed, "ref_audio WAV fmt chunk is %d bytes; need at least 16", len(b))
	}
	f := wavFormat{
		tag:        order.Uint16(b[0:]),
		channels:   int(order.Uint16(b[2:])),
		rate:       int(order.Uint32(b[4:])),
		blockAlign: int(order.Uint16(b[12:])),
		bits:       int(order.Uint16(b[14:])),
	}
	if err := checkFormat(f.channels, f.rate); err != nil {
		return f, err
	}
	if f.tag == wavExtensible {
		if len(b) < 40 || order.Uint16(b[16:]) < 22 {
			return f, errorf(KindMalformed, "ref_audio WAV extensible fmt chunk is too short (%d bytes; need 40)", len(b))
		}
		valid := int(order.Uint16(b[18:]))
		d1, d2, d3 := order.Uint32(b[24:]), order.Uint16(b[28:]), order.Uint16(b[30:])
		if d1>>16 != 0 || d2 != 0 || d3 != 0x0010 || !bytes.Equal(b[32:40], ksDataFormatSuffix) {
			return f, errorf(KindUnsupported, "ref_audio WAV sub-format {%08X-%04X-%04X-%X} is not supported; use PCM or float", d1, d2, d3, b[32:40])
		}
		if valid > f.bits {
			return f, errorf(KindMalformed, "ref_audio WAV declares %d valid bits in a %d-bit container", valid, f.bits)
		}
		f.tag = uint16(d1)
	}
	if f.blockAlign == 0 || f.blockAlign%f.channels != 0 {
		return f, errorf(KindMalformed, "ref_audio WAV block align %d does not fit %d channels", f.blockAlign, f.channels)
	}
	width := f.blockAlign / f.channels // bytes per sample
	if f.bits == 0 {
		return f, errorf(KindMalformed, "ref_audio WAV has 0 bits per sample")
	}
	switch f.tag {
	case wavPCM:
		if f.bits > 32 {
			return f, errorf(KindUnsupported, "ref_audio is %d-bit integer PCM; at most 32 bits is supported", f.bits)
		}
	case wavFloat:
		if f.bits != 32 && f.bits != 64 {
			return f, errorf(KindUnsupported, "ref_audio is %d-bit float; only 32- and 64-bit float are supported", f.bits)
		}
	case wavALaw, wavMuLaw:
		if f.bits != 8 {
			return f, errorf(KindMalformed, "ref_audio G.711 WAV declares %d bits per sample; expected 8", f.bits)
		}
	default:
		return f, errorf(KindUnsupported, "ref_audio WAV codec %s is not supported; use PCM, float, A-law or µ-law", wavCodecName(f.tag))
	}
	if (f.bits+7)/8 != width {
		return f, errorf(KindMalformed, "ref_audio WAV block align %d does not match %d channels of %d bits", f.blockAlign, f.channels, f.bits)
	}
	f.bits = width * 8 // samples are left-justified in their container
	return f, nil
}

func (f wavFormat) describe() string {
	switch f.tag {
	case wavFloat:
		return fmt.Sprintf("float %d-bit", f.bits)
	case wavALaw:
		return "A-law"
	case wavMuLaw:
		return "µ-law"
	}
	return fmt.Sprintf("PCM %d-bit", f.bits)
}

func wavCodecName(tag uint16) string {
	names := map[uint16]string{
		0x0002: "MS ADPCM", 0x0011: "IMA ADPCM", 0x0031: "GSM 6.10", 0x0050: "MPEG",
		0x0055: "MP3", 0x00FF: "AAC", 0x1610: "AAC", 0x2000: "AC-3", 0xF1AC: "FLAC",
	}
	if n, ok := names[tag]; ok {
		return fmt.Sprintf("0x%04X (%s)", tag, n)
	}
	return fmt.Sprintf("0x%04X", tag)
}

// convertWAV de-interleaves whole frames of b into planar dst.
func convertWAV(dst [][]float32, b []byte, f wavFormat, order binary.ByteOrder) error {
	nch := f.channels
	width := f.bits / 8
	be := order == binary.BigEndian
	if f.tag == wavPCM && width == 2 && !be {
		// The common case (every demo clip), without the per-sample switch.
		for n := range dst[0] {
			for c := 0; c < nch; c++ {
				i := 2 * (n*nch + c)
				dst[c][n] = float32(int16(uint16(b[i])|uint16(b[i+1])<<8)) / (1 << 15)
			}
		}
		return nil
	}
	i := 0
	for n := 0; n < len(dst[0]); n++ {
		for c := 0; c < nch; c++ {
			s := b[i : i+width]
			i += width
			var v float32
			switch f.tag {
			case wavPCM:
				v = pcmSample(s, be)
			case wavFloat:
				var x float64
				if width == 4 {
					x = float64(math.Float32frombits(order.Uint32(s)))
				} else {
					x = math.Float64frombits(order.Uint64(s))
				}
				v = float32(x)
				if math.IsNaN(x) || math.IsInf(float64(v), 0) {
					return errorf(KindNonFinite, "ref_audio contains a non-finite sample (NaN or infinity) at %.3f s", float64(n)/float64(f.rate))
				}
			case wavALaw:
				v = float32(alawToLinear(s[0])) / 32768
			case wavMuLaw:
				v = float32(ulawToLinear(s[0])) / 32768
			}
			dst[c][n] = v
		}
	}
	return nil
}

// pcmSample converts one integer sample of 1–4 bytes: x / 2^(8·len-1), with
// 8-bit samples unsigned ((x-128)/128) as in every WAV reader.
func pcmSample(s []byte, be bool) float32 {
	var u uint32
	if be {
		for _, c := range s {
			u = u<<8 | uint32(c)
		}
	} else {
		for k := len(s) - 1; k >= 0; k-- {
			u = u<<8 | uint32(s[k])
		}
	}
	switch len(s) {
	case 1:
		return float32(int32(u)-128) / 128
	case 2:
		return float32(int16(u)) / (1 << 15)
	case 3:
		return float32(int32(u<<8)>>8) / (1 << 23)
	default:
		return float32(int32(u)) / (1 << 31)
	}
}

// ulawToLinear decodes G.711 µ-law to 16-bit linear (ITU-T G.711, ±32124).
func ulawToLinear(b byte) int16 {
	b = ^b
	t := (int(b&0x0F)<<3 + 0x84) << (uint(b&0x70) >> 4)
	if b&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

// alawToLinear decodes G.711 A-law to 16-bit linear (ITU-T G.711, ±32256).
func alawToLinear(b byte) int16 {
	b ^= 0x55
	t := int(b&0x0F) << 4
	switch seg := int(b&0x70) >> 4; seg {
	case 0:
		t += 8
	case 1:
		t += 0x108
	default:
		t = (t + 0x108) << (seg - 1)
	}
	if b&0x80 != 0 {
		return int16(t)
	}
	return int16(-t)
}
