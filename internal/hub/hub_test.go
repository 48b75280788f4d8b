package hub

import (
	"bytes"
	"context"
	"errors"
	"github.com/nanovox/nanovox/internal/flock"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const weightsSize = 300 << 10 // > one copy buffer, so downloads take several reads

// singleRepo has one weights file plus files that must never be fetched.
func singleRepo() (*fakeRepo, string) {
	c := commitID("single-1")
	return &fakeRepo{
		commits: map[string]map[string]fakeFile{c: {
			"config.json":           {data: []byte(`{"model_type":"moss_tts_nano"}`)},
			"tokenizer.model":       {data: randomBytes(1, 4000), lfs: true},
			"model.safetensors":     {data: randomBytes(2, weightsSize), lfs: true},
			"README.md":             {data: []byte("# readme")},
			"modeling_moss.py":      {data: []byte("import torch")},
			"onnx/model.onnx":       {data: randomBytes(3, 1000), lfs: true},
			"pytorch_model.bin":     {data: randomBytes(4, 2000), lfs: true},
			".gitattributes":        {data: []byte("*.safetensors filter=lfs")},
			"configuration_moss.py": {data: []byte("class C: pass")},
		}},
		refs: map[string]string{"main": c},
	}, c
}

func shardedRepo() (*fakeRepo, string) {
	c := commitID("sharded-1")
	index := []byte(`{"metadata":{"total_size":3},"weight_map":{"a.weight":"model-00001-of-00002.safetensors","b.weight":"model-00002-of-00002.safetensors","c.weight":"model-00001-of-00002.safetensors"}}`)
	return &fakeRepo{
		commits: map[string]map[string]fakeFile{c: {
			"config.json":                      {data: []byte(`{"architectures":["MossAudioTokenizerModel"]}`)},
			"model.safetensors.index.json":     {data: index},
			"model-00001-of-00002.safetensors": {data: randomBytes(5, 70000), lfs: true},
			"model-00002-of-00002.safetensors": {data: randomBytes(6, 50000), lfs: true},
			"README.md":                        {data: []byte("# readme")},
			"modeling_moss_audio_tokenizer.py": {data: []byte("import torch")},
			"__init__.py":                      {data: nil},
		}},
		refs: map[string]string{"main": c},
	}, c
}

// checkSnapshot verifies that dir holds exactly want's needed files with the
// right content, stored as relative symlinks to blobs named by ETag.
func checkSnapshot(t *testing.T, dir string, files map[string]fakeFile, want []string) {
	t.Helper()
	got := listSnapshot(dir)
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("snapshot files = %v, want %v", got, want)
	}
	for _, name := range want {
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", name, err)
			continue
		}
		if !bytes.Equal(data, files[name].data) {
			t.Errorf("%s: content differs from the Hub's (%d vs %d bytes)", name, len(data), len(files[name].data))
		}
		target, err := os.Readlink(p)
		if err != nil {
			t.Errorf("%s is not a symlink: %v", name, err)
			continue
		}
		wantTarget := strings.Repeat("../", strings.Count(name, "/")+2) + "blobs/" + etagOf(files[name])
		if filepath.ToSlash(target) != wantTarget {
			t.Errorf("%s -> %s, want %s", name, target, wantTarget)
		}
	}
}

func noIncomplete(t *testing.T, cache string) {
	t.Helper()
	filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".incomplete") {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
}

func TestResolveDownloadsOnlyNeededFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		repo  func() (*fakeRepo, string)
		want  []string
		first string // must be fetched before any shard
	}{
		{"single", singleRepo, []string{"config.json", "tokenizer.model", "model.safetensors"}, ""},
		{"sharded", shardedRepo, []string{"config.json", "model.safetensors.index.json",
			"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, "model.safetensors.index.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHub(t)
			repo, commit := tc.repo()
			h.addRepo("org/"+tc.name, repo)
			cache := t.TempDir()
			dir, err := h.client(t, cache).Resolve(context.Background(), "org/"+tc.name)
			if err != nil {
				t.Fatal(err)
			}
			storage := filepath.Join(cache, "models--org--"+tc.name)
			if want := filepath.Join(storage, "snapshots", commit); dir != want {
				t.Fatalf("dir = %s, want %s", dir, want)
			}
			checkSnapshot(t, dir, repo.commits[commit], tc.want)
			if ref, err := os.ReadFile(filepath.Join(storage, "refs", "main")); err != nil || string(ref) != commit {
				t.Errorf("refs/main = %q, %v; want %s", ref, err, commit)
			}
			if _, err := readTreeCache(filepath.Join(storage, "trees", commit+".json")); err != nil {
				t.Errorf("tree cache: %v", err)
			}
			if _, err := os.Stat(filepath.Join(cache, "CACHEDIR.TAG")); err != nil {
				t.Errorf("CACHEDIR.TAG: %v", err)
			}
			noIncomplete(t, cache)

			reqs := h.requests()
			var touched []string
			firstShard, firstSpecial := -1, -1
			for i, r := range reqs {
				if r.server == "hub" && strings.HasPrefix(r.path, "/api/") {
					if !strings.Contains(r.query, "blobs=true") {
						t.Errorf("API call without blobs=true: %s?%s", r.path, r.query)
					}
					continue
				}
				name := r.path[strings.LastIndex(r.path, "/")+1:]
				if r.server == "hub" {
					_, name, _ = strings.Cut(r.path, "/resolve/"+commit+"/")
				}
				touched = append(touched, name)
				if strings.Contains(name, "-of-") && firstShard < 0 {
					firstShard = i
				}
				if name == tc.first && firstSpecial < 0 {
					firstSpecial = i
				}
			}
			for _, name := range touched {
				if !slices.Contains(tc.want, name) {
					t.Errorf("requested %q, which the loader does not need", name)
				}
			}
			if tc.first != "" && (firstSpecial < 0 || firstShard < firstSpecial) {
				t.Errorf("%s must be fetched before the shards; order: %v", tc.first, touched)
			}

			// A second resolve, by a fresh client, makes no request at all.
			h.resetLog()
			dir2, err := h.client(t, cache).Resolve(context.Background(), "org/"+tc.name)
			if err != nil || dir2 != dir {
				t.Fatalf("second resolve = %s, %v", dir2, err)
			}
			if reqs := h.requests(); len(reqs) != 0 {
				t.Errorf("second resolve made %d requests: %v", len(reqs), reqs)
			}
		})
	}
}

