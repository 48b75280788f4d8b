package voice

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memBucket is an in-memory Bucket with S3's semantics for the calls the
// store makes: ETags are the MD5 of the content, creates are atomic.
// The real thing is tested in package s3store against an S3 server.
type memBucket struct {
	mu   sync.Mutex
	objs map[string][]byte
	// counts of calls, and of Gets answered "not modified"
	gets, notModified, puts, lists, deletes atomic.Int64
	// fail, if set, is returned by every call
	fail error
}

func newMemBucket() *memBucket { return &memBucket{objs: map[string][]byte{}} }

func md5tag(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func (m *memBucket) Get(_ context.Context, key, ifNoneMatch string, maxBytes int64) ([]byte, string, error) {
	m.gets.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, "", m.fail
	}
	b, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("get %s: %w", key, fs.ErrNotExist)
	}
	tag := md5tag(b)
	if ifNoneMatch == tag {
		m.notModified.Add(1)
		return nil, "", ErrNotModified
	}
	return slices.Clone(b[:min(int64(len(b)), maxBytes+1)]), tag, nil
}

func (m *memBucket) Put(_ context.Context, key string, data []byte, create bool) (string, error) {
	m.puts.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return "", m.fail
	}
	if _, ok := m.objs[key]; ok && create {
		return "", fmt.Errorf("put %s: %w", key, ErrPreconditionFailed)
	}
	m.objs[key] = slices.Clone(data)
	return md5tag(data), nil
}

func (m *memBucket) Delete(_ context.Context, key string) error {
	m.deletes.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	delete(m.objs, key)
	return nil
}

func (m *memBucket) List(_ context.Context, prefix string) ([]ObjectInfo, error) {
	m.lists.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []ObjectInfo
	for k, b := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, ObjectInfo{Key: k, ETag: md5tag(b), Size: int64(len(b))})
		}
	}
	return out, nil
}

func (m *memBucket) String() string { return "mem://bucket" }

func (m *memBucket) put(key string, b []byte) {
	m.mu.Lock()
	m.objs[key] = b
	m.mu.Unlock()
}

// fakeClock is a settable BucketStore clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// openMem opens a BucketStore on b under "voices/" with the given clock.
func openMem(t *testing.T, b Bucket, clk *fakeClock, o Options) *BucketStore {
	t.Helper()
	s, _, err := OpenBucket(b, "voices", o)
	if err != nil {
		t.Fatal(err)
	}
	if clk != nil {
		s.now = clk.now
		if _, err := s.Reload(); err != nil { // so the listing time is on clk
			t.Fatal(err)
		}
	}
	return s
}

