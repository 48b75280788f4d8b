package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cachedirTag marks the cache for backup tools, with huggingface_hub's wording.
const cachedirTag = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by huggingface_hub.\n" +
	"# For information about cache directory tags, see:\n" +
	"#\thttps://bford.info/cachedir/\n"

const (
	maxIndexSize      = 64 << 20 // index files are a few hundred kB
	maxTreeCacheSize  = 64 << 20
	maxSnapshotListed = 100000
	treeFormatVersion = 1
)

// repoCache is one repository's folder in the cache.
type repoCache struct {
	root    string // the hub cache directory
	storage string // root/models--org--name
	repo    string
}

func (c *Client) repoCache(repo string) repoCache {
	root := c.cacheDir()
	return repoCache{root: root, storage: filepath.Join(root, RepoFolderName(repo)), repo: repo}
}

func (rc repoCache) snapshotDir(commit string) string {
	return filepath.Join(rc.storage, "snapshots", commit)
}

func (rc repoCache) pointer(commit, name string) string {
	return filepath.Join(rc.snapshotDir(commit), filepath.FromSlash(name))
}

func (rc repoCache) blob(etag string) string { return filepath.Join(rc.storage, "blobs", etag) }

func (rc repoCache) lockPath(etag string) string {
	return filepath.Join(rc.root, ".locks", RepoFolderName(rc.repo), etag+".lock")
}

func (rc repoCache) refPath(rev string) string {
	return filepath.Join(rc.storage, "refs", filepath.FromSlash(rev))
}

func (rc repoCache) treePath(commit string) string {
	return filepath.Join(rc.storage, "trees", commit+".json")
}

// cachedCommit returns the commit rev names in the cache: rev itself when it is
// a commit hash, else the content of refs/{rev}; "" when unknown.
func (rc repoCache) cachedCommit(rev string) string {
	if isCommitHash(rev) {
		return rev
	}
	data, err := os.ReadFile(rc.refPath(rev))
	if err != nil {
		return ""
	}
	if commit := strings.TrimSpace(string(data)); isCommitHash(commit) {
		return commit
	}
	return ""
}

// writeRef records that rev pointed to commit, atomically. Nothing is written
// for a commit hash or when the ref already says so (the cache may be read-only).
func (rc repoCache) writeRef(rev, commit string) error {
	if rev == commit {
		return nil
	}
	path := rc.refPath(rev)
	if data, err := os.ReadFile(path); err == nil && string(data) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write ref %s: %w", rev, err)
	}
	return writeFileAtomic(path, []byte(commit))
}

// writeFileAtomic writes data to a unique temporary file beside path and renames
// it into place, so readers never see a partial file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeCachedirTag(root string) {
	path := filepath.Join(root, "CACHEDIR.TAG")
	if _, err := os.Stat(path); err == nil {
		return
	}
	_ = writeFileAtomic(path, []byte(cachedirTag)) // best effort, like huggingface_hub
}

// fileExists reports whether path (following symlinks) is a regular file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// missingFiles reports which files the loader needs are absent from the snapshot
// of commit. The file list comes from trees/{commit}.json when present (written
// by us or a recent huggingface_hub); otherwise from the snapshot itself, which
// cannot tell whether an optional file such as tokenizer.model exists upstream.
func (rc repoCache) missingFiles(commit string) []string {
	snap := rc.snapshotDir(commit)
	if fi, err := os.Stat(snap); err != nil || !fi.IsDir() {
		return []string{"everything (no snapshot for commit " + commit + ")"}
	}
	names, err := readTreeCache(rc.treePath(commit))
	if err != nil {
		names = listSnapshot(snap)
	}
	var missingIndex string
	needed, err := SelectFiles(names, func(index string) ([]string, error) {
		data, err := readFileLimit(filepath.Join(snap, filepath.FromSlash(index)), maxIndexSize)
		if err != nil {
			missingIndex = index
			return nil, err
		}
		return ParseIndex(data)
	})
	switch {
	case missingIndex != "":
		return []string{missingIndex}
	case errors.Is(err, ErrNoConfig):
		return []string{configFile}
	case errors.Is(err, ErrNoWeights):
		return []string{"the weights (" + safetensorsFile + " or similar)"}
	case err != nil:
		return []string{"a usable weight index (" + err.Error() + ")"}
	}
	var missing []string
	for _, name := range needed {
		if !fileExists(rc.pointer(commit, name)) {
			missing = append(missing, name)
		}
	}
	return missing
}

