package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/nanovox/nanovox/internal/voice"
)

// The test credentials scripts/s3-test-server configures; the AWS_*
// variables override them.
const (
	testAccessKey = "nanovox-test"
	testSecretKey = "nanovox-test-secret-key"
)

// s3Env points the AWS chain at the test server named by
// NANOVOX_S3_ENDPOINT, isolated from the user's own AWS configuration.
// Without the variable the test is skipped, or fails under CI, which must
// start the server (scripts/s3-test-server).
func s3Env(t *testing.T) string {
	t.Helper()
	ep := os.Getenv("NANOVOX_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("NANOVOX_S3_ENDPOINT is not set: CI must start an S3 server first: eval \"$(scripts/s3-test-server start)\"")
		}
		t.Skip("no S3 server: run eval \"$(scripts/s3-test-server start)\" to test against one")
	}
	dir := t.TempDir()
	t.Setenv("AWS_ENDPOINT_URL", ep)
	t.Setenv("AWS_ENDPOINT_URL_S3", ep)
	t.Setenv("AWS_ACCESS_KEY_ID", envOr("AWS_ACCESS_KEY_ID", testAccessKey))
	t.Setenv("AWS_SECRET_ACCESS_KEY", envOr("AWS_SECRET_ACCESS_KEY", testSecretKey))
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true") // never probe the cloud metadata address
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	return ep
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// newBucket creates an empty bucket for one test and removes it after.
func newBucket(t *testing.T) *Bucket {
	t.Helper()
	s3Env(t)
	var r [4]byte
	rand.Read(r[:])
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	name = fmt.Sprintf("nvx-%.40s-%s", strings.Trim(name, "-"), hex.EncodeToString(r[:]))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := New(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		objs, _ := b.List(ctx, "")
		for _, o := range objs {
			b.Delete(ctx, o.Key)
		}
		b.c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name})
	})
	return b
}

// counting counts the requests a store makes.
type counting struct {
	voice.Bucket
	gets, notModified, lists atomic.Int64
}

func (c *counting) Get(ctx context.Context, key, inm string, max int64) ([]byte, string, error) {
	c.gets.Add(1)
	b, tag, err := c.Bucket.Get(ctx, key, inm, max)
	if errors.Is(err, voice.ErrNotModified) {
		c.notModified.Add(1)
	}
	return b, tag, err
}

func (c *counting) List(ctx context.Context, prefix string) ([]voice.ObjectInfo, error) {
	c.lists.Add(1)
	return c.Bucket.List(ctx, prefix)
}

func testVoice(name string, frames, seed int) voice.Voice {
	codes := make([][]int, frames)
	for i := range codes {
		codes[i] = make([]int, 16)
		for j := range codes[i] {
			codes[i][j] = (seed*7919 + i*31 + j*17) % 1024
		}
	}
	return voice.Voice{Name: name, Model: "test-codec", Codes: codes, Duration: float64(frames) / 12.5, SourceFormat: "wav", RefText: "hello"}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		in, bucket, prefix string
		bad                bool
	}{
		{in: "s3://voices", bucket: "voices"},
		{in: "s3://voices/", bucket: "voices"},
		{in: "s3://my-bucket/nanovox/voices", bucket: "my-bucket", prefix: "nanovox/voices/"},
		{in: "s3://my.bucket/p/", bucket: "my.bucket", prefix: "p/"},
		{in: "s3://", bad: true},
		{in: "s3://ab", bad: true},
		{in: "s3:///prefix", bad: true},
		{in: "/data/voices", bad: true},
		{in: "s3://bucket?x=1", bad: true},
		{in: "s3://bucket/a//b", bad: true},
		{in: "s3://bucket//a", bad: true},
		{in: "s3://bucket/a?b", bad: true},
		{in: "s3://buck et/a", bad: true},
	}
	for _, tc := range tests {
		b, p, err := ParseURL(tc.in)
		if tc.bad != (err != nil) || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q, bad=%v", tc.in, b, p, err, tc.bucket, tc.prefix, tc.bad)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://b/p", "s3://bucket/a/b/", "s3://", "s3://x/../y", "s3://b\x00/p", "s3://bucket/%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, p, err := ParseURL(s)
		if err != nil {
			return
		}
		if validBucket(b) != nil || (p != "" && !strings.HasSuffix(p, "/")) || strings.HasPrefix(p, "/") || strings.Contains(p, "//") {
			t.Fatalf("ParseURL(%q) accepted bucket %q prefix %q", s, b, p)
		}
	})
}

