package faultio_test

import (
	"errors"
	"testing"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/fileio/faultio"
)

func TestFailNth(t *testing.T) {
	f := faultio.New(fileio.NewMem())
	f.FailNth(faultio.Create, 2)
	ctx := t.Context()
	for i, want := range []bool{false, true, false} {
		err := fileio.WriteFile(ctx, f, "mem://t/f", []byte("x"))
		if got := errors.Is(err, faultio.ErrInjected); got != want {
			t.Errorf("create %d: err = %v, want injected %v", i+1, err, want)
		}
	}
	if n := f.Calls(faultio.Create); n != 3 {
		t.Errorf("Calls(Create) = %d, want 3", n)
	}
}

func TestFailPath(t *testing.T) {
	mem := fileio.NewMem()
	f := faultio.New(mem)
	ctx := t.Context()
	for _, p := range []string{"mem://t/a", "mem://t/manifest-b"} {
		if err := fileio.WriteFile(ctx, f, p, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	f.FailPath(faultio.Open, "manifest")
	if _, err := fileio.ReadFile(ctx, f, "mem://t/a"); err != nil {
		t.Errorf("unmatched path failed: %v", err)
	}
	if _, err := fileio.ReadFile(ctx, f, "mem://t/manifest-b"); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("matched path: err = %v, want injected", err)
	}
	f.Reset()
	if _, err := fileio.ReadFile(ctx, f, "mem://t/manifest-b"); err != nil {
		t.Errorf("after Reset: %v", err)
	}
}

func TestWriteFailsMidway(t *testing.T) {
	mem := fileio.NewMem()
	f := faultio.New(mem)
	f.FailWritesAfter(5)
	w, err := f.Create(t.Context(), "mem://t/partial")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("first write = %d, %v", n, err)
	}
	if n, err := w.Write([]byte("defg")); n != 2 || !errors.Is(err, faultio.ErrInjected) {
		t.Fatalf("second write = %d, %v; want 2 bytes and the injected error", n, err)
	}
	if err := w.Close(); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("Close after a failed write = %v, want injected", err)
	}
	if _, err := mem.Open(t.Context(), "mem://t/partial"); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("a half-written file became visible: %v", err)
	}
}

func TestCloseFailures(t *testing.T) {
	mem := fileio.NewMem()
	f := faultio.New(mem)
	f.FailNth(faultio.Close, 1)
	f.FailNth(faultio.CloseAfterCommit, 1) // first reached by the second Close
	ctx := t.Context()
	if err := fileio.WriteFile(ctx, f, "mem://t/before", []byte("x")); !errors.Is(err, faultio.ErrInjected) {
		t.Fatalf("Close: %v, want injected", err)
	}
	if _, err := mem.Open(ctx, "mem://t/before"); !errors.Is(err, fileio.ErrNotFound) {
		t.Errorf("file failed before commit is visible: %v", err)
	}
	if err := fileio.WriteFile(ctx, f, "mem://t/after", []byte("x")); !errors.Is(err, faultio.ErrInjected) {
		t.Fatalf("Close after commit: %v, want injected", err)
	}
	if _, err := mem.Open(ctx, "mem://t/after"); err != nil {
		t.Errorf("file failed after commit is not visible: %v", err)
	}
}

func TestReadAtListRemoveMany(t *testing.T) {
	mem := fileio.NewMem()
	f := faultio.New(mem)
	ctx := t.Context()
	if err := fileio.WriteFile(ctx, f, "mem://t/a", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	f.FailNth(faultio.ReadAt, 1)
	f.FailNth(faultio.List, 1)
	f.FailPath(faultio.RemoveMany, "t/a")
	file, err := f.Open(ctx, "mem://t/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.ReadAt(make([]byte, 1), 0); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("ReadAt: %v, want injected", err)
	}
	if _, err := file.ReadAt(make([]byte, 1), 0); err != nil {
		t.Errorf("second ReadAt: %v", err)
	}
	if err := f.List(ctx, "mem://t/", func(fileio.FileInfo) error { return nil }); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("List: %v, want injected", err)
	}
	if err := f.RemoveMany(ctx, []string{"mem://t/a"}); !errors.Is(err, faultio.ErrInjected) {
		t.Errorf("RemoveMany: %v, want injected", err)
	}
	if _, err := mem.Open(ctx, "mem://t/a"); err != nil {
		t.Errorf("file removed despite the injected failure: %v", err)
	}
}
