package server

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// ffprobeDuration returns the duration ffprobe reads from an encoded body
// and fails if ffmpeg cannot decode all of it without an error.
func ffprobeDuration(t *testing.T, data []byte) float64 {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is required in CI")
		}
		t.Skip("ffmpeg not found")
	}
	cmd := exec.Command(bin, "-v", "error", "-xerror", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", "48000", "pipe:1")
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg cannot decode the body (%d bytes): %v %s", len(data), err, stderr.String())
	}
	return float64(out.Len()) / 2 / 48000
}

// TestClientRequests replays the requests that the programs people point
// at an OpenAI speech server send, byte for byte, and decodes every answer
// with ffmpeg.
func TestClientRequests(t *testing.T) {
	// The tiny model's random weights stop at random; generating every
	// chunk to the frame limit gives every format enough audio to check.
	ts := newTestServer(t, serverOpts{ignoreEOS: true, cfg: Config{
		Limits:       Limits{MaxNewFrames: 20},
		APIKey:       "sk-test",
		VoiceAliases: map[string]string{"alloy": "anna"},
		PublicLists:  true,
	}})
	auth := []string{"Authorization", "Bearer sk-test"}
	if r := ts.addVoiceAuth(t, "anna", refWAV, "sk-test"); r.StatusCode != 201 {
		t.Fatalf("save voice: %d", r.StatusCode)
	}
	const text = "Hello world. This is a tiny test."
	for _, tc := range []struct {
		client, body, ctype, ignored string
		pcmRate                      int // raw PCM at this rate, else decoded by ffmpeg
	}{
		{"OpenAI SDK / Open WebUI (defaults)", `{"model":"tts-1","input":"` + text + `","voice":"alloy"}`, "audio/mpeg", "", 0},
		{"Home Assistant openai_tts", `{"model":"tts-1","voice":"alloy","input":"` + text + `","response_format":"mp3","speed":1.0,"instructions":"Speak calmly","extra_field":true}`, "audio/mpeg", "extra_field, instructions", 0},
		{"SillyTavern", `{"input":"` + text + `","voice":"alloy","model":"tts-1-hd","response_format":"mp3","speed":1}`, "audio/mpeg", "", 0},
		{"FLAC download", `{"model":"tts-1","input":"` + text + `","voice":"anna","response_format":"flac"}`, "audio/flac", "", 0},
		{"voice-note bot", `{"model":"tts-1","input":"` + text + `","voice":"anna","response_format":"opus"}`, "audio/ogg", "", 0},
		{"LibreChat", `{"model":"tts-1","input":"` + text + `","voice":"alloy","backend":"openai","user":"user-1"}`, "audio/mpeg", "backend, user", 0},
		{"AAC player", `{"model":"tts-1","input":"` + text + `","voice":"anna","response_format":"aac"}`, "audio/aac", "", 0},
		{"LiveKit / pipecat (pcm at 24 kHz)", `{"model":"tts-1","input":"` + text + `","voice":"alloy","response_format":"pcm","sample_rate":24000}`, "audio/pcm", "", 24000},
	} {
		t.Run(tc.client, func(t *testing.T) {
			r := ts.post(t, "/v1/audio/speech", []byte(tc.body), auth...)
			b := readAll(t, r)
			if r.StatusCode != 200 {
				t.Fatalf("status %d: %s", r.StatusCode, b)
			}
			if ct := r.Header.Get("Content-Type"); ct != tc.ctype {
				t.Errorf("Content-Type %q, want %q", ct, tc.ctype)
			}
			if got := r.Header.Get("X-Ignored-Parameters"); got != tc.ignored {
				t.Errorf("X-Ignored-Parameters %q, want %q", got, tc.ignored)
			}
			if tc.pcmRate != 0 {
				if rate := r.Header.Get("X-Audio-Sample-Rate"); rate != strconv.Itoa(tc.pcmRate) {
					t.Fatalf("X-Audio-Sample-Rate %s, want %d", rate, tc.pcmRate)
				}
				if len(b) != 2*24000*16/10 {
					t.Fatalf("%d bytes of 16-bit PCM, want 1.6 s at 24 kHz", len(b))
				}
				return
			}
			// 20 frames of 80 ms: 1.6 s, plus what a codec pads.
			if d := ffprobeDuration(t, b); d < 1.6 || d > 1.7 {
				t.Fatalf("decoded %.3f s of audio, want 1.6 s", d)
			}
		})
	}

	// Home Assistant's speed 1.25: a fifth shorter, as a WAV of exact length.
	r := ts.post(t, "/v1/audio/speech", []byte(`{"model":"tts-1","voice":"alloy","input":"`+text+`","response_format":"wav","speed":1.25}`), auth...)
	if b := readAll(t, r); r.StatusCode != 200 || len(b) != 44+2*int(math.Round(1.6*48000/1.25)) {
		t.Errorf("speed 1.25: status %d, %d bytes; want %d", r.StatusCode, len(b), 44+2*int(math.Round(1.6*48000/1.25)))
	}

	// LibreChat concatenates the MP3 bodies of several requests: they
	// decode as one stream of the summed length.
	var joined []byte
	var sum float64
	for seed := range 2 {
		b := readAll(t, ts.post(t, "/v1/audio/speech", []byte(`{"input":"`+text+`","voice":"alloy","seed":`+strconv.Itoa(seed)+`}`), auth...))
		sum += ffprobeDuration(t, b)
		joined = append(joined, b...)
	}
	if d := ffprobeDuration(t, joined); d < sum-0.03 || d > sum+0.03 {
		t.Errorf("two MP3 bodies decode as %.3f s, parts sum to %.3f s", d, sum)
	}

	// A streamed MP3 body is one valid file too.
	sr := ts.post(t, "/v1/audio/speech", []byte(`{"input":"`+text+`","voice":"alloy","stream":true}`), auth...)
	if sb := readAll(t, sr); sr.Header.Get("Content-Type") != "audio/mpeg" || ffprobeDuration(t, sb) < 1.6 {
		t.Fatalf("streamed mp3: %s, %d bytes", sr.Header.Get("Content-Type"), len(sb))
	}

	// Open WebUI's lists, fetched without the key (--public-lists).
	for path, key := range map[string]string{"/v1/audio/voices": "voices", "/v1/audio/models": "models", "/v1/models": "data"} {
		r, b := ts.get(t, path)
		var m map[string]json.RawMessage
		var list []map[string]any
		if r.StatusCode != 200 || json.Unmarshal(b, &m) != nil || json.Unmarshal(m[key], &list) != nil || len(list) == 0 || list[0]["id"] == nil {
			t.Errorf("GET %s without a key: %d %s", path, r.StatusCode, b)
		}
	}
	// Speech still needs the key.
	r = ts.post(t, "/v1/audio/speech", []byte(`{"input":"hi","voice":"alloy"}`))
	if readAll(t, r); r.StatusCode != 401 {
		t.Errorf("speech without the key: %d", r.StatusCode)
	}
}