func TestResolveRevisions(t *testing.T) {
	h := newFakeHub(t)
	c1, c2, c3 := commitID("r1"), commitID("r2"), commitID("r3")
	files := func(v string) map[string]fakeFile {
		return map[string]fakeFile{
			"config.json":       {data: []byte(`{"v":"` + v + `"}`)},
			"model.safetensors": {data: randomBytes(7, 5000), lfs: true}, // same blob in every commit
		}
	}
	h.addRepo("org/revs", &fakeRepo{
		commits: map[string]map[string]fakeFile{c1: files("1"), c2: files("2"), c3: files("3")},
		refs:    map[string]string{"main": c2, "v1.0": c1, "dev": c3, "refs/pr/1": c3},
	})
	cache := t.TempDir()
	storage := filepath.Join(cache, "models--org--revs")
	for _, tc := range []struct {
		model, commit, ref string // ref "" means: no refs file is written
	}{
		{"org/revs", c2, "main"},
		{"org/revs@v1.0", c1, "v1.0"},
		{"org/revs@dev", c3, "dev"},
		{"org/revs@" + c1, c1, ""},
		{"org/revs@refs/pr/1", c3, "refs/pr/1"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			h.resetLog()
			dir, err := h.client(t, cache).Resolve(context.Background(), tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(dir) != tc.commit {
				t.Errorf("snapshot %s, want commit %s", filepath.Base(dir), tc.commit)
			}
			cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
			if want := files("x")["config.json"]; len(cfg) != len(want.data) {
				t.Errorf("config.json = %s", cfg)
			}
			if tc.ref != "" {
				got, err := os.ReadFile(filepath.Join(storage, "refs", filepath.FromSlash(tc.ref)))
				if err != nil || string(got) != tc.commit {
					t.Errorf("refs/%s = %q, %v", tc.ref, got, err)
				}
			}
			// The weights blob is shared: only the first resolve downloads it.
			for _, r := range h.requests() {
				if r.server == "cdn" && tc.model != "org/revs" {
					t.Errorf("blob downloaded again for %s: %v", tc.model, r)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(storage, "refs", c1)); err == nil {
		t.Error("a refs file was written for a commit hash")
	}
}

func TestResolveErrors(t *testing.T) {
	h := newFakeHub(t)
	repo, _ := singleRepo()
	h.addRepo("org/model", repo)
	gated, _ := singleRepo()
	gated.token = "hf_secret"
	h.addRepo("org/gated", gated)
	for _, tc := range []struct {
		name, model, token string
		kind               Kind
		contains           []string
	}{
		{"repo 404", "org/missing", "hf_other", KindNotFound, []string{`org/missing was not found`, "HTTP 404", "the configured token"}},
		{"repo 401 anonymous", "org/missing", "", KindNotFound, []string{"not found", "HTTP 401", "HF_TOKEN"}},
		{"revision 404", "org/model@nope", "", KindRevisionNotFound, []string{`revision "nope"`, "HTTP 404"}},
		{"gated anonymous", "org/gated", "", KindAccessDenied, []string{"gated", "HTTP 401", "HF_TOKEN", h.hub.URL + "/org/gated", "restricted"}},
		{"gated wrong token", "org/gated", "hf_wrong", KindAccessDenied, []string{"gated", "the configured token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			c := h.client(t, cache)
			c.Token = tc.token
			_, err := c.Resolve(context.Background(), tc.model)
			if KindOf(err) != tc.kind {
				t.Fatalf("err = %v (kind %v), want kind %v", err, KindOf(err), tc.kind)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if _, err := os.Stat(filepath.Join(cache, RepoFolderName(strings.Split(tc.model, "@")[0]), "snapshots")); err == nil {
				t.Error("a snapshot directory was created for a failed resolve")
			}
		})
	}
}

func TestTokenGoesToHubButNotCDN(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	repo.token = "hf_secret"
	h.addRepo("org/gated", repo)
	c := h.client(t, t.TempDir())
	c.Token = "hf_secret"
	dir, err := c.Resolve(context.Background(), "org/gated")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, dir, repo.commits[commit], []string{"config.json", "tokenizer.model", "model.safetensors"})
	var hub, cdn int
	for _, r := range h.requests() {
		switch r.server {
		case "hub":
			hub++
			if r.auth != "Bearer hf_secret" {
				t.Errorf("hub request %s %s without the token", r.method, r.path)
			}
		case "cdn":
			cdn++
			if r.auth != "" {
				t.Errorf("token leaked to the CDN: %s %s has Authorization %q", r.method, r.path, r.auth)
			}
		}
	}
	if hub == 0 || cdn == 0 {
		t.Errorf("hub %d, cdn %d requests; want both", hub, cdn)
	}
}

// weightsGets returns the CDN GETs of model.safetensors.
func weightsGets(h *fakeHub) []logEntry {
	var out []logEntry
	for _, r := range h.requests() {
		if r.server == "cdn" && strings.HasSuffix(r.path, "/model.safetensors") {
			out = append(out, r)
		}
	}
	return out
}

func TestResume(t *testing.T) {
	const cut = 100000
	for _, tc := range []struct {
		name        string
		faults      []fault
		ignoreRange bool
		wantRanges  []string
	}{
		{"drop then resume", []fault{{faultDrop, cut}}, false, []string{"", "bytes=100000-"}},
		{"two drops", []fault{{faultDrop, cut}, {faultDrop, 50000}}, false, []string{"", "bytes=100000-", "bytes=150000-"}},
		{"server ignores Range", []fault{{faultDrop, cut}}, true, []string{"", "bytes=100000-"}},
		{"stall then resume", []fault{{faultStall, cut}}, false, []string{"", "bytes=100000-"}},
		{"5xx are retried", []fault{{faultStatus, 503}, {faultStatus, 502}, {faultDrop, cut}, {faultStatus, 500}},
			false, []string{"", "", "", "bytes=100000-", "bytes=100000-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHub(t)
			repo, commit := singleRepo()
			h.addRepo("org/model", repo)
			h.faults["model.safetensors"] = tc.faults
			h.ignoreRange = tc.ignoreRange
			cache := t.TempDir()
			c := h.client(t, cache)
			c.DownloadTimeout = 200 * time.Millisecond
			dir, err := c.Resolve(context.Background(), "org/model")
			if err != nil {
				t.Fatal(err)
			}
			checkSnapshot(t, dir, repo.commits[commit], []string{"config.json", "tokenizer.model", "model.safetensors"})
			var ranges []string
			for _, r := range weightsGets(h) {
				ranges = append(ranges, r.rangeHdr)
			}
			if !slices.Equal(ranges, tc.wantRanges) {
				t.Errorf("Range headers of the weight GETs = %q, want %q", ranges, tc.wantRanges)
			}
			noIncomplete(t, cache)
		})
	}
}

func TestResumeAcrossRuns(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	// The first run gets 100000 bytes, then nothing more: it gives up.
	h.faults["model.safetensors"] = []fault{{faultDrop, 100000}, {faultDrop, 0}, {faultDrop, 0}}
	cache := t.TempDir()
	c := h.client(t, cache)
	c.MaxRetries = 2
	_, err := c.Resolve(context.Background(), "org/model")
	if KindOf(err) != KindNetwork || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("first run: err = %v, want a network error that suggests resuming", err)
	}
	etag := etagOf(repo.commits[commit]["model.safetensors"])
	partial := filepath.Join(cache, "models--org--model", "blobs", etag+".incomplete")
	if fi, err := os.Stat(partial); err != nil || fi.Size() != 100000 {
		t.Fatalf("partial file: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(cache, "models--org--model", "refs", "main")); err == nil {
		t.Error("refs/main written although the snapshot is incomplete")
	}

	h.resetLog()
	dir, err := h.client(t, cache).Resolve(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, dir, repo.commits[commit], []string{"config.json", "tokenizer.model", "model.safetensors"})
	gets := weightsGets(h)
	if len(gets) != 1 || gets[0].rangeHdr != "bytes=100000-" {
		t.Errorf("second run weight GETs = %v, want one with Range bytes=100000-", gets)
	}
	noIncomplete(t, cache)
}

func TestIntegrityFailuresLeaveNoBlob(t *testing.T) {
	lie := func(n int64) func(h *fakeHub) {
		return func(h *fakeHub) { h.linkedSize["model.safetensors"] = n }
	}
	// Without sizes from the API, only the HEAD headers say what to expect.
	noMeta := func(setups ...func(*fakeHub)) func(h *fakeHub) {
		return func(h *fakeHub) {
			h.noBlobMeta = true
			for _, f := range setups {
				f(h)
			}
		}
	}
	chunked := func(h *fakeHub) { h.chunked = true }
	for _, tc := range []struct {
		name     string
		setup    func(h *fakeHub)
		contains string
	}{
		{"HEAD size disagrees with the API", lie(weightsSize + 10), "the Hub reports 307210 bytes in one place and 307200 bytes in another"},
		{"Content-Length shorter than X-Linked-Size", noMeta(lie(weightsSize + 10)), "the server sent 307200 bytes, expected 307210"},
		{"Content-Length longer than X-Linked-Size", noMeta(lie(weightsSize - 10)), "the server sent 307200 bytes, expected 307190"},
		{"chunked body longer than X-Linked-Size", noMeta(chunked, lie(weightsSize-10)), "more than the expected 307190 bytes"},
		{"chunked body shorter than X-Linked-Size", noMeta(chunked, lie(weightsSize+10)), "the server's file has 307200 bytes, expected 307210"},
		{"sha256 mismatch", func(h *fakeHub) { h.corrupt["model.safetensors"] = true }, "sha256 is "},
		{"sha256 mismatch, LFS id from the ETag only", noMeta(func(h *fakeHub) { h.corrupt["model.safetensors"] = true }), "sha256 is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHub(t)
			repo, commit := singleRepo()
			h.addRepo("org/model", repo)
			tc.setup(h)
			cache := t.TempDir()
			_, err := h.client(t, cache).Resolve(context.Background(), "org/model")
			if KindOf(err) != KindIntegrity || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("err = %v, want an integrity error mentioning %q", err, tc.contains)
			}
			storage := filepath.Join(cache, "models--org--model")
			etag := etagOf(repo.commits[commit]["model.safetensors"])
			for _, p := range []string{
				filepath.Join(storage, "blobs", etag),
				filepath.Join(storage, "blobs", etag+".incomplete"),
				filepath.Join(storage, "snapshots", commit, "model.safetensors"),
				filepath.Join(storage, "refs", "main"),
			} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists after a failed download", p)
				}
			}
		})
	}
}

