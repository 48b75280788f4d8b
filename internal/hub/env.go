package hub

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub used when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// NewFromEnv returns a Client configured from the environment exactly as
// huggingface_hub configures itself:
//
//   - cache: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, where
//     HF_HOME defaults to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface;
//   - endpoint: $HF_ENDPOINT (trailing slashes removed), else https://huggingface.co;
//   - token: $HF_TOKEN, else $HUGGING_FACE_HUB_TOKEN, else the file $HF_TOKEN_PATH
//     (default $HF_HOME/token); none if HF_HUB_DISABLE_IMPLICIT_TOKEN is true;
//   - offline: HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is 1, ON, YES or TRUE;
//   - HF_HUB_DISABLE_SYMLINKS, HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT.
func NewFromEnv() *Client { return newFromLookup(os.LookupEnv) }

// CacheDirFromEnv returns the hub cache directory the environment selects (see
// [NewFromEnv]).
func CacheDirFromEnv() string { return cacheDir(os.LookupEnv, hfHome(os.LookupEnv)) }

type lookupFunc func(string) (string, bool)

func newFromLookup(lookup lookupFunc) *Client {
	get := func(k string) string { v, _ := lookup(k); return v }
	home := hfHome(lookup)
	c := &Client{
		Endpoint:        DefaultEndpoint,
		CacheDir:        cacheDir(lookup, home),
		DisableSymlinks: isTrue(get("HF_HUB_DISABLE_SYMLINKS")),
		MetadataTimeout: envSeconds(get("HF_HUB_ETAG_TIMEOUT")),
		DownloadTimeout: envSeconds(get("HF_HUB_DOWNLOAD_TIMEOUT")),
	}
	if v := strings.TrimRight(get("HF_ENDPOINT"), "/"); v != "" {
		c.Endpoint = v
	}
	// Like huggingface_hub: the first non-empty of the two variables decides.
	off := get("HF_HUB_OFFLINE")
	if off == "" {
		off = get("TRANSFORMERS_OFFLINE")
	}
	c.Offline = isTrue(off)

	if isTrue(get("HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
		return c
	}
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := cleanToken(get(k)); t != "" {
			c.Token, c.tokenSource = t, k
			return c
		}
	}
	path := filepath.Join(home, "token")
	if v := get("HF_TOKEN_PATH"); v != "" {
		path = expandPath(v, lookup)
	}
	if data, err := os.ReadFile(path); err == nil {
		if t := cleanToken(string(data)); t != "" {
			c.Token, c.tokenSource = t, "the token file "+path
		}
	}
	return c
}

func hfHome(lookup lookupFunc) string {
	if v, _ := lookup("HF_HOME"); v != "" {
		return expandPath(v, lookup)
	}
	base := filepath.Join(homeDir(lookup), ".cache")
	if v, _ := lookup("XDG_CACHE_HOME"); v != "" {
		base = expandPath(v, lookup)
	}
	return filepath.Join(base, "huggingface")
}

func cacheDir(lookup lookupFunc, home string) string {
	for _, k := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if v, _ := lookup(k); v != "" {
			return expandPath(v, lookup)
		}
	}
	return filepath.Join(home, "hub")
}

func homeDir(lookup lookupFunc) string {
	key := "HOME"
	if runtime.GOOS == "windows" {
		key = "USERPROFILE"
	}
	if v, _ := lookup(key); v != "" {
		return v
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return h
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	return "."
}

// expandPath does what Python's os.path.expandvars(os.path.expanduser(p)) does
// to the cache variables: a leading "~" becomes the home directory, and $VAR or
// ${VAR} is replaced when VAR is set (and left alone when it is not).
func expandPath(p string, lookup lookupFunc) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		p = homeDir(lookup) + p[1:]
	}
	if !strings.Contains(p, "$") {
		return p
	}
	return os.Expand(p, func(k string) string {
		if v, ok := lookup(k); ok {
			return v
		}
		return "${" + k + "}"
	})
}

func isTrue(v string) bool {
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

func cleanToken(t string) string {
	return strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(t))
}

// envSeconds parses a timeout in (possibly fractional) seconds; 0 means "default".
func envSeconds(v string) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || f > 1e6 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}