func TestBucketRoundTripTwoReplicas(t *testing.T) {
	b := newMemBucket()
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	o := Options{Model: testModel, MaxStale: time.Second}
	a, r := openMem(t, b, clk, o), openMem(t, b, clk, o)
	if got := a.Location(); got != "mem://bucket/voices/" {
		t.Errorf("Location = %q", got)
	}
	want := testVoice("alice", 20, 16, 1)
	saved, old, err := a.Save(want, false)
	if err != nil || old != nil {
		t.Fatalf("Save: %v, old %v", err, old)
	}
	if _, ok := b.objs["voices/alice.voice"]; !ok {
		t.Fatalf("object keys %v; want voices/alice.voice", slices.Collect(mapsKeys(b.objs)))
	}
	// The other replica finds a name it does not know at once, though it
	// listed before the save.
	got, err := r.Get("alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != saved.Key || !slices.EqualFunc(got.Codes, want.Codes, slices.Equal) || got.RefText != want.RefText {
		t.Fatalf("replica B read %+v; want %+v", got, saved)
	}
	if l := r.List(); len(l) != 1 || l[0].Name != "alice" {
		t.Fatalf("List on B = %v", l)
	}
	// Replace on B; A serves the old version until MaxStale has passed
	// since it last checked, then the new one with a new key.
	clk.advance(time.Second)
	before := b.gets.Load()
	if _, err := a.Get("alice"); err != nil {
		t.Fatal(err)
	}
	nv := testVoice("alice", 10, 16, 2)
	_, old, err = r.Save(nv, true)
	if err != nil || old == nil || old.Key != saved.Key {
		t.Fatalf("replace: %v, old %v", err, old)
	}
	g, _ := a.Get("alice")
	if g.Key != saved.Key {
		t.Fatalf("A changed its answer within MaxStale of its last check")
	}
	clk.advance(time.Second)
	g, err = a.Get("alice")
	if err != nil || g.Key == saved.Key || g.Frames() != 10 {
		t.Fatalf("after MaxStale A serves %v, %v; want the replacement", g, err)
	}
	if n := b.gets.Load() - before; n != 2 {
		t.Errorf("A made %d GETs for 3 Gets across two MaxStale periods; want 2 (one not-modified check, one read)", n)
	}
	// An unchanged voice is checked with a conditional GET that transfers
	// nothing.
	clk.advance(time.Second)
	nm := b.notModified.Load()
	if _, err := a.Get("alice"); err != nil || b.notModified.Load() != nm+1 {
		t.Fatalf("revalidation: %v, not-modified answers %d → %d", err, nm, b.notModified.Load())
	}
	// Delete on A; B stops serving it after MaxStale.
	if old, err := a.Delete("alice"); err != nil || old == nil {
		t.Fatalf("Delete: %v %v", old, err)
	}
	clk.advance(time.Second)
	if _, err := r.Get("alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on B after delete on A: %v; want ErrNotFound", err)
	}
	if l := r.List(); len(l) != 0 {
		t.Fatalf("List on B after delete: %v", l)
	}
	if _, err := r.Delete("alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v; want ErrNotFound", err)
	}
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestBucketCreateRules(t *testing.T) {
	b := newMemBucket()
	o := Options{Model: testModel, MaxVoices: 2}
	a, r := openMem(t, b, nil, o), openMem(t, b, nil, o)
	if _, err := a.Add(testVoice("Bob", 5, 16, 1), false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		v       Voice
		replace bool
		want    error
	}{
		{"same name on the other replica", testVoice("Bob", 5, 16, 2), false, ErrExists},
		{"other case", testVoice("bob", 5, 16, 2), false, ErrExists},
		{"other case, replace", testVoice("BOB", 5, 16, 2), true, ErrExists},
		{"invalid name", testVoice("../x", 5, 16, 2), false, nil},
		{"wrong model", Voice{Name: "m", Model: "other", Codes: [][]int{{1}}, Duration: 1}, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Add(tc.v, tc.replace)
			var ie *InvalidError
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v; want %v", err, tc.want)
			case tc.want == nil && !errors.As(err, &ie):
				t.Fatalf("err %v; want an *InvalidError", err)
			}
		})
	}
	if _, err := r.Add(testVoice("carol", 5, 16, 3), false); err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if _, err := a.Add(testVoice("dave", 5, 16, 4), false); !errors.As(err, &le) || le.Max != 2 {
		t.Fatalf("third voice with MaxVoices 2: %v; want a *LimitError", err)
	}
	// Replacing within the limit is fine.
	if _, err := a.Add(testVoice("carol", 6, 16, 5), true); err != nil {
		t.Fatal(err)
	}
}

// TestBucketConcurrentCreate: replicas creating one name at once give one
// winner, because the create is conditional on the server.
func TestBucketConcurrentCreate(t *testing.T) {
	b := newMemBucket()
	const n = 8
	stores := make([]*BucketStore, n)
	for i := range stores {
		stores[i] = openMem(t, b, nil, Options{})
	}
	var wins, exists atomic.Int32
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			_, err := s.Add(testVoice("race", 5, 16, i), false)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, ErrExists):
				exists.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || exists.Load() != n-1 {
		t.Fatalf("%d winners and %d ErrExists of %d; want 1 and %d", wins.Load(), exists.Load(), n, n-1)
	}
}

