package fileio_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/fileiotest"
)

func fakeProps(endpoint string, extra ...string) map[string]string {
	props := map[string]string{
		fileio.S3Endpoint:        endpoint,
		fileio.S3AccessKeyID:     "AKIDTEST",
		fileio.S3SecretAccessKey: "not-a-real-secret",
		fileio.S3PathStyleAccess: "true",
		fileio.S3RetryMinWaitMS:  "1",
		fileio.S3RetryMaxWaitMS:  "5",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		props[extra[i]] = extra[i+1]
	}
	return props
}

func newFakeIO(t *testing.T, extra ...string) (*fakeS3, *fileio.S3) {
	t.Helper()
	fake, url := newFakeS3(t)
	fio, err := fileio.NewS3(t.Context(), fakeProps(url, extra...))
	if err != nil {
		t.Fatal(err)
	}
	return fake, fio
}

func TestS3RetriesTransientErrors(t *testing.T) {
	for _, c := range []struct {
		status int
		code   string
	}{
		{503, "SlowDown"},
		{429, "TooManyRequests"},
		{500, "InternalError"},
		{502, "BadGateway"},
	} {
		t.Run(c.code, func(t *testing.T) {
			fake, fio := newFakeIO(t)
			// The first two attempts of every operation fail.
			fake.fail = func(op string, n int) (int, string) {
				if n <= 2 {
					return c.status, c.code
				}
				return 0, ""
			}
			data := fileiotest.Payload(3, 1000)
			if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/a/b.bin", data); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			got, err := fileio.ReadFile(t.Context(), fio, "s3://bucket/a/b.bin")
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			if !bytes.Equal(got, data) {
				t.Error("read back different bytes")
			}
			// Open's GetObject reads the whole 1000-byte file, so ReadFile
			// makes no other request.
			for _, op := range []string{"PutObject", "GetObject"} {
				if n := fake.count(op); n != 3 {
					t.Errorf("%s: %d requests, want 3 (two failures, one success)", op, n)
				}
			}
			if n := fake.count("HeadObject"); n != 0 {
				t.Errorf("%d HeadObject requests, want none", n)
			}
		})
	}
}

func TestS3PersistentErrorFails(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3RetryNumRetries, "3")
	fake.fail = func(string, int) (int, string) { return 500, "InternalError" }
	_, err := fio.Open(t.Context(), "s3://bucket/x/y.avro")
	if err == nil {
		t.Fatal("Open succeeded against a server that always answers 500")
	}
	if errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("a 500 was reported as not found: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"s3://bucket/x/y.avro", "500", "maximum number of attempts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if n := fake.count("GetObject"); n != 4 {
		t.Errorf("%d attempts, want 4 (1 + s3.retry.num-retries)", n)
	}
}

func TestS3NotFoundIsNotRetried(t *testing.T) {
	fake, fio := newFakeIO(t)
	if _, err := fio.Open(t.Context(), "s3://bucket/missing"); !errors.Is(err, fileio.ErrNotFound) {
		t.Fatalf("Open(missing) = %v, want ErrNotFound", err)
	}
	if n := fake.count("GetObject") + fake.count("HeadObject"); n != 1 {
		t.Errorf("%d requests for a missing object, want 1", n)
	}
}

// TestS3ReadAtIsOneRangedGet: Open is one GetObject, which reads the last
// 64 KiB; a read in them costs no request, a read before them one ranged
// GET, a read across their start one ranged GET of the part before.
func TestS3ReadAtIsOneRangedGet(t *testing.T) {
	fake, fio := newFakeIO(t)
	const size, tail = 200000, 64 << 10
	data := fileiotest.Payload(9, size)
	if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/big.parquet", data); err != nil {
		t.Fatal(err)
	}
	f, err := fio.Open(t.Context(), "s3://bucket/big.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != size {
		t.Errorf("Size() = %d, want %d", f.Size(), size)
	}
	for _, c := range []struct {
		off  int64
		n    int
		gets int // GetObject requests after the read, Open's included
	}{
		{size - 10, 10, 1}, {size - tail, 100, 1}, {0, 10, 2}, {100, 10, 3},
		{size - tail - 5, 10, 4}, {0, size, 5},
	} {
		p := make([]byte, c.n)
		if _, err := f.ReadAt(p, c.off); err != nil {
			t.Fatalf("ReadAt(%d, %d): %v", c.n, c.off, err)
		}
		if !bytes.Equal(p, data[c.off:c.off+int64(c.n)]) {
			t.Errorf("ReadAt(%d, %d) returned the wrong bytes", c.n, c.off)
		}
		if n := fake.count("GetObject"); n != c.gets {
			t.Errorf("after ReadAt(%d, %d), %d GetObject requests, want %d", c.n, c.off, n, c.gets)
		}
	}
	if n := fake.count("HeadObject"); n != 0 {
		t.Errorf("%d HeadObject requests, want none", n)
	}

	// A small object is read whole by Open; an empty one has no range to
	// read and is opened by a HeadObject.
	small := fileiotest.Payload(3, 5000)
	if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/dv.puffin", small); err != nil {
		t.Fatal(err)
	}
	if got, err := fileio.ReadFile(t.Context(), fio, "s3://bucket/dv.puffin"); err != nil || !bytes.Equal(got, small) {
		t.Errorf("ReadFile of a small object: %v, same bytes %v", err, bytes.Equal(got, small))
	}
	if n := fake.count("GetObject"); n != 6 {
		t.Errorf("%d GetObject requests after reading a small object, want 6 (one more)", n)
	}
	if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/empty", nil); err != nil {
		t.Fatal(err)
	}
	e, err := fio.Open(t.Context(), "s3://bucket/empty")
	if err != nil {
		t.Fatalf("Open of an empty object: %v", err)
	}
	if n, err := e.ReadAt(make([]byte, 1), 0); e.Size() != 0 || n != 0 || err == nil {
		t.Errorf("empty object: size %d, ReadAt = %d, %v", e.Size(), n, err)
	}
	if n := fake.count("HeadObject"); n != 1 {
		t.Errorf("%d HeadObject requests after opening an empty object, want 1", n)
	}
}

