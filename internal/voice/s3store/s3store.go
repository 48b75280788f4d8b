// Package s3store keeps saved voices in an S3-compatible bucket: it is the
// [voice.Bucket] behind a [voice.BucketStore], for servers that share their
// voices (several replicas behind one load balancer).
//
// The bucket is named by a URL, s3://BUCKET/PREFIX. The endpoint, region
// and credentials come from the AWS SDK's standard chain: AWS_ENDPOINT_URL
// or AWS_ENDPOINT_URL_S3, AWS_REGION, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared config files, web
// identity (AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, as Kubernetes
// sets them), and the rest of that chain. With a custom endpoint (MinIO,
// SeaweedFS, Ceph, …) requests use path-style addressing and default to
// region us-east-1, and the SDK's optional request checksums are sent only
// where an operation requires them, since not every such server knows them.
//
// A create is a PUT with If-None-Match: *, which S3 and the usual
// compatible servers refuse with 412 when the key exists; a server that
// ignores that header makes a create race last-writer-wins (see
// docs/configuration.md).
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/nanovox/nanovox/internal/voice"
)

// Scheme starts a bucket URL.
const Scheme = "s3://"

// DialTimeout bounds connecting to the endpoint, so an unreachable one
// fails fast instead of waiting for the system's TCP timeout.
const DialTimeout = 5 * time.Second

// IsURL reports whether s names a bucket (s3://…) rather than a directory.
func IsURL(s string) bool { return strings.HasPrefix(s, Scheme) }

// ParseURL splits s3://BUCKET/PREFIX into the bucket and the key prefix
// ("" or ending in "/").
func ParseURL(u string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(u, Scheme)
	if !ok {
		return "", "", fmt.Errorf("%q is not an s3:// URL", u)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if err := validBucket(bucket); err != nil {
		return "", "", fmt.Errorf("%q: %w", u, err)
	}
	if strings.ContainsAny(prefix, "?#\\") || strings.HasPrefix(prefix, "/") || strings.Contains(prefix, "//") {
		return "", "", fmt.Errorf("%q: the prefix %q must be a plain folder path (no '?', '#', '\\' or empty parts)", u, prefix)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return bucket, prefix, nil
}

// validBucket checks a bucket name loosely against S3's rules (3–63
// lowercase letters, digits, '.' and '-'); compatible servers may allow
// more, but nothing that could change the request's path.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c >= 'A' && c <= 'Z') {
			return fmt.Errorf("bucket name %q has %q; use lowercase letters, digits, '.' and '-'", b, c)
		}
	}
	return nil
}

// Bucket is a [voice.Bucket] in one S3 bucket.
type Bucket struct {
	c        *s3.Client
	name     string
	endpoint string // for messages: the custom endpoint, or "AWS"
}

// New returns the bucket called name, configured from the standard AWS
// chain (see the package doc). It does not contact the server; the first
// request shows whether the bucket exists and the credentials work.
func New(ctx context.Context, name string) (*Bucket, error) {
	if err := validBucket(name); err != nil {
		return nil, err
	}
	hc := awshttp.NewBuildableClient().WithDialerOptions(func(d *net.Dialer) { d.Timeout = DialTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = DialTimeout
			t.ResponseHeaderTimeout = 30 * time.Second
		})
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("S3 configuration (AWS_* variables, shared config files): %w", err)
	}
	b := &Bucket{name: name, endpoint: "AWS"}
	var custom bool
	b.c = s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint == nil || *o.BaseEndpoint == "" {
			return
		}
		custom = true
		b.endpoint = *o.BaseEndpoint
		// Compatible servers are addressed by path (http://host/bucket/key):
		// virtual-host names (bucket.host) need DNS they rarely have.
		o.UsePathStyle = true
		if o.Region == "" {
			o.Region = "us-east-1"
		}
		if cfg.RequestChecksumCalculation == 0 {
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}
		if cfg.ResponseChecksumValidation == 0 {
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	if !custom && cfg.Region == "" {
		return nil, errors.New("S3: no region configured: set AWS_REGION (or a region in the shared config), or AWS_ENDPOINT_URL_S3 for an S3-compatible server")
	}
	return b, nil
}

// Create creates the bucket, for tests and first-time setup; a bucket that
// exists already and is owned by the caller is no error.
func (b *Bucket) Create(ctx context.Context) error {
	_, err := b.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b.name})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "BucketAlreadyOwnedByYou" {
		return nil
	}
	if err != nil {
		return b.err("create bucket", err)
	}
	return nil
}

