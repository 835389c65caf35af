package fileio

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// Azure is the FileIO of Azure Blob Storage and ADLS Gen2, for
// abfs[s]://container@account.dfs.core.windows.net/path and
// wasb[s]://container@account.blob.core.windows.net/path locations (the
// forms of Hadoop and Iceberg's Java ADLSFileIO). Both forms go through
// the Blob API of the account (Azure's Go SDK, azblob), which ADLS Gen2
// accounts also serve, so one FileIO reads either. Credentials are chosen
// per account (AzureConfig.account). Retries: the SDK's, up to 5 attempts
// on 408, 429, 500, 502, 503 and 504 and broken connections, with a
// jittered exponential backoff of 100 ms to 20 s.
type Azure struct {
	cfg AzureConfig

	mu       sync.Mutex
	services map[string]*service.Client // by account host
}

var (
	_ FileIO      = (*Azure)(nil)
	_ Lister      = (*Azure)(nil)
	_ BulkRemover = (*Azure)(nil)
)

// NewAzure configures an Azure FileIO from Iceberg properties and the
// process environment (see AzureConfig.account). Accounts are resolved,
// and their credentials checked, when a location first names them.
func NewAzure(_ context.Context, props map[string]string) (*Azure, error) {
	cfg, err := ParseAzureConfig(props, os.Getenv)
	if err != nil {
		return nil, err
	}
	return &Azure{cfg: cfg, services: map[string]*service.Client{}}, nil
}

// azureLocation is a parsed abfs/wasb path.
type azureLocation struct {
	scheme    string // as written
	container string
	host      string // acct.dfs.core.windows.net; "" in PyIceberg's short form
	key       string
}

func (l azureLocation) path(key string) string {
	if l.host == "" {
		return l.scheme + "://" + l.container + "/" + key
	}
	return l.scheme + "://" + l.container + "@" + l.host + "/" + key
}

// parseAzure parses Hadoop's and Java's form,
// SCHEME://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH, and PyIceberg's
// short one, SCHEME://CONTAINER/PATH, whose account is adls.account-name.
// An authority with a dot and no '@' is Java's account without a
// container, which icectl refuses.
func parseAzure(path string) (azureLocation, error) {
	scheme, rest, ok := strings.Cut(path, "://")
	switch strings.ToLower(scheme) {
	case "abfs", "abfss", "wasb", "wasbs":
	default:
		ok = false
	}
	if !ok {
		return azureLocation{}, fmt.Errorf("%q is not an abfs[s]:// or wasb[s]:// location", path)
	}
	authority, key, _ := strings.Cut(rest, "/")
	if i := strings.IndexAny(key, "?#"); i >= 0 {
		key = key[:i] // Java's ADLSLocation drops a query and fragment too
	}
	ctr, host, hasAt := strings.Cut(authority, "@")
	if !hasAt && ctr != "" && !strings.Contains(ctr, ".") {
		return azureLocation{scheme: scheme, container: ctr, key: key}, nil
	}
	if !hasAt || ctr == "" || host == "" || strings.HasPrefix(host, ".") {
		return azureLocation{}, fmt.Errorf("%q names no container and account: write %s://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH", path, strings.ToLower(scheme))
	}
	return azureLocation{scheme: scheme, container: ctr, host: strings.ToLower(host), key: key}, nil
}

func parseAzureObject(path string) (azureLocation, error) {
	loc, err := parseAzure(path)
	if err == nil && (loc.key == "" || strings.HasSuffix(loc.key, "/")) {
		err = fmt.Errorf("%q names no file", path)
	}
	return loc, err
}

