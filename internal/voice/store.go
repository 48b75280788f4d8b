package voice

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Voice is a saved voice: the codec codes of a reference clip and facts
// about it. A *Voice from a Store is a snapshot shared with other callers;
// it must not be modified.
type Voice struct {
	// Name is the voice name; see ValidName.
	Name string
	// Key identifies this version of the voice: it changes whenever the
	// voice is replaced. Set by the store; ignored by Add.
	Key string
	// Model identifies the codec that made Codes, e.g.
	// "moss-audio-tokenizer-nano/16x1024". Add fills it from Options.Model
	// when empty.
	Model string
	// Created is when the voice was saved, in UTC. Add sets it to the
	// current time when zero.
	Created time.Time
	// Codes are the clip's codec codes, [frames][codebooks].
	Codes [][]int
	// Duration is the length of the source clip in seconds.
	Duration float64
	// SourceRate and SourceChannels describe the source clip; 0 = unknown.
	SourceRate, SourceChannels int
	// SourceFormat is the source clip's container: "wav", "flac", "mp3", ….
	SourceFormat string
	// RefText is the clip's transcript, if the user gave one. It is stored
	// and listed but the model does not use it.
	RefText string
}

// Frames returns the number of codec frames.
func (v *Voice) Frames() int { return len(v.Codes) }

// Codebooks returns the number of codes per frame.
func (v *Voice) Codebooks() int {
	if len(v.Codes) == 0 {
		return 0
	}
	return len(v.Codes[0])
}

// Defaults for zero Options fields.
const (
	// DefaultMaxVoices bounds the voices in a store.
	DefaultMaxVoices = 1000
	// DefaultMaxFrames is 30 s of 12.5 Hz frames (375) plus slack.
	DefaultMaxFrames = 400
	// DefaultLockTimeout is how long a write waits for another process.
	DefaultLockTimeout = 10 * time.Second
	// DefaultMaxStale is how old a BucketStore's view of a voice may be:
	// a voice replaced or deleted by another server is used for at most this
	// long after the change.
	DefaultMaxStale = time.Second
	// DefaultTimeout bounds one request to a bucket.
	DefaultTimeout = 10 * time.Second
)

// hardMaxFrames bounds Options.MaxFrames, so sizes derived from it cannot
// overflow.
const hardMaxFrames = 1 << 20

// tmpPrefix starts the names of temporary files; no voice name can.
const tmpPrefix = ".tmp-"

// Options configure a Store. The zero value is usable.
type Options struct {
	// Model is the identity of the codec the caller uses. If set, Add
	// rejects voices made by another codec (and fills it in when a voice
	// leaves Model empty), and Get refuses them with an *InvalidError.
	// List still shows them, and Delete removes them.
	Model string
	// NumCodebooks and CodebookSize, if set, describe the codec's codes:
	// Add rejects, and Get refuses, voices with another number of codes
	// per frame or a code outside [0, CodebookSize).
	NumCodebooks, CodebookSize int
	// MaxVoices bounds the voices in the directory; Add beyond it fails
	// with a *LimitError. Default DefaultMaxVoices.
	MaxVoices int
	// MaxFrames bounds a voice's frames, at Add and at load. Default
	// DefaultMaxFrames.
	MaxFrames int
	// MaxFileBytes bounds the size of a voice file at load. Default: the
	// largest file a voice within MaxFrames can need.
	MaxFileBytes int64
	// LockTimeout bounds how long Add and Delete wait for another process
	// writing the same directory. Default DefaultLockTimeout.
	LockTimeout time.Duration
	// Logger, if set, receives each Warning (level Warn).
	Logger *slog.Logger
	// MaxStale bounds how long a BucketStore serves what it read before
	// checking the bucket again, and how often Store.Refresh may re-read
	// the directory. Default DefaultMaxStale.
	MaxStale time.Duration
	// Timeout bounds each request a BucketStore makes to its bucket.
	// Default DefaultTimeout.
	Timeout time.Duration
	// OnChange, if set, is called with the name and old key of a voice this
	// Store had loaded once that version is gone: replaced or deleted by
	// Add or Delete, or found changed or removed by Reload. It is called
	// synchronously and in order, with the Store's write lock held: it may
	// call Get and List, but not Add, Delete or Reload.
	OnChange func(name, oldKey string)
}

