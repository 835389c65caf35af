// Package fileiotest holds the conformance suite every fileio.FileIO must
// pass. It is for tests only and must never be imported by product code.
package fileiotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
)

// Options tunes the suite to a backend.
type Options struct {
	// ManyFiles is how many files the listing and bulk-removal tests create;
	// S3 backends use more than 1000 to cross a page and a delete batch.
	ManyFiles int
}

// RunConformance runs the suite. newIO returns a FileIO and an empty base
// location (no trailing slash) under which the test may create files; it is
// called once per subtest.
func RunConformance(t *testing.T, newIO func(t *testing.T) (fileio.FileIO, string)) {
	RunConformanceWith(t, Options{}, newIO)
}

// RunConformanceWith is RunConformance with options.
func RunConformanceWith(t *testing.T, opts Options, newIO func(t *testing.T) (fileio.FileIO, string)) {
	if opts.ManyFiles == 0 {
		opts.ManyFiles = 300
	}
	setup := func(t *testing.T) (fileio.FileIO, string) {
		t.Helper()
		fio, base := newIO(t)
		return fio, strings.TrimSuffix(base, "/")
	}
	t.Run("CreateReadBack", func(t *testing.T) { testCreateReadBack(t, setup) })
	t.Run("ReadAt", func(t *testing.T) { testReadAt(t, setup) })
	t.Run("NotVisibleBeforeClose", func(t *testing.T) { testNotVisibleBeforeClose(t, setup) })
	t.Run("Abort", func(t *testing.T) { testAbort(t, setup) })
	t.Run("Overwrite", func(t *testing.T) { testOverwrite(t, setup) })
	t.Run("Missing", func(t *testing.T) { testMissing(t, setup) })
	t.Run("Remove", func(t *testing.T) { testRemove(t, setup) })
	t.Run("ListNested", func(t *testing.T) { testListNested(t, setup) })
	t.Run("ListManyAndRemoveMany", func(t *testing.T) { testListManyRemoveMany(t, setup, opts.ManyFiles) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrentWriters(t, setup) })
}

type setupFunc func(t *testing.T) (fileio.FileIO, string)

// Payload returns n pseudo-random bytes determined by seed.
func Payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n - n%8; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// write creates path with data, written in chunks of odd sizes so that
// writers see writes spanning their internal buffers.
func write(t *testing.T, fio fileio.FileIO, path string, data []byte) {
	t.Helper()
	w, err := fio.Create(t.Context(), path)
	if err != nil {
		t.Fatalf("Create(%s): %v", path, err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1<<20+7)
		m, err := w.Write(rest[:n])
		if err != nil || m != n {
			w.Abort()
			t.Fatalf("Write(%s) = %d, %v; want %d", path, m, err, n)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close(%s): %v", path, err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Close(%s) = %v, want nil", path, err)
	}
}

func readBack(t *testing.T, fio fileio.FileIO, path string) []byte {
	t.Helper()
	got, err := fileio.ReadFile(t.Context(), fio, path)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return got
}

func list(t *testing.T, fio fileio.FileIO, prefix string) []fileio.FileInfo {
	t.Helper()
	l, ok := fio.(fileio.Lister)
	if !ok {
		t.Fatalf("%T does not implement fileio.Lister", fio)
	}
	var out []fileio.FileInfo
	if err := l.List(t.Context(), prefix, func(fi fileio.FileInfo) error {
		out = append(out, fi)
		return nil
	}); err != nil {
		t.Fatalf("List(%s): %v", prefix, err)
	}
	return out
}

func paths(fis []fileio.FileInfo) []string {
	out := make([]string, len(fis))
	for i, fi := range fis {
		out[i] = fi.Path
	}
	return out
}

func testCreateReadBack(t *testing.T, setup setupFunc) {
	for _, size := range []int{0, 1, 4096, 8 << 20, 20<<20 + 3} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			fio, base := setup(t)
			path := base + "/dir/sub/file.bin"
			data := Payload(uint64(size), size)
			write(t, fio, path, data)
			f, err := fio.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Size() != int64(size) {
				t.Errorf("Size() = %d, want %d", f.Size(), size)
			}
			if got := readBack(t, fio, path); !bytes.Equal(got, data) {
				t.Errorf("read back %d bytes differing from the %d written", len(got), len(data))
			}
		})
	}
}

