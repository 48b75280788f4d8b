package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/voice/s3store"
)

// s3ServeEnv returns the environment that points nanovox at the S3 test
// server (NANOVOX_S3_ENDPOINT, see scripts/s3-test-server) and sets it in
// this process too, and creates a fresh bucket. It skips without a server,
// or fails under CI, which must start one.
func s3ServeEnv(t *testing.T) (env []string, bucket string) {
	t.Helper()
	ep := os.Getenv("NANOVOX_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("NANOVOX_S3_ENDPOINT is not set: CI must start an S3 server first: eval \"$(scripts/s3-test-server start)\"")
		}
		t.Skip("no S3 server: run eval \"$(scripts/s3-test-server start)\" to test against one")
	}
	dir := t.TempDir()
	vars := map[string]string{
		"AWS_ENDPOINT_URL":            ep,
		"AWS_ENDPOINT_URL_S3":         ep,
		"AWS_ACCESS_KEY_ID":           envOr("AWS_ACCESS_KEY_ID", "nanovox-test"),
		"AWS_SECRET_ACCESS_KEY":       envOr("AWS_SECRET_ACCESS_KEY", "nanovox-test-secret-key"),
		"AWS_REGION":                  "us-east-1",
		"AWS_EC2_METADATA_DISABLED":   "true", // never probe the cloud metadata address
		"AWS_CONFIG_FILE":             filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-credentials"),
	}
	for k, v := range vars {
		t.Setenv(k, v)
		env = append(env, k+"="+v)
	}
	var r [4]byte
	rand.Read(r[:])
	bucket = "nvx-serve-" + hex.EncodeToString(r[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := s3store.New(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx); err != nil {
		t.Fatal(err)
	}
	return env, bucket
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// postJSON posts v and returns the status and body.
func postJSON(t *testing.T, url string, v any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	r, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	return r.StatusCode, body
}

// TestServeS3TwoReplicas runs two servers on one bucket, as two replicas
// behind a load balancer: a voice saved through one is spoken by the
// other, creates race to one winner, and replaces and deletes reach the
// other replica within --voices-max-stale.
func TestServeS3TwoReplicas(t *testing.T) {
	env, bucket := s3ServeEnv(t)
	url := "s3://" + bucket + "/voices"
	const maxStale = 300 * time.Millisecond
	args := []string{"--voices", url, "--voices-max-stale", maxStale.String()}
	a, b := startServe(t, env, args...), startServe(t, env, args...)
	clip := func(seconds float64) string { return base64.StdEncoding.EncodeToString(wavBytes(24000, 1, seconds)) }

	if code, body := postJSON(t, a+"/v1/audio/voices", map[string]any{"name": "shared", "ref_audio": clip(1)}); code != 201 {
		t.Fatalf("save on A: %d %s", code, body)
	}
	speak := func(base string) (int, []byte) {
		return postJSON(t, base+"/v1/audio/speech", map[string]any{"input": "Hello.", "voice": "shared", "response_format": "wav", "max_new_frames": 3})
	}
	// B has never seen the voice: its first use asks the bucket.
	code, audio := speak(b)
	if code != 200 || len(audio) < 44 || string(audio[:4]) != "RIFF" {
		t.Fatalf("speak on B with A's voice: %d %.200s", code, audio)
	}
	if code, body := httpGet(t, b+"/v1/audio/voices", ""); code != 200 || !strings.Contains(body, `"shared"`) {
		t.Fatalf("list on B: %d %s", code, body)
	}

	// Two replicas creating one name at once: one 201, one 409.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, base := range []string{a, b} {
		wg.Go(func() {
			codes[i], _ = postJSON(t, base+"/v1/audio/voices", map[string]any{"name": "dup", "ref_audio": clip(0.6)})
		})
	}
	wg.Wait()
	slices.Sort(codes)
	if codes[0] != 201 || codes[1] != 409 {
		t.Fatalf("concurrent creates on A and B answered %v; want [201 409]", codes)
	}

	// Replace on B; A shows the new version (more frames) within the bound.
	frames := func(base string) int {
		code, body := httpGet(t, base+"/v1/audio/voices/shared", "")
		if code == 404 {
			return -1
		}
		var v struct{ Frames int }
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
			t.Fatalf("get voice: %d %s", code, body)
		}
		return v.Frames
	}
	before := frames(a)
	start := time.Now()
	if code, body := postJSON(t, b+"/v1/audio/voices", map[string]any{"name": "shared", "ref_audio": clip(2), "replace": true}); code != 201 {
		t.Fatalf("replace on B: %d %s", code, body)
	}
	saved := time.Since(start)
	for frames(a) == before {
		if time.Since(start) > maxStale+10*time.Second {
			t.Fatalf("A still shows the old voice %v after B replaced it", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("replace on B (answered in %v) seen by A after %v; --voices-max-stale %v", saved.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), maxStale)
	if code, audio := speak(a); code != 200 || len(audio) < 44 {
		t.Fatalf("speak on A after the replace: %d %.200s", code, audio)
	}

	// Delete on A; B answers 404 once the bound has passed.
	req, _ := http.NewRequest("DELETE", a+"/v1/audio/voices/shared", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("delete on A: %v %v", r, err)
	}
	r.Body.Close()
	time.Sleep(maxStale)
	if code, body := speak(b); code != 404 {
		t.Fatalf("speak on B after A deleted the voice: %d %.200s; want 404", code, body)
	}

	// The voices command reads the same store.
	res := runBin(t, nil, env, "voices", "ls", "--voices", url)
	if res.code != 0 || !strings.Contains(string(res.stdout), "dup") || strings.Contains(string(res.stdout), "shared") {
		t.Fatalf("voices ls --voices %s: %d\n%s%s", url, res.code, res.stdout, res.stderr)
	}
	res = runBin(t, nil, env, "voices", "rm", "--voices", url, "dup")
	if res.code != 0 {
		t.Fatalf("voices rm: %d %s", res.code, res.stderr)
	}
}

// TestServeS3Errors: a store that cannot be opened stops serve and the
// voices command with a message that says what to fix.
func TestServeS3Errors(t *testing.T) {
	env, bucket := s3ServeEnv(t)
	tests := []struct {
		name string
		env  []string
		url  string
		want string
	}{
		{"missing bucket", nil, "s3://" + bucket + "-missing/v", "does not exist"},
		{"bad credentials", []string{"AWS_SECRET_ACCESS_KEY=wrong"}, "s3://" + bucket + "/v", "access denied"},
		{"unreachable endpoint", []string{"AWS_ENDPOINT_URL_S3=http://127.0.0.1:1", "AWS_ENDPOINT_URL=http://127.0.0.1:1"}, "s3://" + bucket + "/v", "cannot reach"},
		{"bad URL", nil, "s3://x/v", "3 to 63"},
		{"other scheme", nil, "gs://bucket/v", "only s3://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runBin(t, nil, append(slices.Clone(env), tc.env...), "voices", "ls", "--voices", tc.url)
			if res.code == 0 || !strings.Contains(string(res.stderr), tc.want) {
				t.Fatalf("voices ls --voices %s: exit %d, stderr %s; want an error containing %q", tc.url, res.code, res.stderr, tc.want)
			}
		})
	}
	// serve refuses to start on a missing bucket instead of serving
	// without voices.
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	res := runBin(t, nil, env, "serve", "--model", lm, "--codec", cd, "--addr", "127.0.0.1:0", "--voices", "s3://"+bucket+"-missing/v")
	if res.code == 0 || !strings.Contains(string(res.stderr), "does not exist") {
		t.Fatalf("serve on a missing bucket: exit %d, %s", res.code, res.stderr)
	}
}