// entry is a loaded voice with the facts Get checks precomputed.
type entry struct {
	v       *Voice
	maxCode int
}

// Store is a directory of saved voices. It is safe for concurrent use.
type Store struct {
	dir  string // DATA/voices
	opts Options

	wmu sync.Mutex // serializes Add, Delete and Reload in this Store

	mu     sync.RWMutex // guards voices and sorted
	voices map[string]entry
	sorted []*Voice

	// lastRefresh throttles Refresh (unix nanoseconds); dirMtime is the
	// directory's mtime at the last Refresh that reloaded.
	lastRefresh, dirMtime atomic.Int64

	// write stores a voice file atomically: writeAtomic, replaced by tests
	// to inject faults.
	write func(dir, name string, data []byte) error
}

// Open opens the voice store of the data directory dataDir, whose voices
// live in dataDir/voices, and loads every voice. Files that cannot be used
// are skipped and returned as warnings; the error reports only a directory
// that cannot be read or invalid options. A missing directory is an empty
// store; Add creates it.
func Open(dataDir string, o Options) (*Store, []Warning, error) {
	if dataDir == "" {
		return nil, nil, errors.New("open voice store: no data directory given")
	}
	return OpenDir(filepath.Join(dataDir, "voices"), o)
}

// OpenDir is Open for a store whose voice files are directly in dir
// (Open(D) is OpenDir(D/voices)).
func OpenDir(dir string, o Options) (*Store, []Warning, error) {
	if dir == "" {
		return nil, nil, errors.New("open voice store: no directory given")
	}
	if err := o.setDefaults(); err != nil {
		return nil, nil, fmt.Errorf("open voice store: %w", err)
	}
	s := &Store{dir: dir, opts: o, voices: map[string]entry{}, write: writeAtomic}
	w, err := s.Reload()
	if err != nil {
		return nil, nil, err
	}
	return s, w, nil
}