func testReadAt(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	path := base + "/readat.bin"
	const size = 10000
	data := Payload(7, size)
	write(t, fio, path, data)
	f, err := fio.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct {
		off     int64
		n       int
		wantN   int
		wantEOF bool
	}{
		{0, 10, 10, false},
		{1234, 100, 100, false},
		{size - 10, 10, 10, false},
		{size - 10, 20, 10, true},
		{size, 1, 0, true},
		{size + 100, 5, 0, true},
		{0, size, size, false},
		{0, size + 1, size, true},
	}
	for _, c := range cases {
		p := make([]byte, c.n)
		n, err := f.ReadAt(p, c.off)
		if n != c.wantN {
			t.Errorf("ReadAt(len %d, off %d) n = %d, want %d", c.n, c.off, n, c.wantN)
		}
		if c.wantEOF && err != io.EOF {
			t.Errorf("ReadAt(len %d, off %d) err = %v, want io.EOF", c.n, c.off, err)
		}
		if !c.wantEOF && err != nil {
			t.Errorf("ReadAt(len %d, off %d) err = %v, want nil", c.n, c.off, err)
		}
		if n > 0 && !bytes.Equal(p[:n], data[c.off:c.off+int64(n)]) {
			t.Errorf("ReadAt(len %d, off %d) returned the wrong bytes", c.n, c.off)
		}
	}
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at a negative offset succeeded")
	}
}

func testNotVisibleBeforeClose(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	path := base + "/pending.bin"
	w, err := fio.Create(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(Payload(1, 9<<20)); err != nil {
		t.Fatal(err)
	}
	if _, err := fio.Open(t.Context(), path); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Open before Close: err = %v, want ErrNotFound", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if got := len(readBack(t, fio, path)); got != 9<<20 {
		t.Errorf("read %d bytes, want %d", got, 9<<20)
	}
}

func testAbort(t *testing.T, setup setupFunc) {
	for _, size := range []int{100, 20 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			fio, base := setup(t)
			path := base + "/aborted/file.bin"
			w, err := fio.Create(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(Payload(2, size)); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort: %v", err)
			}
			if err := w.Close(); err == nil {
				t.Error("Close after Abort succeeded")
			}
			if _, err := fio.Open(t.Context(), path); !errors.Is(err, fileio.ErrNotFound) {
				t.Errorf("Open after Abort: err = %v, want ErrNotFound", err)
			}
			if got := list(t, fio, base+"/"); len(got) != 0 {
				t.Errorf("files left after Abort: %v", paths(got))
			}
		})
	}
}

func testOverwrite(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	path := base + "/over.txt"
	write(t, fio, path, []byte("first version, longer"))
	write(t, fio, path, []byte("second"))
	if got := string(readBack(t, fio, path)); got != "second" {
		t.Errorf("after overwrite read %q, want %q", got, "second")
	}
}

func testMissing(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	path := base + "/no/such/file"
	if _, err := fio.Open(t.Context(), path); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Open(missing) err = %v, want ErrNotFound", err)
	}
	if err := fio.Remove(t.Context(), path); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Remove(missing) err = %v, want ErrNotFound", err)
	}
	if got := list(t, fio, base+"/no/"); len(got) != 0 {
		t.Errorf("List of a missing prefix = %v", paths(got))
	}
}

func testRemove(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	keep, gone := base+"/r/keep", base+"/r/gone"
	write(t, fio, keep, []byte("k"))
	write(t, fio, gone, []byte("g"))
	if err := fio.Remove(t.Context(), gone); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := fio.Open(t.Context(), gone); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("Open after Remove: err = %v, want ErrNotFound", err)
	}
	if got := string(readBack(t, fio, keep)); got != "k" {
		t.Errorf("other file reads %q after Remove", got)
	}
}

