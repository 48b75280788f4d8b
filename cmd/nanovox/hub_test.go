package main

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeHub serves directories as Hugging Face repos with the real endpoint
// shapes (revision API, resolve URLs with X-Repo-Commit and ETag).
type fakeHub struct {
	*httptest.Server
	mu    sync.Mutex
	repos map[string]string // repo id → directory
	seen  []string
}

func newFakeHub(t *testing.T, repos map[string]string) *fakeHub {
	h := &fakeHub{repos: repos}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func commitOf(repo string) string {
	s := sha1.Sum([]byte(repo))
	return hex.EncodeToString(s[:])
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Method+" "+r.URL.Path)
	h.mu.Unlock()
	p := strings.TrimPrefix(r.URL.Path, "/")
	if rest, ok := strings.CutPrefix(p, "api/models/"); ok {
		parts := strings.SplitN(rest, "/revision/", 2)
		dir, ok := h.repos[parts[0]]
		if !ok {
			w.Header().Set("X-Error-Code", "RepoNotFound")
			http.Error(w, "not found", 404)
			return
		}
		var sib []map[string]any
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			fi, _ := e.Info()
			sib = append(sib, map[string]any{"rfilename": e.Name(), "size": fi.Size()})
		}
		sib = append(sib, map[string]any{"rfilename": "README.md", "size": 5}, map[string]any{"rfilename": "modeling.py", "size": 5})
		json.NewEncoder(w).Encode(map[string]any{"sha": commitOf(parts[0]), "siblings": sib})
		return
	}
	i := strings.Index(p, "/resolve/")
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	repo := p[:i]
	dir, ok := h.repos[repo]
	rest := p[i+len("/resolve/"):]
	j := strings.Index(rest, "/")
	if !ok || j < 0 {
		http.NotFound(w, r)
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, rest[j+1:]))
	if err != nil {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "no such file", 404)
		return
	}
	sum := sha1.Sum(b)
	w.Header().Set("X-Repo-Commit", commitOf(repo))
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodGet {
		w.Write(b)
	}
}

func (h *fakeHub) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// TestHubModels runs say, pull and inspect with hub ids against a local fake
// Hub: first use downloads only what the loader needs, later runs use the
// cache without the network, offline mode without a cache explains itself.
func TestHubModels(t *testing.T) {
	hub := newFakeHub(t, map[string]string{
		"test-org/tiny-lm":                        filepath.Join(fixtures, "tiny-a", "lm"),
		"OpenMOSS-Team/MOSS-Audio-Tokenizer-Nano": filepath.Join(fixtures, "tiny-a", "codec"),
	})
	home := t.TempDir()
	env := []string{"HF_HOME=" + home, "HF_ENDPOINT=" + hub.URL, "HF_TOKEN=", "HF_HUB_OFFLINE="}
	var g goldenFile
	readJSON(t, filepath.Join(fixtures, "tiny-a", "golden", "canonical.json"), &g)
	say := func(env []string) result {
		codes := filepath.Join(t.TempDir(), "codes.json")
		r := runBin(t, nil, env, "say", "--model", "test-org/tiny-lm", "--ref-audio", filepath.Join(fixtures, "tiny-a", "ref.wav"),
			"--text", g.Text, "--greedy", "--codes-out", codes, "--out", filepath.Join(t.TempDir(), "o.wav"))
		if r.code == 0 {
			var got goldenFile
			readJSON(t, codes, &got)
			if !equalJSON(got.Frames, g.Frames) {
				t.Fatalf("frames from the hub model differ from the golden")
			}
		}
		return r
	}
	if r := say(env); r.code != 0 {
		t.Fatalf("say with a hub id: %s", r.stderr)
	}
	for _, req := range hub.requests() {
		if strings.Contains(req, "README") || strings.Contains(req, ".py") {
			t.Fatalf("downloaded a file the loader does not need: %s", req)
		}
	}
	if !strings.Contains(strings.Join(hub.requests(), "\n"), "OpenMOSS-Team/MOSS-Audio-Tokenizer-Nano/resolve/") {
		t.Fatal("the codec named by the model's config was not fetched")
	}
	snap := filepath.Join(home, "hub", "models--test-org--tiny-lm", "snapshots", commitOf("test-org/tiny-lm"), "config.json")
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("not in the Hugging Face cache layout: %v", err)
	}
	// Cached: works with the hub gone.
	n := len(hub.requests())
	hub.Close()
	if r := say(env); r.code != 0 {
		t.Fatalf("say from the cache with the hub down: %s", r.stderr)
	}
	if r := say(append(env, "HF_HUB_OFFLINE=1")); r.code != 0 {
		t.Fatalf("say offline from the cache: %s", r.stderr)
	}
	if len(hub.requests()) != n {
		t.Fatal("a cached model touched the network")
	}
	// inspect reads headers only and summarises.
	r := runBin(t, nil, append(env, "HF_HUB_OFFLINE=1"), "inspect", "test-org/tiny-lm")
	if r.code != 0 || !strings.Contains(string(r.stdout), "model type: moss_tts_nano") || !strings.Contains(string(r.stdout), "tensors:") {
		t.Fatalf("inspect: %s %s", r.stdout, r.stderr)
	}
	// Offline with an empty cache: an actionable error.
	r = runBin(t, nil, []string{"HF_HOME=" + t.TempDir(), "HF_HUB_OFFLINE=1"}, "say", "--model", "test-org/tiny-lm",
		"--ref-audio", filepath.Join(fixtures, "tiny-a", "ref.wav"), "--text", "hi", "--out", filepath.Join(t.TempDir(), "x.wav"))
	if r.code == 0 || !strings.Contains(string(r.stderr), "--model DIR") {
		t.Fatalf("offline without cache: exit %d, %s", r.code, r.stderr)
	}
}

func TestPull(t *testing.T) {
	hub := newFakeHub(t, map[string]string{"test-org/tiny-lm": filepath.Join(fixtures, "tiny-b", "lm")})
	home := t.TempDir()
	r := runBin(t, nil, []string{"HF_HOME=" + home, "HF_ENDPOINT=" + hub.URL}, "pull", "test-org/tiny-lm")
	if r.code != 0 {
		t.Fatalf("pull: %s", r.stderr)
	}
	dir := strings.TrimSpace(strings.SplitN(string(r.stdout), "\t", 2)[1])
	for _, f := range []string{"config.json", "tokenizer.model", "model.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("pulled snapshot lacks %s: %v", f, err)
		}
	}
	r = runBin(t, nil, []string{"HF_HOME=" + home, "HF_ENDPOINT=" + hub.URL}, "pull", "not a repo")
	if r.code == 0 {
		t.Fatal("pull of an invalid id succeeded")
	}
}
