package voice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeVoiceFile checks that the voice file parser never panics, only
// returns *fileError, and that whatever it accepts is a valid voice that
// round-trips through encodeFile.
func FuzzDecodeVoiceFile(f *testing.F) {
	good := rawFile(1, -1, metaJSON(f, goodMeta()), goodCodes())
	v := testVoice("seed", 3, 16, 1)
	enc, _, err := encodeFile(&v)
	if err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{
		nil,
		{0},
		[]byte("NVX"),
		[]byte("NVXVOICE"),
		good,
		enc,
		good[:16],
		good[:len(good)-1],
		append(bytes.Clone(good), 0xff),
		append([]byte("NVXVOICE\x02\x00\x00\x00"), good[12:]...),
		append([]byte("NVXVOICE\x00\x00\x00\x00"), good[12:]...),
		rawFile(1, math.MaxUint32, nil, nil),
		rawFile(1, 2, []byte("{}"), nil),
		rawFile(1, -1, []byte("null"), nil),
		rawFile(1, -1, []byte(`{"name":"bob","frames":1e18,"codebooks":64,"model":"m","created":"2025-01-01T00:00:00Z"}`), goodCodes()),
		rawFile(1, -1, []byte(`{"name":"bob","frames":-1,"codebooks":-1}`), nil),
		rawFile(1, -1, []byte(`{"name":"bob","frames":1,"codebooks":1,"model":"m","created":"2025-01-01T00:00:00Z"}`), []byte{0xff, 0xff}),
		rawFile(1, -1, []byte(`{"name":"bob","frames":1,"codebooks":1,"model":"m","created":"2025-01-01T00:00:00+05:30","ref_text":"\ud800"}`), []byte{1, 0}),
		rawFile(1, -1, []byte(`{"name":"..","frames":1,"codebooks":1,"model":"m","created":"2025-01-01T00:00:00Z"}`), []byte{1, 0}),
		rawFile(1, -1, []byte(`{"name":"bob","name":"con","frames":1,"codebooks":1,"model":"m","created":"2025-01-01T00:00:00Z"}`), []byte{1, 0}),
		rawFile(1, -1, []byte(`{"name":"bob","frames":1,"codebooks":1,"model":"m","created":"2025-01-01T00:00:00Z","duration_s":1e309}`), []byte{1, 0}),
		rawFile(1, -1, []byte(strings.Repeat("[", 10000)), nil),
		rawFile(1, -1, metaJSON(f, withMeta(goodMeta(), "ref_text", strings.Repeat("\x00", 5000))), goodCodes()),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeFile(b, DefaultMaxFrames)
		if err != nil {
			var fe *fileError
			if !errors.As(err, &fe) || fe.kind == 0 || fe.msg == "" {
				t.Fatalf("error %v (%T) is not a classified *fileError", err, err)
			}
			if v != nil {
				t.Fatal("voice returned with an error")
			}
			return
		}
		if err := checkVoice(v, DefaultMaxFrames); err != nil {
			t.Fatalf("decoded an invalid voice: %v", err)
		}
		if !strings.HasPrefix(v.Key, v.Name+"@") {
			t.Fatalf("key %q for %q", v.Key, v.Name)
		}
		if got := int64(len(b)); got != fileLen(int(binary.LittleEndian.Uint32(b[12:])), v.Frames(), v.Codebooks()) {
			t.Fatalf("accepted %d bytes for %d×%d codes", got, v.Frames(), v.Codebooks())
		}
		for _, row := range v.Codes {
			if cap(row) != len(row) {
				t.Fatal("row with spare capacity")
			}
		}
		again, _, err := encodeFile(v)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		w, err := decodeFile(again, DefaultMaxFrames)
		if err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		if d := cmp.Diff(v, w, cmpopts.IgnoreFields(Voice{}, "Key"), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("round trip (-first +second):\n%s", d)
		}
	})
}
