package voice

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// Format constants; see the package documentation.
const (
	fileMagic     = "NVXVOICE"
	fileVersion   = 1
	headerLen     = 16
	sumLen        = sha256.Size
	minMetaLen    = 2 // "{}"
	maxMetaLen    = 64 << 10
	fileExt       = ".voice"
	minFileLen    = headerLen + minMetaLen + sumLen
	maxRefText    = 4096
	maxModelLen   = 256
	maxFormatLen  = 32
	maxSourceRate = 1 << 24
	maxChannels   = 1 << 10
	maxDuration   = 24 * 3600.0
)

// MaxCodebooks is the most codes per frame a voice may have.
const MaxCodebooks = 64

// MaxCode is the largest code value a voice file can hold (codes are uint16).
const MaxCode = math.MaxUint16

// fileMeta is the JSON metadata of a voice file.
type fileMeta struct {
	Name           string  `json:"name"`
	Created        string  `json:"created"`
	Model          string  `json:"model"`
	Frames         int     `json:"frames"`
	Codebooks      int     `json:"codebooks"`
	Duration       float64 `json:"duration_s"`
	SourceRate     int     `json:"source_sample_rate"`
	SourceChannels int     `json:"source_channels"`
	SourceFormat   string  `json:"source_format,omitempty"`
	RefText        string  `json:"ref_text,omitempty"`
}

// fileLen is the size of the file encoding a voice of frames×codebooks codes
// with metaLen bytes of metadata.
func fileLen(metaLen, frames, codebooks int) int64 {
	return headerLen + int64(metaLen) + 2*int64(frames)*int64(codebooks) + sumLen
}

// maxFileLen is the largest valid file with at most maxFrames frames.
func maxFileLen(maxFrames int) int64 { return fileLen(maxMetaLen, maxFrames, MaxCodebooks) }

