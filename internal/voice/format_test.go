package voice

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestDecodeHandBuilt decodes a file built from the documented layout, not
// by encodeFile.
func TestDecodeHandBuilt(t *testing.T) {
	b := rawFile(1, -1, metaJSON(t, goodMeta()), goodCodes())
	v, err := decodeFile(b, DefaultMaxFrames)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b[:len(b)-32])
	want := &Voice{
		Name:           "bob",
		Key:            "bob@" + hex.EncodeToString(sum[:8]),
		Model:          testModel,
		Created:        time.Date(2025, 1, 2, 3, 4, 5, 5e8, time.UTC),
		Codes:          [][]int{{1, 2, 3}, {1023, 0, 65535}},
		Duration:       0.16,
		SourceRate:     48000,
		SourceChannels: 1,
		SourceFormat:   "flac",
		RefText:        "hi",
	}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("decoded voice (-want +got):\n%s", d)
	}
	// Unknown metadata keys are ignored; optional ones may be absent.
	m := withMeta(withMeta(goodMeta(), "future_field", []int{1, 2}), "ref_text", nil)
	m = withMeta(withMeta(m, "source_format", nil), "duration_s", nil)
	v, err = decodeFile(rawFile(1, -1, metaJSON(t, m), goodCodes()), DefaultMaxFrames)
	if err != nil {
		t.Fatalf("decode with unknown and absent keys: %v", err)
	}
	if v.RefText != "" || v.SourceFormat != "" || v.Duration != 0 {
		t.Errorf("absent keys decoded as %q %q %v", v.RefText, v.SourceFormat, v.Duration)
	}
}

