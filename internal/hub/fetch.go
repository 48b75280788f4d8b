package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// copyBuffer is the size of reads from the network.
const copyBuffer = 256 << 10

// fetch returns the snapshot directory of repo at rev, downloading what is
// missing. With refresh false a complete cached snapshot wins without any
// request; with refresh true the Hub is asked what rev is now (unless offline).
func (c *Client) fetch(ctx context.Context, repo, rev string, refresh bool) (string, error) {
	rc := c.repoCache(repo)
	var missing []string // of the cached snapshot, for messages
	cachedCommit := rc.cachedCommit(rev)
	if cachedCommit != "" && (!refresh || c.Offline) {
		missing = rc.missingFiles(cachedCommit)
		if len(missing) == 0 {
			return rc.snapshotDir(cachedCommit), nil
		}
	}
	if c.Offline {
		return "", c.notCachedError(rc, rev, cachedCommit, missing, nil)
	}
	info, err := c.repoInfo(ctx, repo, rev)
	if err != nil {
		if u := (*unreachableError)(nil); errors.As(err, &u) {
			if cachedCommit != "" && missing == nil {
				missing = rc.missingFiles(cachedCommit)
				if len(missing) == 0 { // pull without a network: the cache is all we have
					return rc.snapshotDir(cachedCommit), nil
				}
			}
			return "", c.notCachedError(rc, rev, cachedCommit, missing, u.err)
		}
		return "", err
	}
	commit := info.SHA
	if err := c.downloadSnapshot(ctx, rc, rev, commit, info.Siblings); err != nil {
		return "", err
	}
	rc.writeTreeCache(commit, info.Siblings)
	if err := rc.writeRef(rev, commit); err != nil {
		return "", err
	}
	return rc.snapshotDir(commit), nil
}

// downloadSnapshot makes every file the loader needs present in snapshots/{commit}.
func (c *Client) downloadSnapshot(ctx context.Context, rc repoCache, rev, commit string, siblings []sibling) error {
	byName := make(map[string]*sibling, len(siblings))
	names := make([]string, 0, len(siblings))
	for i := range siblings {
		byName[siblings[i].Name] = &siblings[i]
		names = append(names, siblings[i].Name)
	}
	model := displayModel(rc.repo, rev)
	ensure := func(name string) error {
		s, ok := byName[name]
		if !ok {
			return &Error{Kind: KindIntegrity,
				Msg: fmt.Sprintf("%s (commit %s) lists %q in its weight index, but the repository has no such file", model, shortCommit(commit), name)}
		}
		return c.ensureFile(ctx, rc, commit, name, s)
	}
	files, err := SelectFiles(names, func(index string) ([]string, error) {
		if err := ensure(index); err != nil {
			return nil, err
		}
		data, err := readFileLimit(rc.pointer(commit, index), maxIndexSize)
		if err != nil {
			return nil, err
		}
		shards, err := ParseIndex(data)
		if err != nil {
			return nil, &Error{Kind: KindIntegrity, Err: err,
				Msg: fmt.Sprintf("%s (commit %s) has an unusable %s: %v", model, shortCommit(commit), index, err)}
		}
		return shards, nil
	})
	if errors.Is(err, ErrNoConfig) || errors.Is(err, ErrNoWeights) {
		return &Error{Kind: KindNotFound, Err: err,
			Msg: fmt.Sprintf("%s (commit %s) does not look like a model this program can load: %v", model, shortCommit(commit), err)}
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(rc.root, 0o755); err != nil {
		return fmt.Errorf("create cache directory: %w", err)
	}
	writeCachedirTag(rc.root)
	for _, name := range files {
		if err := ensure(name); err != nil {
			return err
		}
	}
	return nil
}

// ensureFile makes snapshots/{commit}/{name} exist, fetching its blob unless a
// blob with the same ETag is already cached (from any revision).
func (c *Client) ensureFile(ctx context.Context, rc repoCache, commit, name string, sib *sibling) error {
	pointer := rc.pointer(commit, name)
	if fileExists(pointer) {
		return nil
	}
	meta, err := c.headFile(ctx, rc.repo, commit, name)
	if err != nil {
		var u *unreachableError
		if errors.As(err, &u) {
			return &Error{Kind: KindNetwork, Err: u.err,
				Msg: fmt.Sprintf("download %s of %s: the Hub cannot be reached: %v; run the command again to resume", name, rc.repo, u.err)}
		}
		return err
	}
	if meta.commit != "" && meta.commit != commit {
		return &Error{Kind: KindIntegrity,
			Msg: fmt.Sprintf("download %s of %s: asked for commit %s but %s answered for commit %s", name, rc.repo, commit, c.endpoint(), meta.commit)}
	}
	if meta.size < 0 {
		meta.size = sib.fileSize()
	}
	if ss := sib.fileSize(); ss >= 0 && meta.size != ss {
		return &Error{Kind: KindIntegrity,
			Msg: fmt.Sprintf("download %s of %s: the Hub reports %s in one place and %s in another", name, rc.repo, describeSize(meta.size), describeSize(ss))}
	}
	// The sha256 to verify: the LFS object id. The ETag of an LFS file is that id.
	wantSHA := ""
	if sib != nil && sib.LFS != nil {
		wantSHA = sib.LFS.SHA256
	} else if meta.lfs && isLowerHex(meta.etag, 64) {
		wantSHA = meta.etag
	}

	blob := rc.blob(meta.etag)
	unlock, err := lockFile(ctx, rc.lockPath(meta.etag))
	if err != nil {
		return err
	}
	defer unlock()
	if fileExists(pointer) { // another process or goroutine finished it meanwhile
		return nil
	}
	newBlob := false
	if !fileExists(blob) {
		if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
			return fmt.Errorf("create blobs directory: %w", err)
		}
		if err := c.downloadBlob(ctx, rc.repo, commit, name, blob, meta.size, wantSHA); err != nil {
			return err
		}
		newBlob = true
	}
	return c.link(blob, pointer, newBlob)
}