// listSnapshot lists the files (and symlinks to files) below snap, slash-separated.
func listSnapshot(snap string) []string {
	var names []string
	_ = filepath.WalkDir(snap, func(path string, d fs.DirEntry, err error) error {
		if err != nil || len(names) >= maxSnapshotListed {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		if rel, err := filepath.Rel(snap, path); err == nil && fileExists(path) {
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names
}

func readFileLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// treeCache is huggingface_hub's trees/{commit}.json: the repository's files at
// an immutable commit.
type treeCache struct {
	FormatVersion int                  `json:"format_version"`
	Files         map[string]treeEntry `json:"files"`
}

type treeEntry struct {
	Size      *int64 `json:"size"`
	BlobID    string `json:"blob_id"`
	LFSSHA256 string `json:"lfs_sha256,omitempty"`
	LFSSize   *int64 `json:"lfs_size,omitempty"`
}

func readTreeCache(path string) ([]string, error) {
	data, err := readFileLimit(path, maxTreeCacheSize)
	if err != nil {
		return nil, err
	}
	return parseTreeCache(data)
}

// parseTreeCache returns the file names of a tree cache, rejecting unknown
// versions and entries huggingface_hub itself would not accept.
func parseTreeCache(data []byte) ([]string, error) {
	var tc treeCache
	if err := json.Unmarshal(data, &tc); err != nil {
		return nil, fmt.Errorf("parse tree cache: %w", err)
	}
	if tc.FormatVersion != treeFormatVersion {
		return nil, fmt.Errorf("parse tree cache: format_version %d (want %d)", tc.FormatVersion, treeFormatVersion)
	}
	if tc.Files == nil {
		return nil, errors.New("parse tree cache: no files")
	}
	names := make([]string, 0, len(tc.Files))
	for name, e := range tc.Files {
		if e.Size == nil || !validFileName(name) {
			return nil, fmt.Errorf("parse tree cache: bad entry %q", name)
		}
		names = append(names, name)
	}
	return names, nil
}

// writeTreeCache stores the repository listing for commit, if the API gave
// complete metadata (size and blob id for every file); best effort.
func (rc repoCache) writeTreeCache(commit string, siblings []sibling) {
	path := rc.treePath(commit)
	if _, err := os.Stat(path); err == nil {
		return
	}
	tc := treeCache{FormatVersion: treeFormatVersion, Files: make(map[string]treeEntry, len(siblings))}
	for _, s := range siblings {
		if s.Size == nil || s.BlobID == "" {
			return
		}
		e := treeEntry{Size: s.Size, BlobID: s.BlobID}
		if s.LFS != nil {
			size := s.LFS.Size
			e.LFSSHA256, e.LFSSize = s.LFS.SHA256, &size
		}
		tc.Files[s.Name] = e
	}
	data, err := json.MarshalIndent(tc, "", " ")
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	_ = writeFileAtomic(path, data)
}

// link makes the snapshot entry pointer refer to blob: a relative symlink, as
// huggingface_hub makes them, or where symlinks are disabled or fail, the blob
// itself (moved if it was just downloaded, as huggingface_hub does, else copied).
func (c *Client) link(blob, pointer string, newBlob bool) error {
	if err := os.MkdirAll(filepath.Dir(pointer), 0o755); err != nil {
		return fmt.Errorf("create snapshot directory: %w", err)
	}
	if err := os.Remove(pointer); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace %s: %w", pointer, err)
	}
	if !c.DisableSymlinks {
		rel, err := filepath.Rel(filepath.Dir(pointer), blob)
		if err != nil {
			rel = blob
		}
		if err := os.Symlink(rel, pointer); err == nil {
			return nil
		}
	}
	if newBlob {
		if err := os.Rename(blob, pointer); err == nil {
			return nil
		}
	}
	return copyFileAtomic(blob, pointer)
}

func copyFileAtomic(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy blob into snapshot: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return fmt.Errorf("copy blob into snapshot: %w", err)
	}
	tmp := out.Name()
	_, cerr := io.Copy(out, in)
	if err := errors.Join(cerr, out.Close(), os.Chmod(tmp, 0o644)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy blob into snapshot %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy blob into snapshot %s: %w", dst, err)
	}
	return nil
}

// shortCommit abbreviates a commit id for messages.
func shortCommit(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// describeSize formats n bytes for messages.
func describeSize(n int64) string {
	if n < 0 {
		return "unknown size"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