// String returns s3://BUCKET.
func (b *Bucket) String() string { return Scheme + b.name }

// Get returns the object's content (at most maxBytes+1 bytes, so the
// caller can tell an oversized object) and its ETag.
func (b *Bucket) Get(ctx context.Context, key, ifNoneMatch string, maxBytes int64) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: &b.name, Key: &key}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(`"` + ifNoneMatch + `"`)
	}
	out, err := b.c.GetObject(ctx, in)
	if err != nil {
		return nil, "", b.err("get "+key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, maxBytes+1))
	if err != nil {
		return nil, "", b.err("read "+key, err)
	}
	return data, etag(out.ETag), nil
}

// Put stores data under key; with create, only if the key is free
// (If-None-Match: *).
func (b *Bucket) Put(ctx context.Context, key string, data []byte, create bool) (string, error) {
	in := &s3.PutObjectInput{
		Bucket: &b.name, Key: &key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/octet-stream"),
	}
	if create {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := b.c.PutObject(ctx, in)
	if err != nil {
		return "", b.err("put "+key, err)
	}
	tag := etag(out.ETag)
	if tag == "" {
		// A server that answers without an ETag would make every check a
		// change; read it back once instead.
		h, err := b.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &key})
		if err != nil {
			return "", b.err("head "+key, err)
		}
		tag = etag(h.ETag)
	}
	return tag, nil
}

// Delete removes the object.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: &key}); err != nil {
		return b.err("delete "+key, err)
	}
	return nil
}

// List returns every object under prefix.
func (b *Bucket) List(ctx context.Context, prefix string) ([]voice.ObjectInfo, error) {
	var out []voice.ObjectInfo
	p := s3.NewListObjectsV2Paginator(b.c, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, b.err("list "+prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, voice.ObjectInfo{Key: aws.ToString(o.Key), ETag: etag(o.ETag), Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// etag strips the quotes S3 puts around an ETag (and the weak marker some
// servers add), so listing and reading give the same string.
func etag(p *string) string {
	return strings.Trim(strings.TrimPrefix(aws.ToString(p), "W/"), `"`)
}

// err maps an SDK error to the voice package's conditions and to messages
// an operator can act on.
func (b *Bucket) err(op string, err error) error {
	var re *awshttp.ResponseError
	status := 0
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch {
	case status == http.StatusNotModified:
		return voice.ErrNotModified
	case status == http.StatusPreconditionFailed, code == "PreconditionFailed",
		// S3's answer when another conditional write of the key is in flight.
		status == http.StatusConflict && code == "ConditionalRequestConflict":
		return fmt.Errorf("%s: %w", op, voice.ErrPreconditionFailed)
	case code == "NoSuchBucket":
		return fmt.Errorf("%s: bucket %q does not exist at %s: create it, or check the name in the s3:// URL and AWS_ENDPOINT_URL", op, b.name, b.endpoint)
	case code == "NoSuchKey", code == "NotFound" && status == http.StatusNotFound:
		return fmt.Errorf("%s: %w", op, fs.ErrNotExist)
	case code == "InvalidAccessKeyId", code == "SignatureDoesNotMatch", code == "InvalidToken", code == "ExpiredToken",
		code == "AccessDenied", status == http.StatusForbidden:
		return fmt.Errorf("%s in bucket %q at %s: access denied (%s): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the profile or role) and that they may s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject: %w",
			op, b.name, b.endpoint, orStatus(code, status), err)
	case status == http.StatusInsufficientStorage, code == "XMinioStorageFull", code == "QuotaExceeded", code == "InsufficientStorage":
		return fmt.Errorf("%s: %w: %w", op, voice.ErrNoSpace, err)
	case status == 0 && isNetError(err):
		return fmt.Errorf("%s: cannot reach the S3 endpoint %s (check AWS_ENDPOINT_URL and the network): %w", op, b.endpoint, err)
	}
	return fmt.Errorf("%s in bucket %q at %s: %w", op, b.name, b.endpoint, err)
}

func orStatus(code string, status int) string {
	if code != "" {
		return code
	}
	return fmt.Sprintf("HTTP %d", status)
}

func isNetError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}

// Open opens the voice store at an s3://BUCKET/PREFIX URL: New, then
// voice.OpenBucket, which lists and loads the voices (so a missing bucket,
// bad credentials or an unreachable endpoint fail here).
func Open(ctx context.Context, url string, o voice.Options) (*voice.BucketStore, []voice.Warning, error) {
	name, prefix, err := ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	b, err := New(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return voice.OpenBucket(b, prefix, o)
}
