package voice

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"
)

// maxNegative bounds the names a BucketStore remembers as absent, so that
// requests for random names cannot grow its memory without bound.
const maxNegative = 4096

// fetchWorkers is how many objects a reload reads from the bucket at once.
const fetchWorkers = 4

// object is what a BucketStore knows of one key. Objects are never
// modified once stored in the map: a change stores a new one, so a reader
// can tell by pointer whether the entry changed while it was away.
type object struct {
	etag    string    // "" for a name known to be absent
	e       entry     // e.v is nil if absent or unusable
	warn    error     // why the object is unusable (a *fileError)
	checked time.Time // when a request that saw this state started
}

// BucketStore is a voice store in object storage shared by several
// servers: one object per voice, PREFIX<name>.voice, in the same format as
// a voice file of a [Store] (so it carries the encoded codes and the
// metadata, and no server ever re-encodes a voice another saved).
//
// It keeps the directory store's rules from every server's point of view.
// A create (Save without replace) is a conditional write that succeeds
// only if the object does not exist, so of two servers creating one name
// at once exactly one wins and the other gets ErrExists. A replace or
// delete is a single object write or removal, which S3 makes atomic: a
// reader sees the old voice or the new, never a mix. Names differing only
// in case, and the voice limit, are checked against a fresh listing.
//
// A BucketStore caches what it read. Get asks the bucket for a name it
// does not know at once (so a voice just created elsewhere is found), and
// uses a cached voice, or a cached miss, for at most Options.MaxStale
// after the request that read or checked it started; after that it asks
// the bucket again with a conditional GET (If-None-Match: the
// cached ETag), which costs a round trip and no transfer when nothing
// changed. List and Refresh re-list the bucket at most once per MaxStale and
// read only the objects whose ETag changed. So a voice replaced or deleted
// by another server is served, and its prompt prefix used, for at most
// MaxStale after the change: a voice's Key is the SHA-256 of its content,
// which every replace changes.
//
// Two rules are weaker than in a directory, because a bucket has no lock:
// two servers creating different names at the voice limit at once can
// exceed it by one each, and two servers creating "Bob" and "bob" at the
// same moment can both succeed. Both need two writers within one request's
// time.
type BucketStore struct {
	b      Bucket
	prefix string // "" or ending in "/"
	opts   Options
	now    func() time.Time

	wmu sync.Mutex // serializes Save, Delete and reloads in this store
	// tried is when Refresh last listed, and triedErr what that gave;
	// guarded by wmu.
	tried    time.Time
	triedErr error

	mu       sync.RWMutex // guards the fields below
	objs     map[string]*object
	negative int       // absent entries in objs
	listed   time.Time // start of the last complete listing
	sorted   []*Voice
}

// OpenBucket opens the voice store kept in b under prefix (a folder
// such as "voices/", or "" for the whole bucket; a missing trailing "/"
// is added) and lists and loads its voices. Objects that cannot be used
// are skipped and returned as warnings; the error reports a bucket that
// cannot be listed (missing, no access, unreachable) or invalid options.
func OpenBucket(b Bucket, prefix string, o Options) (*BucketStore, []Warning, error) {
	if err := o.setDefaults(); err != nil {
		return nil, nil, fmt.Errorf("open voice store: %w", err)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	s := &BucketStore{b: b, prefix: prefix, opts: o, now: time.Now, objs: map[string]*object{}}
	w, err := s.Reload()
	if err != nil {
		return nil, nil, fmt.Errorf("open voice store %s: %w", s.Location(), err)
	}
	return s, w, nil
}

// Location returns the store's URL, such as s3://bucket/prefix/.
func (s *BucketStore) Location() string {
	return strings.TrimSuffix(s.b.String(), "/") + "/" + s.prefix
}

func (s *BucketStore) key(name string) string { return s.prefix + name + fileExt }

func (s *BucketStore) fresh(t, now time.Time) bool {
	return !t.IsZero() && now.Sub(t) < s.opts.MaxStale
}

func (s *BucketStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.Timeout)
}

// Get returns the voice called name. A cached voice is checked against the
// bucket when it is older than Options.MaxStale. It fails with ErrNotFound
// if there is none (or its object is unusable), with an *InvalidError if
// name is not a valid name or the voice does not fit the codec described
// by the Options, and with another error if the bucket cannot be reached:
// a voice that could not be checked is not served.
func (s *BucketStore) Get(name string) (*Voice, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	o := s.objs[name]
	s.mu.RUnlock()
	// A name not known at all is asked for at once: a voice another
	// replica just created must be usable on the next request, which a
	// load balancer may send here. A miss is then remembered for MaxStale.
	if o == nil || !s.fresh(o.checked, s.now()) {
		var err error
		if o, err = s.revalidate(name, o); err != nil {
			return nil, err
		}
	}
	if o == nil || o.e.v == nil {
		return nil, notFound(name)
	}
	if err := fits(o.e, s.opts); err != nil {
		return nil, err
	}
	return o.e.v, nil
}