// setDefaults checks o and fills in its zero fields.
func (o *Options) setDefaults() error {
	switch {
	case o.NumCodebooks < 0 || o.NumCodebooks > MaxCodebooks:
		return fmt.Errorf("NumCodebooks %d is outside [0, %d]", o.NumCodebooks, MaxCodebooks)
	case o.CodebookSize < 0 || o.CodebookSize > MaxCode+1:
		return fmt.Errorf("CodebookSize %d is outside [0, %d]", o.CodebookSize, MaxCode+1)
	}
	if o.MaxVoices <= 0 {
		o.MaxVoices = DefaultMaxVoices
	}
	if o.MaxFrames <= 0 {
		o.MaxFrames = DefaultMaxFrames
	}
	o.MaxFrames = min(o.MaxFrames, hardMaxFrames)
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = maxFileLen(o.MaxFrames)
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.MaxStale <= 0 {
		o.MaxStale = DefaultMaxStale
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return nil
}

// prepare checks a voice for saving under the options and returns the
// copy the store keeps, with its defaults and key, and its file bytes.
func prepare(v Voice, o Options) (Voice, []byte, error) {
	nv := v
	nv.Key = ""
	if nv.Model == "" {
		nv.Model = o.Model
	}
	if nv.Created.IsZero() {
		nv.Created = time.Now()
	}
	nv.Created = nv.Created.UTC().Round(0)
	if err := checkVoice(&nv, o.MaxFrames); err != nil {
		return Voice{}, nil, err
	}
	if o.Model != "" && nv.Model != o.Model {
		return Voice{}, nil, invalidf("model", "voice %q was encoded with codec %q, but this store is for %q", nv.Name, nv.Model, o.Model)
	}
	size := o.CodebookSize
	if size == 0 {
		size = MaxCode + 1
	}
	if err := checkCodes(nv.Name, nv.Codes, o.MaxFrames, o.NumCodebooks, size); err != nil {
		return Voice{}, nil, err
	}
	nv.Codes = newCodes(len(v.Codes), len(v.Codes[0]))
	for i := range nv.Codes {
		copy(nv.Codes[i], v.Codes[i])
	}
	data, key, err := encodeFile(&nv)
	if err != nil {
		return Voice{}, nil, err
	}
	nv.Key = key
	return nv, data, nil
}

// Dir returns the directory holding the voice files.
func (s *Store) Dir() string { return s.dir }

// Get returns the voice called name. It fails with ErrNotFound if there is
// none, and with an *InvalidError if name is not a valid name or the voice
// does not fit the codec described by the Options.
func (s *Store) Get(name string) (*Voice, error) {
	s.mu.RLock()
	e, ok := s.voices[name]
	s.mu.RUnlock()
	if !ok {
		if err := ValidName(name); err != nil {
			return nil, err
		}
		return nil, notFound(name)
	}
	if err := s.fits(e); err != nil {
		return nil, err
	}
	return e.v, nil
}

// fits checks a loaded voice against the codec options.
func (s *Store) fits(e entry) error { return fits(e, s.opts) }

// fits checks a loaded voice against the codec options o.
func fits(e entry, o Options) error {
	v := e.v
	switch {
	case o.Model != "" && v.Model != o.Model:
		return invalidf("model", "voice %q was saved for codec %q, but this model uses %q: save it again from its reference clip", v.Name, v.Model, o.Model)
	case o.NumCodebooks > 0 && v.Codebooks() != o.NumCodebooks:
		return invalidf("codes", "voice %q has %d codes per frame, but the codec uses %d: save it again from its reference clip", v.Name, v.Codebooks(), o.NumCodebooks)
	case o.CodebookSize > 0 && e.maxCode >= o.CodebookSize:
		return invalidf("codes", "voice %q has code %d, outside the codec's codebooks of %d: save it again from its reference clip", v.Name, e.maxCode, o.CodebookSize)
	}
	return nil
}

// List returns every loaded voice, sorted by name, including voices that
// Get refuses because they were saved for another codec.
func (s *Store) List() []*Voice {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Voice(nil), s.sorted...)
}

// Add saves v under v.Name and returns the voice it replaced, if any.
// Without replace it fails with ErrExists if the name is taken (on disk,
// possibly by another process). A voice whose name differs only in case
// from an existing one is refused either way. Adding a new name to a full
// store fails with a *LimitError; invalid input with an *InvalidError.
// The store keeps its own copy of v.Codes.
func (s *Store) Add(v Voice, replace bool) (old *Voice, err error) {
	_, old, err = s.Save(v, replace)
	return old, err
}

// Save is Add that also returns the voice it saved, with its Key and the
// fields the store filled in. Use it rather than a Get after Add: another
// process sharing the directory may replace or delete the voice at any
// moment, and a Reload in between would make Get miss or return that.
func (s *Store) Save(v Voice, replace bool) (saved, old *Voice, err error) {
	nv, data, err := prepare(v, s.opts)
	if err != nil {
		return nil, nil, err
	}

	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, nil, saveError(nv.Name, err)
	}
	unlock, err := s.lock("save", nv.Name)
	if err != nil {
		return nil, nil, err
	}
	defer func() { unlock() }()

	names, err := s.diskNames()
	if err != nil {
		return nil, nil, saveError(nv.Name, err)
	}
	onDisk := false
	for _, n := range names {
		switch {
		case n == nv.Name:
			onDisk = true
		case strings.EqualFold(n, nv.Name):
			return nil, nil, exists("cannot save voice %q: voice %q exists and names differing only in case are not allowed; delete it first", nv.Name, n)
		}
	}
	if onDisk && !replace {
		return nil, nil, exists("voice %q already exists; replace it or delete it first", nv.Name)
	}
	if !onDisk && len(names) >= s.opts.MaxVoices {
		return nil, nil, &LimitError{Name: nv.Name, Max: s.opts.MaxVoices}
	}
	path := s.path(nv.Name)
	memOld := s.loaded(nv.Name)
	old = memOld
	if old == nil && onDisk {
		old, _ = s.readFile(path, nv.Name) // a corrupt file has no voice to return
	}
	if err := s.write(s.dir, nv.Name, data); err != nil {
		return nil, nil, saveError(nv.Name, err)
	}
	s.mu.Lock()
	s.voices[nv.Name] = entry{v: &nv, maxCode: maxCode(nv.Codes)}
	s.resort()
	s.mu.Unlock()
	unlock()
	unlock = func() {}
	if memOld != nil {
		s.changed(nv.Name, memOld.Key)
	}
	return &nv, old, nil
}