// TestBucketCreateLosesRace: a create that passed the listing but finds the
// key taken at write time (another replica won in between) is ErrExists.
func TestBucketCreateLosesRace(t *testing.T) {
	b := newMemBucket()
	s := openMem(t, b, nil, Options{})
	rb := &racingBucket{memBucket: b}
	s.b = rb
	_, err := s.Add(testVoice("x", 5, 16, 1), false)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "another server") {
		t.Fatalf("err %v; want ErrExists naming the other server", err)
	}
}

// racingBucket writes the key itself between the store's listing and its
// create.
type racingBucket struct{ *memBucket }

func (r *racingBucket) Put(ctx context.Context, key string, data []byte, create bool) (string, error) {
	r.memBucket.Put(ctx, key, data, false)
	return r.memBucket.Put(ctx, key, data, create)
}

func TestBucketCorruptObject(t *testing.T) {
	b := newMemBucket()
	good, _, _ := encodeFile(ptr(testVoice("good", 5, 16, 1)))
	badSum := slices.Clone(good)
	badSum[len(badSum)-1] ^= 1
	other, _, _ := encodeFile(ptr(testVoice("other", 5, 16, 1)))
	b.put("voices/good.voice", good)
	b.put("voices/corrupt.voice", badSum)
	b.put("voices/wrongname.voice", other)
	b.put("voices/empty.voice", nil)
	b.put("voices/bad..name.voice", good)
	b.put("voices/readme.txt", []byte("not a voice"))
	b.put("voices/sub/deeper.voice", good)
	b.put("elsewhere/x.voice", good)
	s, warns, err := OpenBucket(b, "voices/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, w := range warns {
		paths = append(paths, w.Path)
	}
	wantPaths := []string{"mem://bucket/voices/bad..name.voice", "mem://bucket/voices/corrupt.voice", "mem://bucket/voices/empty.voice", "mem://bucket/voices/wrongname.voice"}
	if !slices.Equal(paths, wantPaths) {
		t.Fatalf("warnings for %v; want %v", paths, wantPaths)
	}
	if l := s.List(); len(l) != 1 || l[0].Name != "good" {
		t.Fatalf("List = %v; want only good", l)
	}
	if _, err := s.Get("corrupt"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(corrupt) = %v; want ErrNotFound, like a corrupt file", err)
	}
	// A reload does not read the unchanged corrupt objects again.
	gets := b.gets.Load()
	if w, err := s.Reload(); err != nil || len(w) != 4 {
		t.Fatalf("Reload: %d warnings, %v", len(w), err)
	}
	if b.gets.Load() != gets {
		t.Errorf("Reload read %d unchanged objects again", b.gets.Load()-gets)
	}
	// Delete removes the corrupt object and returns no voice.
	if old, err := s.Delete("corrupt"); err != nil || old != nil {
		t.Fatalf("Delete(corrupt) = %v, %v; want nil, nil", old, err)
	}
	if _, ok := b.objs["voices/corrupt.voice"]; ok {
		t.Fatal("corrupt object still there")
	}
	// Saving over an unusable object replaces it.
	if _, old, err := s.Save(testVoice("empty", 5, 16, 1), true); err != nil || old != nil {
		t.Fatalf("Save over empty object: %v, old %v", err, old)
	}
}

func ptr[T any](v T) *T { return &v }