func testListNested(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	files := map[string]int{
		"/t/a/x":       1,
		"/t/a/b/y":     22,
		"/t/a/b/c/z":   333,
		"/t/a-c/w":     4,
		"/t/ab/v":      5,
		"/t/other/u":   6,
		"/t/a.metrics": 7,
	}
	for name, size := range files {
		write(t, fio, base+name, Payload(uint64(size), size))
	}
	check := func(prefix string, want []string) {
		t.Helper()
		got := list(t, fio, base+prefix)
		var wantFull []string
		for _, w := range want {
			wantFull = append(wantFull, base+w)
		}
		if fmt.Sprint(paths(got)) != fmt.Sprint(wantFull) {
			t.Errorf("List(%s):\n got %v\nwant %v", prefix, paths(got), wantFull)
		}
		for _, fi := range got {
			if want := int64(files[strings.TrimPrefix(fi.Path, base)]); fi.Size != want {
				t.Errorf("List(%s): %s has size %d, want %d", prefix, fi.Path, fi.Size, want)
			}
			if fi.ModTime.IsZero() {
				t.Errorf("List(%s): %s has no modification time", prefix, fi.Path)
			}
		}
	}
	// Byte order of whole paths: '-' < '.' < '/' < 'b'.
	check("/t/a/", []string{"/t/a/b/c/z", "/t/a/b/y", "/t/a/x"})
	check("/t/a", []string{"/t/a-c/w", "/t/a.metrics", "/t/a/b/c/z", "/t/a/b/y", "/t/a/x", "/t/ab/v"})
	check("/t/a/b", []string{"/t/a/b/c/z", "/t/a/b/y"})
	check("/t/a/b/c/z", []string{"/t/a/b/c/z"})
	check("/t/o", []string{"/t/other/u"})
	check("/t/zzz", nil)

	stop := errors.New("stop")
	calls := 0
	err := fio.(fileio.Lister).List(t.Context(), base+"/t/", func(fileio.FileInfo) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("List with a failing callback: %d calls, err %v; want 1 call and the callback's error", calls, err)
	}
}

func testListManyRemoveMany(t *testing.T, setup setupFunc, n int) {
	fio, base := setup(t)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("%s/many/f%05d", base, i))
	}
	parallel(t, 16, len(want), func(i int) error {
		return fileio.WriteFile(t.Context(), fio, want[i], []byte(want[i]))
	})
	write(t, fio, base+"/keep", []byte("keep"))
	got := paths(list(t, fio, base+"/many/"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List returned %d paths, want %d in order (first %v)", len(got), len(want), got[:min(3, len(got))])
	}
	br, ok := fio.(fileio.BulkRemover)
	if !ok {
		t.Fatalf("%T does not implement fileio.BulkRemover", fio)
	}
	// A path already gone counts as removed.
	if err := br.RemoveMany(t.Context(), append(want, base+"/many/never-existed")); err != nil {
		t.Fatalf("RemoveMany: %v", err)
	}
	if left := list(t, fio, base+"/many/"); len(left) != 0 {
		t.Errorf("%d files left after RemoveMany, first %s", len(left), left[0].Path)
	}
	if got := string(readBack(t, fio, base+"/keep")); got != "keep" {
		t.Errorf("file outside the removed set reads %q", got)
	}
	if err := br.RemoveMany(t.Context(), nil); err != nil {
		t.Errorf("RemoveMany(nil): %v", err)
	}
}

// testConcurrentWriters writes distinct files and races writers on one
// path: the survivor must be exactly one writer's bytes, never a mix.
func testConcurrentWriters(t *testing.T, setup setupFunc) {
	fio, base := setup(t)
	const writers = 8
	const size = 256 << 10
	shared := base + "/race/shared"
	parallel(t, writers, 2*writers, func(i int) error {
		path := shared
		if i%2 == 0 {
			path = fmt.Sprintf("%s/race/own%d", base, i)
		}
		w, err := fio.Create(context.Background(), path)
		if err != nil {
			return err
		}
		data := Payload(uint64(i), size)
		for off := 0; off < size; off += 4096 {
			if _, err := w.Write(data[off : off+4096]); err != nil {
				return errors.Join(err, w.Abort())
			}
		}
		return w.Close()
	})
	for i := 0; i < 2*writers; i += 2 {
		if got := readBack(t, fio, fmt.Sprintf("%s/race/own%d", base, i)); !bytes.Equal(got, Payload(uint64(i), size)) {
			t.Errorf("own%d has the wrong contents", i)
		}
	}
	got := readBack(t, fio, shared)
	match := false
	for i := 1; i < 2*writers; i += 2 {
		match = match || bytes.Equal(got, Payload(uint64(i), size))
	}
	if !match {
		t.Errorf("shared file (%d bytes) is not exactly one writer's output", len(got))
	}
	if n := len(list(t, fio, base+"/race/")); n != writers+1 {
		t.Errorf("List found %d files, want %d (leftover temporary files?)", n, writers+1)
	}
}

func parallel(t *testing.T, workers, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