// Delete removes the voice called name and returns it. It fails with
// ErrNotFound if the voice is neither loaded nor on disk. A voice file that
// cannot be read (corrupt, truncated, empty, a FIFO, a symbolic link) is
// removed all the same, and nil is returned with no error: there is no
// voice to return. A symbolic link is removed, not its target.
func (s *Store) Delete(name string) (*Voice, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	unlock, err := s.lock("delete", name)
	if errors.Is(err, fs.ErrNotExist) {
		unlock, err = func() {}, nil // no directory: nothing on disk
	}
	if err != nil {
		return nil, err
	}
	defer func() { unlock() }()

	path := s.path(name)
	onDisk := true
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		onDisk = false
	case err != nil:
		return nil, fmt.Errorf("delete voice %q: %w", name, err)
	case fi.IsDir():
		return nil, fmt.Errorf("delete voice %q: %s is a directory, not a voice file; remove it by hand", name, path)
	}
	memOld := s.loaded(name)
	old := memOld
	if !onDisk && memOld == nil {
		return nil, notFound(name)
	}
	if onDisk {
		if old == nil {
			old, _ = s.readFile(path, name)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("delete voice %q: %w", name, err)
		}
		syncDir(s.dir)
	}
	s.mu.Lock()
	delete(s.voices, name)
	s.resort()
	s.mu.Unlock()
	unlock()
	unlock = func() {}
	if memOld != nil {
		s.changed(name, memOld.Key)
	}
	return old, nil
}

// Reload re-reads the directory, so that voices added, replaced or
// deleted by another process become visible, and returns warnings for the
// files it skipped. Voices whose files did not change keep their snapshots
// and keys. The error reports a directory that cannot be read; the loaded
// voices are then unchanged.
func (s *Store) Reload() ([]Warning, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	loaded, warnings, err := s.scan()
	if err != nil {
		return nil, err
	}
	var stale []*Voice
	s.mu.Lock()
	for name, old := range s.voices {
		e, ok := loaded[name]
		switch {
		case !ok || e.v.Key != old.v.Key:
			stale = append(stale, old.v)
		default:
			loaded[name] = old
		}
	}
	s.voices = loaded
	s.resort()
	s.mu.Unlock()

	if l := s.opts.Logger; l != nil {
		for _, w := range warnings {
			l.Warn("skipped voice file", "path", w.Path, "err", w.Err)
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].Name < stale[j].Name })
	for _, v := range stale {
		s.changed(v.Name, v.Key)
	}
	return warnings, nil
}