func TestOffline(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	cache := t.TempDir()

	off := h.client(t, cache)
	off.Offline = true
	_, err := off.Resolve(context.Background(), "org/model")
	if KindOf(err) != KindNotCached {
		t.Fatalf("offline, empty cache: err = %v", err)
	}
	for _, s := range []string{`"org/model" is not in the local cache (` + cache + `)`, "HF_HUB_OFFLINE", `"nanovox pull org/model"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if n := len(h.requests()); n != 0 {
		t.Fatalf("offline mode made %d requests", n)
	}

	if _, err := h.client(t, cache).Resolve(context.Background(), "org/model"); err != nil {
		t.Fatal(err)
	}
	h.resetLog()
	dir, err := off.Resolve(context.Background(), "org/model")
	if err != nil || filepath.Base(dir) != commit {
		t.Fatalf("offline, cached: %s, %v", dir, err)
	}
	if _, err := off.Download(context.Background(), "org/model", ""); err != nil {
		t.Fatalf("offline pull of a cached model: %v", err)
	}
	// A snapshot missing a file the tree listing has is incomplete.
	os.Remove(filepath.Join(dir, "tokenizer.model"))
	_, err = off.Resolve(context.Background(), "org/model")
	if KindOf(err) != KindNotCached || !strings.Contains(err.Error(), "lacks tokenizer.model") {
		t.Fatalf("offline, partial cache: err = %v", err)
	}
	if n := len(h.requests()); n != 0 {
		t.Fatalf("offline mode made %d requests", n)
	}

	// Online, only the missing file is fetched, and its blob is still cached.
	dir, err = h.client(t, cache).Resolve(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, dir, repo.commits[commit], []string{"config.json", "tokenizer.model", "model.safetensors"})
	for _, r := range h.requests() {
		if r.server == "cdn" || (!strings.HasPrefix(r.path, "/api/") && !strings.HasSuffix(r.path, "/tokenizer.model")) {
			t.Errorf("unexpected request %v", r)
		}
	}
}

func TestUnreachableHub(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	cache := t.TempDir()
	if _, err := h.client(t, cache).Resolve(context.Background(), "org/model"); err != nil {
		t.Fatal(err)
	}
	dead := newFakeHub(t)
	deadURL := dead.hub.URL
	dead.hub.Close()

	c := h.client(t, cache)
	c.Endpoint = deadURL
	// Cached: both Resolve (no request needed) and a pull (which must try the Hub) work.
	dir, err := c.Resolve(context.Background(), "org/model")
	if err != nil || filepath.Base(dir) != commit {
		t.Fatalf("resolve: %s, %v", dir, err)
	}
	if dir, err := c.Download(context.Background(), "org/model", "main"); err != nil || filepath.Base(dir) != commit {
		t.Fatalf("pull with the Hub down and a complete cache: %s, %v", dir, err)
	}

	empty := t.TempDir()
	c = h.client(t, empty)
	c.Endpoint = deadURL
	_, err = c.Resolve(context.Background(), "org/model")
	if KindOf(err) != KindNotCached {
		t.Fatalf("err = %v, want KindNotCached", err)
	}
	msg := err.Error()
	prefix := `model "org/model" is not in the local cache (` + empty + `) and the Hub cannot be reached: `
	suffix := `. Pass --model DIR with a downloaded copy, set HF_ENDPOINT to a reachable mirror, or run "nanovox pull org/model" on a machine with network access and copy the cache.`
	if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) || !strings.Contains(msg, "connect") {
		t.Errorf("message:\n%s\nwant %s<cause>%s", msg, prefix, suffix)
	}
}

func TestHubErrorsAreRetried(t *testing.T) {
	h := newFakeHub(t)
	repo, _ := singleRepo()
	h.addRepo("org/model", repo)
	h.apiFailures = 2
	if _, err := h.client(t, t.TempDir()).Resolve(context.Background(), "org/model"); err != nil {
		t.Fatalf("two 503s then success: %v", err)
	}
	h.apiFailures = 100
	_, err := h.client(t, t.TempDir()).Resolve(context.Background(), "org/model")
	if KindOf(err) != KindNotCached || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("persistent 503: %v", err)
	}
}

func TestPullFollowsMovedBranch(t *testing.T) {
	h := newFakeHub(t)
	repo, c1 := singleRepo()
	h.addRepo("org/model", repo)
	cache := t.TempDir()
	if _, err := h.client(t, cache).Resolve(context.Background(), "org/model"); err != nil {
		t.Fatal(err)
	}
	c2 := commitID("single-2")
	h.mu.Lock()
	files := map[string]fakeFile{}
	for k, v := range repo.commits[c1] {
		files[k] = v
	}
	files["config.json"] = fakeFile{data: []byte(`{"model_type":"moss_tts_nano","v":2}`)}
	repo.commits[c2] = files
	repo.refs["main"] = c2
	h.mu.Unlock()

	// Resolve keeps using the complete cached snapshot; pull moves to the new commit.
	if dir, err := h.client(t, cache).Resolve(context.Background(), "org/model"); err != nil || filepath.Base(dir) != c1 {
		t.Fatalf("resolve after the branch moved: %s, %v (want the cached %s)", dir, err, c1)
	}
	h.resetLog()
	dir, err := h.client(t, cache).Download(context.Background(), "org/model", "")
	if err != nil || filepath.Base(dir) != c2 {
		t.Fatalf("pull: %s, %v, want %s", dir, err, c2)
	}
	checkSnapshot(t, dir, files, []string{"config.json", "tokenizer.model", "model.safetensors"})
	for _, r := range h.requests() {
		if r.server == "cdn" {
			t.Errorf("unchanged blob downloaded again: %v", r)
		}
	}
	if ref, _ := os.ReadFile(filepath.Join(cache, "models--org--model", "refs", "main")); string(ref) != c2 {
		t.Errorf("refs/main = %s, want %s", ref, c2)
	}
}

func TestConcurrentResolves(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	h.chunkDelay = time.Millisecond // keep downloads in flight while others arrive
	cache := t.TempDir()
	const n = 8
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = h.client(t, cache).Resolve(context.Background(), "org/model")
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("resolve %d: %v", i, errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("resolve %d returned %s, resolve 0 %s", i, dirs[i], dirs[0])
		}
	}
	checkSnapshot(t, dirs[0], repo.commits[commit], []string{"config.json", "tokenizer.model", "model.safetensors"})
	if gets := weightsGets(h); len(gets) != 1 {
		t.Errorf("the weights were downloaded %d times, want once", len(gets))
	}
	noIncomplete(t, cache)
}

func TestContextCancelStopsDownload(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	h.faults["model.safetensors"] = []fault{{faultStall, 64 << 10}}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := h.client(t, cache)
	c.DownloadTimeout = time.Minute
	c.Progress = func(file string, done, total int64) {
		if file == "model.safetensors" && done > 0 {
			cancel()
		}
	}
	start := time.Now()
	_, err := c.Resolve(ctx, "org/model")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	etag := etagOf(repo.commits[commit]["model.safetensors"])
	if fi, err := os.Stat(filepath.Join(cache, "models--org--model", "blobs", etag+".incomplete")); err != nil || fi.Size() == 0 {
		t.Errorf("partial download should be kept for resuming: %v, %v", fi, err)
	}
}

func TestDisableSymlinksCopies(t *testing.T) {
	h := newFakeHub(t)
	repo, commit := singleRepo()
	h.addRepo("org/model", repo)
	c := h.client(t, t.TempDir())
	c.DisableSymlinks = true
	dir, err := c.Resolve(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "tokenizer.model", "model.safetensors"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, %v; want a regular file", name, fi, err)
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if !bytes.Equal(data, repo.commits[commit][name].data) {
			t.Errorf("%s: wrong content", name)
		}
	}
}

// A cache laid out by Python's huggingface_hub is used as is, without the network.
func TestUsesPythonLayoutCache(t *testing.T) {
	cache := t.TempDir()
	commit := commitID("python")
	storage := filepath.Join(cache, "models--OpenMOSS-Team--MOSS-TTS-Nano-100M")
	files := map[string][]byte{"config.json": []byte("{}"), "tokenizer.model": []byte("spm"), "pytorch_model.bin": []byte("pickle")}
	for name, data := range files {
		blob := filepath.Join(storage, "blobs", gitOID(data))
		mustWrite(t, blob, data)
		snap := filepath.Join(storage, "snapshots", commit, name)
		os.MkdirAll(filepath.Dir(snap), 0o755)
		if err := os.Symlink("../../blobs/"+gitOID(data), snap); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(storage, "refs", "main"), []byte(commit))
	dead := newFakeHub(t)
	c := dead.client(t, cache)
	dead.hub.Close()
	for _, model := range []string{"OpenMOSS-Team/MOSS-TTS-Nano-100M", "OpenMOSS-Team/MOSS-TTS-Nano-100M@" + commit} {
		dir, err := c.Resolve(context.Background(), model)
		if err != nil || dir != filepath.Join(storage, "snapshots", commit) {
			t.Errorf("%s: %s, %v", model, dir, err)
		}
	}
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveLocalAndInvalid(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "model.safetensors")
	mustWrite(t, file, []byte("x"))
	c := &Client{CacheDir: t.TempDir(), Offline: true}
	got, err := c.Resolve(context.Background(), dir)
	if err != nil || got != dir {
		t.Errorf("existing directory: %s, %v", got, err)
	}
	for _, tc := range []struct{ model, contains string }{
		{"", "no model given"},
		{file, "is a file"},
		{"./no-such-dir", "does not exist"},
		{filepath.Join(dir, "missing"), "does not exist"},
		{"a/b/c", "2 slashes"},
		{"../x", "does not exist"},
		{"justaname", "no organization"},
		{"org/name@", "empty"},
	} {
		_, err := c.Resolve(context.Background(), tc.model)
		if KindOf(err) != KindInvalidModel || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("Resolve(%q) = %v, want an invalid-model error mentioning %q", tc.model, err, tc.contains)
		}
	}
}

func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want a deadline error", err)
	}
	// The OS-level lock also excludes another open file (another process).
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := flock.TryLock(f); err != nil || ok {
		t.Errorf("tryLock on a second descriptor while held = %v, %v", ok, err)
	}
	unlock()
	if ok, err := flock.TryLock(f); err != nil || !ok {
		t.Errorf("tryLock after unlock = %v, %v", ok, err)
	}
	flock.Unlock(f)
	unlock2, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

func BenchmarkDownload(b *testing.B) {
	h := newFakeHub(b)
	repo, _ := singleRepo()
	big := randomBytes(9, 16<<20)
	for _, files := range repo.commits {
		files["model.safetensors"] = fakeFile{data: big, lfs: true}
	}
	h.addRepo("org/model", repo)
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if _, err := h.client(b, b.TempDir()).Resolve(context.Background(), "org/model"); err != nil {
			b.Fatal(err)
		}
	}
}
