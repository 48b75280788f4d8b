package hub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake Hugging Face Hub: the revision API, resolve URLs with the Hub's headers,
// 302 redirects for LFS files to a second "CDN" server, Range support, and
// injectable faults. Every request is logged.

type fakeFile struct {
	data []byte
	lfs  bool
}

type fakeRepo struct {
	commits map[string]map[string]fakeFile // commit → file name → file
	refs    map[string]string              // branch or tag → commit
	token   string                         // if set, the repo is gated: requests need this bearer token
}

type logEntry struct {
	server, method, path, query, rangeHdr, auth string
}

// faultKind says how a content GET misbehaves.
type faultKind int

const (
	faultNone   faultKind = iota
	faultDrop             // send `after` bytes of the body, then cut the connection
	faultStall            // send `after` bytes, then go silent until the client gives up
	faultStatus           // answer with HTTP status `after` instead
)

type fault struct {
	kind  faultKind
	after int
}

type fakeHub struct {
	hub, cdn *httptest.Server

	mu          sync.Mutex
	repos       map[string]*fakeRepo
	log         []logEntry
	faults      map[string][]fault // file name → faults for its successive content GETs
	ignoreRange bool
	linkedSize  map[string]int64 // file name → X-Linked-Size to advertise instead of the truth
	corrupt     map[string]bool  // file name → serve content with one byte flipped
	apiFailures int              // the next N API calls answer 503
	chunkDelay  time.Duration    // pause between 32 KiB chunks of content
	noBlobMeta  bool             // the API ignores ?blobs=true (no sizes, no LFS info)
	chunked     bool             // content is sent without Content-Length
}

func newFakeHub(t testing.TB) *fakeHub {
	t.Helper()
	h := &fakeHub{repos: map[string]*fakeRepo{}, faults: map[string][]fault{},
		linkedSize: map[string]int64{}, corrupt: map[string]bool{}}
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	t.Cleanup(func() { h.hub.Close(); h.cdn.Close() })
	return h
}

// client returns a Client for the fake Hub with fast retries.
func (h *fakeHub) client(t testing.TB, cache string) *Client {
	c := &Client{Endpoint: h.hub.URL, CacheDir: cache, RetryBackoff: time.Millisecond,
		MetadataTimeout: 5 * time.Second, DownloadTimeout: 5 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func (h *fakeHub) addRepo(id string, r *fakeRepo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.repos[id] = r
}

func (h *fakeHub) requests() []logEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

func (h *fakeHub) resetLog() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = nil
}

func (h *fakeHub) record(server string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, logEntry{server: server, method: r.Method, path: r.URL.Path, query: r.URL.RawQuery,
		rangeHdr: r.Header.Get("Range"), auth: r.Header.Get("Authorization")})
}

// hashMemo caches digests of the fake's (immutable) file contents, so the fake
// server does not dominate benchmarks.
var hashMemo sync.Map // memoKey → string

type memoKey struct {
	kind string
	p    *byte
	n    int
}

func memo(kind string, data []byte, f func([]byte) string) string {
	if len(data) == 0 {
		return f(data)
	}
	k := memoKey{kind, &data[0], len(data)}
	if v, ok := hashMemo.Load(k); ok {
		return v.(string)
	}
	v := f(data)
	hashMemo.Store(k, v)
	return v
}

func gitOID(data []byte) string { return memo("git", data, gitOIDRaw) }

func sha256Hex(data []byte) string { return memo("sha256", data, sha256Raw) }

func gitOIDRaw(data []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(data))
	s.Write(data)
	return hex.EncodeToString(s.Sum(nil))
}

func sha256Raw(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func lfsPointer(data []byte) []byte {
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha256Hex(data), len(data))
}

// etagOf is the blob name the cache must use for f.
func etagOf(f fakeFile) string {
	if f.lfs {
		return sha256Hex(f.data)
	}
	return gitOID(f.data)
}

func hubError(w http.ResponseWriter, code int, errorCode, msg string) {
	if errorCode != "" {
		w.Header().Set("X-Error-Code", errorCode)
	}
	if msg != "" {
		w.Header().Set("X-Error-Message", msg)
	}
	http.Error(w, `{"error":"`+msg+`"}`, code)
}