// revalidate asks the bucket whether the object of name is still old
// (nil: not known) and stores and returns the answer.
func (s *BucketStore) revalidate(name string, old *object) (*object, error) {
	start := s.now()
	ctx, cancel := s.ctx()
	defer cancel()
	var etag string
	if old != nil {
		etag = old.etag
	}
	data, tag, err := s.b.Get(ctx, s.key(name), etag, s.opts.MaxFileBytes)
	var no *object
	switch {
	case errors.Is(err, ErrNotModified) && old != nil:
		c := *old
		c.checked = start
		no = &c
	case errors.Is(err, fs.ErrNotExist):
		no = &object{checked: start}
	case err != nil:
		return nil, fmt.Errorf("read voice %q from %s: %w", name, s.Location(), err)
	default:
		no = s.decode(name, data, tag, start)
		if no.warn != nil {
			s.warn(Warning{Path: s.Location() + name + fileExt, Err: no.warn})
		}
	}
	var stale *Voice
	s.mu.Lock()
	switch cur := s.objs[name]; {
	case cur != old && cur != nil && !cur.checked.Before(start):
		no = cur // a write or check that started later got there first
	default:
		stale = s.set(name, no)
	}
	s.mu.Unlock()
	if stale != nil {
		s.changed(stale.Name, stale.Key)
	}
	return no, nil
}

// set stores the object of name and returns the voice it displaced, if
// that voice's version is gone. s.mu must be held for writing.
func (s *BucketStore) set(name string, o *object) (stale *Voice) {
	cur := s.objs[name]
	if cur != nil && cur.etag == "" {
		s.negative--
	}
	if o.etag == "" {
		if s.negative >= maxNegative {
			for n, x := range s.objs {
				if x.etag == "" {
					delete(s.objs, n)
				}
			}
			s.negative = 0
		}
		s.negative++
	}
	s.objs[name] = o
	var oldV *Voice
	if cur != nil {
		oldV = cur.e.v
	}
	if oldV != o.e.v {
		s.resort()
	}
	if oldV != nil && (o.e.v == nil || o.e.v.Key != oldV.Key) {
		return oldV
	}
	return nil
}

// decode turns an object's content into a cache entry, unusable with a
// warning if the content is not a valid voice of that name.
func (s *BucketStore) decode(name string, data []byte, etag string, at time.Time) *object {
	o := &object{etag: etag, checked: at}
	if int64(len(data)) > s.opts.MaxFileBytes {
		o.warn = fileErrorf(fileTooLarge, "object is over the limit of %d bytes", s.opts.MaxFileBytes)
		return o
	}
	v, err := decodeFile(data, s.opts.MaxFrames)
	if err == nil && v.Name != name {
		err = fileErrorf(fileWrongName, "the object holds voice %q; a voice object must be named <prefix><name>%s", v.Name, fileExt)
	}
	if err != nil {
		o.warn = err
		return o
	}
	o.e = entry{v: v, maxCode: maxCode(v.Codes)}
	return o
}

