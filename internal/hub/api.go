package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxMetadataBody bounds the API responses we read.
const maxMetadataBody = 32 << 20

// repoInfo is what GET /api/models/{repo}/revision/{rev}?blobs=true tells us.
type repoInfo struct {
	SHA      string    `json:"sha"`
	Siblings []sibling `json:"siblings"`
}

type sibling struct {
	Name   string   `json:"rfilename"`
	Size   *int64   `json:"size"`
	BlobID string   `json:"blobId"`
	LFS    *lfsInfo `json:"lfs"`
}

type lfsInfo struct {
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	PointerSize int64  `json:"pointerSize"`
}

// fileSize is the sibling's size, or -1 when the API did not say.
func (s *sibling) fileSize() int64 {
	switch {
	case s == nil:
		return -1
	case s.LFS != nil:
		return s.LFS.Size
	case s.Size != nil:
		return *s.Size
	}
	return -1
}

// parseRepoInfo decodes and validates a revision-info response. The commit must
// be a full hash (it becomes a directory name); siblings with names that are not
// safe relative paths are dropped, since they can never be selected.
func parseRepoInfo(data []byte) (*repoInfo, error) {
	var info repoInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("parse revision info: %w", err)
	}
	if !isCommitHash(info.SHA) {
		return nil, fmt.Errorf("parse revision info: sha %q is not a 40-hex commit id", info.SHA)
	}
	kept := info.Siblings[:0]
	seen := make(map[string]bool, len(info.Siblings))
	for _, s := range info.Siblings {
		if !validFileName(s.Name) || seen[s.Name] {
			continue
		}
		if s.Size != nil && *s.Size < 0 {
			return nil, fmt.Errorf("parse revision info: %s has size %d", s.Name, *s.Size)
		}
		if s.LFS != nil && (!isLowerHex(s.LFS.SHA256, 64) || s.LFS.Size < 0) {
			return nil, fmt.Errorf("parse revision info: %s has malformed lfs metadata", s.Name)
		}
		seen[s.Name] = true
		kept = append(kept, s)
	}
	info.Siblings = kept
	return &info, nil
}

// response is a metadata response, fully read.
type response struct {
	status int
	header http.Header
	body   []byte
}

// doMetadata performs a small request (API or HEAD) with a per-attempt timeout,
// retrying transient failures a few times. Failures to reach the Hub at all are
// returned as *unreachableError.
func (c *Client) doMetadata(ctx context.Context, method, rawURL string) (*response, error) {
	var lastErr error
	for attempt := 1; ; attempt++ {
		resp, err := c.metadataOnce(ctx, method, rawURL)
		if err == nil && !retryableStatus(resp.status) {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", redactURL(rawURL), unwrapURLError(err))
			if !transientNetError(err) {
				break
			}
		} else {
			lastErr = fmt.Errorf("%s: HTTP %d%s", redactURL(rawURL), resp.status, hubMessageSuffix(resp.header))
		}
		if attempt >= metadataAttempts {
			break
		}
		if err := sleepCtx(ctx, c.backoff(attempt)); err != nil {
			return nil, err
		}
	}
	return nil, &unreachableError{lastErr}
}

func (c *Client) metadataOnce(ctx context.Context, method, rawURL string) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.metadataTimeout())
	defer cancel()
	req, err := c.newRequest(ctx, method, rawURL)
	if err != nil {
		return nil, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, rawURL, err)
	}
	if len(body) > maxMetadataBody {
		return nil, fmt.Errorf("%s %s: response larger than %d bytes", method, rawURL, maxMetadataBody)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// transientNetError reports whether retrying err may help. Refused connections
// and unknown hosts do not heal within seconds; timeouts and resets may.
func transientNetError(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary || dns.IsTimeout
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		return false
	}
	return true
}

// repoInfo asks the Hub which commit rev is and which files it holds.
func (c *Client) repoInfo(ctx context.Context, repo, rev string) (*repoInfo, error) {
	u := c.endpoint() + "/api/models/" + repo + "/revision/" + url.PathEscape(rev) + "?blobs=true"
	resp, err := c.doMetadata(ctx, http.MethodGet, u)
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, c.statusError(resp, repo, rev, "")
	}
	info, err := parseRepoInfo(resp.body)
	if err != nil {
		return nil, &Error{Kind: KindIntegrity, Err: err,
			Msg: fmt.Sprintf("%s sent a malformed answer for %s: %v; if HF_ENDPOINT points to a mirror, check that it serves the Hugging Face API", c.endpoint(), displayModel(repo, rev), err)}
	}
	return info, nil
}