// lookup finds the repo and commit, answering the error itself if it fails.
func (h *fakeHub) lookup(w http.ResponseWriter, r *http.Request, id, rev string) (*fakeRepo, string, bool) {
	h.mu.Lock()
	repo := h.repos[id]
	h.mu.Unlock()
	if repo == nil {
		code := http.StatusNotFound
		if r.Header.Get("Authorization") == "" {
			code = http.StatusUnauthorized // what the real Hub answers anonymous callers
		}
		hubError(w, code, "RepoNotFound", "Repository not found")
		return nil, "", false
	}
	if repo.token != "" && r.Header.Get("Authorization") != "Bearer "+repo.token {
		hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+id+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
		return nil, "", false
	}
	commit := rev
	if _, ok := repo.commits[rev]; !ok {
		commit = repo.refs[rev]
	}
	if _, ok := repo.commits[commit]; !ok {
		hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
		return nil, "", false
	}
	return repo, commit, true
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	p := r.URL.EscapedPath()
	if rest, ok := strings.CutPrefix(p, "/api/models/"); ok {
		h.serveAPI(w, r, rest)
		return
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) < 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	rev, err1 := url.PathUnescape(parts[3])
	name, err2 := url.PathUnescape(strings.Join(parts[4:], "/"))
	if err1 != nil || err2 != nil {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	repo, commit, ok := h.lookup(w, r, parts[0]+"/"+parts[1], rev)
	if !ok {
		return
	}
	f, ok := repo.commits[commit][name]
	w.Header().Set("X-Repo-Commit", commit)
	if !ok {
		hubError(w, http.StatusNotFound, "EntryNotFound", name+" does not exist on \""+rev+"\"")
		return
	}
	if !f.lfs {
		w.Header().Set("ETag", `"`+gitOID(f.data)+`"`)
		h.serveContent(w, r, name, f.data)
		return
	}
	size := int64(len(f.data))
	h.mu.Lock()
	if s, ok := h.linkedSize[name]; ok {
		size = s
	}
	h.mu.Unlock()
	sum := sha256Hex(f.data)
	w.Header().Set("ETag", `"`+gitOID(lfsPointer(f.data))+`"`)
	w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
	w.Header().Set("X-Linked-Size", strconv.FormatInt(size, 10))
	w.Header().Set("Location", h.cdn.URL+"/lfs/"+sum+"/"+url.PathEscape(name)+"?X-Amz-Signature=abc123")
	w.WriteHeader(http.StatusFound)
}

func (h *fakeHub) serveAPI(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) != 4 || parts[2] != "revision" {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	fail := h.apiFailures > 0
	if fail {
		h.apiFailures--
	}
	h.mu.Unlock()
	if fail {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	}
	rev, err := url.PathUnescape(parts[3])
	if err != nil {
		http.Error(w, "bad revision", http.StatusBadRequest)
		return
	}
	id := parts[0] + "/" + parts[1]
	repo, commit, ok := h.lookup(w, r, id, rev)
	if !ok {
		return
	}
	h.mu.Lock()
	blobs := r.URL.Query().Get("blobs") == "true" && !h.noBlobMeta
	h.mu.Unlock()
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sib struct {
		Name   string `json:"rfilename"`
		Size   *int   `json:"size,omitempty"`
		BlobID string `json:"blobId,omitempty"`
		LFS    *lfs   `json:"lfs,omitempty"`
	}
	var sibs []sib
	for name, f := range repo.commits[commit] {
		s := sib{Name: name}
		if blobs {
			n := len(f.data)
			s.Size, s.BlobID = &n, gitOID(f.data)
			if f.lfs {
				p := lfsPointer(f.data)
				s.BlobID = gitOID(p)
				s.LFS = &lfs{SHA256: sha256Hex(f.data), Size: n, PointerSize: len(p)}
			}
		}
		sibs = append(sibs, s)
	}
	slices.SortFunc(sibs, func(a, b sib) int { return strings.Compare(a.Name, b.Name) })
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"_id": "x", "id": id, "modelId": id, "sha": commit,
		"private": false, "gated": repo.token != "", "siblings": sibs})
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/lfs/"), "/", 2)
	if len(parts) != 2 || r.URL.Query().Get("X-Amz-Signature") == "" {
		http.Error(w, "bad signature", http.StatusForbidden)
		return
	}
	h.mu.Lock()
	var data []byte
	for _, repo := range h.repos {
		for _, files := range repo.commits {
			for _, f := range files {
				if f.lfs && sha256Hex(f.data) == parts[0] {
					data = f.data
				}
			}
		}
	}
	h.mu.Unlock()
	if data == nil {
		http.NotFound(w, r)
		return
	}
	h.serveContent(w, r, parts[1], data)
}

// serveContent answers HEAD/GET for a file body with Range support and faults.
func (h *fakeHub) serveContent(w http.ResponseWriter, r *http.Request, name string, data []byte) {
	h.mu.Lock()
	var flt fault
	if r.Method == http.MethodGet && len(h.faults[name]) > 0 {
		flt, h.faults[name] = h.faults[name][0], h.faults[name][1:]
	}
	ignoreRange, corrupt, delay, chunked := h.ignoreRange, h.corrupt[name], h.chunkDelay, h.chunked
	h.mu.Unlock()
	if flt.kind == faultStatus {
		http.Error(w, "injected failure", flt.after)
		return
	}
	if corrupt {
		data = slices.Clone(data)
		data[len(data)/2] ^= 0xff
	}
	status, body := http.StatusOK, data
	if rg := r.Header.Get("Range"); rg != "" && !ignoreRange {
		v, ok := strings.CutPrefix(rg, "bytes=")
		v, ok2 := strings.CutSuffix(v, "-")
		start, err := strconv.Atoi(v)
		if !ok || !ok2 || err != nil || start < 0 || start >= len(data) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		status, body = http.StatusPartialContent, data[start:]
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
	}
	w.Header().Set("Accept-Ranges", "bytes")
	if !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if chunked {
		w.(http.Flusher).Flush()
	}
	if flt.kind != faultNone && flt.after < len(body) {
		body = body[:flt.after]
	}
	for len(body) > 0 {
		n := min(len(body), 32<<10)
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
		if delay > 0 {
			w.(http.Flusher).Flush()
			time.Sleep(delay)
		}
	}
	switch flt.kind {
	case faultDrop:
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the server cuts the connection
	case faultStall:
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func commitID(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