// List returns the voices, sorted by name, including voices that Get
// refuses because they were saved for another codec. It first re-lists the
// bucket if the last listing is older than Options.MaxStale; if that
// fails, the error is logged and the voices known before are returned.
func (s *BucketStore) List() []*Voice {
	if err := s.Refresh(); err != nil && s.opts.Logger != nil {
		s.opts.Logger.Error("list voices", "store", s.Location(), "err", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Voice(nil), s.sorted...)
}

// Refresh re-lists the bucket if the last listing is older than
// Options.MaxStale, reads the objects whose ETag changed, and logs the
// objects newly found unusable.
func (s *BucketStore) Refresh() error {
	s.mu.RLock()
	listed := s.listed
	s.mu.RUnlock()
	if s.fresh(listed, s.now()) {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	listed = s.listed
	s.mu.RUnlock()
	now := s.now()
	if s.fresh(listed, now) {
		return nil // another caller listed while this one waited
	}
	if s.fresh(s.tried, now) {
		// The last listing failed less than MaxStale ago: while the bucket
		// is unreachable, do not make every request wait for another try.
		return s.triedErr
	}
	s.tried = now
	_, news, err := s.reload()
	s.triedErr = err
	for _, w := range news {
		s.warn(w)
	}
	return err
}

// Reload lists the bucket now and reads every object whose ETag changed
// since it was last read, so that voices added, replaced or deleted by
// other servers become visible, and returns warnings for the objects it
// skipped (also those skipped before). Voices whose objects did not change
// keep their snapshots and keys. The error reports a bucket that cannot be
// listed or read; the loaded voices are then unchanged.
func (s *BucketStore) Reload() ([]Warning, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	all, _, err := s.reload()
	for _, w := range all {
		s.warn(w)
	}
	return all, err
}

// reload lists and reads the bucket; s.wmu must be held. It returns every
// warning and those about objects read this time.
func (s *BucketStore) reload() (all, news []Warning, err error) {
	start := s.now()
	ctx, cancel := s.ctx()
	defer cancel()
	infos, err := s.b.List(ctx, s.prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("list voices in %s: %w", s.Location(), err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	next := map[string]*object{}
	var fetch []string
	loaded := 0
	s.mu.RLock() // for s.objs; nothing below waits for the network
	for _, in := range infos {
		rel := strings.TrimPrefix(in.Key, s.prefix)
		stem, ok := strings.CutSuffix(rel, fileExt)
		if !ok || strings.Contains(rel, "/") {
			continue // not a voice object, or in a folder below the prefix
		}
		path := s.Location() + rel
		if err := ValidName(stem); err != nil {
			all = append(all, Warning{Path: path, Err: fileErrorf(fileWrongName, "%q is not a valid voice name; rename or delete the object", stem)})
			continue
		}
		if loaded >= s.opts.MaxVoices {
			all = append(all, Warning{Path: path, Err: fileErrorf(fileTooLarge, "more than %d voices in the store, the limit", s.opts.MaxVoices)})
			continue
		}
		loaded++
		if cur := s.objs[stem]; cur != nil && cur.etag != "" && cur.etag == in.ETag {
			c := *cur
			c.checked = start
			next[stem] = &c
			if c.warn != nil {
				all = append(all, Warning{Path: path, Err: c.warn})
			}
			continue
		}
		fetch = append(fetch, stem)
	}
	s.mu.RUnlock()

	got, err := s.fetchAll(ctx, fetch, start)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range fetch {
		o := got[name]
		if o == nil {
			continue // deleted between the listing and the read
		}
		next[name] = o
		if o.warn != nil {
			w := Warning{Path: s.Location() + name + fileExt, Err: o.warn}
			all = append(all, w)
			news = append(news, w)
		}
	}

	var stale []*Voice
	s.mu.Lock()
	for name, cur := range s.objs {
		if cur.checked.After(start) {
			next[name] = cur // a Get or write that started after the listing knows better
			continue
		}
		if n := next[name]; cur.e.v != nil && (n == nil || n.e.v == nil || n.e.v.Key != cur.e.v.Key) {
			stale = append(stale, cur.e.v)
		}
	}
	s.objs = next
	s.negative = 0
	for _, o := range next {
		if o.etag == "" {
			s.negative++
		}
	}
	s.listed = start
	s.resort()
	s.mu.Unlock()

	sort.Slice(stale, func(i, j int) bool { return stale[i].Name < stale[j].Name })
	for _, v := range stale {
		s.changed(v.Name, v.Key)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	return all, news, nil
}

// fetchAll reads the named objects a few at a time. A name missing from
// the result was deleted after the listing.
func (s *BucketStore) fetchAll(ctx context.Context, names []string, at time.Time) (map[string]*object, error) {
	got := make(map[string]*object, len(names))
	var mu sync.Mutex
	var firstErr error
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(fetchWorkers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				data, tag, err := s.b.Get(ctx, s.key(name), "", s.opts.MaxFileBytes)
				mu.Lock()
				switch {
				case errors.Is(err, fs.ErrNotExist):
				case err != nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("read voice %q from %s: %w", name, s.Location(), err)
					}
				default:
					got[name] = s.decode(name, data, tag, at)
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	return got, firstErr
}

// Add saves v under v.Name and returns the voice it replaced, if any; see
// Save.
func (s *BucketStore) Add(v Voice, replace bool) (old *Voice, err error) {
	_, old, err = s.Save(v, replace)
	return old, err
}

// Save stores v under v.Name and returns the voice as saved and the one it
// replaced, if any. Without replace it fails with ErrExists if the name is
// taken in the bucket, by this server or another: the write is conditional
// (If-None-Match: *), so of two servers creating the same name at once one
// wins. A name that differs only in case from an existing one is refused
// either way. Adding a new name to a full store fails with a *LimitError,
// invalid input with an *InvalidError, a full storage server with a
// *SpaceError. The store keeps its own copy of v.Codes.
func (s *BucketStore) Save(v Voice, replace bool) (saved, old *Voice, err error) {
	nv, data, err := prepare(v, s.opts)
	if err != nil {
		return nil, nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ctx, cancel := s.ctx()
	defer cancel()
	start := s.now()
	infos, err := s.b.List(ctx, s.prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("save voice %q: list %s: %w", nv.Name, s.Location(), err)
	}
	count, etag := 0, ""
	for _, in := range infos {
		rel := strings.TrimPrefix(in.Key, s.prefix)
		stem, ok := strings.CutSuffix(rel, fileExt)
		if !ok || strings.Contains(rel, "/") || ValidName(stem) != nil {
			continue
		}
		count++
		switch {
		case stem == nv.Name:
			etag = in.ETag
		case strings.EqualFold(stem, nv.Name):
			return nil, nil, exists("cannot save voice %q: voice %q exists and names differing only in case are not allowed; delete it first", nv.Name, stem)
		}
	}
	onStore := etag != ""
	if onStore && !replace {
		return nil, nil, exists("voice %q already exists; replace it or delete it first", nv.Name)
	}
	if !onStore && count >= s.opts.MaxVoices {
		return nil, nil, &LimitError{Name: nv.Name, Max: s.opts.MaxVoices}
	}
	s.mu.RLock()
	cur := s.objs[nv.Name]
	s.mu.RUnlock()
	if onStore {
		if cur != nil && cur.etag == etag {
			old = cur.e.v
		} else if b, tag, err := s.b.Get(ctx, s.key(nv.Name), "", s.opts.MaxFileBytes); err == nil {
			old = s.decode(nv.Name, b, tag, start).e.v // an unusable object has no voice to return
		}
	}
	newTag, err := s.b.Put(ctx, s.key(nv.Name), data, !replace)
	switch {
	case errors.Is(err, ErrPreconditionFailed):
		return nil, nil, exists("voice %q already exists (another server saved it just now); replace it or delete it first", nv.Name)
	case errors.Is(err, ErrNoSpace):
		return nil, nil, &SpaceError{Name: nv.Name, Err: err}
	case err != nil:
		return nil, nil, fmt.Errorf("save voice %q to %s: %w", nv.Name, s.Location(), err)
	}
	s.mu.Lock()
	stale := s.set(nv.Name, &object{etag: newTag, e: entry{v: &nv, maxCode: maxCode(nv.Codes)}, checked: start})
	s.mu.Unlock()
	if stale == nil && cur != nil && cur.e.v != nil {
		stale = cur.e.v // same content saved again: still a change, as in a directory
	}
	if stale != nil {
		s.changed(stale.Name, stale.Key)
	}
	return &nv, old, nil
}

// Delete removes the voice called name and returns it. It fails with
// ErrNotFound if the voice is neither loaded nor in the bucket. An object
// that is not a usable voice is removed all the same, and nil is returned
// with no error.
func (s *BucketStore) Delete(name string) (*Voice, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ctx, cancel := s.ctx()
	defer cancel()
	start := s.now()
	s.mu.RLock()
	cur := s.objs[name]
	s.mu.RUnlock()
	var memOld *Voice
	if cur != nil {
		memOld = cur.e.v
	}
	var inm string
	if cur != nil {
		inm = cur.etag // the voice to return is usually the one in memory
	}
	data, tag, err := s.b.Get(ctx, s.key(name), inm, s.opts.MaxFileBytes)
	onStore := true
	switch {
	case errors.Is(err, ErrNotModified):
		tag = cur.etag
	case errors.Is(err, fs.ErrNotExist):
		onStore = false
	case err != nil:
		return nil, fmt.Errorf("delete voice %q: read %s: %w", name, s.Location(), err)
	}
	if !onStore && memOld == nil {
		s.mu.Lock()
		s.set(name, &object{checked: start})
		s.mu.Unlock()
		return nil, notFound(name)
	}
	old := memOld
	if onStore {
		if cur == nil || cur.etag != tag {
			old = s.decode(name, data, tag, start).e.v
		}
		if err := s.b.Delete(ctx, s.key(name)); err != nil {
			return nil, fmt.Errorf("delete voice %q from %s: %w", name, s.Location(), err)
		}
	}
	s.mu.Lock()
	s.set(name, &object{checked: start})
	s.mu.Unlock()
	if memOld != nil {
		s.changed(name, memOld.Key)
	}
	return old, nil
}

// resort rebuilds the sorted list; s.mu must be held for writing.
func (s *BucketStore) resort() {
	sorted := make([]*Voice, 0, len(s.objs))
	for _, o := range s.objs {
		if o.e.v != nil {
			sorted = append(sorted, o.e.v)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	s.sorted = sorted
}

func (s *BucketStore) changed(name, oldKey string) {
	if s.opts.OnChange != nil {
		s.opts.OnChange(name, oldKey)
	}
}

func (s *BucketStore) warn(w Warning) {
	if l := s.opts.Logger; l != nil {
		l.Warn("skipped voice object", "path", w.Path, "err", w.Err)
	}
}