// fileMeta is what a HEAD on a resolve URL tells us about one file.
type fileMeta struct {
	etag   string // blob name: sha256 for LFS files, the git blob id otherwise
	size   int64  // -1 when unknown
	commit string // X-Repo-Commit
	lfs    bool   // the ETag came from X-Linked-Etag
}

func (c *Client) resolveURL(repo, rev, name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return c.endpoint() + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(parts, "/")
}

// headFile fetches a file's metadata without following a redirect to the CDN.
func (c *Client) headFile(ctx context.Context, repo, commit, name string) (fileMeta, error) {
	resp, err := c.doMetadata(ctx, http.MethodHead, c.resolveURL(repo, commit, name))
	if err != nil {
		return fileMeta{}, err
	}
	if resp.status >= 400 {
		return fileMeta{}, c.statusError(resp, repo, commit, name)
	}
	m := fileMeta{size: -1, commit: resp.header.Get("X-Repo-Commit")}
	etag := resp.header.Get("X-Linked-Etag")
	m.lfs = etag != ""
	if etag == "" {
		etag = resp.header.Get("ETag")
	}
	m.etag = normalizeETag(etag)
	if !validETag(m.etag) {
		return fileMeta{}, &Error{Kind: KindIntegrity,
			Msg: fmt.Sprintf("%s gave no usable ETag for %s of %s (got %q); if HF_ENDPOINT points to a mirror or proxy, check that it passes the Hub's ETag headers through", c.endpoint(), name, repo, etag)}
	}
	size := resp.header.Get("X-Linked-Size")
	if size == "" && resp.status < 300 {
		size = resp.header.Get("Content-Length")
	}
	if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
		m.size = n
	}
	return m, nil
}

// normalizeETag strips the weak marker and quotes, as huggingface_hub does.
func normalizeETag(etag string) string {
	etag = strings.TrimSpace(etag)
	etag = strings.TrimPrefix(etag, "W/")
	return strings.Trim(etag, `"`)
}

// validETag reports whether etag can serve as a blob file name.
func validETag(etag string) bool {
	if etag == "" || len(etag) > 200 || etag[0] == '.' || etag[0] == '-' {
		return false
	}
	for i := 0; i < len(etag); i++ {
		if c := etag[i]; !isRepoChar(c) {
			return false
		}
	}
	return true
}

func hubMessageSuffix(h http.Header) string {
	if m := cleanHubMessage(h.Get("X-Error-Message")); m != "" {
		return " (" + m + ")"
	}
	return ""
}

// statusError turns a 4xx answer from the Hub into an *Error that says what to
// do. name is the file being fetched, "" for the revision API.
func (c *Client) statusError(resp *response, repo, rev, name string) error {
	code, ep := resp.status, c.endpoint()
	hubMsg := hubMessageSuffix(resp.header)
	model := displayModel(repo, rev)
	tokenHint := "set HF_TOKEN (or log in with \"hf auth login\") to a token that can read it"
	if c.Token != "" {
		tokenHint = "check that " + c.tokenSourceDesc() + " is valid and can read it"
	}
	switch errorCode := resp.header.Get("X-Error-Code"); {
	case errorCode == "RevisionNotFound":
		return &Error{Kind: KindRevisionNotFound,
			Msg: fmt.Sprintf("revision %q of %s was not found on %s (HTTP %d)%s; check the branch, tag or commit name", rev, repo, ep, code, hubMsg)}
	case errorCode == "EntryNotFound" || (errorCode == "" && name != "" && code == http.StatusNotFound):
		return &Error{Kind: KindNotFound,
			Msg: fmt.Sprintf("file %q of %s (commit %s) was not found on %s (HTTP %d)%s", name, repo, rev, ep, code, hubMsg)}
	case errorCode == "GatedRepo" || (errorCode != "RepoNotFound" && (code == http.StatusUnauthorized || code == http.StatusForbidden)):
		return &Error{Kind: KindAccessDenied,
			Msg: fmt.Sprintf("access to %s was denied by %s (HTTP %d)%s: the repository is gated or private. Request access on %s/%s if it is gated, then %s", repo, ep, code, hubMsg, ep, repo, tokenHint)}
	case errorCode == "RepoNotFound" || code == http.StatusNotFound:
		what := fmt.Sprintf("repository %s", repo)
		if errorCode == "" && rev != DefaultRevision {
			what = fmt.Sprintf("repository %s or its revision %q", repo, rev)
		}
		return &Error{Kind: KindNotFound,
			Msg: fmt.Sprintf("%s was not found on %s (HTTP %d)%s; check the spelling, and if the repository is private or gated, %s", what, ep, code, hubMsg, tokenHint)}
	}
	return fmt.Errorf("%s answered HTTP %d for %s%s", ep, code, model, hubMsg)
}