// TestEncodeLayout parses encodeFile's output independently.
func TestEncodeLayout(t *testing.T) {
	v := testVoice("alice", 5, 16, 1)
	b, key, err := encodeFile(&v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:8]) != "NVXVOICE" || binary.LittleEndian.Uint32(b[8:]) != 1 {
		t.Fatalf("header % x", b[:12])
	}
	m := int(binary.LittleEndian.Uint32(b[12:]))
	var meta map[string]any
	if err := json.Unmarshal(b[16:16+m], &meta); err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]any{
		"name": "alice", "created": "2025-03-04T05:06:07.123456789Z", "model": testModel,
		"frames": 5.0, "codebooks": 16.0, "duration_s": 0.4, "source_sample_rate": 44100.0,
		"source_channels": 2.0, "source_format": "wav", "ref_text": v.RefText,
	}
	if d := cmp.Diff(wantMeta, meta); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	codes := b[16+m : len(b)-32]
	if len(codes) != 5*16*2 {
		t.Fatalf("%d code bytes", len(codes))
	}
	for i := range 5 {
		for j := range 16 {
			if got := int(binary.LittleEndian.Uint16(codes[2*(i*16+j):])); got != v.Codes[i][j] {
				t.Fatalf("code [%d][%d] = %d, want %d", i, j, got, v.Codes[i][j])
			}
		}
	}
	sum := sha256.Sum256(b[:len(b)-32])
	if !bytes.Equal(sum[:], b[len(b)-32:]) {
		t.Error("checksum trailer is not the SHA-256 of the content")
	}
	if want := "alice@" + hex.EncodeToString(sum[:8]); key != want {
		t.Errorf("key %q, want %q", key, want)
	}
	got, err := decodeFile(b, DefaultMaxFrames)
	if err != nil {
		t.Fatal(err)
	}
	v.Key = key
	if d := cmp.Diff(&v, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := rawFile(1, -1, metaJSON(t, goodMeta()), goodCodes())
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	meta := func(m map[string]any) []byte { return rawFile(1, -1, metaJSON(t, m), goodCodes()) }
	tests := []struct {
		name string
		b    []byte
		kind fileErrorKind
		msg  string
	}{
		{"empty", nil, fileTruncated, "empty"},
		{"partial magic", []byte("NVX"), fileTruncated, "truncated"},
		{"magic only", []byte("NVXVOICE"), fileTruncated, "truncated"},
		{"header cut", good[:14], fileTruncated, "truncated"},
		{"header only", good[:16], fileTruncated, "truncated"},
		{"cut in metadata", good[:40], fileTruncated, "truncated"},
		{"cut in codes", good[:len(good)-34], fileTruncated, "truncated"},
		{"last byte missing", good[:len(good)-1], fileChecksum, "checksum"},
		{"extra byte", append(bytes.Clone(good), 0), fileChecksum, "checksum"},
		{"wav file", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), fileForeign, "not a nanovox voice file"},
		{"text", []byte("hello, this is not a voice file at all, but it is long enough"), fileForeign, "wrong magic"},
		{"lower-case magic", append([]byte("nvxvoice"), good[8:]...), fileForeign, "wrong magic"},
		{"flipped magic", flip(0), fileForeign, "wrong magic"},
		{"flipped metadata", flip(20), fileChecksum, "checksum"},
		{"flipped code", flip(len(good) - 33), fileChecksum, "checksum"},
		{"flipped checksum", flip(len(good) - 1), fileChecksum, "checksum"},
		{"version 0", rawFile(0, -1, metaJSON(t, goodMeta()), goodCodes()), fileCorrupt, "version 0"},
		{"version 2", rawFile(2, -1, metaJSON(t, goodMeta()), goodCodes()), fileNewVersion, "newer"},
		{"future version, other layout", append([]byte("NVXVOICE\x07\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 100)...), fileNewVersion, "version 7"},
		{"version 2^32-1", rawFile(math.MaxUint32, 0, nil, nil), fileNewVersion, "upgrade"},
		{"huge metadata length", rawFile(1, math.MaxUint32, metaJSON(t, goodMeta()), goodCodes()), fileCorrupt, "metadata length"},
		{"metadata length 64Ki+1", rawFile(1, 64<<10+1, nil, nil), fileCorrupt, "metadata length"},
		{"metadata length 0", rawFile(1, 0, nil, goodCodes()), fileCorrupt, "metadata length"},
		{"metadata past end", rawFile(1, 60000, metaJSON(t, goodMeta()), goodCodes()), fileTruncated, "declares"},
		{"metadata not JSON", rawFile(1, -1, []byte("{not json}"), goodCodes()), fileCorrupt, "metadata"},
		{"metadata array", rawFile(1, -1, []byte("[1,2,3]"), goodCodes()), fileCorrupt, "metadata"},
		{"metadata null", rawFile(1, -1, []byte("null"), goodCodes()), fileCorrupt, "name"},
		{"metadata trailing garbage", rawFile(1, -1, append(metaJSON(t, goodMeta()), "xx"...), goodCodes()), fileCorrupt, "metadata"},
		{"metadata length off by one", rawFile(1, int64(len(metaJSON(t, goodMeta())))+1, metaJSON(t, goodMeta()), goodCodes()), fileCorrupt, "metadata"},
		{"no name", meta(withMeta(goodMeta(), "name", nil)), fileCorrupt, "empty"},
		{"bad name", meta(withMeta(goodMeta(), "name", "../etc/passwd")), fileCorrupt, "invalid"},
		{"name wrong type", meta(withMeta(goodMeta(), "name", 7)), fileCorrupt, "metadata"},
		{"no model", meta(withMeta(goodMeta(), "model", nil)), fileCorrupt, "model"},
		{"model with newline", meta(withMeta(goodMeta(), "model", "a\nb")), fileCorrupt, "model"},
		{"no created", meta(withMeta(goodMeta(), "created", nil)), fileCorrupt, "RFC 3339"},
		{"created not a time", meta(withMeta(goodMeta(), "created", "yesterday")), fileCorrupt, "RFC 3339"},
		{"zero frames", rawFile(1, -1, metaJSON(t, withMeta(goodMeta(), "frames", 0)), nil), fileCorrupt, "0 frames"},
		{"negative frames", meta(withMeta(goodMeta(), "frames", -2)), fileCorrupt, "frames"},
		{"fractional frames", meta(withMeta(goodMeta(), "frames", 1.5)), fileCorrupt, "metadata"},
		{"huge frames", meta(withMeta(goodMeta(), "frames", 1e18)), fileCorrupt, "bytes of codes"},
		{"frames overflow int", rawFile(1, -1, []byte(`{"name":"bob","frames":1e30,"codebooks":3}`), goodCodes()), fileCorrupt, "metadata"},
		{"more frames than codes", meta(withMeta(goodMeta(), "frames", 3)), fileCorrupt, "bytes of codes"},
		{"fewer frames than codes", meta(withMeta(goodMeta(), "frames", 1)), fileCorrupt, "bytes of codes"},
		{"zero codebooks", meta(withMeta(goodMeta(), "codebooks", 0)), fileCorrupt, "codebooks"},
		{"65 codebooks", meta(withMeta(goodMeta(), "codebooks", 65)), fileCorrupt, "codebooks"},
		{"odd code bytes", rawFile(1, -1, metaJSON(t, goodMeta()), goodCodes()[:11]), fileCorrupt, "bytes of codes"},
		{"negative duration", meta(withMeta(goodMeta(), "duration_s", -1)), fileCorrupt, "duration"},
		{"huge duration", meta(withMeta(goodMeta(), "duration_s", 1e300)), fileCorrupt, "duration"},
		{"negative rate", meta(withMeta(goodMeta(), "source_sample_rate", -1)), fileCorrupt, "sample rate"},
		{"negative channels", meta(withMeta(goodMeta(), "source_channels", -1)), fileCorrupt, "channel"},
		{"long ref_text", meta(withMeta(goodMeta(), "ref_text", strings.Repeat("a", maxRefText+1))), fileCorrupt, "ref_text"},
		{"long source_format", meta(withMeta(goodMeta(), "source_format", strings.Repeat("a", 33))), fileCorrupt, "source format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeFile(tc.b, DefaultMaxFrames)
			var fe *fileError
			if !errors.As(err, &fe) {
				t.Fatalf("decodeFile = %v, %v; want *fileError", v, err)
			}
			if fe.kind != tc.kind || !strings.Contains(fe.msg, tc.msg) {
				t.Errorf("decodeFile: kind %d %q; want kind %d containing %q", fe.kind, fe.msg, tc.kind, tc.msg)
			}
		})
	}
}

func TestDecodeFrameLimit(t *testing.T) {
	v := testVoice("long", 50, 4, 3)
	b, _, err := encodeFile(&v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeFile(b, 50); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = decodeFile(b, 49)
	var fe *fileError
	if !errors.As(err, &fe) || fe.kind != fileTooLarge {
		t.Fatalf("over the limit: %v, want fileTooLarge", err)
	}
}

// TestEncodeExtremes round-trips values at the edges of what a file holds.
func TestEncodeExtremes(t *testing.T) {
	v := testVoice("edge", 1, MaxCodebooks, 0)
	for j := range v.Codes[0] {
		v.Codes[0][j] = MaxCode - j
	}
	v.RefText = strings.Repeat("\x00\"\\<>&\u2028é", maxRefText/12)
	v.Model = strings.Repeat("\"", maxModelLen)
	v.Created = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	v.Duration = math.SmallestNonzeroFloat64
	if err := checkVoice(&v, 1); err != nil {
		t.Fatal(err)
	}
	b, key, err := encodeFile(&v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeFile(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	v.Key = key
	if d := cmp.Diff(&v, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}
