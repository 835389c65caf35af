package compact

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/icectl/icectl/catalog"
	"github.com/icectl/icectl/iceberg/datafile"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/plan"
)

// checkInputsConcurrency is how many footers CheckInputs reads at once.
const checkInputsConcurrency = 8

// CheckInputs refuses, reading only, a plan whose input files the
// rewrite could not read whatever it did: a table property
// schema.name-mapping.default that does not parse, or, in a table without
// a name mapping, a Parquet input that stores no field ids (files added
// from outside Iceberg). It is run before the run takes its claim, so a
// refused compaction writes nothing; it reads the footers only of a table
// without a name mapping, the one case it has to. Inputs it cannot open
// or decode are left to the rewrite, which fails their group naming the
// file.
func CheckInputs(ctx context.Context, t *catalog.Table, p *plan.Plan) error {
	nm, err := spec.NameMappingOf(t.Metadata.Properties)
	if err != nil {
		return fmt.Errorf("compact %s: %w", t.Ident, err)
	}
	if nm != nil {
		return nil
	}
	var paths []string
	for _, g := range p.Groups {
		for _, in := range g.Inputs {
			if strings.EqualFold(in.FileFormat, "parquet") {
				paths = append(paths, in.Path)
			}
		}
	}
	// Every footer is read (no early stop), so the file named is the
	// first in plan order whatever the timing.
	var (
		mu    sync.Mutex
		first string
		at    = len(paths)
		wg    sync.WaitGroup
		next  = make(chan int)
	)
	for range min(checkInputsConcurrency, len(paths)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() == nil && storesNoFieldIDs(ctx, t, paths[i]) {
					mu.Lock()
					if i < at {
						first, at = paths[i], i
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if first != "" {
		return fmt.Errorf("compact %s: input %s: %w; nothing was written: give the table a name mapping (table property %s, as Spark's add_files does) or drop the file",
			t.Ident, first, datafile.ErrNoFieldIDs, spec.PropNameMapping)
	}
	return nil
}

// storesNoFieldIDs reports whether the Parquet file at path has columns
// and stores no field id on any of them; false when it cannot be read.
func storesNoFieldIDs(ctx context.Context, t *catalog.Table, path string) bool {
	f, err := t.IO.Open(ctx, path)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := datafile.InspectParquet(f, f.Size())
	if err != nil || len(info.Schema) == 0 {
		return false
	}
	return !anyFieldID(info.Schema)
}

func anyFieldID(nodes []datafile.ParquetNode) bool {
	for _, n := range nodes {
		if n.FieldID != nil || anyFieldID(n.Children) {
			return true
		}
	}
	return false
}
