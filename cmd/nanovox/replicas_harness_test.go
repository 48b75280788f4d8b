//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nanovox/nanovox/internal/voice/s3store"
)

// This file is the harness of the multi-replica test (replicas_test.go):
// nanovox serve processes that can be stopped, killed and restarted on
// the same port, the voice store they share, and an nginx in front.

// processGuard bounds every wait for a process to start or stop. It guards
// against a hang; it is not a timing assertion.
const processGuard = 60 * time.Second

// sharedVoiceStore is the voice store the replicas share: the flags and
// environment that give a serve process access to it.
type sharedVoiceStore struct {
	desc string
	args []string
	env  []string
}

// replicaS3Bucket is the bucket the S3 variant of the test works in; every run
// takes a fresh prefix in it, so runs never see each other's voices.
const replicaS3Bucket = "nanovox-test"

// replicaVoiceStore returns the shared store: a directory (two serve
// processes on one directory are supported: saves take a cross-process
// lock and every request re-reads a changed directory), or, when
// NANOVOX_S3_ENDPOINT names an S3-compatible server, a fresh prefix in a
// bucket there, reached through the standard AWS variables.
func replicaVoiceStore(t *testing.T) sharedVoiceStore {
	t.Helper()
	endpoint := strings.TrimRight(os.Getenv("NANOVOX_S3_ENDPOINT"), "/")
	if endpoint == "" {
		dir := filepath.Join(t.TempDir(), "voices")
		return sharedVoiceStore{desc: "shared directory", args: []string{"--data-dir", dir}}
	}
	// The bucket is created with the test server's credentials (the
	// AWS_* variables scripts/s3-test-server exports); one left by an
	// earlier run is as good.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bk, err := s3store.New(ctx, replicaS3Bucket)
	if err == nil {
		err = bk.Create(ctx)
	}
	if err != nil {
		t.Fatalf("create bucket %s at NANOVOX_S3_ENDPOINT=%s: %v", replicaS3Bucket, endpoint, err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	url := "s3://" + replicaS3Bucket + "/replicas-" + hex.EncodeToString(rnd[:])
	cfg := t.TempDir()
	env := []string{
		"AWS_ENDPOINT_URL=" + endpoint, "AWS_ENDPOINT_URL_S3=" + endpoint,
		// Only the test server: no cloud metadata probe, no profile of the
		// runner's.
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(cfg, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(cfg, "no-credentials"),
	}
	// Defaults for a local test server; credentials the runner set win.
	for _, kv := range [][2]string{{"AWS_REGION", "us-east-1"}, {"AWS_ACCESS_KEY_ID", "nanovox-test"}, {"AWS_SECRET_ACCESS_KEY", "nanovox-test-secret-key"}} {
		if v := os.Getenv(kv[0]); v != "" {
			kv[1] = v
		}
		env = append(env, kv[0]+"="+kv[1])
	}
	return sharedVoiceStore{desc: "S3 " + url + " at " + endpoint, args: []string{"--voices", url}, env: env}
}

// freeLoopbackAddr returns a loopback address with a port that was free a moment
// ago. A replica keeps its port across restarts, because the proxy's
// configuration names it.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// replica is one nanovox serve process, restartable on the same address.
type replica struct {
	name, addr string
	args, env  []string
	logPath    string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited
	waitErr error         // the exit status, valid once done is closed
}

// serveLog appends a serve process's log to a file and notices the line
// that says the server accepts requests.
type serveLog struct {
	f       *os.File
	partial []byte
	ready   chan struct{}
	seen    bool
}

// Write implements io.Writer for exec.Cmd.Stderr.
func (l *serveLog) Write(p []byte) (int, error) {
	if !l.seen {
		l.partial = append(l.partial, p...)
		if i := bytes.LastIndexByte(l.partial, '\n'); i >= 0 {
			if bytes.Contains(l.partial[:i], []byte("msg=serving ")) {
				l.seen = true
				close(l.ready)
			}
			l.partial = append(l.partial[:0], l.partial[i+1:]...)
		}
	}
	return l.f.Write(p)
}

// start runs the process and returns once it serves (it binds its port
// before loading the model, so a connection alone proves nothing).
func (r *replica) start() error {
	f, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== start %s\n", time.Now().Format(time.RFC3339Nano))
	lm, cd := filepath.Join(fixtures, "tiny-a", "lm"), filepath.Join(fixtures, "tiny-a", "codec")
	cmd := exec.Command(bin, append([]string{"serve", "--model", lm, "--codec", cd, "--addr", r.addr}, r.args...)...)
	cmd.Env = append(os.Environ(), r.env...)
	log := &serveLog{f: f, ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = f, log
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start replica %s: %w", r.name, err)
	}
	done := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.done, r.waitErr = cmd, done, nil
	r.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		r.mu.Lock()
		r.waitErr = err
		r.mu.Unlock()
		close(done)
	}()
	select {
	case <-log.ready:
		return nil
	case <-done:
		return fmt.Errorf("replica %s exited before serving: %v; log:\n%s", r.name, r.exitErr(), logTail(r.logPath, 20))
	case <-time.After(processGuard):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("replica %s did not start serving within %v; log:\n%s", r.name, processGuard, logTail(r.logPath, 20))
	}
}

// exitErr is the process's exit status once it has exited.
func (r *replica) exitErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waitErr
}

// signal sends sig to the running process.
func (r *replica) signal(sig os.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return fmt.Errorf("replica %s was never started", r.name)
	}
	return r.cmd.Process.Signal(sig)
}