func TestS3MultipartUpload(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3UploadThreads, "2", fileio.S3PartSize, fmt.Sprint(5<<20))
	fake.wantOverlap.Store(2)
	data := fileiotest.Payload(4, 21<<20)
	if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/big.parquet", data); err != nil {
		t.Fatal(err)
	}
	if n := fake.count("PutObject"); n != 0 {
		t.Errorf("%d PutObject requests for a multipart file", n)
	}
	if n := fake.count("UploadPart"); n != 5 {
		t.Errorf("%d parts, want 5 (4 of 5 MiB, then 1 MiB)", n)
	}
	if m := fake.maxParts.Load(); m > 2 || m < 2 {
		t.Errorf("%d parts in flight at most, want exactly the limit 2", m)
	}
	got, err := fileio.ReadFile(t.Context(), fio, "s3://bucket/big.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Error("multipart object reads back different bytes")
	}
}

func TestS3ExactlyOnePartIsOnePut(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3PartSize, fmt.Sprint(5<<20))
	if err := fileio.WriteFile(t.Context(), fio, "s3://bucket/one", make([]byte, 5<<20)); err != nil {
		t.Fatal(err)
	}
	if p, u := fake.count("PutObject"), fake.count("CreateMultipartUpload"); p != 1 || u != 0 {
		t.Errorf("%d PutObject and %d multipart uploads, want one PutObject", p, u)
	}
}

func TestS3MultipartFailureAborts(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3PartSize, fmt.Sprint(5<<20), fileio.S3RetryNumRetries, "1")
	fake.fail = func(op string, n int) (int, string) {
		if op == "UploadPart" && n >= 2 {
			return 500, "InternalError"
		}
		return 0, ""
	}
	err := fileio.WriteFile(t.Context(), fio, "s3://bucket/broken", make([]byte, 16<<20))
	if err == nil {
		t.Fatal("WriteFile succeeded although parts failed")
	}
	if n := fake.count("AbortMultipartUpload"); n != 1 {
		t.Errorf("%d AbortMultipartUpload requests, want 1", n)
	}
	if n := fake.count("CompleteMultipartUpload"); n != 0 {
		t.Errorf("upload completed %d times despite failed parts", n)
	}
	if _, err := fio.Open(t.Context(), "s3://bucket/broken"); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Open after a failed upload: %v, want ErrNotFound", err)
	}
}

func TestS3AbortDiscardsMultipart(t *testing.T) {
	fake, fio := newFakeIO(t, fileio.S3PartSize, fmt.Sprint(5<<20))
	w, err := fio.Create(t.Context(), "s3://bucket/aborted")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 11<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if n := fake.count("AbortMultipartUpload"); n != 1 {
		t.Errorf("%d AbortMultipartUpload requests, want 1", n)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.uploads) != 0 || len(fake.objects) != 0 {
		t.Errorf("after Abort: %d uploads and %d objects remain", len(fake.uploads), len(fake.objects))
	}
}

// TestS3RetriesThroughProxy puts a proxy that throttles every third request
// in front of the real S3 server, so retried requests are re-signed and
// checked by a server that enforces SigV4.
func TestS3RetriesThroughProxy(t *testing.T) {
	props, base := s3Props(t)
	target, err := url.Parse(props[fileio.S3Endpoint])
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	requests, throttled := 0, 0
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the signature covers the Host the client used
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		fail := requests%3 == 1
		if fail {
			throttled++
		}
		mu.Unlock()
		if fail {
			writeError(w, http.StatusServiceUnavailable, "SlowDown")
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // registered first, so it closes after the clean-up below
	props[fileio.S3Endpoint] = srv.URL
	props[fileio.S3RetryMinWaitMS] = "1"
	props[fileio.S3RetryMaxWaitMS] = "10"
	props[fileio.S3PartSize] = fmt.Sprint(5 << 20)
	fio, err := fileio.NewS3(t.Context(), props)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(t, fio, base+"/") })
	for _, size := range []int{100, 12 << 20} {
		path := fmt.Sprintf("%s/f%d", base, size)
		data := fileiotest.Payload(uint64(size), size)
		if err := fileio.WriteFile(t.Context(), fio, path, data); err != nil {
			t.Fatalf("WriteFile(%d bytes): %v", size, err)
		}
		got, err := fileio.ReadFile(t.Context(), fio, path)
		if err != nil {
			t.Fatalf("ReadFile: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%d bytes read back differently through the throttling proxy", size)
		}
	}
	if throttled == 0 {
		t.Error("the proxy throttled nothing")
	}
}
