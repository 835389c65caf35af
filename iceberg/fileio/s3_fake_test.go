package fileio_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeS3 is just enough of S3 (path-style, no signature check) to watch
// the requests the client makes and to inject failures into them.
type fakeS3 struct {
	mu       sync.Mutex
	objects  map[string][]byte                    // "bucket/key" -> data
	uploads  map[string]map[int32][]byte          // upload id -> parts
	calls    map[string]int                       // operation -> requests seen
	fail     func(op string, n int) (int, string) // status and error code to answer, 0 to serve
	inFlight atomic.Int32
	maxParts atomic.Int32 // most UploadPart requests seen in flight at once
	// wantOverlap is how many UploadPart requests a part waits to see in
	// flight together before it is answered (0: none).
	wantOverlap atomic.Int32
	nextID      int
}

func newFakeS3(t *testing.T) (*fakeS3, string) {
	f := &fakeS3{objects: map[string][]byte{}, uploads: map[string]map[int32][]byte{}, calls: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeS3) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func operation(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && q.Has("partNumber"):
		return "UploadPart"
	case r.Method == http.MethodPut:
		return "PutObject"
	case r.Method == http.MethodPost && q.Has("delete"):
		return "DeleteObjects"
	case r.Method == http.MethodPost && q.Has("uploads"):
		return "CreateMultipartUpload"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "CompleteMultipartUpload"
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		return "AbortMultipartUpload"
	case r.Method == http.MethodHead:
		return "HeadObject"
	case r.Method == http.MethodGet:
		return "GetObject"
	}
	return r.Method
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected %s</Message></Error>`, code, code)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := operation(r)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "IncompleteBody")
		return
	}
	f.mu.Lock()
	f.calls[op]++
	n := f.calls[op]
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		if status, code := fail(op, n); status != 0 {
			writeError(w, status, code)
			return
		}
	}
	if op == "UploadPart" {
		// Hold the part a moment outside the lock to see how many overlap.
		inFlight := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			m := f.maxParts.Load()
			if inFlight <= m || f.maxParts.CompareAndSwap(m, inFlight) {
				break
			}
		}
		// Hold each part until as many parts as the uploader may send at
		// once have overlapped (then stop waiting), so the overlap the test
		// asserts does not depend on how busy the machine is; a serial
		// uploader makes each part wait out the deadline and the test fail.
		for deadline := time.Now().Add(5 * time.Second); f.maxParts.Load() < f.wantOverlap.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	key := strings.TrimPrefix(r.URL.Path, "/")
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "PutObject":
		f.objects[key] = body
		w.Header().Set("ETag", `"e`+strconv.Itoa(len(body))+`"`)
	case "HeadObject", "GetObject":
		data, ok := f.objects[key]
		if !ok {
			if op == "HeadObject" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			writeError(w, http.StatusNotFound, "NoSuchKey")
			return
		}
		w.Header().Set("ETag", `"e`+strconv.Itoa(len(data))+`"`)
		if op == "HeadObject" {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			return
		}
		var from, to, suffix int
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=-%d", &suffix); err == nil && suffix > 0 && len(data) > 0 {
			// The last suffix bytes, or all of a smaller object, as S3 answers.
			from, to = max(0, len(data)-suffix), len(data)-1
		} else if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &from, &to); err != nil || to >= len(data) {
			writeError(w, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(data)))
		w.Header().Set("Content-Length", strconv.Itoa(to-from+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[from : to+1])
	case "CreateMultipartUpload":
		f.nextID++
		id := fmt.Sprintf("up%d", f.nextID)
		f.uploads[id] = map[int32][]byte{}
		fmt.Fprintf(w, `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>%s</Key><UploadId>%s</UploadId></InitiateMultipartUploadResult>`, key, id)
	case "UploadPart":
		parts, ok := f.uploads[q.Get("uploadId")]
		if !ok {
			writeError(w, http.StatusNotFound, "NoSuchUpload")
			return
		}
		num, _ := strconv.Atoi(q.Get("partNumber"))
		parts[int32(num)] = body
		w.Header().Set("ETag", fmt.Sprintf(`"p%d"`, num))
	case "CompleteMultipartUpload":
		parts, ok := f.uploads[q.Get("uploadId")]
		if !ok {
			writeError(w, http.StatusNotFound, "NoSuchUpload")
			return
		}
		var nums []int
		for n := range parts {
			nums = append(nums, int(n))
		}
		sort.Ints(nums)
		var data []byte
		for _, n := range nums {
			data = append(data, parts[int32(n)]...)
		}
		f.objects[key] = data
		delete(f.uploads, q.Get("uploadId"))
		fmt.Fprintf(w, `<CompleteMultipartUploadResult><Key>%s</Key><ETag>"m"</ETag></CompleteMultipartUploadResult>`, key)
	case "DeleteObjects":
		// Keys containing "locked" fail, the others are deleted.
		var req struct {
			Objects []struct{ Key string } `xml:"Object"`
		}
		if err := xml.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, "MalformedXML")
			return
		}
		fmt.Fprint(w, `<DeleteResult>`)
		for _, o := range req.Objects {
			if strings.Contains(o.Key, "locked") {
				fmt.Fprintf(w, `<Error><Key>%s</Key><Code>AccessDenied</Code><Message>locked</Message></Error>`, o.Key)
				continue
			}
			delete(f.objects, key+"/"+o.Key)
		}
		fmt.Fprint(w, `</DeleteResult>`)
	case "AbortMultipartUpload":
		delete(f.uploads, q.Get("uploadId"))
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusNotImplemented, "NotImplemented")
	}
}