// service returns the client of the account of host, creating it on first use.
func (a *Azure) service(host string) (*service.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.services[host]; ok {
		return s, nil
	}
	acct, err := a.cfg.account(host)
	if err != nil {
		return nil, err
	}
	opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{
			MaxRetries:    defaultNumRetries,
			RetryDelay:    defaultMinWait,
			MaxRetryDelay: defaultMaxWait,
			StatusCodes: []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
				http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
		},
		Logging: policy.LogOptions{AllowedHeaders: nil, IncludeBody: false},
	}}
	var s *service.Client
	switch acct.kind {
	case azureSharedKey:
		cred, err := service.NewSharedKeyCredential(acct.name, acct.key)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: the key of %s: %s", acct.name, acct.source, oneLine(err))
		}
		s, err = service.NewClientWithSharedKeyCredential(acct.serviceURL, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: %s", acct.name, oneLine(err))
		}
	case azureSAS:
		s, err = service.NewClientWithNoCredential(acct.serviceURL+"?"+acct.sas, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: the SAS token of %s: %s", acct.name, acct.source, oneLine(err))
		}
	case azureClientSecret:
		cred, err := azidentity.NewClientSecretCredential(acct.tenant, acct.clientID, acct.secret, nil)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: %s: %s", acct.name, acct.source, oneLine(err))
		}
		s, err = service.NewClient(acct.serviceURL, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: %s", acct.name, oneLine(err))
		}
	default:
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: no credentials: set %s%s.dfs.core.windows.net, %s%s or %s/%s, or sign in (az login, managed identity): %s",
				acct.name, ADLSSASTokenPrefix, acct.name, ADLSConnectionStringPrefix, acct.name, ADLSAccountName, ADLSAccountKey, oneLine(err))
		}
		s, err = service.NewClient(acct.serviceURL, cred, opts)
		if err != nil {
			return nil, fmt.Errorf("azure: account %s: %s", acct.name, oneLine(err))
		}
	}
	a.services[host] = s
	return s, nil
}

func (a *Azure) container(loc azureLocation) (*container.Client, error) {
	host := loc.host
	if host == "" {
		acct := firstNonEmpty(a.cfg.props[ADLSAccountName], a.cfg.getenv("AZURE_STORAGE_ACCOUNT"))
		if acct == "" {
			return nil, fmt.Errorf("azure: %s names no account: write %s://%s@ACCOUNT.dfs.core.windows.net/%s or set %s",
				loc.path(loc.key), loc.scheme, loc.container, loc.key, ADLSAccountName)
		}
		host = strings.ToLower(acct) + ".dfs.core.windows.net"
	}
	s, err := a.service(host)
	if err != nil {
		return nil, err
	}
	return s.NewContainerClient(loc.container), nil
}

func (a *Azure) blob(loc azureLocation) (*blockblob.Client, error) {
	c, err := a.container(loc)
	if err != nil {
		return nil, err
	}
	return c.NewBlockBlobClient(loc.key), nil
}

// azureErr wraps err with the operation and path, mapping a missing blob to
// ErrNotFound and a refusal to fs.ErrPermission. The SDK's errors span
// many lines; only the status and code are kept.
func azureErr(op, path string, err error) error {
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("azure: %s %s: %w", op, path, ErrNotFound)
	}
	var cu interface{ NonRetriable() }
	if msg := err.Error(); strings.Contains(msg, "DefaultAzureCredential") || errors.As(err, &cu) {
		// The chain's report spans many lines, separated by rules; its
		// first part names what each credential lacked.
		msg, _, _ = strings.Cut(msg, "-----")
		return fmt.Errorf("azure: %s %s: no credentials (%s): set %s/%s, %s<account> or %s<account>, or sign in (az login, managed identity)",
			op, path, strings.TrimRight(oneLine(errors.New(msg)), " ;"), ADLSAccountName, ADLSAccountKey, ADLSSASTokenPrefix, ADLSConnectionStringPrefix)
	}
	if host, cause, ok := unreachable(err); ok {
		return fmt.Errorf("azure: %s %s: cannot reach %s (%s): check the account's endpoint (%s<account>, %s) and the network",
			op, path, host, cause, ADLSConnectionStringPrefix, ADLSBlobStorageAuthority)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		msg := fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
		if re.StatusCode == http.StatusForbidden || re.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("azure: %s %s: %w (%s)", op, path, fs.ErrPermission, msg)
		}
		if re.StatusCode == http.StatusNotFound && re.ErrorCode == "" {
			return fmt.Errorf("azure: %s %s: %w", op, path, ErrNotFound) // HEAD responses carry no code
		}
		return fmt.Errorf("azure: %s %s: %s", op, path, msg)
	}
	return fmt.Errorf("azure: %s %s: %s", op, path, oneLine(err))
}

