package voice

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"
)

const testModel = "moss-audio-tokenizer-nano/16x1024"

// testVoice returns a valid voice of frames×codebooks codes in [0, 1024),
// distinct for each seed.
func testVoice(name string, frames, codebooks, seed int) Voice {
	codes := make([][]int, frames)
	for i := range codes {
		codes[i] = make([]int, codebooks)
		for j := range codes[i] {
			codes[i][j] = (seed*7919 + i*31 + j*17) % 1024
		}
	}
	return Voice{
		Name:           name,
		Model:          testModel,
		Created:        time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
		Codes:          codes,
		Duration:       float64(frames) / 12.5,
		SourceRate:     44100,
		SourceChannels: 2,
		SourceFormat:   "wav",
		RefText:        "Hello, world — ünïcode.",
	}
}

// rawFile builds a voice file by hand, following the documented layout,
// with a correct checksum. metaLen < 0 means len(meta).
func rawFile(version uint32, metaLen int64, meta []byte, codes []byte) []byte {
	if metaLen < 0 {
		metaLen = int64(len(meta))
	}
	b := []byte("NVXVOICE")
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(metaLen))
	b = append(b, meta...)
	b = append(b, codes...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// metaJSON marshals a metadata object for rawFile.
func metaJSON(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goodMeta is the metadata of a 2-frame, 3-codebook voice "bob".
func goodMeta() map[string]any {
	return map[string]any{
		"name": "bob", "created": "2025-01-02T03:04:05.5Z", "model": testModel,
		"frames": 2, "codebooks": 3, "duration_s": 0.16,
		"source_sample_rate": 48000, "source_channels": 1, "source_format": "flac",
		"ref_text": "hi",
	}
}

// goodCodes are the codes of goodMeta: [[1 2 3] [1023 0 65535]].
func goodCodes() []byte {
	var b []byte
	for _, c := range []uint16{1, 2, 3, 1023, 0, 65535} {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return b
}

func withMeta(m map[string]any, k string, v any) map[string]any {
	c := map[string]any{}
	for kk, vv := range m {
		c[kk] = vv
	}
	if v == nil {
		delete(c, k)
	} else {
		c[k] = v
	}
	return c
}
