package deletefiles

import (
	"context"
	"slices"
	"testing"

	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/puffin"
)

func TestPositionDeletesReadBack(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewMem()
	deletes := map[string][]int64{"mem://t/b.parquet": {7, 2}, "mem://t/a.parquet": {5}}
	df, err := WritePositionDeletes(ctx, fio, "mem://t/d.parquet", []any{"eu"}, deletes, true)
	if err != nil {
		t.Fatal(err)
	}
	if df.RecordCount != 3 || df.ReferencedDataFile != nil || df.Partition[0] != "eu" {
		t.Errorf("entry %+v: want 3 records, no referenced file (two data files), partition eu", df)
	}
	f, err := fio.Open(ctx, df.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Size() != df.FileSizeInBytes {
		t.Errorf("size %d, entry says %d", f.Size(), df.FileSizeInBytes)
	}
	var got []string
	err = datafile.ReadPositionDeletes(ctx, f, f.Size(), func(path string, pos int64) error {
		got = append(got, path+":"+string(rune('0'+pos)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mem://t/a.parquet:5", "mem://t/b.parquet:2", "mem://t/b.parquet:7"}
	if !slices.Equal(got, want) {
		t.Errorf("read back %v, want %v (sorted by path, then position)", got, want)
	}

	one, err := WritePositionDeletes(ctx, fio, "mem://t/e.parquet", []any{}, map[string][]int64{"mem://t/a.parquet": {1}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if one.ReferencedDataFile == nil || *one.ReferencedDataFile != "mem://t/a.parquet" {
		t.Errorf("file-scoped delete: referenced data file %v", one.ReferencedDataFile)
	}
}

func TestDVsReadBack(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewMem()
	dvs, err := WriteDVs(ctx, fio, "mem://t/d.puffin", []any{}, map[string][]int64{"mem://t/a.parquet": {1, 3}, "mem://t/b.parquet": {0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dvs) != 2 {
		t.Fatalf("%d entries, want 2", len(dvs))
	}
	f, err := fio.Open(ctx, "mem://t/d.puffin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, dv := range dvs {
		blob := make([]byte, *dv.ContentSizeInBytes)
		if _, err := f.ReadAt(blob, *dv.ContentOffset); err != nil {
			t.Fatal(err)
		}
		bm, err := puffin.DecodeDVWithCardinality(blob, dv.RecordCount)
		if err != nil {
			t.Fatalf("%s: %v", *dv.ReferencedDataFile, err)
		}
		want := map[string]int{"mem://t/a.parquet": 2, "mem://t/b.parquet": 1}[*dv.ReferencedDataFile]
		if int(bm.GetCardinality()) != want || dv.FileSizeInBytes != f.Size() {
			t.Errorf("%s: cardinality %d want %d; size %d want %d", *dv.ReferencedDataFile, bm.GetCardinality(), want, dv.FileSizeInBytes, f.Size())
		}
	}
}
