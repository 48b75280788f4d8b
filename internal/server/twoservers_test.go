package server

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/voice"
)

// deletedMeanwhile is server A's store, where another server (store B on
// the same directory) deletes the voice right after A saved it and a
// concurrent request on A reloads the directory before the handler answers:
// the interleaving that made a successful save answer 404.
type deletedMeanwhile struct {
	*voice.Store
	other *voice.Store
}

func (d deletedMeanwhile) Save(v voice.Voice, replace bool) (saved, old *voice.Voice, err error) {
	saved, old, err = d.Store.Save(v, replace)
	if err == nil {
		d.other.Reload()
		d.other.Delete(v.Name)
		d.Store.Reload()
	}
	return saved, old, err
}

// TestSaveAnswersWhatItSaved: a POST that saved the voice answers 201 with
// that voice even if another server deleted it before the answer.
func TestSaveAnswersWhatItSaved(t *testing.T) {
	dir := t.TempDir()
	ts := newTestServer(t, serverOpts{dataDir: dir})
	other, _, err := voice.Open(dir, voice.Options{Model: "moss_tts_nano/8codes"})
	if err != nil {
		t.Fatal(err)
	}
	ts.srv.cfg.Voices = deletedMeanwhile{Store: ts.voices, other: other}
	for _, replace := range []string{"false", "true"} {
		r := ts.addVoice(t, "sh2", refWAV, map[string]string{"replace": replace})
		b := readAll(t, r)
		var got voiceJSON
		if r.StatusCode != 201 || json.Unmarshal(b, &got) != nil || got.Name != "sh2" || got.Frames == 0 {
			t.Fatalf("POST (replace=%s) while another server deletes: %d %s; want 201 with the saved voice", replace, r.StatusCode, b)
		}
	}
}

// TestTwoServersOneStore: two servers share a data directory; one replaces
// a voice in a loop while the other deletes it, and a third loop reloads
// the first server's view. Every POST that saved the voice answers 201,
// every DELETE 200 or 404, never a 5xx. Bounded by a count and a time.
func TestTwoServersOneStore(t *testing.T) {
	dir := t.TempDir()
	a := newTestServer(t, serverOpts{dataDir: dir})
	b := newTestServer(t, serverOpts{dataDir: dir})
	const maxAdds = 40
	deadline := time.Now().Add(3 * time.Second)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	note := func(what string, code int) {
		mu.Lock()
		codes[fmt.Sprintf("%s %d", what, code)]++
		mu.Unlock()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			r, _ := b.del(t, "/v1/audio/voices/sh2")
			note("DELETE", r.StatusCode)
			if r.StatusCode != 200 && r.StatusCode != 404 {
				t.Errorf("DELETE: %d", r.StatusCode)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			a.voices.Reload() // what any request on A does when the directory changed
		}
	}()
	for i := 0; i < maxAdds && time.Now().Before(deadline); i++ {
		r := a.addVoice(t, "sh2", refWAV, map[string]string{"replace": "true"})
		body := readAll(t, r)
		note("POST", r.StatusCode)
		if r.StatusCode != 201 {
			t.Errorf("POST %d: %d %s", i, r.StatusCode, body)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("answers: %v", codes)
}
