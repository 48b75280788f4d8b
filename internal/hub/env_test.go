package hub

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestEnvCacheDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("paths below are Unix-style")
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"default", map[string]string{"HOME": "/home/u"}, "/home/u/.cache/huggingface/hub"},
		{"XDG_CACHE_HOME", map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg"}, "/xdg/huggingface/hub"},
		{"HF_HOME beats XDG", map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg", "HF_HOME": "/hf"}, "/hf/hub"},
		{"HF_HUB_CACHE beats HF_HOME", map[string]string{"HF_HOME": "/hf", "HF_HUB_CACHE": "/hubcache"}, "/hubcache"},
		{"legacy HUGGINGFACE_HUB_CACHE", map[string]string{"HF_HOME": "/hf", "HUGGINGFACE_HUB_CACHE": "/legacy"}, "/legacy"},
		{"HF_HUB_CACHE beats legacy", map[string]string{"HUGGINGFACE_HUB_CACHE": "/legacy", "HF_HUB_CACHE": "/new"}, "/new"},
		{"empty values are unset", map[string]string{"HOME": "/home/u", "HF_HOME": "", "HF_HUB_CACHE": ""}, "/home/u/.cache/huggingface/hub"},
		{"tilde", map[string]string{"HOME": "/home/u", "HF_HOME": "~/hf"}, "/home/u/hf/hub"},
		{"variables", map[string]string{"DATA": "/data", "HF_HUB_CACHE": "$DATA/hub-${DATA}"}, "/data/hub-/data"},
		{"unknown variable kept", map[string]string{"HF_HUB_CACHE": "/x/$NOPE"}, "/x/${NOPE}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFromLookup(mapLookup(tc.env))
			if c.CacheDir != tc.want {
				t.Errorf("CacheDir = %q, want %q", c.CacheDir, tc.want)
			}
		})
	}
}

func mapLookup(env map[string]string) lookupFunc {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestEnvSettings(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "token"), []byte("  hf_file\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(other, []byte("hf_path"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		env            map[string]string
		token, source  string
		endpoint       string
		offline, nosym bool
		etag, dl       time.Duration
	}{
		{"defaults", map[string]string{"HOME": t.TempDir()}, "", "", DefaultEndpoint, false, false, 0, 0},
		{"token file", map[string]string{"HF_HOME": home}, "hf_file", "the token file " + filepath.Join(home, "token"), DefaultEndpoint, false, false, 0, 0},
		{"HF_TOKEN beats the file", map[string]string{"HF_HOME": home, "HF_TOKEN": "hf_env\n"}, "hf_env", "HF_TOKEN", DefaultEndpoint, false, false, 0, 0},
		{"legacy token variable", map[string]string{"HF_HOME": home, "HUGGING_FACE_HUB_TOKEN": "hf_old"}, "hf_old", "HUGGING_FACE_HUB_TOKEN", DefaultEndpoint, false, false, 0, 0},
		{"HF_TOKEN_PATH", map[string]string{"HF_HOME": home, "HF_TOKEN_PATH": other}, "hf_path", "the token file " + other, DefaultEndpoint, false, false, 0, 0},
		{"implicit token disabled", map[string]string{"HF_HOME": home, "HF_TOKEN": "x", "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1"}, "", "", DefaultEndpoint, false, false, 0, 0},
		{"blank HF_TOKEN falls through", map[string]string{"HF_HOME": home, "HF_TOKEN": " \n"}, "hf_file", "the token file " + filepath.Join(home, "token"), DefaultEndpoint, false, false, 0, 0},
		{"mirror endpoint", map[string]string{"HF_HOME": t.TempDir(), "HF_ENDPOINT": "https://hf-mirror.com//"}, "", "", "https://hf-mirror.com", false, false, 0, 0},
		{"offline", map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_OFFLINE": "1"}, "", "", DefaultEndpoint, true, false, 0, 0},
		{"offline yes", map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_OFFLINE": "Yes"}, "", "", DefaultEndpoint, true, false, 0, 0},
		{"offline 0", map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"}, "", "", DefaultEndpoint, false, false, 0, 0},
		{"transformers offline", map[string]string{"HF_HOME": t.TempDir(), "TRANSFORMERS_OFFLINE": "true"}, "", "", DefaultEndpoint, true, false, 0, 0},
		{"symlinks and timeouts", map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_DISABLE_SYMLINKS": "ON",
			"HF_HUB_ETAG_TIMEOUT": "2.5", "HF_HUB_DOWNLOAD_TIMEOUT": "30"}, "", "", DefaultEndpoint, false, true, 2500 * time.Millisecond, 30 * time.Second},
		{"bad timeouts ignored", map[string]string{"HF_HOME": t.TempDir(), "HF_HUB_ETAG_TIMEOUT": "soon", "HF_HUB_DOWNLOAD_TIMEOUT": "-1"}, "", "", DefaultEndpoint, false, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFromLookup(mapLookup(tc.env))
			if c.Token != tc.token || (tc.source != "" && c.tokenSource != tc.source) {
				t.Errorf("token = %q from %q, want %q from %q", c.Token, c.tokenSource, tc.token, tc.source)
			}
			if c.Endpoint != tc.endpoint || c.Offline != tc.offline || c.DisableSymlinks != tc.nosym {
				t.Errorf("endpoint %q offline %v nosym %v", c.Endpoint, c.Offline, c.DisableSymlinks)
			}
			if c.MetadataTimeout != tc.etag || c.DownloadTimeout != tc.dl {
				t.Errorf("timeouts %v %v, want %v %v", c.MetadataTimeout, c.DownloadTimeout, tc.etag, tc.dl)
			}
		})
	}
}

func TestNewFromEnvUsesProcessEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HF_HUB_CACHE", dir)
	t.Setenv("HF_TOKEN", "hf_x")
	t.Setenv("HF_HUB_OFFLINE", "1")
	c := NewFromEnv()
	if c.CacheDir != dir || CacheDirFromEnv() != dir || c.Token != "hf_x" || !c.Offline {
		t.Errorf("NewFromEnv = %+v", c)
	}
}