// wait waits for the process to exit and returns its exit status.
func (r *replica) wait(limit time.Duration) error {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	select {
	case <-done:
		return r.exitErr()
	case <-time.After(limit):
		return fmt.Errorf("replica %s did not exit within %v", r.name, limit)
	}
}

// running reports whether the process is alive.
func (r *replica) running() bool {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// stop ends the process at cleanup: SIGTERM, then SIGKILL if it hangs.
func (r *replica) stop() {
	if !r.running() {
		return
	}
	r.signal(syscall.SIGTERM)
	if r.wait(30*time.Second) != nil {
		r.signal(syscall.SIGKILL)
		r.wait(processGuard)
	}
}

// nginxConf is the proxy's configuration. Choices, and why they make a
// rolling restart lose nothing although open-source nginx has no active
// health checks:
//
//   - Passive checks are enough because every state of a replica that
//     cannot take a request shows on the request itself: a draining
//     replica answers 503 at once (and /readyz 503), a stopped one refuses
//     the connection, a killed one resets it. proxy_next_upstream passes
//     such a request to the other replica, and max_fails=1 keeps the
//     failed one out of the rotation for fail_timeout before nginx tries
//     it again. A replica that is loading holds connections in its listen
//     backlog and answers once warm: slower, not failed.
//   - Speech requests have no side effects, so they may be passed on
//     after they were sent (non_idempotent): a 503 from a draining or
//     full replica, a connection reset before the response header. Voice
//     uploads and deletions are not: nginx passes them on only when the
//     connection failed before the request was sent (and a DELETE, which
//     HTTP calls idempotent); a draining replica's 503 reaches the client,
//     with Retry-After.
//   - The cost of max_fails=1: while one replica is out for fail_timeout,
//     a failure of the other leaves nginx no live upstream, and it answers
//     502 itself. A rolling restart therefore stops the next replica only
//     once the restarted one has served through the proxy again (the test
//     waits for that; Kubernetes gates it on readiness).
//   - proxy_buffering off: audio is passed on as the replica sends it;
//     proxy_request_buffering stays on, so nginx still holds the body it
//     must resend to the other replica.
//   - HTTP/1.1 to the replicas, without kept-alive upstream connections:
//     every request opens its own, so a replica's shutdown never closes a
//     connection that a new request was about to reuse.
//   - X-Upstream / X-Upstream-Status name the replica(s) tried and their
//     answers, which the test uses to know who served what.
const nginxConf = `# generated by the nanovox replicas test
{{USER}}worker_processes 1;
pid {{DIR}}/nginx.pid;
error_log {{DIR}}/error.log notice;
events { worker_connections 512; }
http {
    access_log {{DIR}}/access.log;
    client_body_temp_path {{DIR}}/body;
    proxy_temp_path {{DIR}}/proxy;
    fastcgi_temp_path {{DIR}}/fastcgi;
    uwsgi_temp_path {{DIR}}/uwsgi;
    scgi_temp_path {{DIR}}/scgi;
    client_max_body_size 64m;
    client_body_buffer_size 1m;

    upstream nanovox {
        server {{A}} max_fails=1 fail_timeout=2s;
        server {{B}} max_fails=1 fail_timeout=2s;
    }
    server {
        listen {{LISTEN}};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_buffering off;
        proxy_connect_timeout 2s;
        proxy_read_timeout 60s;
        proxy_next_upstream_tries 2;
        add_header X-Upstream $upstream_addr always;
        add_header X-Upstream-Status $upstream_status always;
        location = /v1/audio/speech {
            proxy_pass http://nanovox;
            proxy_next_upstream error timeout http_503 non_idempotent;
        }
        location / {
            proxy_pass http://nanovox;
            proxy_next_upstream error timeout http_503;
        }
    }
}
`

// nginxProxy is an nginx run by the test, not as a system service.
type nginxProxy struct {
	addr, dir, version string
	cmd                *exec.Cmd
	done               chan struct{}
}

// findNginx finds the nginx binary; Debian installs it in /usr/sbin, which
// is not on every user's PATH.
func findNginx() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("nginx not found (Debian: apt-get install nginx)")
}