// TestTwoReplicas: two stores on one bucket, as two servers would have:
// what one saves, replaces or deletes the other sees within MaxStale.
func TestTwoReplicas(t *testing.T) {
	b := newBucket(t)
	const maxStale = 200 * time.Millisecond
	o := voice.Options{Model: "test-codec", MaxStale: maxStale}
	ca, cb := &counting{Bucket: b}, &counting{Bucket: b}
	a, _, err := voice.OpenBucket(ca, "voices", o)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := voice.OpenBucket(cb, "voices", o)
	if err != nil {
		t.Fatal(err)
	}
	saved, _, err := a.Save(testVoice("alice", 30, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(maxStale)
	got, err := r.Get("alice")
	if err != nil || got.Key != saved.Key || !slices.EqualFunc(got.Codes, saved.Codes, slices.Equal) {
		t.Fatalf("B reads %v, %v; want A's voice %s", got, err, saved.Key)
	}
	if l := r.List(); len(l) != 1 || l[0].Key != saved.Key {
		t.Fatalf("B lists %v", l)
	}

	// Replace on A; measure when B first serves the new version, polling
	// as a stream of requests would.
	var lags []time.Duration
	for i := range 5 {
		if _, err := r.Get("alice"); err != nil { // B has a fresh copy of the old version
			t.Fatal(err)
		}
		start := time.Now()
		nv, old, err := a.Save(testVoice("alice", 20, 10+i), true)
		if err != nil || old == nil {
			t.Fatalf("replace: %v (old %v)", err, old)
		}
		for {
			g, err := r.Get("alice")
			if err != nil {
				t.Fatal(err)
			}
			if g.Key == nv.Key {
				lags = append(lags, time.Since(start))
				break
			}
			if time.Since(start) > maxStale+5*time.Second {
				t.Fatalf("B still serves %s %v after the replace", g.Key, time.Since(start))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	slices.Sort(lags)
	t.Logf("replace on A seen by B after %v (MaxStale %v, 5 tries, sorted)", lags, maxStale)
	// An unchanged voice is revalidated without a transfer.
	time.Sleep(maxStale)
	if _, err := r.Get("alice"); err != nil {
		t.Fatal(err)
	}
	if cb.notModified.Load() == 0 {
		t.Errorf("B made no conditional GET answered 304 (%d GETs)", cb.gets.Load())
	}
	// A re-listing reads nothing that did not change: ETags from LIST and
	// GET agree.
	gets := cb.gets.Load()
	if w, err := r.Reload(); err != nil || len(w) != 0 {
		t.Fatalf("Reload: %v %v", w, err)
	}
	if n := cb.gets.Load() - gets; n != 0 {
		t.Errorf("Reload of an unchanged bucket read %d objects; the listing's ETags must match the reads'", n)
	}

	// After MaxStale, the next Get always has the change: no timing
	// assertion, the bound is the store's own clock.
	if _, err := a.Delete("alice"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(maxStale)
	if _, err := r.Get("alice"); !errors.Is(err, voice.ErrNotFound) {
		t.Fatalf("B after A deleted, MaxStale later: %v; want ErrNotFound", err)
	}
	if _, err := r.Delete("alice"); !errors.Is(err, voice.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// A new voice saved on B is listed by A after MaxStale.
	if _, err := r.Add(testVoice("bob", 5, 3), false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(maxStale)
	if l := a.List(); len(l) != 1 || l[0].Name != "bob" {
		t.Fatalf("A lists %v; want bob", l)
	}
	// Case clashes are refused across replicas.
	if _, err := a.Add(testVoice("BOB", 5, 3), true); !errors.Is(err, voice.ErrExists) {
		t.Fatalf("BOB next to bob: %v; want ErrExists", err)
	}
}

// TestConcurrentCreates: servers creating one name at the same moment give
// exactly one winner; the others get ErrExists (the API's 409).
func TestConcurrentCreates(t *testing.T) {
	b := newBucket(t)
	const replicas, rounds = 5, 2
	stores := make([]*voice.BucketStore, replicas)
	for i := range stores {
		s, _, err := voice.OpenBucket(b, "", voice.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	for round := range rounds {
		name := fmt.Sprintf("race%d", round)
		var wins, exists atomic.Int32
		var keys sync.Map
		var wg sync.WaitGroup
		startGate := make(chan struct{})
		for i, s := range stores {
			wg.Go(func() {
				<-startGate
				v, _, err := s.Save(testVoice(name, 5, round*100+i), false)
				switch {
				case err == nil:
					wins.Add(1)
					keys.Store("winner", v.Key)
				case errors.Is(err, voice.ErrExists):
					exists.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(startGate)
		wg.Wait()
		if wins.Load() != 1 || exists.Load() != replicas-1 {
			t.Fatalf("round %d: %d winners, %d ErrExists of %d; want 1 and %d", round, wins.Load(), exists.Load(), replicas, replicas-1)
		}
		// Every replica then reads the winner's voice.
		want, _ := keys.Load("winner")
		for i, s := range stores {
			s.Reload()
			if v, err := s.Get(name); err != nil || v.Key != want {
				t.Fatalf("round %d replica %d reads %v %v; want %v", round, i, v, err, want)
			}
		}
	}
}

// TestConditionalCreate checks the server refuses a create of an existing
// key: the guarantee TestConcurrentCreates rests on.
func TestConditionalCreate(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	tag, err := b.Put(ctx, "k", []byte("one"), true)
	if err != nil || tag == "" {
		t.Fatalf("first create: %q %v", tag, err)
	}
	if _, err := b.Put(ctx, "k", []byte("two"), true); !errors.Is(err, voice.ErrPreconditionFailed) {
		t.Fatalf("second create: %v; want ErrPreconditionFailed (does the server support If-None-Match on PUT?)", err)
	}
	data, got, err := b.Get(ctx, "k", "", 100)
	if err != nil || string(data) != "one" || got != tag {
		t.Fatalf("Get = %q %q %v; want one %q", data, got, err, tag)
	}
	if _, _, err := b.Get(ctx, "k", tag, 100); !errors.Is(err, voice.ErrNotModified) {
		t.Fatalf("conditional Get with the current ETag: %v; want ErrNotModified", err)
	}
	if _, _, err := b.Get(ctx, "missing", "", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Get of a missing key: %v; want fs.ErrNotExist", err)
	}
	if data, _, err := b.Get(ctx, "k", "", 1); err != nil || len(data) != 2 {
		t.Fatalf("Get with maxBytes 1 = %q %v; want 2 bytes (the limit + 1)", data, err)
	}
}

// TestRaces runs saves, replaces, deletes and reads of a few names from
// several replicas at once: every read is a whole voice of that name (a
// replace is atomic), and afterwards every replica agrees with the bucket.
func TestRaces(t *testing.T) {
	b := newBucket(t)
	stores := make([]*voice.BucketStore, 3)
	for i := range stores {
		s, _, err := voice.OpenBucket(b, "v", voice.Options{MaxStale: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for j := range 25 {
				name := fmt.Sprintf("n%d", j%2)
				var err error
				switch (i + j) % 4 {
				case 0:
					_, err = s.Add(testVoice(name, 3+j%5, i*100+j), true)
				case 1:
					_, err = s.Add(testVoice(name, 3, i*100+j), false)
				case 2:
					_, err = s.Delete(name)
				case 3:
					var v *voice.Voice
					if v, err = s.Get(name); err == nil && (v.Name != name || v.Frames() < 3) {
						t.Errorf("Get(%s) = %s with %d frames", name, v.Name, v.Frames())
					}
				}
				if err != nil && !errors.Is(err, voice.ErrExists) && !errors.Is(err, voice.ErrNotFound) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	objs, err := b.List(context.Background(), "v/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, o := range objs {
		want[strings.TrimSuffix(strings.TrimPrefix(o.Key, "v/"), ".voice")] = o.ETag
	}
	for i, s := range stores {
		// No object is half written: every one loads.
		if w, err := s.Reload(); err != nil || len(w) != 0 {
			t.Fatalf("replica %d Reload: %v %v", i, w, err)
		}
		var names []string
		for _, v := range s.List() {
			names = append(names, v.Name)
		}
		if len(names) != len(want) {
			t.Fatalf("replica %d lists %v; the bucket holds %v", i, names, want)
		}
	}
}

func TestCorruptObject(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	if _, err := b.Put(ctx, "p/bad.voice", []byte("NVXVOICE but not really"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "p/notes.txt", []byte("ignored"), false); err != nil {
		t.Fatal(err)
	}
	s, warns, err := voice.OpenBucket(b, "p/", voice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.HasSuffix(warns[0].Path, "/p/bad.voice") {
		t.Fatalf("warnings %v; want one for p/bad.voice", warns)
	}
	if _, err := s.Get("bad"); !errors.Is(err, voice.ErrNotFound) {
		t.Fatalf("Get(bad) = %v; want ErrNotFound, as for a corrupt file", err)
	}
	if len(s.List()) != 0 {
		t.Fatalf("List = %v", s.List())
	}
	if old, err := s.Delete("bad"); err != nil || old != nil {
		t.Fatalf("Delete(bad) = %v %v; want nil, nil", old, err)
	}
	if _, _, err := b.Get(ctx, "p/bad.voice", "", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the corrupt object is still there: %v", err)
	}
}

// TestOpenErrors: the mistakes an operator makes get messages that say
// what to fix, and an unreachable endpoint fails in bounded time.
func TestOpenErrors(t *testing.T) {
	b := newBucket(t)
	ctx := context.Background()
	url := Scheme + b.name + "/voices"
	if _, _, err := Open(ctx, url, voice.Options{}); err != nil {
		t.Fatalf("good bucket: %v", err)
	}
	t.Run("missing bucket", func(t *testing.T) {
		_, _, err := Open(ctx, Scheme+"nvx-no-such-bucket-"+b.name[len(b.name)-8:]+"/v", voice.Options{})
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("err %v; want one saying the bucket does not exist", err)
		}
	})
	t.Run("bad credentials", func(t *testing.T) {
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
		_, _, err := Open(ctx, url, voice.Options{})
		if err == nil || !strings.Contains(err.Error(), "access denied") || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
			t.Fatalf("err %v; want access denied naming the variables", err)
		}
		t.Setenv("AWS_ACCESS_KEY_ID", "no-such-key")
		if _, _, err := Open(ctx, url, voice.Options{}); err == nil || !strings.Contains(err.Error(), "access denied") {
			t.Fatalf("unknown key: %v; want access denied", err)
		}
	})
	t.Run("unreachable endpoint", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
		t.Setenv("AWS_ENDPOINT_URL", "http://"+addr)
		start := time.Now()
		_, _, err = Open(ctx, url, voice.Options{Timeout: 3 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "cannot reach") {
			t.Fatalf("err %v; want cannot reach", err)
		}
		t.Logf("unreachable endpoint reported after %v", time.Since(start).Round(time.Millisecond))
	})
	t.Run("no region without endpoint", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_S3", "")
		t.Setenv("AWS_ENDPOINT_URL", "")
		t.Setenv("AWS_REGION", "")
		t.Setenv("AWS_DEFAULT_REGION", "")
		if _, err := New(ctx, "some-bucket"); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
			t.Fatalf("err %v; want one naming AWS_REGION", err)
		}
	})
}

// TestPrefixes: stores under different prefixes of one bucket are
// separate.
func TestPrefixes(t *testing.T) {
	b := newBucket(t)
	s1, _, err := voice.OpenBucket(b, "one/", voice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := voice.OpenBucket(b, "one/two", voice.Options{}) // below s1's prefix: s1 ignores its folder
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Add(testVoice("a", 3, 1), false); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Add(testVoice("a", 3, 2), false); err != nil {
		t.Fatalf("same name under another prefix: %v", err)
	}
	s1.Reload()
	s2.Reload()
	if len(s1.List()) != 1 || len(s2.List()) != 1 {
		t.Fatalf("lists %v and %v; want one voice each", s1.List(), s2.List())
	}
	if got := s2.Location(); got != Scheme+b.name+"/one/two/" {
		t.Errorf("Location = %q", got)
	}
}