// downloadBlob fetches name at commit into blob through blob+".incomplete", resuming what
// an earlier attempt left there, verifying size and sha256 (if wantSHA is set)
// before renaming it into place. Retries back off; progress resets the count.
func (c *Client) downloadBlob(ctx context.Context, repo, commit, name, blob string, size int64, wantSHA string) error {
	tmp := blob + ".incomplete"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	d := &download{c: c, ctx: ctx, f: f, repo: repo, commit: commit, name: name,
		url: c.resolveURL(repo, commit, name), size: size, h: sha256.New()}
	err = d.run()
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("download %s: %w", name, cerr)
	}
	if err == nil && wantSHA != "" {
		if got := hex.EncodeToString(d.h.Sum(nil)); got != wantSHA {
			err = &Error{Kind: KindIntegrity,
				Msg: fmt.Sprintf("download %s of %s: sha256 is %s, expected %s; the corrupt download was deleted, run the command again", name, repo, got, wantSHA)}
		}
	}
	if err != nil {
		if KindOf(err) == KindIntegrity {
			os.Remove(tmp) // never resume from data known to be bad
		}
		return err
	}
	if err := os.Rename(tmp, blob); err != nil {
		return fmt.Errorf("download %s: %w", name, err)
	}
	if c.Progress != nil && d.size < 0 { // tell the callback the unsized transfer is complete
		c.Progress(name, d.off, d.off)
	}
	return nil
}

// download is one file transfer in progress.
type download struct {
	c            *Client
	ctx          context.Context
	f            *os.File
	repo, commit string
	name         string
	url          string    // the resolve URL; each attempt follows its redirect anew
	size         int64     // expected size, -1 if unknown
	off          int64     // bytes in f
	h            hash.Hash // sha256 of f[:off]
}