// Open reads the blob's size and ETag. Every ReadAt is one ranged GET that
// must match that ETag, so a file replaced after Open gives an error
// instead of a mix of two versions.
func (a *Azure) Open(ctx context.Context, path string) (File, error) {
	loc, err := parseAzureObject(path)
	if err != nil {
		return nil, fmt.Errorf("azure: open: %w", err)
	}
	b, err := a.blob(loc)
	if err != nil {
		return nil, err
	}
	props, err := b.GetProperties(ctx, nil)
	if err != nil {
		return nil, azureErr("open", path, err)
	}
	f := &azureFile{ctx: ctx, blob: b, path: path}
	if props.ContentLength != nil {
		f.size = *props.ContentLength
	}
	if props.ETag != nil {
		f.etag = *props.ETag
	}
	return f, nil
}

type azureFile struct {
	ctx  context.Context // the context of Open, as io.ReaderAt takes none
	blob *blockblob.Client
	path string
	size int64
	etag azcore.ETag
}

func (f *azureFile) Size() int64  { return f.size }
func (f *azureFile) Close() error { return nil }

// ReadAt issues one ranged GET; like io.ReaderAt it returns io.EOF when p
// reaches past the end of the blob.
func (f *azureFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("azure: read %s: negative offset %d", f.path, off)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := min(int64(len(p)), f.size-off)
	opts := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: want}}
	if f.etag != "" {
		etag := f.etag
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
	}
	resp, err := f.blob.DownloadStream(f.ctx, opts)
	if err != nil {
		return 0, azureErr(fmt.Sprintf("read [%d, %d) of", off, off+want), f.path, err)
	}
	defer resp.Body.Close()
	n, err := io.ReadFull(resp.Body, p[:want])
	if err != nil {
		return n, fmt.Errorf("azure: read [%d, %d) of %s: %w", off, off+want, f.path, err)
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Remove deletes a blob (with its snapshots); a missing one is ErrNotFound.
func (a *Azure) Remove(ctx context.Context, path string) error {
	loc, err := parseAzureObject(path)
	if err != nil {
		return fmt.Errorf("azure: remove: %w", err)
	}
	b, err := a.blob(loc)
	if err != nil {
		return err
	}
	include := blob.DeleteSnapshotsOptionTypeInclude
	if _, err := b.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: &include}); err != nil {
		return azureErr("remove", path, err)
	}
	return nil
}

