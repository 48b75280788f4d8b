package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of Client's fields.
const (
	defaultTimeout      = 10 * time.Second // huggingface_hub's HF_HUB_ETAG_TIMEOUT and HF_HUB_DOWNLOAD_TIMEOUT
	defaultMaxRetries   = 5
	defaultRetryBackoff = time.Second
	maxRetryBackoff     = 8 * time.Second
	metadataAttempts    = 3 // API and HEAD calls: fail fast so the cache can be used instead
	defaultUserAgent    = "nanovox (+https://github.com/nanovox/nanovox)"
)

// Client resolves models and downloads them into the Hugging Face cache.
// Its zero value works: Hub at DefaultEndpoint, the cache directory from the
// environment, no token. Set the fields before the first call and do not change
// them afterwards. A Client is safe for concurrent use, also by several processes
// sharing one cache: downloads of the same file take a file lock, as
// huggingface_hub does.
type Client struct {
	// Endpoint is the Hub base URL, e.g. https://huggingface.co or a mirror.
	Endpoint string
	// Token, if set, is sent as "Authorization: Bearer" to the Endpoint host only.
	Token string
	// CacheDir is the hub cache ($HF_HUB_CACHE); "" means CacheDirFromEnv().
	CacheDir string
	// Offline forbids all network access; only complete cached snapshots resolve.
	Offline bool
	// DisableSymlinks stores snapshot files as copies instead of symlinks to blobs.
	DisableSymlinks bool
	// HTTPClient, if set, is used for requests (its CheckRedirect is replaced, so
	// that tokens never follow a redirect to another host).
	HTTPClient *http.Client
	// Progress, if set, is called as each file downloads, from the goroutine that
	// called Resolve or Download. total is -1 when the size is unknown.
	Progress func(file string, done, total int64)
	// UserAgent is sent with every request.
	UserAgent string
	// MetadataTimeout bounds each API and HEAD request; 0 means 10s.
	MetadataTimeout time.Duration
	// DownloadTimeout aborts (and retries) a download that receives nothing for
	// this long; 0 means 10s.
	DownloadTimeout time.Duration
	// MaxRetries is how many consecutive failures without progress a download
	// survives; 0 means 5.
	MaxRetries int
	// RetryBackoff is the first wait between retries, doubled each time up to 8s;
	// 0 means 1s.
	RetryBackoff time.Duration

	tokenSource string // where Token came from, for messages

	once sync.Once
	hc   *http.Client
}

// Resolve returns the directory holding the model named by model: an existing
// directory as is (made absolute), or the snapshot directory of a Hub repository
// "org/name[@revision]". A cached snapshot that already holds every file the
// loader needs is returned without touching the network; otherwise the missing
// files are downloaded. Failures the user can act on are *Error values.
func (c *Client) Resolve(ctx context.Context, model string) (string, error) {
	if model == "" {
		return "", invalidf("no model given: pass a directory or a Hugging Face repo id such as OpenMOSS-Team/MOSS-TTS-Nano-100M")
	}
	if fi, err := os.Stat(model); err == nil {
		if !fi.IsDir() {
			return "", invalidf("model %q is a file; pass the directory that holds config.json and the weights", model)
		}
		abs, err := filepath.Abs(model)
		if err != nil {
			return "", fmt.Errorf("resolve model directory %q: %w", model, err)
		}
		return abs, nil
	}
	repo, rev, err := ParseRepoID(model)
	if err != nil {
		if looksLikePath(model) {
			return "", invalidf("model directory %q does not exist", model)
		}
		var e *Error
		errors.As(err, &e)
		return "", invalidf("model %q is neither an existing directory nor a Hugging Face repo id: %s", model, e.Msg)
	}
	return c.fetch(ctx, repo, rev, false)
}

// Download makes sure the files the loader needs for repo at revision ("" means
// main) are in the cache and returns the snapshot directory. Unlike Resolve it
// always asks the Hub what the revision points to now (unless Offline), so a
// branch that moved is brought up to date. If the Hub cannot be reached but a
// complete snapshot of the revision is cached, that snapshot is returned. It is
// the library side of "pull".
func (c *Client) Download(ctx context.Context, repo, revision string) (string, error) {
	if err := ValidateRepoID(repo); err != nil {
		return "", err
	}
	if revision == "" {
		revision = DefaultRevision
	} else if err := validateRevision(revision); err != nil {
		return "", invalidf("invalid revision for %s: %v", repo, err)
	}
	return c.fetch(ctx, repo, revision, true)
}

// CloseIdleConnections closes the idle connections of the Client's HTTP transport.
func (c *Client) CloseIdleConnections() { c.http().CloseIdleConnections() }

// looksLikePath reports whether s was meant as a file system path rather than a repo id.
func looksLikePath(s string) bool {
	return filepath.IsAbs(s) || s == "." || s == ".." || s == "~" ||
		strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/") ||
		strings.ContainsRune(s, '\\')
}

func (c *Client) endpoint() string {
	if c.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(c.Endpoint, "/")
}

func (c *Client) cacheDir() string {
	if c.CacheDir == "" {
		return CacheDirFromEnv()
	}
	return c.CacheDir
}

func (c *Client) metadataTimeout() time.Duration { return orDefault(c.MetadataTimeout, defaultTimeout) }
func (c *Client) downloadTimeout() time.Duration { return orDefault(c.DownloadTimeout, defaultTimeout) }
func (c *Client) retryBackoff() time.Duration    { return orDefault(c.RetryBackoff, defaultRetryBackoff) }

func (c *Client) maxRetries() int {
	if c.MaxRetries <= 0 {
		return defaultMaxRetries
	}
	return c.MaxRetries
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// http returns the HTTP client with our redirect policy.
func (c *Client) http() *http.Client {
	c.once.Do(func() {
		var hc http.Client
		if c.HTTPClient != nil {
			hc = *c.HTTPClient
		} else {
			hc.Transport = http.DefaultTransport.(*http.Transport).Clone()
		}
		hc.CheckRedirect = checkRedirect
		c.hc = &hc
	})
	return c.hc
}

// checkRedirect follows at most 10 redirects. On a redirect to another origin
// (an LFS file's CDN) it drops the Authorization header — net/http would keep
// it for subdomains and other ports of the same host — and a HEAD stops there,
// because the Hub's 302 carries the X-Linked-* metadata we want.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !sameOrigin(req.URL, via[0].URL) {
		if req.Method == http.MethodHead {
			return http.ErrUseLastResponse
		}
		req.Header.Del("Authorization")
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

func (c *Client) newRequest(ctx context.Context, method, rawURL string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", rawURL, err)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = defaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	// Sizes and byte ranges must refer to the file itself, not a compressed form.
	req.Header.Set("Accept-Encoding", "identity")
	if c.Token != "" {
		if ep, err := url.Parse(c.endpoint()); err == nil && sameOrigin(req.URL, ep) {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
	}
	return req, nil
}

// backoff returns the wait before retry number n (1-based).
func (c *Client) backoff(n int) time.Duration {
	d := c.retryBackoff()
	for i := 1; i < n && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, max(maxRetryBackoff, c.retryBackoff()))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryableStatus are the statuses huggingface_hub retries.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// tokenSourceDesc names where the token came from, for messages.
func (c *Client) tokenSourceDesc() string {
	if c.tokenSource != "" {
		return c.tokenSource
	}
	return "the configured token"
}