func (d *download) integrity(format string, args ...any) error {
	return &Error{Kind: KindIntegrity,
		Msg: fmt.Sprintf("download %s of %s: ", d.name, d.repo) + fmt.Sprintf(format, args...) + "; the corrupt download was deleted, run the command again"}
}

// restart discards what was downloaded so far.
func (d *download) restart() error {
	if err := d.f.Truncate(0); err != nil {
		return fmt.Errorf("download %s: %w", d.name, err)
	}
	d.off = 0
	d.h.Reset()
	return nil
}

func (d *download) run() error {
	// Resume: hash what an earlier attempt left behind.
	fi, err := d.f.Stat()
	if err != nil {
		return fmt.Errorf("download %s: %w", d.name, err)
	}
	if d.size >= 0 && fi.Size() > d.size {
		if err := d.restart(); err != nil {
			return err
		}
	} else if fi.Size() > 0 {
		if _, err := io.Copy(d.h, io.NewSectionReader(d.f, 0, fi.Size())); err != nil {
			return fmt.Errorf("download %s: read partial file: %w", d.name, err)
		}
		d.off = fi.Size()
	}
	c := d.c
	if c.Progress != nil {
		c.Progress(d.name, d.off, d.size)
	}
	failures := 0
	for {
		if d.size >= 0 && d.off == d.size {
			return nil
		}
		done, progressed, err := d.attempt()
		if done {
			return nil
		}
		if err == nil {
			continue
		}
		if d.ctx.Err() != nil {
			return d.ctx.Err()
		}
		var retry *retryable
		if !errors.As(err, &retry) {
			return err
		}
		if progressed {
			failures = 0
		}
		if failures++; failures > c.maxRetries() {
			return &Error{Kind: KindNetwork, Err: retry.err,
				Msg: fmt.Sprintf("download %s of %s: %v (gave up after %d attempts; %s of %s are kept, run the command again to resume)",
					d.name, d.repo, retry.err, failures, strconv.FormatInt(d.off, 10), describeSize(d.size))}
		}
		if err := sleepCtx(d.ctx, c.backoff(failures)); err != nil {
			return err
		}
	}
}

