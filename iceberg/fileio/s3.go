package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/icectl/icectl/iceberg/fileio/awsauth"
)

// S3 is the FileIO of S3 and S3-compatible object stores, for s3://, s3a://
// and s3n:// locations.
//
// Retries: every request goes through the SDK's standard retryer, which
// retries throttling (503 SlowDown, 429 and the other throttle codes), 500,
// 502, 503, 504, timeouts and broken connections, up to S3Config.MaxAttempts
// attempts in all, waiting a jittered exponential backoff from MinWait to
// MaxWait between attempts. The SDK's client-side retry quota is disabled: a
// maintenance job that is being throttled should slow down, not give up.
type S3 struct {
	client *s3.Client
	cfg    S3Config
}

var (
	_ FileIO      = (*S3)(nil)
	_ Lister      = (*S3)(nil)
	_ BulkRemover = (*S3)(nil)
)

// NewS3 configures an S3 FileIO from Iceberg properties (see ParseS3Config).
// Credentials come from s3.access-key-id / s3.secret-access-key
// (/ s3.session-token) when given, else from the SDK's default chain, in
// its order: the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN variables; the profile (s3.profile-name,
// client.profile-name, else AWS_PROFILE, else "default") of the shared
// files ~/.aws/config and ~/.aws/credentials (AWS_CONFIG_FILE,
// AWS_SHARED_CREDENTIALS_FILE), including its role, web identity, SSO and
// credential_process settings; a web identity token file from the
// environment; the ECS container endpoint; and last the EC2 instance
// metadata service (IMDS), unless AWS_EC2_METADATA_DISABLED=true.
//
// The chain is awsauth's (Load), which the REST catalog's SigV4 signing
// shares: the SDK never writes to the terminal, and the IMDS probe makes
// one attempt of at most awsauth.IMDSTimeout per request.
func NewS3(ctx context.Context, props map[string]string) (*S3, error) {
	cfg, err := ParseS3Config(props)
	if err != nil {
		return nil, err
	}
	return NewS3FromConfig(ctx, cfg)
}

// NewS3FromConfig builds an S3 FileIO from a parsed configuration.
func NewS3FromConfig(ctx context.Context, cfg S3Config) (*S3, error) {
	awsCfg, err := awsauth.Load(ctx, awsauth.Settings{
		AccessKeyID: cfg.AccessKeyID, SecretAccessKey: cfg.SecretAccessKey, SessionToken: cfg.SessionToken,
		Profile: cfg.Profile, Region: cfg.Region,
	}, config.WithRetryer(func() aws.Retryer { return newS3Retryer(cfg) }))
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS config: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, fmt.Errorf("s3: no region: set %s or AWS_REGION", ClientRegion)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// Checksums only where S3 demands them (DeleteObjects): many
		// S3-compatible servers reject the newer default trailing checksums.
		// Integrity is kept by SigV4's signed payload on plain HTTP and by TLS.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{client: client, cfg: cfg}, nil
}

// Config returns the configuration in use; print it only through its String method.
func (s *S3) Config() S3Config { return s.cfg }

func newS3Retryer(cfg S3Config) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = cfg.MaxAttempts
		o.MaxBackoff = cfg.MaxWait
		o.Backoff = backoff{min: cfg.MinWait, max: cfg.MaxWait}
		o.RateLimiter = ratelimit.None
		o.Retryables = append(o.Retryables, retry.RetryableHTTPStatusCode{
			Codes: map[int]struct{}{http.StatusTooManyRequests: {}},
		})
	})
}

// backoff waits min·2^(attempt-1), capped at max, with full jitter over its
// upper half so that concurrent clients spread out.
type backoff struct{ min, max time.Duration }

func (b backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := b.min
	for i := 1; i < attempt && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	return d/2 + rand.N(d/2+1), nil
}

// s3Location is a parsed s3:// path.
type s3Location struct {
	scheme string // s3, s3a or s3n
	bucket string
	key    string
}

func parseS3(path string) (s3Location, error) {
	scheme, rest, ok := strings.Cut(path, "://")
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n":
	default:
		ok = false
	}
	if !ok {
		return s3Location{}, fmt.Errorf("%q is not an s3:// location", path)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return s3Location{}, fmt.Errorf("%q has no bucket", path)
	}
	return s3Location{scheme: scheme, bucket: bucket, key: key}, nil
}

func parseS3Object(path string) (s3Location, error) {
	loc, err := parseS3(path)
	if err == nil && (loc.key == "" || strings.HasSuffix(loc.key, "/")) {
		err = fmt.Errorf("%q names no object", path)
	}
	return loc, err
}

func (l s3Location) path(key string) string {
	return l.scheme + "://" + l.bucket + "/" + key
}

// s3Err wraps err with the operation and path, mapping a missing object to
// ErrNotFound and a refusal to fs.ErrPermission, as the local FileIO's
// errors are.
func s3Err(op, path string, err error) error {
	if isS3NotFound(err) {
		return fmt.Errorf("s3: %s %s: %w (%v)", op, path, ErrNotFound, err)
	}
	if isS3Denied(err) {
		return fmt.Errorf("s3: %s %s: %w (%v)", op, path, fs.ErrPermission, err)
	}
	return fmt.Errorf("s3: %s %s: %w", op, path, err)
}