// encodeFile returns the file bytes of v, which must have passed checkVoice,
// and the voice's key.
func encodeFile(v *Voice) ([]byte, string, error) {
	meta := fileMeta{
		Name:           v.Name,
		Created:        v.Created.UTC().Format(time.RFC3339Nano),
		Model:          v.Model,
		Frames:         len(v.Codes),
		Codebooks:      len(v.Codes[0]),
		Duration:       v.Duration,
		SourceRate:     v.SourceRate,
		SourceChannels: v.SourceChannels,
		SourceFormat:   v.SourceFormat,
		RefText:        v.RefText,
	}
	var mb bytes.Buffer
	enc := json.NewEncoder(&mb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(meta); err != nil {
		return nil, "", fmt.Errorf("encode voice %q: %w", v.Name, err)
	}
	if mb.Len() > maxMetaLen {
		return nil, "", fmt.Errorf("encode voice %q: metadata is %d bytes, over %d", v.Name, mb.Len(), maxMetaLen)
	}
	b := make([]byte, 0, fileLen(mb.Len(), meta.Frames, meta.Codebooks))
	b = append(b, fileMagic...)
	b = binary.LittleEndian.AppendUint32(b, fileVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(mb.Len()))
	b = append(b, mb.Bytes()...)
	for _, frame := range v.Codes {
		for _, c := range frame {
			b = binary.LittleEndian.AppendUint16(b, uint16(c))
		}
	}
	sum := sha256.Sum256(b)
	b = append(b, sum[:]...)
	return b, makeKey(v.Name, sum[:]), nil
}

func makeKey(name string, sum []byte) string {
	return name + "@" + hex.EncodeToString(sum[:8])
}

// decodeFile parses and checks a voice file. Voices of more than maxFrames
// frames are rejected. Every error is a *fileError.
func decodeFile(b []byte, maxFrames int) (*Voice, error) {
	if len(b) == 0 {
		return nil, fileErrorf(fileTruncated, "empty file")
	}
	if len(b) < len(fileMagic) || string(b[:len(fileMagic)]) != fileMagic {
		if len(b) < len(fileMagic) && string(b) == fileMagic[:len(b)] {
			return nil, fileErrorf(fileTruncated, "truncated: %d bytes", len(b))
		}
		return nil, fileErrorf(fileForeign, "not a nanovox voice file (wrong magic)")
	}
	if len(b) < headerLen {
		return nil, fileErrorf(fileTruncated, "truncated: %d bytes, shorter than the header", len(b))
	}
	version := binary.LittleEndian.Uint32(b[8:])
	switch {
	case version == 0:
		return nil, fileErrorf(fileCorrupt, "corrupt: format version 0")
	case version > fileVersion:
		return nil, fileErrorf(fileNewVersion, "format version %d is newer than this nanovox reads (%d); upgrade nanovox to use it", version, fileVersion)
	}
	metaLen := int64(binary.LittleEndian.Uint32(b[12:]))
	if metaLen < minMetaLen || metaLen > maxMetaLen {
		return nil, fileErrorf(fileCorrupt, "corrupt: metadata length %d outside [%d, %d]", metaLen, minMetaLen, maxMetaLen)
	}
	if int64(len(b)) < headerLen+metaLen+sumLen {
		return nil, fileErrorf(fileTruncated, "truncated: %d bytes, but the header declares %d bytes of metadata", len(b), metaLen)
	}
	body, tail := b[:len(b)-sumLen], b[len(b)-sumLen:]
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], tail) {
		return nil, fileErrorf(fileChecksum, "checksum mismatch: the file is corrupt or truncated")
	}

	var meta fileMeta
	if err := json.Unmarshal(body[headerLen:headerLen+metaLen], &meta); err != nil {
		return nil, fileErrorf(fileCorrupt, "corrupt metadata: %v", err)
	}
	if err := ValidName(meta.Name); err != nil {
		return nil, fileErrorf(fileCorrupt, "corrupt metadata: %v", err)
	}
	if meta.Codebooks < 1 || meta.Codebooks > MaxCodebooks {
		return nil, fileErrorf(fileCorrupt, "corrupt metadata: %d codebooks, outside [1, %d]", meta.Codebooks, MaxCodebooks)
	}
	if meta.Frames < 1 {
		return nil, fileErrorf(fileCorrupt, "corrupt metadata: %d frames", meta.Frames)
	}
	codes := body[headerLen+metaLen:]
	if int64(meta.Frames) > int64(len(codes))/int64(2*meta.Codebooks) || len(codes) != 2*meta.Frames*meta.Codebooks {
		return nil, fileErrorf(fileCorrupt, "corrupt: %d bytes of codes for %d frames of %d codebooks", len(codes), meta.Frames, meta.Codebooks)
	}
	if meta.Frames > maxFrames {
		return nil, fileErrorf(fileTooLarge, "voice %q has %d frames, more than the limit of %d", meta.Name, meta.Frames, maxFrames)
	}
	created, err := time.Parse(time.RFC3339Nano, meta.Created)
	if err != nil {
		return nil, fileErrorf(fileCorrupt, "corrupt metadata: created time %q is not RFC 3339", meta.Created)
	}

	v := &Voice{
		Name:           meta.Name,
		Model:          meta.Model,
		Created:        created.UTC(),
		Codes:          newCodes(meta.Frames, meta.Codebooks),
		Duration:       meta.Duration,
		SourceRate:     meta.SourceRate,
		SourceChannels: meta.SourceChannels,
		SourceFormat:   meta.SourceFormat,
		RefText:        meta.RefText,
	}
	for i, frame := range v.Codes {
		for j := range frame {
			frame[j] = int(binary.LittleEndian.Uint16(codes[2*(i*meta.Codebooks+j):]))
		}
	}
	if err := checkVoice(v, maxFrames); err != nil {
		var ie *InvalidError
		if errors.As(err, &ie) {
			return nil, fileErrorf(fileCorrupt, "invalid content: %s", ie.Msg)
		}
		return nil, fileErrorf(fileCorrupt, "invalid content: %v", err)
	}
	v.Key = makeKey(v.Name, sum[:])
	return v, nil
}