// retryable wraps a failure worth retrying (connection drop, stall, 5xx).
type retryable struct{ err error }

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// attempt makes one GET, resuming at d.off. done means the file is complete.
func (d *download) attempt() (done, progressed bool, err error) {
	c := d.c
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	// A stall watchdog rather than a total timeout: large files take long, silent
	// connections should not.
	idle := c.downloadTimeout()
	watchdog := time.AfterFunc(idle, cancel)
	defer watchdog.Stop()
	stalled := func(err error) error {
		if d.ctx.Err() == nil && ctx.Err() != nil {
			return &retryable{fmt.Errorf("no data for %v", idle)}
		}
		return &retryable{err}
	}

	req, err := c.newRequest(ctx, http.MethodGet, d.url)
	if err != nil {
		return false, false, err
	}
	if d.off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", d.off))
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return false, false, stalled(unwrapURLError(err))
	}
	defer resp.Body.Close()
	watchdog.Reset(idle)

	switch code := resp.StatusCode; {
	case code == http.StatusPartialContent && d.off > 0:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != d.off {
			// Not the range we asked for: start over rather than guess.
			if err := d.restart(); err != nil {
				return false, false, err
			}
			return false, false, &retryable{fmt.Errorf("server answered Range bytes=%d- with %q", d.off, resp.Header.Get("Content-Range"))}
		}
		if total >= 0 && d.size >= 0 && total != d.size {
			return false, false, d.integrity("the server's file has %d bytes, expected %d", total, d.size)
		}
		if d.size < 0 {
			d.size = total
		}
	case code == http.StatusOK:
		if d.off > 0 { // the server ignored Range: take the whole file again
			if err := d.restart(); err != nil {
				return false, false, err
			}
		}
		if cl := resp.ContentLength; cl >= 0 {
			if d.size >= 0 && cl != d.size {
				return false, false, d.integrity("the server sent %d bytes, expected %d", cl, d.size)
			}
			d.size = cl
		}
	case code == http.StatusRequestedRangeNotSatisfiable && d.off > 0:
		var total int64
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes */%d", &total); err == nil && d.size >= 0 && total != d.size {
			return false, false, d.integrity("the server's file has %d bytes, expected %d", total, d.size)
		}
		if err := d.restart(); err != nil {
			return false, false, err
		}
		return false, false, &retryable{fmt.Errorf("server refused Range bytes=%d-", d.off)}
	case retryableStatus(code):
		return false, false, &retryable{fmt.Errorf("GET %s: HTTP %d", redactURL(d.url), code)}
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, false, c.statusError(&response{status: code, header: resp.Header, body: body}, d.repo, d.commit, d.name)
	}
	if c.Progress != nil {
		c.Progress(d.name, d.off, d.size)
	}

	// Copy, never past the expected size (one byte more proves the server is wrong).
	var src io.Reader = resp.Body
	if d.size >= 0 {
		src = io.LimitReader(resp.Body, d.size-d.off+1)
	}
	if _, err := d.f.Seek(d.off, io.SeekStart); err != nil {
		return false, false, fmt.Errorf("download %s: %w", d.name, err)
	}
	buf := make([]byte, copyBuffer)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			watchdog.Reset(idle)
			if _, err := d.f.Write(buf[:n]); err != nil {
				return false, progressed, fmt.Errorf("download %s: write %s: %w", d.name, d.f.Name(), err)
			}
			d.h.Write(buf[:n])
			d.off += int64(n)
			progressed = true
			if c.Progress != nil {
				c.Progress(d.name, d.off, d.size)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return false, progressed, stalled(fmt.Errorf("connection lost at byte %d: %w", d.off, rerr))
		}
	}
	switch {
	case d.size < 0:
		return true, progressed, nil // nothing to compare with; the body ended cleanly
	case d.off > d.size:
		return false, progressed, d.integrity("the server sent more than the expected %d bytes", d.size)
	case d.off < d.size:
		return false, progressed, &retryable{fmt.Errorf("connection closed at byte %d of %d", d.off, d.size)}
	}
	return true, progressed, nil
}

// parseContentRange parses "bytes start-end/total" (total may be "*" → -1).
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, last, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(first, 10, 64)
	end, err2 := strconv.ParseInt(last, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t <= end {
			return 0, 0, false
		}
		total = t
	}
	return start, total, true
}

// unwrapURLError drops net/http's "Get <url>:" prefix, which repeats the URL
// (and its signed query) in messages.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactURL drops the query (CDN signatures) from a URL shown in messages.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// notCachedError explains that the model cannot be used without the Hub and how
// to proceed. cause is nil in offline mode.
func (c *Client) notCachedError(rc repoCache, rev, commit string, missing []string, cause error) error {
	model := displayModel(rc.repo, rev)
	state := fmt.Sprintf("is not in the local cache (%s)", rc.root)
	if commit != "" && len(missing) > 0 && !strings.HasPrefix(missing[0], "everything") {
		state = fmt.Sprintf("is only partly in the local cache (%s: snapshot %s lacks %s)",
			rc.root, shortCommit(commit), strings.Join(missing, ", "))
	}
	pull := fmt.Sprintf("run %q on a machine with network access and copy the cache", "nanovox pull "+model)
	if cause == nil {
		return &Error{Kind: KindNotCached,
			Msg: fmt.Sprintf("model %q %s and offline mode is on (HF_HUB_OFFLINE). Unset HF_HUB_OFFLINE to download it, pass --model DIR with a downloaded copy, or %s.", model, state, pull)}
	}
	return &Error{Kind: KindNotCached, Err: cause,
		Msg: fmt.Sprintf("model %q %s and the Hub cannot be reached: %v. Pass --model DIR with a downloaded copy, set HF_ENDPOINT to a reachable mirror, or %s.", model, state, cause, pull)}
}
