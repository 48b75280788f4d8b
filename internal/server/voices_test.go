package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/voice"
)

// multipartBody builds a multipart form; files maps field → content.
func multipartBody(fields map[string]string, files map[string][]byte) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for k, v := range files {
		fw, _ := w.CreateFormFile(k, "clip.wav")
		fw.Write(v)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func (ts *testServer) addVoice(t *testing.T, name string, clip []byte, extra map[string]string) *http.Response {
	t.Helper()
	f := map[string]string{"name": name}
	for k, v := range extra {
		f[k] = v
	}
	b, ct := multipartBody(f, map[string][]byte{"file": clip})
	r := ts.post(t, "/v1/audio/voices", b, "Content-Type", ct)
	// Callers look at the status; keep the body readable but closed.
	body := readAll(t, r)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

func (ts *testServer) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	r, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return r, readAll(t, r)
}

func (ts *testServer) del(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("DELETE", ts.URL+path, nil)
	r, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return r, readAll(t, r)
}

func TestVoicesLifecycle(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, serverOpts{dataDir: dir})
	r := ts.addVoice(t, "bob", refWAV, map[string]string{"ref_text": "hello there"})
	b := readAll(t, r)
	if r.StatusCode != 201 {
		t.Fatalf("add: %d %s", r.StatusCode, b)
	}
	var v voiceJSON
	json.Unmarshal(b, &v)
	if v.Name != "bob" || v.Frames != 12 || v.Duration != 1 || v.RefText != "hello there" || v.Created == 0 {
		t.Fatalf("added voice %+v", v)
	}
	// JSON upload too.
	jb, _ := json.Marshal(map[string]any{"name": "alice", "ref_audio": base64.StdEncoding.EncodeToString(refWAV)})
	if r := ts.post(t, "/v1/audio/voices", jb); r.StatusCode != 201 || readAll(t, r) == nil {
		t.Fatalf("json add: %d %s", r.StatusCode, readAll(t, r))
	}
	_, lb := ts.get(t, "/v1/audio/voices")
	var list struct{ Data []voiceJSON }
	json.Unmarshal(lb, &list)
	if len(list.Data) != 2 || list.Data[0].Name != "alice" || list.Data[1].Name != "bob" {
		t.Fatalf("list: %s", lb)
	}
	if r, gb := ts.get(t, "/v1/audio/voices/bob"); r.StatusCode != 200 || !bytes.Contains(gb, []byte(`"name":"bob"`)) {
		t.Fatalf("get: %d %s", r.StatusCode, gb)
	}
	// A saved voice speaks exactly like the same clip sent inline, and its
	// prefix is cached after the first use.
	inline := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"response_format": "pcm", "seed": 3})))
	saved1 := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": "bob", "response_format": "pcm", "seed": 3})))
	saved2 := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": "bob", "response_format": "pcm", "seed": 3})))
	if len(inline) == 0 || !bytes.Equal(inline, saved1) || !bytes.Equal(saved1, saved2) {
		t.Fatalf("saved voice output differs from inline (%d/%d/%d bytes)", len(inline), len(saved1), len(saved2))
	}
	if _, _, hits, _ := ts.eng.PrefixCacheStats(); hits < 1 {
		t.Fatal("second use of a saved voice did not hit the prefix cache")
	}
	// Duplicate without replace → 409; with replace → 201 and a new version.
	if r := ts.addVoice(t, "bob", refWAV, nil); r.StatusCode != 409 {
		t.Fatalf("duplicate: %d %s", r.StatusCode, readAll(t, r))
	}
	other := mustDecodeB64(wavB64(24000, 2, 1.5))
	if r := ts.addVoice(t, "bob", other, map[string]string{"replace": "true"}); r.StatusCode != 201 {
		t.Fatalf("replace: %d %s", r.StatusCode, readAll(t, r))
	}
	replaced := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": "bob", "response_format": "pcm", "seed": 3, "max_new_frames": 5})))
	inlineOther := readAll(t, ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": map[string]any{"ref_audio": base64.StdEncoding.EncodeToString(other)}, "response_format": "pcm", "seed": 3, "max_new_frames": 5})))
	if !bytes.Equal(replaced, inlineOther) {
		t.Fatal("a replaced voice still speaks with its old prefix")
	}
	// Delete → 404 afterwards, for use and for get.
	if r, db := ts.del(t, "/v1/audio/voices/bob"); r.StatusCode != 200 || !bytes.Contains(db, []byte(`"deleted":true`)) {
		t.Fatalf("delete: %d %s", r.StatusCode, db)
	}
	r = ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": "bob"}))
	if b := readAll(t, r); r.StatusCode != 404 || *decodeErr(t, b).Error.Code != "voice_not_found" {
		t.Fatalf("speech with deleted voice: %d %s", r.StatusCode, b)
	}
	if r, _ := ts.del(t, "/v1/audio/voices/bob"); r.StatusCode != 404 {
		t.Fatalf("second delete: %d", r.StatusCode)
	}
	// Voices survive a restart: a new server over the same directory.
	ts2 := newTestServer(t, serverOpts{dataDir: dir})
	if r, gb := ts2.get(t, "/v1/audio/voices/alice"); r.StatusCode != 200 {
		t.Fatalf("after restart: %d %s", r.StatusCode, gb)
	}
	if r := ts2.post(t, "/v1/audio/speech", body(map[string]any{"voice": "alice", "response_format": "pcm", "seed": 3})); !bytes.Equal(readAll(t, r), inline) {
		t.Fatal("a voice loaded after restart speaks differently")
	}
	// OpenAI's custom-voice object form names a saved voice.
	if r := ts2.post(t, "/v1/audio/speech", body(map[string]any{"voice": map[string]any{"id": "alice"}, "response_format": "pcm", "seed": 3})); !bytes.Equal(readAll(t, r), inline) {
		t.Fatal(`voice {"id": "alice"} differs from voice "alice"`)
	}
	// A name no voice can have is simply not a saved voice.
	r = ts2.post(t, "/v1/audio/speech", body(map[string]any{"voice": "../../etc/passwd"}))
	if b := readAll(t, r); r.StatusCode != 404 || *decodeErr(t, b).Error.Param != "voice" {
		t.Fatalf("invalid voice name: %d %s", r.StatusCode, b)
	}
	// A voice saved by another process (the CLI) is found on first use.
	other2, _, err := voice.Open(dir, voice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	codes := [][]int{{1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1}}
	if _, err := other2.Add(voice.Voice{Name: "carol", Model: "moss_tts_nano/8codes", Codes: codes, Duration: 0.16}, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // reloads are throttled to one a second
	if r := ts2.post(t, "/v1/audio/speech", body(map[string]any{"voice": "carol", "max_new_frames": 2})); r.StatusCode != 200 || readAll(t, r) == nil {
		t.Fatalf("voice added by another process: %d %s", r.StatusCode, readAll(t, r))
	}
	// ... and one it deletes disappears.
	if _, err := other2.Delete("carol"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if r, gb := ts2.get(t, "/v1/audio/voices/carol"); r.StatusCode != 404 {
		t.Fatalf("voice deleted by another process: %d %s", r.StatusCode, gb)
	}
}

func mustDecodeB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestVoicesBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{cfg: Config{Limits: Limits{MaxBodyBytes: 256 << 10}}})
	if r := ts.addVoice(t, "taken", refWAV, nil); r.StatusCode != 201 {
		t.Fatalf("setup: %d", r.StatusCode)
	}
	mp := func(fields map[string]string, file []byte) ([]byte, string) {
		files := map[string][]byte{}
		if file != nil {
			files["file"] = file
		}
		return multipartBody(fields, files)
	}
	js := func(m map[string]any) ([]byte, string) { b, _ := json.Marshal(m); return b, "application/json" }
	b64 := base64.StdEncoding.EncodeToString(refWAV)
	tests := []struct {
		name   string
		make   func() ([]byte, string)
		status int
		param  string
	}{
		{"empty name", func() ([]byte, string) { return mp(map[string]string{"name": ""}, refWAV) }, 400, "name"},
		{"name too long", func() ([]byte, string) { return mp(map[string]string{"name": strings.Repeat("a", 65)}, refWAV) }, 400, "name"},
		{"path traversal", func() ([]byte, string) { return mp(map[string]string{"name": "../etc"}, refWAV) }, 400, "name"},
		{"slash", func() ([]byte, string) { return mp(map[string]string{"name": "a/b"}, refWAV) }, 400, "name"},
		{"hidden", func() ([]byte, string) { return mp(map[string]string{"name": ".hidden"}, refWAV) }, 400, "name"},
		{"space", func() ([]byte, string) { return mp(map[string]string{"name": "two words"}, refWAV) }, 400, "name"},
		{"unicode", func() ([]byte, string) { return mp(map[string]string{"name": "ünïcode"}, refWAV) }, 400, "name"},
		{"NUL", func() ([]byte, string) { return mp(map[string]string{"name": "a\x00b"}, refWAV) }, 400, "name"},
		{"windows device", func() ([]byte, string) { return mp(map[string]string{"name": "con"}, refWAV) }, 400, "name"},
		{"at sign", func() ([]byte, string) { return mp(map[string]string{"name": "a@b"}, refWAV) }, 400, "name"},
		{"duplicate", func() ([]byte, string) { return mp(map[string]string{"name": "taken"}, refWAV) }, 409, "name"},
		{"missing name", func() ([]byte, string) { return mp(map[string]string{}, refWAV) }, 400, "name"},
		{"missing file", func() ([]byte, string) { return mp(map[string]string{"name": "x1"}, nil) }, 400, "file"},
		{"empty file", func() ([]byte, string) { return mp(map[string]string{"name": "x1"}, []byte{}) }, 400, "file"},
		{"not audio", func() ([]byte, string) {
			return mp(map[string]string{"name": "x1"}, []byte("plain text, not a sound file"))
		}, 400, "file"},
		{"too short", func() ([]byte, string) {
			return mp(map[string]string{"name": "x1"}, mustDecodeB64(wavB64(16000, 1, 0.2)))
		}, 400, "file"},
		{"too long", func() ([]byte, string) {
			return mp(map[string]string{"name": "x1"}, mustDecodeB64(wavB64(4000, 1, 31)))
		}, 400, "file"},
		{"three channels", func() ([]byte, string) {
			return mp(map[string]string{"name": "x1"}, mustDecodeB64(wavB64(8000, 3, 1)))
		}, 400, "file"},
		{"unknown field", func() ([]byte, string) { return mp(map[string]string{"name": "x1", "speaker": "a"}, refWAV) }, 400, "speaker"},
		{"bad replace", func() ([]byte, string) { return mp(map[string]string{"name": "x1", "replace": "maybe"}, refWAV) }, 400, "replace"},
		{"huge upload", func() ([]byte, string) { return mp(map[string]string{"name": "x1"}, make([]byte, 300<<10)) }, 413, ""},
		{"truncated multipart", func() ([]byte, string) {
			b, ct := mp(map[string]string{"name": "x1"}, refWAV)
			return b[:len(b)/2], ct
		}, 400, ""},
		{"json missing name", func() ([]byte, string) { return js(map[string]any{"ref_audio": b64}) }, 400, "name"},
		{"json bad base64", func() ([]byte, string) { return js(map[string]any{"name": "x1", "ref_audio": "%%%"}) }, 400, "ref_audio"},
		{"json not audio", func() ([]byte, string) {
			return js(map[string]any{"name": "x1", "ref_audio": base64.StdEncoding.EncodeToString([]byte("text, not audio"))})
		}, 400, "ref_audio"},
		{"json name number", func() ([]byte, string) { return js(map[string]any{"name": 5, "ref_audio": b64}) }, 400, "name"},
		{"json unknown field", func() ([]byte, string) { return js(map[string]any{"name": "x1", "ref_audio": b64, "gender": "f"}) }, 400, "gender"},
		{"json malformed", func() ([]byte, string) { return []byte(`{"name":`), "application/json" }, 400, ""},
		{"xml", func() ([]byte, string) { return []byte("<voice/>"), "application/xml" }, 415, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, ct := tc.make()
			r := ts.post(t, "/v1/audio/voices", b, "Content-Type", ct)
			rb := readAll(t, r)
			if r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", r.StatusCode, tc.status, rb)
			}
			e := decodeErr(t, rb)
			p := ""
			if e.Error.Param != nil {
				p = *e.Error.Param
			}
			if p != tc.param {
				t.Fatalf("param %q, want %q: %s", p, tc.param, e.Error.Message)
			}
		})
	}
	for _, path := range []string{"/v1/audio/voices/nope", "/v1/audio/voices/..%2f..%2fetc"} {
		if r, b := ts.get(t, path); r.StatusCode != 404 && r.StatusCode != 400 {
			t.Errorf("GET %s: %d %s", path, r.StatusCode, b)
		}
	}
	_, lb := ts.get(t, "/v1/audio/voices")
	if !bytes.Contains(lb, []byte(`"taken"`)) || bytes.Contains(lb, []byte(`"x1"`)) {
		t.Fatalf("bad requests changed the store: %s", lb)
	}
}

// TestVoicesConcurrent adds, uses and deletes voices from many goroutines;
// every answer is a success or a clean 404/409, never a 5xx (-race).
func TestVoicesConcurrent(t *testing.T) {
	ts := newTestServer(t, serverOpts{engine: engineCfg(4, 16)})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	record := func(code int) { mu.Lock(); statuses[code]++; mu.Unlock() }
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				name := fmt.Sprintf("v%d", (g+i)%3)
				var code int
				switch (g + i) % 3 {
				case 0:
					r := ts.addVoice(t, name, refWAV, map[string]string{"replace": fmt.Sprint(i%2 == 0)})
					readAll(t, r)
					code = r.StatusCode
				case 1:
					r := ts.post(t, "/v1/audio/speech", body(map[string]any{"voice": name, "max_new_frames": 2}))
					readAll(t, r)
					code = r.StatusCode
				case 2:
					r, _ := ts.del(t, "/v1/audio/voices/"+name)
					code = r.StatusCode
				}
				record(code)
			}
		}()
	}
	wg.Wait()
	for code := range statuses {
		if code != 200 && code != 201 && code != 404 && code != 409 {
			t.Fatalf("unexpected status %d in %v", code, statuses)
		}
	}
	t.Logf("statuses: %v", statuses)
}
