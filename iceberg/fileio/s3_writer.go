package fileio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Create returns a writer that buffers up to one part. A file that fits in
// one part is sent with a single PutObject on Close; a larger one becomes a
// multipart upload whose parts are sent while writing continues, at most
// S3Config.UploadThreads at a time. Memory use is bounded by
// (UploadThreads+1)·PartSize. The object appears only when Close completes
// the upload; an error or Abort aborts the multipart upload.
func (s *S3) Create(ctx context.Context, path string) (Writer, error) {
	loc, err := parseS3Object(path)
	if err != nil {
		return nil, fmt.Errorf("s3: create: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3: create %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &s3Writer{
		s: s, ctx: ctx, cancel: cancel, path: path, loc: loc,
		slots: make(chan struct{}, s.cfg.UploadThreads),
	}, nil
}

// abortTimeout bounds the clean-up of a failed multipart upload.
const abortTimeout = time.Minute

type s3Writer struct {
	s      *S3
	ctx    context.Context
	cancel context.CancelFunc
	path   string
	loc    s3Location
	buf    []byte
	done   bool

	uploadID string        // set once the multipart upload has started
	nextPart int32         // number of the next part to send
	slots    chan struct{} // bounds the part uploads in flight
	wg       sync.WaitGroup
	mu       sync.Mutex // guards parts and err, written by part uploads
	parts    []types.CompletedPart
	err      error
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("s3: write %s: writer already closed", w.path)
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, w.s.cfg.PartSize)
		}
		n := min(len(p), int(w.s.cfg.PartSize)-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
		written += n
		// A full buffer is sent only once more data arrives, so that the
		// last part is never empty and a file of exactly one part size is
		// a single PutObject.
		if len(p) > 0 && len(w.buf) == int(w.s.cfg.PartSize) {
			if err := w.sendPart(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (w *s3Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *s3Writer) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
		w.cancel()
	}
}

// sendPart starts uploading the buffer as the next part, starting the
// multipart upload first if needed. It blocks while all upload slots are busy.
func (w *s3Writer) sendPart() error {
	if w.uploadID == "" {
		out, err := w.s.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{
			Bucket: &w.loc.bucket, Key: &w.loc.key,
		})
		if err != nil {
			err = s3Err("start multipart upload of", w.path, err)
			w.setErr(err)
			return err
		}
		w.uploadID = aws.ToString(out.UploadId)
		w.nextPart = 1
	}
	select {
	case w.slots <- struct{}{}:
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return fmt.Errorf("s3: write %s: %w", w.path, w.ctx.Err())
	}
	if err := w.failed(); err != nil {
		<-w.slots
		return err
	}
	part, num := w.buf, w.nextPart
	w.buf = nil
	w.nextPart++
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		out, err := w.s.client.UploadPart(w.ctx, &s3.UploadPartInput{
			Bucket: &w.loc.bucket, Key: &w.loc.key, UploadId: &w.uploadID,
			PartNumber: aws.Int32(num), Body: bytes.NewReader(part),
			ContentLength: aws.Int64(int64(len(part))),
		})
		if err != nil {
			w.setErr(s3Err(fmt.Sprintf("upload part %d of", num), w.path, err))
			return
		}
		w.mu.Lock()
		w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
		w.mu.Unlock()
	}()
	return nil
}

func (w *s3Writer) Close() error {
	if w.done {
		return fmt.Errorf("s3: close %s: writer already closed", w.path)
	}
	w.done = true
	defer w.cancel()
	if w.uploadID == "" {
		if err := w.failed(); err != nil {
			return err
		}
		_, err := w.s.client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket: &w.loc.bucket, Key: &w.loc.key,
			Body: bytes.NewReader(w.buf), ContentLength: aws.Int64(int64(len(w.buf))),
		})
		w.buf = nil
		if err != nil {
			return s3Err("put", w.path, err)
		}
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.sendPart(); err != nil {
			return errors.Join(err, w.abortUpload())
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return errors.Join(err, w.abortUpload())
	}
	sort.Slice(w.parts, func(i, j int) bool { return *w.parts[i].PartNumber < *w.parts[j].PartNumber })
	_, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &w.loc.bucket, Key: &w.loc.key, UploadId: &w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		return errors.Join(s3Err("complete multipart upload of", w.path, err), w.abortUpload())
	}
	return nil
}

func (w *s3Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.buf = nil
	w.setErr(fmt.Errorf("s3: write %s: aborted", w.path))
	w.wg.Wait()
	if w.uploadID == "" {
		return nil
	}
	return w.abortUpload()
}

// abortUpload discards the uploaded parts. It uses a fresh context because
// the writer's own is cancelled by then, and leaving parts behind costs money.
func (w *s3Writer) abortUpload() error {
	w.cancel()
	w.wg.Wait()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), abortTimeout)
	defer cancel()
	_, err := w.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: &w.loc.bucket, Key: &w.loc.key, UploadId: &w.uploadID,
	})
	if err != nil {
		return s3Err("abort multipart upload "+w.uploadID+" of", w.path, err)
	}
	return nil
}
