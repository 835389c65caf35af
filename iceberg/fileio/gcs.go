package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// GCS is the FileIO of Google Cloud Storage, for gs:// locations, through
// Google's Go client (JSON API).
//
// Credentials: gcs.oauth2.token when given (a static access token), none
// with gcs.no-auth=true (or gcs.oauth2.token=anon, or
// STORAGE_EMULATOR_HOST), else Application Default Credentials
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials, the metadata
// server). Retries: every request, uploads included, is retried on 429,
// 5xx and broken connections, up to 5 attempts with a jittered exponential
// backoff of 100 ms to 20 s.
type GCS struct {
	client *storage.Client
	cfg    GCSConfig
}

var (
	_ FileIO      = (*GCS)(nil)
	_ Lister      = (*GCS)(nil)
	_ BulkRemover = (*GCS)(nil)
)

// NewGCS configures a GCS FileIO from Iceberg properties (see
// ParseGCSConfig) and the process environment.
func NewGCS(ctx context.Context, props map[string]string) (*GCS, error) {
	cfg, err := ParseGCSConfig(props, os.Getenv)
	if err != nil {
		return nil, err
	}
	return NewGCSFromConfig(ctx, cfg)
}

// NewGCSFromConfig builds a GCS FileIO from a parsed configuration. It
// makes no request: an unreachable endpoint is found by the first call.
func NewGCSFromConfig(ctx context.Context, cfg GCSConfig) (*GCS, error) {
	opts := []option.ClientOption{storage.WithJSONReads()}
	if cfg.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.Endpoint+"/storage/v1/"))
	}
	switch {
	case cfg.NoAuth:
		opts = append(opts, option.WithoutAuthentication())
	case cfg.Token != "":
		tok := &oauth2.Token{AccessToken: cfg.Token, TokenType: "Bearer", Expiry: cfg.TokenExpiresAt}
		opts = append(opts, option.WithTokenSource(oauth2.StaticTokenSource(tok)))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs: %s: set %s, or %s=true for an emulator or public buckets, or GOOGLE_APPLICATION_CREDENTIALS",
			oneLine(err), GCSOAuth2Token, GCSNoAuth)
	}
	client.SetRetry(
		storage.WithPolicy(storage.RetryAlways),
		storage.WithMaxAttempts(cfg.MaxAttempts),
		storage.WithBackoff(gax.Backoff{Initial: cfg.MinWait, Max: cfg.MaxWait, Multiplier: 2}),
	)
	return &GCS{client: client, cfg: cfg}, nil
}

// Config returns the configuration in use; print it only through its String method.
func (g *GCS) Config() GCSConfig { return g.cfg }

// oneLine joins the lines of a multi-line error message.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// unreachable reports an error of a request that never reached the
// server: the endpoint it was sent to and why, without the request's URL.
func unreachable(err error) (host, cause string, ok bool) {
	var ue *url.Error
	var oe *net.OpError
	if !errors.As(err, &ue) || !errors.As(err, &oe) {
		return "", "", false
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return "", "", false
	}
	cause = oe.Err.Error()
	var se *os.SyscallError
	if errors.As(oe.Err, &se) {
		cause = se.Err.Error()
	}
	return u.Scheme + "://" + u.Host, cause, true
}

// gcsLocation is a parsed gs:// path.
type gcsLocation struct {
	bucket string
	key    string
}

func parseGCS(path string) (gcsLocation, error) {
	scheme, rest, ok := strings.Cut(path, "://")
	if !ok || !strings.EqualFold(scheme, "gs") {
		return gcsLocation{}, fmt.Errorf("%q is not a gs:// location", path)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return gcsLocation{}, fmt.Errorf("%q has no bucket: write gs://BUCKET/PATH", path)
	}
	return gcsLocation{bucket: bucket, key: key}, nil
}

func parseGCSObject(path string) (gcsLocation, error) {
	loc, err := parseGCS(path)
	if err == nil && (loc.key == "" || strings.HasSuffix(loc.key, "/")) {
		err = fmt.Errorf("%q names no object", path)
	}
	return loc, err
}

func (g *GCS) object(loc gcsLocation) *storage.ObjectHandle {
	b := g.client.Bucket(loc.bucket)
	if g.cfg.UserProject != "" {
		b = b.UserProject(g.cfg.UserProject)
	}
	return b.Object(loc.key)
}

// gcsErr wraps err with the operation and path, mapping a missing object to
// ErrNotFound and a refusal to fs.ErrPermission.
func gcsErr(op, path string, err error) error {
	if errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("gcs: %s %s: %w", op, path, ErrNotFound)
	}
	if host, cause, ok := unreachable(err); ok {
		return fmt.Errorf("gcs: %s %s: cannot reach %s (%s): check %s and the network", op, path, host, cause, GCSServiceHost)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) && (ge.Code == http.StatusForbidden || ge.Code == http.StatusUnauthorized) {
		return fmt.Errorf("gcs: %s %s: %w (%s)", op, path, fs.ErrPermission, oneLine(err))
	}
	return fmt.Errorf("gcs: %s %s: %s", op, path, oneLine(err))
}

