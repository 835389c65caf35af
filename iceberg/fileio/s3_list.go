package fileio

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// List pages through ListObjectsV2 (S3Config.ListPageSize keys a page). S3
// returns keys in ascending UTF-8 byte order, which is the order of paths.
func (s *S3) List(ctx context.Context, prefix string, fn func(FileInfo) error) error {
	loc, err := parseS3(prefix)
	if err != nil {
		return fmt.Errorf("s3: list: %w", err)
	}
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket:  &loc.bucket,
		Prefix:  &loc.key,
		MaxKeys: aws.Int32(s.cfg.ListPageSize),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return s3Err("list", prefix, err)
		}
		for _, o := range page.Contents {
			fi := FileInfo{
				Path:    loc.path(aws.ToString(o.Key)),
				Size:    aws.ToInt64(o.Size),
				ModTime: aws.ToTime(o.LastModified),
			}
			if err := fn(fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// RemoveMany deletes with DeleteObjects, S3Config.DeleteBatchSize keys (at
// most 1000) a request, UploadThreads requests at a time. Keys S3 reports as
// failed are returned in a *RemoveManyError with S3's code and message.
func (s *S3) RemoveMany(ctx context.Context, paths []string) error {
	type batch struct {
		bucket string
		idx    []int // indexes into paths
	}
	var batches []batch
	open := map[string]int{} // bucket -> index of its batch being filled
	errs := make(map[int]error)
	for i, p := range paths {
		loc, err := parseS3Object(p)
		if err != nil {
			errs[i] = err
			continue
		}
		b, ok := open[loc.bucket]
		if !ok || len(batches[b].idx) == s.cfg.DeleteBatchSize {
			batches = append(batches, batch{bucket: loc.bucket})
			b = len(batches) - 1
			open[loc.bucket] = b
		}
		batches[b].idx = append(batches[b].idx, i)
	}

	var mu sync.Mutex
	next := make(chan batch)
	var wg sync.WaitGroup
	for range min(s.cfg.UploadThreads, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				for i, err := range s.deleteBatch(ctx, b.bucket, paths, b.idx) {
					mu.Lock()
					errs[i] = err
					mu.Unlock()
				}
			}
		}()
	}
	for _, b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()

	var failed []*fs.PathError
	for i, p := range paths {
		if err, ok := errs[i]; ok {
			failed = append(failed, &fs.PathError{Op: "remove", Path: p, Err: err})
		}
	}
	if failed != nil {
		return &RemoveManyError{Failed: failed}
	}
	return nil
}

// deleteBatch sends one DeleteObjects and returns the errors by path index.
func (s *S3) deleteBatch(ctx context.Context, bucket string, paths []string, idx []int) map[int]error {
	objs := make([]types.ObjectIdentifier, len(idx))
	byKey := make(map[string]int, len(idx))
	for j, i := range idx {
		loc, _ := parseS3(paths[i])
		objs[j] = types.ObjectIdentifier{Key: aws.String(loc.key)}
		byKey[loc.key] = i
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &bucket,
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
	})
	errs := make(map[int]error)
	if err != nil {
		err = fmt.Errorf("s3: delete objects in %s: %w", bucket, err)
		for _, i := range idx {
			errs[i] = err
		}
		return errs
	}
	for _, e := range out.Errors {
		i, ok := byKey[aws.ToString(e.Key)]
		if !ok {
			continue
		}
		if aws.ToString(e.Code) == "NoSuchKey" {
			continue // already gone counts as removed
		}
		errs[i] = fmt.Errorf("s3: %s: %s", aws.ToString(e.Code), aws.ToString(e.Message))
	}
	return errs
}