// scan reads every voice file of the directory and removes stale
// temporary files if no writer is active.
func (s *Store) scan() (map[string]entry, []Warning, error) {
	loaded := map[string]entry{}
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return loaded, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read voice directory: %w", err)
	}
	var warnings []Warning
	var temps []string
	for _, de := range ents { // sorted by name
		n := de.Name()
		path := filepath.Join(s.dir, n)
		if strings.HasPrefix(n, tmpPrefix) {
			temps = append(temps, path)
			continue
		}
		stem, ok := strings.CutSuffix(n, fileExt)
		if !ok {
			continue
		}
		if err := ValidName(stem); err != nil {
			warnings = append(warnings, Warning{Path: path, Err: fileErrorf(fileWrongName, "%q is not a valid voice name; rename or delete the file", stem)})
			continue
		}
		if len(loaded) >= s.opts.MaxVoices {
			warnings = append(warnings, Warning{Path: path, Err: fileErrorf(fileTooLarge, "more than %d voices in the directory, the limit", s.opts.MaxVoices)})
			continue
		}
		v, err := s.readFile(path, stem)
		if err != nil {
			warnings = append(warnings, Warning{Path: path, Err: err})
			continue
		}
		loaded[stem] = entry{v: v, maxCode: maxCode(v.Codes)}
	}
	if len(temps) > 0 {
		// A temporary file seen while no writer holds the lock was left by
		// a writer that died. If the lock is busy, leave them for later.
		if unlock, ok, err := lockDir(s.dir, 0); err == nil && ok {
			for _, p := range temps {
				os.Remove(p)
			}
			unlock()
		}
	}
	return loaded, warnings, nil
}

// readFile loads the voice file at path, which must hold the voice name.
// Errors describe the file for a Warning. A symbolic link is not followed
// (it could lead out of the data directory) and nothing but a regular file
// is read; the checks are made on the opened file, so a file swapped in
// after a look at the name cannot slip through.
func (s *Store) readFile(path, name string) (*Voice, error) {
	f, err := openVoiceFile(path)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fileErrorf(fileNotRegular, "a symbolic link, which is not followed; a voice file must be a regular file")
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fileErrorf(fileNotRegular, "not a regular file (%v)", fi.Mode().Type())
	}
	limit := s.opts.MaxFileBytes
	if fi.Size() > limit {
		return nil, fileErrorf(fileTooLarge, "file is %d bytes, over the limit of %d", fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fileErrorf(fileTooLarge, "file is over the limit of %d bytes", limit)
	}
	v, err := decodeFile(b, s.opts.MaxFrames)
	if err != nil {
		return nil, err
	}
	if v.Name != name {
		return nil, fileErrorf(fileWrongName, "the file holds voice %q; a voice file must be named <name>%s", v.Name, fileExt)
	}
	return v, nil
}

// diskNames returns the valid voice names with a file (of any kind) in the
// directory.
func (s *Store) diskNames() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range ents {
		if stem, ok := strings.CutSuffix(de.Name(), fileExt); ok && ValidName(stem) == nil {
			names = append(names, stem)
		}
	}
	return names, nil
}

// lock takes the directory's write lock for an operation on voice name.
func (s *Store) lock(op, name string) (func(), error) {
	unlock, ok, err := lockDir(s.dir, s.opts.LockTimeout)
	if err != nil {
		if op == "save" {
			return nil, saveError(name, err) // creating the lock file can hit a full disk
		}
		return nil, fmt.Errorf("%s voice %q: %w", op, name, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s voice %q: the voice directory %s is locked by another process (waited %v)", op, name, s.dir, s.opts.LockTimeout)
	}
	return unlock, nil
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name+fileExt) }

func (s *Store) loaded(name string) *Voice {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.voices[name].v
}

// resort rebuilds the sorted list; s.mu must be held for writing. It
// makes a new slice, so lists already returned stay as they were.
func (s *Store) resort() {
	sorted := make([]*Voice, 0, len(s.voices))
	for _, e := range s.voices {
		sorted = append(sorted, e.v)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	s.sorted = sorted
}

func (s *Store) changed(name, oldKey string) {
	if s.opts.OnChange != nil {
		s.opts.OnChange(name, oldKey)
	}
}

func maxCode(codes [][]int) int {
	m := 0
	for _, f := range codes {
		for _, c := range f {
			m = max(m, c)
		}
	}
	return m
}

// writeAtomic writes DIR/name.voice all or nothing: a temporary file in the
// same directory, fsync, rename, fsync of the directory.
func writeAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, tmpPrefix+name+fileExt+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+fileExt)); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes renames and removals in dir durable. Some systems cannot
// sync a directory; the files themselves are complete either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