func (ts *testServer) addVoiceAuth(t *testing.T, name string, clip []byte, key string) *http.Response {
	t.Helper()
	b, ct := multipartBody(map[string]string{"name": name}, map[string][]byte{"file": clip})
	req, _ := http.NewRequest("POST", ts.URL+"/v1/audio/voices", bytes.NewReader(b))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+key)
	r, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	return r
}

// TestVoiceNames: aliases, the default voice, and the message for an
// OpenAI voice name nobody mapped.
func TestVoiceNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		body   string
		status int
		msg    string
	}{
		{"unmapped OpenAI name", Config{}, `{"input":"hi","voice":"nova"}`, 404, "--voice-alias nova=NAME"},
		{"unmapped OpenAI name, default voice", Config{DefaultVoice: "anna"}, `{"input":"hi","voice":"Nova","response_format":"wav"}`, 200, ""},
		{"no voice, default voice", Config{DefaultVoice: "anna"}, `{"input":"hi","response_format":"wav"}`, 200, ""},
		{"no voice, no default", Config{}, `{"input":"hi"}`, 400, "voice is required"},
		{"alias to a missing voice", Config{VoiceAliases: map[string]string{"echo": "ghost"}}, `{"input":"hi","voice":"echo"}`, 404, `"ghost" is not a saved voice`},
		{"other unknown name", Config{DefaultVoice: "anna"}, `{"input":"hi","voice":"bob"}`, 404, `"bob" is not a saved voice`},
		{"strict params", Config{StrictParams: true}, `{"input":"hi","voice":"anna","user":"u"}`, 400, `unknown parameter "user"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, serverOpts{cfg: tc.cfg})
			ts.addVoice(t, "anna", refWAV, nil)
			r := ts.post(t, "/v1/audio/speech", []byte(tc.body))
			b := readAll(t, r)
			var e struct{ Error struct{ Message string } }
			json.Unmarshal(b, &e)
			if r.StatusCode != tc.status || !strings.Contains(e.Error.Message, tc.msg) {
				t.Fatalf("status %d %s; want %d mentioning %q", r.StatusCode, b, tc.status, tc.msg)
			}
		})
	}
}

// TestNormalizeSwitch: the input is normalized unless the request says
// "normalize": false, and the usage counts the tokens of what was spoken.
func TestNormalizeSwitch(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	usage := func(extra map[string]any) float64 {
		fields := map[string]any{"input": "共465篇，价格$12.05。", "stream_format": "sse", "max_new_frames": 2}
		for k, v := range extra {
			fields[k] = v
		}
		r := ts.post(t, "/v1/audio/speech", body(fields))
		evs := strings.Split(strings.TrimSpace(string(readAll(t, r))), "\n\n")
		var done struct{ Usage map[string]float64 }
		if err := json.Unmarshal([]byte(strings.TrimPrefix(evs[len(evs)-1], "data: ")), &done); err != nil {
			t.Fatalf("last event %q: %v", evs[len(evs)-1], err)
		}
		return done.Usage["input_tokens"]
	}
	normalized, raw := usage(nil), usage(map[string]any{"normalize": false})
	if normalized == raw || normalized == 0 || raw == 0 {
		t.Fatalf("input tokens normalized %v, raw %v: want both, and different", normalized, raw)
	}
	if r := ts.post(t, "/v1/audio/speech", body(map[string]any{"normalize": "no"})); readAll(t, r) != nil && r.StatusCode != 400 {
		t.Fatalf("normalize as a string: %d", r.StatusCode)
	}
}