// List pages through the container's blobs under the prefix, which the
// Blob service returns in ascending order of their names.
func (a *Azure) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	loc, err := parseAzure(prefix)
	if err != nil {
		return fmt.Errorf("azure: list: %w", err)
	}
	c, err := a.container(loc)
	if err != nil {
		return err
	}
	size := a.cfg.ListPageSize
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &loc.key, MaxResults: &size})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return azureErr("list", prefix, err)
		}
		for _, item := range page.Segment.BlobItems {
			if item.Name == nil {
				continue
			}
			fi := FileInfo{Path: loc.path(*item.Name)}
			if p := item.Properties; p != nil {
				if p.ContentLength != nil {
					fi.Size = *p.ContentLength
				}
				if p.LastModified != nil {
					fi.ModTime = *p.LastModified
				}
			}
			if err := fn(fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// RemoveMany deletes with AzureConfig.Deleters requests in flight; a
// missing blob counts as removed.
func (a *Azure) RemoveMany(ctx context.Context, paths []string) error {
	return removeConcurrently(ctx, paths, a.cfg.Deleters, func(ctx context.Context, p string) error {
		err := a.Remove(ctx, p)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
}

// Create returns a writer that buffers one block (AzureConfig.BlockSize).
// A file that fits is sent with one Put Blob on Close; a larger one is
// staged block by block (up to 4 in flight) and committed by Close, so the
// blob appears, whole, only then. Block IDs carry a random prefix per
// writer, so two writers of one path never commit each other's blocks.
// Abort commits nothing: staged blocks are never visible and Azure drops
// them after a week.
func (a *Azure) Create(ctx context.Context, path string) (Writer, error) {
	loc, err := parseAzureObject(path)
	if err != nil {
		return nil, fmt.Errorf("azure: create: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("azure: create %s: %w", path, err)
	}
	b, err := a.blob(loc)
	if err != nil {
		return nil, err
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("azure: create %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &azureWriter{
		blob: b, ctx: ctx, cancel: cancel, path: path, blockSize: a.cfg.BlockSize,
		idPrefix: hex.EncodeToString(id[:]), slots: make(chan struct{}, defaultUploads),
	}, nil
}

type azureWriter struct {
	blob      *blockblob.Client
	ctx       context.Context
	cancel    context.CancelFunc
	path      string
	blockSize int
	idPrefix  string
	buf       []byte
	done      bool

	ids   []string      // block IDs staged or being staged, in order
	slots chan struct{} // bounds the blocks in flight
	wg    sync.WaitGroup
	mu    sync.Mutex // guards err
	err   error
}

func (w *azureWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("azure: write %s: writer already closed", w.path)
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, w.blockSize)
		}
		n := min(len(p), w.blockSize-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
		written += n
		// A full block is sent only once more data arrives, so that a
		// file of exactly one block is a single Put Blob.
		if len(p) > 0 && len(w.buf) == w.blockSize {
			if err := w.stage(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (w *azureWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *azureWriter) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
		w.cancel()
	}
}

// stage starts uploading the buffer as the next block; it blocks while all
// slots are busy.
func (w *azureWriter) stage() error {
	select {
	case w.slots <- struct{}{}:
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return fmt.Errorf("azure: write %s: %w", w.path, w.ctx.Err())
	}
	if err := w.failed(); err != nil {
		<-w.slots
		return err
	}
	// Every ID of a blob must have the same length: 24 hex digits and 8.
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s%08d", w.idPrefix, len(w.ids)))
	w.ids = append(w.ids, id)
	num, block := len(w.ids), w.buf
	w.buf = nil
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		body := readSeekNopCloser{bytes.NewReader(block)}
		if _, err := w.blob.StageBlock(w.ctx, id, body, nil); err != nil {
			w.setErr(azureErr(fmt.Sprintf("upload block %d of", num), w.path, err))
		}
	}()
	return nil
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

func (w *azureWriter) Close() error {
	if w.done {
		return fmt.Errorf("azure: close %s: writer already closed", w.path)
	}
	w.done = true
	defer w.cancel()
	if len(w.ids) == 0 {
		if err := w.failed(); err != nil {
			return err
		}
		_, err := w.blob.Upload(w.ctx, readSeekNopCloser{bytes.NewReader(w.buf)}, nil)
		w.buf = nil
		if err != nil {
			return azureErr("put", w.path, err)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.stage(); err != nil {
			w.wg.Wait()
			return err
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return err
	}
	if _, err := w.blob.CommitBlockList(w.ctx, w.ids, nil); err != nil {
		return azureErr("commit blocks of", w.path, err)
	}
	return nil
}

func (w *azureWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.buf = nil
	w.setErr(fmt.Errorf("azure: write %s: aborted", w.path))
	w.wg.Wait()
	return nil
}