// startNginx runs nginx in the foreground with a configuration in dir,
// round-robin over the two upstream addresses.
func startNginx(t *testing.T, dir string, upstreams [2]string) (*nginxProxy, error) {
	t.Helper()
	path, err := findNginx()
	if err != nil {
		return nil, err
	}
	ver, _ := exec.Command(path, "-v").CombinedOutput()
	p := &nginxProxy{addr: freeLoopbackAddr(t), dir: dir, version: strings.TrimSpace(strings.TrimPrefix(string(ver), "nginx version: "))}
	user := ""
	if os.Geteuid() == 0 {
		// Workers of a root master switch to nobody, who cannot enter the
		// test's private temporary directory.
		user = "user root;\n"
	}
	conf := strings.NewReplacer("{{USER}}", user, "{{DIR}}", dir, "{{A}}", upstreams[0], "{{B}}", upstreams[1], "{{LISTEN}}", p.addr).Replace(nginxConf)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(path, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
	p.cmd.Stdout, p.cmd.Stderr = stderr, stderr
	if err := p.cmd.Start(); err != nil {
		stderr.Close()
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	p.done = make(chan struct{})
	go func() {
		p.cmd.Wait()
		stderr.Close()
		close(p.done)
	}()
	// Ready when it answers; /healthz goes through to a replica.
	deadline := time.Now().Add(processGuard)
	for {
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("nginx exited: %s%s", logTail(filepath.Join(dir, "stderr.log"), 20), logTail(filepath.Join(dir, "error.log"), 20))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("nginx did not answer within %v: %v", processGuard, err)
		}
	}
}

// stop ends nginx (SIGTERM: fast shutdown; it ends its workers).
func (p *nginxProxy) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail returns the last n lines of a log file, for failure messages.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "--- " + filepath.Base(path) + "\n" + strings.Join(lines, "\n") + "\n"
}