// isS3Denied reports an AccessDenied refusal. Stores that serve Iceberg
// tables (S3 Tables buckets, weed's table buckets) refuse object names
// they do not recognise as table files this way.
func isS3Denied(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "AccessDenied"
}

func isS3NotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		}
	}
	return false
}

// openTail is how many bytes at the end of an object Open reads with the
// request that learns its size and ETag. Most of what icectl opens is read
// whole (manifests, manifest lists, metadata, deletion vectors) or from
// the end (a Parquet or Puffin footer), so an object of at most this size
// costs one request in all, where a HeadObject and a ranged GET per read
// cost several (a small Parquet file: seven), and a larger file's footer
// is often in it. 64 KiB of a large file is a fraction of a request's
// time on S3, and what an open file holds in memory.
const openTail = 64 << 10

// Open reads the object's size, ETag and last openTail bytes with one
// ranged GET (a HeadObject for an empty object, which has no range). Reads
// within those bytes are answered from memory; every other ReadAt is one
// ranged GET that must match the ETag, so a file replaced after Open gives
// an error instead of a mix of two versions.
func (s *S3) Open(ctx context.Context, path string) (File, error) {
	loc, err := parseS3Object(path)
	if err != nil {
		return nil, fmt.Errorf("s3: open: %w", err)
	}
	f := &s3File{ctx: ctx, client: s.client, path: path, loc: loc}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &loc.bucket, Key: &loc.key,
		Range: aws.String(fmt.Sprintf("bytes=-%d", openTail))})
	if isS3InvalidRange(err) {
		head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &loc.bucket, Key: &loc.key})
		if err != nil {
			return nil, s3Err("open", path, err)
		}
		f.size, f.etag = aws.ToInt64(head.ContentLength), aws.ToString(head.ETag)
		return f, nil
	}
	if err != nil {
		return nil, s3Err("open", path, err)
	}
	defer out.Body.Close()
	f.etag = aws.ToString(out.ETag)
	n := aws.ToInt64(out.ContentLength)
	from, size, ok := parseContentRange(aws.ToString(out.ContentRange))
	if !ok {
		// No Content-Range: the store ignored the range and sends the
		// whole object. Keep it if it is small, else read it by ranges.
		if f.size = n; n > openTail {
			return f, nil
		}
		from = 0
	} else {
		f.size = size
	}
	if n < 0 || n > openTail || from+n > f.size {
		return nil, fmt.Errorf("s3: open %s: answer of %d bytes at %d for an object of %d", path, n, from, f.size)
	}
	f.tail, f.tailAt = make([]byte, n), from
	if _, err := io.ReadFull(out.Body, f.tail); err != nil {
		return nil, fmt.Errorf("s3: open %s: %w", path, err)
	}
	return f, nil
}

// parseContentRange parses "bytes FROM-TO/SIZE".
func parseContentRange(v string) (from, size int64, ok bool) {
	var to int64
	if _, err := fmt.Sscanf(v, "bytes %d-%d/%d", &from, &to, &size); err != nil || from < 0 || to < from || to >= size {
		return 0, 0, false
	}
	return from, size, true
}

func isS3InvalidRange(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidRange"
}

type s3File struct {
	ctx    context.Context // the context of Open, as io.ReaderAt takes none
	client *s3.Client
	path   string
	loc    s3Location
	size   int64
	etag   string
	tail   []byte // the object's bytes from tailAt, read by Open
	tailAt int64
}

func (f *s3File) Size() int64  { return f.size }
func (f *s3File) Close() error { return nil }

// ReadAt answers from the bytes Open read when they cover p, else issues
// one ranged GET for what they do not cover; like io.ReaderAt it returns
// io.EOF when p reaches past the end of the object.
func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("s3: read %s: negative offset %d", f.path, off)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := min(int64(len(p)), f.size-off)
	// The tail runs to the end of the object: a read ending in it needs
	// only the part before it.
	get := want
	if len(f.tail) > 0 && off+want > f.tailAt {
		from := max(off, f.tailAt)
		copy(p[from-off:want], f.tail[from-f.tailAt:])
		get = from - off
	}
	if get > 0 {
		if n, err := f.get(p[:get], off); err != nil {
			return n, err
		}
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}

// get reads len(p) bytes at off with one ranged GET.
func (f *s3File) get(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	in := &s3.GetObjectInput{
		Bucket: &f.loc.bucket,
		Key:    &f.loc.key,
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, end-1)),
	}
	if f.etag != "" {
		in.IfMatch = aws.String(f.etag)
	}
	out, err := f.client.GetObject(f.ctx, in)
	if err != nil {
		return 0, s3Err(fmt.Sprintf("read [%d, %d) of", off, end), f.path, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p)
	if err != nil {
		return n, fmt.Errorf("s3: read [%d, %d) of %s: %w", off, end, f.path, err)
	}
	return n, nil
}

// Remove deletes an object. S3 reports success for a missing key, so a
// HeadObject first tells a missing file apart.
func (s *S3) Remove(ctx context.Context, path string) error {
	loc, err := parseS3Object(path)
	if err != nil {
		return fmt.Errorf("s3: remove: %w", err)
	}
	if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &loc.bucket, Key: &loc.key}); err != nil {
		return s3Err("remove", path, err)
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &loc.bucket, Key: &loc.key}); err != nil {
		return s3Err("remove", path, err)
	}
	return nil
}