// Open reads the object's size and generation. Every ReadAt reads that
// generation, so a file replaced after Open gives an error instead of a
// mix of two versions.
func (g *GCS) Open(ctx context.Context, path string) (File, error) {
	loc, err := parseGCSObject(path)
	if err != nil {
		return nil, fmt.Errorf("gcs: open: %w", err)
	}
	attrs, err := g.object(loc).Attrs(ctx)
	if err != nil {
		return nil, gcsErr("open", path, err)
	}
	return &gcsFile{ctx: ctx, obj: g.object(loc).Generation(attrs.Generation), path: path, size: attrs.Size}, nil
}

type gcsFile struct {
	ctx  context.Context // the context of Open, as io.ReaderAt takes none
	obj  *storage.ObjectHandle
	path string
	size int64
}

func (f *gcsFile) Size() int64  { return f.size }
func (f *gcsFile) Close() error { return nil }

// ReadAt issues one ranged read; like io.ReaderAt it returns io.EOF when p
// reaches past the end of the object.
func (f *gcsFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("gcs: read %s: negative offset %d", f.path, off)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := min(int64(len(p)), f.size-off)
	r, err := f.obj.NewRangeReader(f.ctx, off, want)
	if err != nil {
		return 0, gcsErr(fmt.Sprintf("read [%d, %d) of", off, off+want), f.path, err)
	}
	defer r.Close()
	n, err := io.ReadFull(r, p[:want])
	if err != nil {
		return n, fmt.Errorf("gcs: read [%d, %d) of %s: %w", off, off+want, f.path, err)
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Create returns a writer that uploads as it is written (a resumable upload
// in GCSConfig.ChunkSize chunks; a smaller file is one request). The object
// appears only when Close finishes the upload; Abort cancels it.
func (g *GCS) Create(ctx context.Context, path string) (Writer, error) {
	loc, err := parseGCSObject(path)
	if err != nil {
		return nil, fmt.Errorf("gcs: create: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gcs: create %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	gw := &gcsWriter{cancel: cancel, path: path}
	// Google's client retries a one-request upload until its context ends,
	// whatever the attempt limit, so an unreachable endpoint would hang
	// the writer. Each writer therefore gets a budget: MaxAttempts-1
	// retries, and as many again for every chunk the store acknowledged
	// (counted by ProgressFunc as chunks land: one Write of many chunks
	// sends them all before it returns).
	obj := g.object(loc).Retryer(storage.WithErrorFunc(func(err error) bool {
		if !storage.ShouldRetry(err) {
			return false
		}
		chunks := gw.sent.Load() / int64(g.cfg.ChunkSize)
		return gw.retries.Add(1) <= int64(g.cfg.MaxAttempts-1)*(1+chunks)
	}))
	gw.w = obj.NewWriter(ctx)
	gw.w.ChunkSize = g.cfg.ChunkSize
	gw.w.ProgressFunc = func(n int64) { gw.sent.Store(n) }
	return gw, nil
}

type gcsWriter struct {
	w       *storage.Writer
	cancel  context.CancelFunc
	path    string
	done    bool
	sent    atomic.Int64 // bytes the store acknowledged
	retries atomic.Int64 // requests retried
}

func (w *gcsWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("gcs: write %s: writer already closed", w.path)
	}
	n, err := w.w.Write(p)
	if err != nil {
		return n, gcsErr("write", w.path, err)
	}
	return n, nil
}

func (w *gcsWriter) Close() error {
	if w.done {
		return fmt.Errorf("gcs: close %s: writer already closed", w.path)
	}
	w.done = true
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		return gcsErr("upload", w.path, err)
	}
	return nil
}

// Abort cancels the upload; an unfinished upload never makes an object.
func (w *gcsWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel()
	w.w.Close() // returns the cancellation
	return nil
}

// Remove deletes an object; a missing one is ErrNotFound.
func (g *GCS) Remove(ctx context.Context, path string) error {
	loc, err := parseGCSObject(path)
	if err != nil {
		return fmt.Errorf("gcs: remove: %w", err)
	}
	if err := g.object(loc).Delete(ctx); err != nil {
		return gcsErr("remove", path, err)
	}
	return nil
}

// List pages through the bucket's objects under the prefix, which GCS
// returns in ascending byte order of their names.
func (g *GCS) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	loc, err := parseGCS(prefix)
	if err != nil {
		return fmt.Errorf("gcs: list: %w", err)
	}
	q := &storage.Query{Prefix: loc.key}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Updated"}); err != nil {
		return fmt.Errorf("gcs: list %s: %w", prefix, err)
	}
	b := g.client.Bucket(loc.bucket)
	if g.cfg.UserProject != "" {
		b = b.UserProject(g.cfg.UserProject)
	}
	it := b.Objects(ctx, q)
	it.PageInfo().MaxSize = g.cfg.ListPageSize
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return gcsErr("list", prefix, err)
		}
		fi := FileInfo{Path: "gs://" + loc.bucket + "/" + attrs.Name, Size: attrs.Size, ModTime: attrs.Updated}
		if err := fn(fi); err != nil {
			return err
		}
	}
}

// RemoveMany deletes with GCSConfig.Deleters requests in flight (the JSON
// API's batch requests are not in Google's Go client); a missing object
// counts as removed.
func (g *GCS) RemoveMany(ctx context.Context, paths []string) error {
	return removeConcurrently(ctx, paths, g.cfg.Deleters, func(ctx context.Context, p string) error {
		err := g.Remove(ctx, p)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
}