// replicaCluster is two replicas on one voice store behind one nginx.
type replicaCluster struct {
	store    sharedVoiceStore
	replicas [2]*replica
	proxy    *nginxProxy
	base     string // the proxy's URL
	client   *http.Client
	// refB64 is the reference clip voices are saved from, base64;
	// shortB64 its first 0.75 s, a second voice to replace the first with.
	refB64, shortB64 string
}

// startReplicaCluster starts replicas A and B and the proxy; everything is
// stopped at cleanup, and the logs are shown if the test failed.
func startReplicaCluster(t *testing.T, extra ...string) *replicaCluster {
	t.Helper()
	dir := t.TempDir()
	ref, err := os.ReadFile(filepath.Join(fixtures, "tiny-a", "ref.wav"))
	if err != nil {
		t.Fatal(err)
	}
	short, err := cutWAV(ref, 0.75)
	if err != nil {
		t.Fatal(err)
	}
	c := &replicaCluster{store: replicaVoiceStore(t), refB64: base64.StdEncoding.EncodeToString(ref), shortB64: base64.StdEncoding.EncodeToString(short)}
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	c.client = &http.Client{Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	for i, name := range []string{"A", "B"} {
		r := &replica{name: name, addr: freeLoopbackAddr(t), env: c.store.env, logPath: filepath.Join(dir, "replica-"+name+".log")}
		r.args = append(append([]string{}, c.store.args...), extra...)
		c.replicas[i] = r
	}
	t.Cleanup(func() {
		if c.proxy != nil {
			c.proxy.stop()
		}
		var wg sync.WaitGroup
		for _, r := range c.replicas {
			wg.Add(1)
			go func() { defer wg.Done(); r.stop() }()
		}
		wg.Wait()
		if t.Failed() {
			for _, r := range c.replicas {
				t.Logf("replica %s (%s):\n%s", r.name, r.addr, logTail(r.logPath, 40))
			}
			if c.proxy != nil {
				t.Logf("nginx:\n%s", logTail(filepath.Join(c.proxy.dir, "error.log"), 40))
			}
		}
	})
	// Both at once: each loads the model in about the same time.
	errs := make(chan error, 2)
	for _, r := range c.replicas {
		go func() { errs <- r.start() }()
	}
	for range c.replicas {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c.proxy, err = startNginx(t, filepath.Join(dir, "nginx"), [2]string{c.replicas[0].addr, c.replicas[1].addr})
	if err != nil {
		t.Fatal(err)
	}
	c.base = "http://" + c.proxy.addr
	t.Logf("voice store: %s; replicas A=%s B=%s; nginx %s on %s", c.store.desc, c.replicas[0].addr, c.replicas[1].addr, c.proxy.version, c.proxy.addr)
	return c
}

// byAddr returns the replica listening on addr, nil if none.
func (c *replicaCluster) byAddr(addr string) *replica {
	for _, r := range c.replicas {
		if r.addr == addr {
			return r
		}
	}
	return nil
}

// waitRouted waits until the proxy has sent a request to each replica
// and got an answer: both are in its rotation.
func (c *replicaCluster) waitRouted() error {
	seen := map[string]bool{}
	_, err := pollUntil("the proxy routes to both replicas", func() (bool, error) {
		a := exchange(context.Background(), c.client, http.MethodGet, c.base+"/readyz", nil)
		if a.status == http.StatusOK {
			seen[a.upstream] = true
		}
		return seen[c.replicas[0].addr] && seen[c.replicas[1].addr], a.err
	})
	return err
}

// reply is one HTTP exchange as the test sees it.
type reply struct {
	status int
	body   []byte
	// upstream is the replica that answered (the last one nginx tried);
	// tried lists every replica nginx tried, in order.
	upstream string
	tried    []string
	ttfa     time.Duration // request sent → first body byte
	err      error
}

// triedUpstreams reads nginx's X-Upstream header ("addr1, addr2" after a retry).
func triedUpstreams(h http.Header) []string {
	var out []string
	for _, a := range strings.Split(h.Get("X-Upstream"), ",") {
		if a = strings.TrimSpace(a); a != "" && a != "-" {
			out = append(out, a)
		}
	}
	return out
}

// exchange sends one request and reads the whole answer, noting when the first
// body byte came.
func exchange(ctx context.Context, client *http.Client, method, url string, body []byte) reply {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return reply{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	a := reply{status: resp.StatusCode, tried: triedUpstreams(resp.Header)}
	if len(a.tried) > 0 {
		a.upstream = a.tried[len(a.tried)-1]
	}
	var buf bytes.Buffer
	first := make([]byte, 32<<10)
	n, err := resp.Body.Read(first)
	for n == 0 && err == nil {
		n, err = resp.Body.Read(first)
	}
	a.ttfa = time.Since(start)
	buf.Write(first[:n])
	if err == nil {
		_, err = io.Copy(&buf, resp.Body)
	}
	if err == io.EOF {
		err = nil
	}
	a.body, a.err = buf.Bytes(), err
	return a
}

// speechJSON is a speech request body.
func speechJSON(voice, input, format string, stream bool, extra map[string]any) []byte {
	m := map[string]any{"input": input, "voice": voice, "response_format": format, "stream": stream, "seed": 3}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// saveJSON is a voice upload body with the reference clip.
func (c *replicaCluster) saveJSON(name string, replace bool) []byte {
	return saveClipJSON(name, c.refB64, replace)
}

// saveClipJSON is a voice upload body.
func saveClipJSON(name, clipB64 string, replace bool) []byte {
	b, _ := json.Marshal(map[string]any{"name": name, "ref_audio": clipB64, "replace": replace})
	return b
}

// cutWAV returns the first seconds of a plain 44-byte-header PCM WAV file.
func cutWAV(b []byte, seconds float64) ([]byte, error) {
	le := binary.LittleEndian
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		return nil, errors.New("cutWAV: not a plain RIFF WAV file")
	}
	rate, align := int(le.Uint32(b[24:])), int(le.Uint16(b[32:]))
	n := min(len(b)-44, int(seconds*float64(rate))*align)
	out := append([]byte(nil), b[:44+n]...)
	le.PutUint32(out[4:], uint32(len(out)-8))
	le.PutUint32(out[40:], uint32(n))
	return out, nil
}

// voiceList is a replica's GET /v1/audio/voices, reduced to what must be
// equal on every replica.
func voiceList(ctx context.Context, client *http.Client, base string) ([]string, error) {
	a := exchange(ctx, client, http.MethodGet, base+"/v1/audio/voices", nil)
	if a.err != nil || a.status != http.StatusOK {
		return nil, fmt.Errorf("list voices at %s: %d %v %s", base, a.status, a.err, a.body)
	}
	var l struct {
		Data []voiceJSONView `json:"data"`
	}
	if err := json.Unmarshal(a.body, &l); err != nil {
		return nil, fmt.Errorf("list voices at %s: %v", base, err)
	}
	out := []string{}
	for _, v := range l.Data {
		out = append(out, fmt.Sprintf("%s@%d/%dframes", v.Name, v.Created, v.Frames))
	}
	return out, nil
}

// voiceJSONView is the part of the API's voice object the test compares.
type voiceJSONView struct {
	Name    string `json:"name"`
	Created int64  `json:"created"`
	Frames  int    `json:"frames"`
}

// readyState is a replica's /readyz.
type readyState struct {
	Status        string `json:"status"`
	ActiveStreams int    `json:"active_streams"`
}

// fetchReadyz asks one replica, not the proxy, whether it is ready.
func fetchReadyz(ctx context.Context, client *http.Client, addr string) (readyState, int, error) {
	a := exchange(ctx, client, http.MethodGet, "http://"+addr+"/readyz", nil)
	var r readyState
	if a.err != nil {
		return r, 0, a.err
	}
	return r, a.status, json.Unmarshal(a.body, &r)
}