func TestBucketErrors(t *testing.T) {
	b := newMemBucket()
	s := openMem(t, b, nil, Options{MaxStale: time.Nanosecond})
	if _, err := s.Add(testVoice("v", 5, 16, 1), false); err != nil {
		t.Fatal(err)
	}
	down := errors.New("connection refused")
	b.fail = down
	// A voice that cannot be checked is not served.
	if _, err := s.Get("v"); !errors.Is(err, down) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Get with the bucket down: %v", err)
	}
	// List keeps the voices it knew.
	if l := s.List(); len(l) != 1 {
		t.Fatalf("List with the bucket down = %v", l)
	}
	if err := s.Refresh(); !errors.Is(err, down) {
		t.Fatalf("Refresh: %v", err)
	}
	if _, err := s.Add(testVoice("w", 5, 16, 1), false); !errors.Is(err, down) {
		t.Fatalf("Add: %v", err)
	}
	if _, err := s.Delete("v"); !errors.Is(err, down) {
		t.Fatalf("Delete: %v", err)
	}
	if _, _, err := OpenBucket(b, "", Options{}); !errors.Is(err, down) || !strings.Contains(err.Error(), "mem://bucket/") {
		t.Fatalf("OpenBucket: %v", err)
	}
	b.fail = nil
	// A full storage server is a *SpaceError, so the API answers 507.
	full := &failingPut{memBucket: b, err: fmt.Errorf("put: %w: XMinioStorageFull", ErrNoSpace)}
	s.b = full
	var se *SpaceError
	if _, err := s.Add(testVoice("w", 5, 16, 1), false); !errors.As(err, &se) || se.Name != "w" {
		t.Fatalf("Add to a full server: %v; want a *SpaceError", err)
	}
}

type failingPut struct {
	*memBucket
	err error
}

func (f *failingPut) Put(context.Context, string, []byte, bool) (string, error) { return "", f.err }

// TestBucketOnChange: the callback reports versions that went away,
// whether changed here or found changed in the bucket.
func TestBucketOnChange(t *testing.T) {
	b := newMemBucket()
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	var mu sync.Mutex
	var got []string
	o := Options{MaxStale: time.Second, OnChange: func(name, key string) {
		mu.Lock()
		got = append(got, key)
		mu.Unlock()
	}}
	a := openMem(t, b, clk, o)
	r := openMem(t, b, clk, Options{})
	v1, _, err := a.Save(testVoice("v", 5, 16, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := r.Save(testVoice("v", 5, 16, 2), true)
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if g, err := a.Get("v"); err != nil || g.Key != v2.Key {
		t.Fatal(g, err)
	}
	if _, err := r.Delete("v"); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	a.List()
	if want := []string{v1.Key, v2.Key}; !slices.Equal(got, want) {
		t.Fatalf("OnChange keys %v; want %v", got, want)
	}
}

// TestBucketConcurrentUse runs reads, writes and refreshes at once, for the
// race detector.
func TestBucketConcurrentUse(t *testing.T) {
	b := newMemBucket()
	a := openMem(t, b, nil, Options{MaxStale: time.Nanosecond})
	r := openMem(t, b, nil, Options{MaxStale: time.Nanosecond})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 30 {
				s := a
				if (i+j)%2 == 0 {
					s = r
				}
				name := fmt.Sprintf("v%d", j%3)
				switch (i + j) % 4 {
				case 0:
					s.Add(testVoice(name, 3, 16, j), true)
				case 1:
					s.Delete(name)
				case 2:
					if v, err := s.Get(name); err == nil && v.Name != name {
						t.Errorf("Get(%s) = %s", name, v.Name)
					}
				case 3:
					s.List()
				}
			}
		})
	}
	wg.Wait()
}

// TestBucketDownThrottle: while the bucket cannot be listed, requests do
// not each wait for another listing; one try per MaxStale.
func TestBucketDownThrottle(t *testing.T) {
	b := newMemBucket()
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	s := openMem(t, b, clk, Options{MaxStale: time.Second})
	b.fail = errors.New("connection refused")
	clk.advance(time.Second)
	lists := b.lists.Load()
	for range 5 {
		s.List()
		if err := s.Refresh(); !errors.Is(err, b.fail) {
			t.Fatalf("Refresh: %v", err)
		}
	}
	if n := b.lists.Load() - lists; n != 1 {
		t.Fatalf("%d listings in one MaxStale with the bucket down; want 1", n)
	}
	b.fail = nil
	clk.advance(time.Second)
	if err := s.Refresh(); err != nil || b.lists.Load()-lists != 2 {
		t.Fatalf("after MaxStale: %v, %d listings; want a new try", err, b.lists.Load()-lists)
	}
}
