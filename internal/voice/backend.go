package voice

import (
	"context"
	"errors"
)

// Backend is a saved-voice store, whichever medium holds it: a data
// directory ([Store]) or an object-storage bucket shared by several servers
// ([BucketStore]). Both keep the same rules: names, the voice limit, one
// winner when two writers create the same name, keys that change with every
// replace, and corrupt entries skipped with a [Warning].
type Backend interface {
	// Get returns the voice called name; see [Store.Get].
	Get(name string) (*Voice, error)
	// List returns the voices sorted by name; see [Store.List].
	List() []*Voice
	// Add saves v and returns the voice it replaced; see [Store.Add].
	Add(v Voice, replace bool) (old *Voice, err error)
	// Save is Add that also returns the voice as saved; see [Store.Save].
	Save(v Voice, replace bool) (saved, old *Voice, err error)
	// Delete removes the voice called name; see [Store.Delete].
	Delete(name string) (*Voice, error)
	// Reload re-reads every voice now; see [Store.Reload].
	Reload() ([]Warning, error)
	// Refresh brings the store's view up to date with changes made by other
	// processes if it may be out of date. It is cheap enough to call before
	// every request: it reads the voices only when they may have changed, and
	// at most once per the store's refresh interval.
	Refresh() error
	// Location says where the voices are kept, for messages: a directory
	// or an s3:// URL.
	Location() string
}

var (
	_ Backend = (*Store)(nil)
	_ Backend = (*BucketStore)(nil)
)

// Bucket is the object storage a [BucketStore] keeps its voices in: flat
// keys holding whole objects, each with an ETag that changes whenever the
// object does. Package s3store implements it for S3-compatible servers.
//
// Errors: a missing object is reported as an error wrapping
// [fs.ErrNotExist]; a failed condition as [ErrNotModified] or
// [ErrPreconditionFailed]; a full store as an error wrapping [ErrNoSpace].
type Bucket interface {
	// Get returns the object's content and ETag. If ifNoneMatch is not
	// empty and is the object's current ETag, Get returns ErrNotModified
	// without the content.
	Get(ctx context.Context, key, ifNoneMatch string, maxBytes int64) (data []byte, etag string, err error)
	// Put stores data under key and returns its new ETag. With create, the
	// write succeeds only if no object has that key, and fails with
	// ErrPreconditionFailed otherwise, atomically on the server.
	Put(ctx context.Context, key string, data []byte, create bool) (etag string, err error)
	// Delete removes the object; removing a missing object is no error.
	Delete(ctx context.Context, key string) error
	// List returns every object whose key starts with prefix, with no
	// delimiter handling: keys in "folders" below prefix are listed too.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// String names the bucket and prefix for messages ("s3://b/p/").
	String() string
}

// ObjectInfo is an object as a [Bucket] lists it.
type ObjectInfo struct {
	// Key is the object's full key.
	Key string
	// ETag identifies the object's current content.
	ETag string
	// Size is the object's length in bytes.
	Size int64
}

// Errors a [Bucket] returns for failed conditions.
var (
	// ErrNotModified: a conditional Get found the ETag unchanged.
	ErrNotModified = errors.New("object not modified")
	// ErrPreconditionFailed: a create found the key taken.
	ErrPreconditionFailed = errors.New("object exists")
)