// newCodes returns a frames×codebooks matrix backed by one allocation. Each
// row's capacity ends at its length, so appending to a row cannot clobber
// the next.
func newCodes(frames, codebooks int) [][]int {
	slab := make([]int, frames*codebooks)
	rows := make([][]int, frames)
	for i := range rows {
		rows[i] = slab[i*codebooks : (i+1)*codebooks : (i+1)*codebooks]
	}
	return rows
}

// checkVoice validates everything about v that the file format and the
// store require, except the store's codec options. Errors are
// *InvalidError.
func checkVoice(v *Voice, maxFrames int) error {
	if err := ValidName(v.Name); err != nil {
		return err
	}
	if err := checkCodes(v.Name, v.Codes, maxFrames, 0, MaxCode+1); err != nil {
		return err
	}
	switch {
	case v.Model == "":
		return invalidf("model", "voice %q has no model identity: say which codec made its codes", v.Name)
	case len(v.Model) > maxModelLen || !printable(v.Model):
		return invalidf("model", "voice %q: model identity %s must be at most %d bytes of printable UTF-8", v.Name, quoteShort(v.Model), maxModelLen)
	}
	if v.Created.IsZero() || v.Created.Year() < 1 || v.Created.Year() > 9999 {
		return invalidf("created", "voice %q: created time %v is outside years 1-9999", v.Name, v.Created)
	}
	if !(v.Duration >= 0 && v.Duration <= maxDuration) {
		return invalidf("source", "voice %q: source duration %v s is outside [0, %v]", v.Name, v.Duration, maxDuration)
	}
	if v.SourceRate < 0 || v.SourceRate > maxSourceRate {
		return invalidf("source", "voice %q: source sample rate %d is outside [0, %d]", v.Name, v.SourceRate, maxSourceRate)
	}
	if v.SourceChannels < 0 || v.SourceChannels > maxChannels {
		return invalidf("source", "voice %q: source channel count %d is outside [0, %d]", v.Name, v.SourceChannels, maxChannels)
	}
	if len(v.SourceFormat) > maxFormatLen || !printable(v.SourceFormat) {
		return invalidf("source", "voice %q: source format %s must be at most %d bytes of printable UTF-8", v.Name, quoteShort(v.SourceFormat), maxFormatLen)
	}
	if len(v.RefText) > maxRefText {
		return invalidf("ref_text", "voice %q: ref_text is %d bytes; the limit is %d", v.Name, len(v.RefText), maxRefText)
	}
	if !utf8.ValidString(v.RefText) {
		return invalidf("ref_text", "voice %q: ref_text is not valid UTF-8", v.Name)
	}
	return nil
}

// checkCodes checks that codes is a non-empty frames×codebooks matrix with
// at most maxFrames frames, codebooks codes per frame (any number up to
// MaxCodebooks if codebooks is 0) and every code in [0, codebookSize).
func checkCodes(name string, codes [][]int, maxFrames, codebooks, codebookSize int) error {
	if len(codes) == 0 {
		return invalidf("codes", "voice %q has no codes: the reference clip encoded to 0 frames", name)
	}
	if len(codes) > maxFrames {
		return invalidf("codes", "voice %q has %d frames; the limit is %d: use a shorter reference clip", name, len(codes), maxFrames)
	}
	width := len(codes[0])
	switch {
	case codebooks > 0 && width != codebooks:
		return invalidf("codes", "voice %q has %d codes per frame; the codec uses %d", name, width, codebooks)
	case width < 1 || width > MaxCodebooks:
		return invalidf("codes", "voice %q has %d codes per frame; it must be 1-%d", name, width, MaxCodebooks)
	}
	for i, frame := range codes {
		if len(frame) != width {
			return invalidf("codes", "voice %q: frame %d has %d codes but frame 0 has %d", name, i, len(frame), width)
		}
		for j, c := range frame {
			if c < 0 || c >= codebookSize {
				return invalidf("codes", "voice %q: frame %d codebook %d has code %d, outside [0, %d)", name, i, j, c, codebookSize)
			}
		}
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
