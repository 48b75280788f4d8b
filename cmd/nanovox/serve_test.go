package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServe runs nanovox serve on a free loopback port with the tiny
// model and returns its base URL; the server is stopped at cleanup.
func startServe(t *testing.T, env []string, args ...string) string {
	t.Helper()
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	cmd := exec.Command(bin, append([]string{"serve", "--model", lm, "--codec", cd, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	addr := regexp.MustCompile(`msg=serving addr=(\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var log []string
		for sc.Scan() {
			log = append(log, sc.Text())
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				io.Copy(io.Discard, stderr)
				return
			}
		}
		found <- "exited: " + strings.Join(log, "\n")
	}()
	select {
	case a := <-found:
		if strings.HasPrefix(a, "exited: ") {
			t.Fatalf("serve did not start:\n%s", a)
		}
		return "http://" + a
	case <-time.After(60 * time.Second): // a guard against a hang, not a timing assertion
		t.Fatal("serve did not start")
	}
	return ""
}

func httpGet(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// TestServeAPIKeyFileAndReadyz: the key can come from a file (not visible
// in ps), and /readyz, which needs no key, shows the model id, not the
// model's directory.
func TestServeAPIKeyFileAndReadyz(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("s3cret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startServe(t, nil, "--api-key-file", keyFile)
	if code, _ := httpGet(t, base+"/v1/models", ""); code != 401 {
		t.Errorf("/v1/models without the key: %d, want 401", code)
	}
	if code, b := httpGet(t, base+"/v1/models", "s3cret-from-file\n"[:16]); code != 200 {
		t.Errorf("/v1/models with the file's key: %d %s", code, b)
	}
	code, b := httpGet(t, base+"/readyz", "")
	var ready struct{ Status, Model string }
	if code != 200 || json.Unmarshal([]byte(b), &ready) != nil || ready.Status != "ready" {
		t.Fatalf("/readyz: %d %s", code, b)
	}
	if ready.Model != "lm" || strings.Contains(b, "testdata") || strings.Contains(b, "/") {
		t.Errorf("/readyz shows %q; want the model id (lm), not its path", ready.Model)
	}
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want, err string
	}{
		{"plain", "k1", "k1", ""},
		{"newline", "k1\n", "k1", ""},
		{"crlf", "k1\r\n", "k1", ""},
		{"only one newline trimmed", "k1\n\n", "", "more than one line"},
		{"two lines", "k1\nk2\n", "", "more than one line"},
		{"empty", "", "", "is empty"},
		{"just a newline", "\n", "", "is empty"},
		{"spaces", " k1 \n", "", "white space"},
		{"too large", strings.Repeat("k", maxKeyFile+1), "", "larger than"},
		{"missing", "-", "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if tc.content != "-" {
				if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readKeyFile(path)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Errorf("readKeyFile = %q, %v; want %q", got, err, tc.want)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--api-key-file") {
				t.Errorf("readKeyFile = %q, %v; want an --api-key-file error mentioning %q", got, err, tc.err)
			}
		})
	}
}

// TestAPIKeyFlagsExclusive: --api-key-file with --api-key, or with
// NANOVOX_API_KEY, stops the server before it loads anything.
func TestAPIKeyFlagsExclusive(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("k\n"), 0o600)
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--api-key", "k", "--api-key-file", keyFile}, "--api-key and --api-key-file exclude each other"},
		{[]string{"NANOVOX_API_KEY=k"}, []string{"--api-key-file", keyFile}, "--api-key and --api-key-file exclude each other"},
		{nil, []string{"--api-key-file", filepath.Join(t.TempDir(), "none")}, "--api-key-file: open"},
	} {
		r := runBin(t, nil, tc.env, append([]string{"serve", "--model", lm, "--codec", cd, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(string(r.stderr), tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want a failure mentioning %q", tc.env, tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestDefaultModelID(t *testing.T) {
	root := t.TempDir()
	snap := filepath.Join(root, "hub", "models--OpenMOSS-Team--MOSS-TTS-Nano-100M", "snapshots", "0123abcd")
	plain := filepath.Join(root, "models", "moss-nano")
	for _, d := range []string{snap, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ model, want string }{
		{"OpenMOSS-Team/MOSS-TTS-Nano-100M", "OpenMOSS-Team/MOSS-TTS-Nano-100M"}, // a hub id, not a directory here
		{"OpenMOSS-Team/MOSS-TTS-Nano-100M@v1", "OpenMOSS-Team/MOSS-TTS-Nano-100M@v1"},
		{plain, "moss-nano"},
		{plain + "/", "moss-nano"},
		{snap, "OpenMOSS-Team/MOSS-TTS-Nano-100M"},
		{"/", "fallback"},
	} {
		if got := defaultModelID(tc.model, "fallback"); got != tc.want {
			t.Errorf("defaultModelID(%q) = %q, want %q", tc.model, got, tc.want)
		}
	}
}
