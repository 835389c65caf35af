package colstats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/puffin"
	"github.com/icectl/icectl/iceberg/puffin/theta"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
	"github.com/icectl/icectl/iceberg/table"
)

// BlobType is the Puffin blob type of a column's sketch.
const BlobType = "apache-datasketches-theta-v1"

// NDVProperty is the blob property that holds the sketch's estimate.
const NDVProperty = "ndv"

// ErrNoSnapshot is wrapped by the error for a snapshot the table does not
// have.
var ErrNoSnapshot = errors.New("the table has no snapshot")

// ErrColumn is wrapped by the error for a column that cannot be sketched.
var ErrColumn = errors.New("bad column")

// Column is a column to sketch.
type Column struct {
	ID   int
	Name string
	Type spec.Type
}

// Result is a computation's outcome.
type Result struct {
	SnapshotID     int64
	SequenceNumber int64
	Columns        []Column
	// Sketches are the columns' sketches, in Columns' order.
	Sketches []*theta.Compact
	// Rows is the number of live rows read.
	Rows int64
	// DataFiles is the number of data files read.
	DataFiles int
	// Base is the ancestor's file an incremental computation started
	// from; nil for a full one.
	Base *spec.StatisticsFile
}

// Schema is the schema of md's snapshot snap: the one it was written
// with, as Java's action uses, or the current one for a snapshot that
// records none.
func Schema(md *spec.TableMetadata, snap *spec.Snapshot) *spec.Schema {
	if snap.SchemaID != nil {
		if s, ok := md.SchemaByID(*snap.SchemaID); ok {
			return s
		}
	}
	return md.CurrentSchema()
}

// Columns resolves names in schema s: nil or empty means every top-level
// column of a primitive type, as Java's action does. A name is a top-level
// column or the dotted path of a field inside structs ("a.b"), as Java's
// action resolves it and Spark's col("a.b") reads it; a name that is
// neither, or names no primitive type the sketch takes, is an error
// wrapping ErrColumn. Names are deduplicated, keeping the first.
func Columns(s *spec.Schema, names []string) ([]Column, error) {
	var out []Column
	if len(names) == 0 {
		for _, f := range s.Fields {
			if _, ok := f.Type.(spec.PrimitiveType); ok && supported(f.Type) {
				out = append(out, Column{ID: f.ID, Name: f.Name, Type: f.Type})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w: the schema has no column of a primitive type", ErrColumn)
		}
		return out, nil
	}
	for _, n := range names {
		if slices.ContainsFunc(out, func(c Column) bool { return c.Name == n }) {
			continue
		}
		var f *spec.NestedField
		for i := range s.Fields {
			if s.Fields[i].Name == n {
				f = &s.Fields[i]
			}
		}
		if f == nil {
			if nf, ok := s.FindFieldByName(n); ok {
				f = &nf
			}
		}
		switch {
		case f == nil && strings.Contains(n, "."):
			return nil, fmt.Errorf("%w %q: the schema has no such field (a nested field is named by its path through structs, e.g. \"address.zip\"; fields of lists and maps are not sketched)", ErrColumn, n)
		case f == nil:
			return nil, fmt.Errorf("%w %q: the schema has no such column", ErrColumn, n)
		}
		if _, ok := f.Type.(spec.PrimitiveType); !ok || !supported(f.Type) {
			return nil, fmt.Errorf("%w %q: a %s column has no single-value serialization to sketch", ErrColumn, n, f.Type)
		}
		out = append(out, Column{ID: f.ID, Name: n, Type: f.Type})
	}
	return out, nil
}

// supported reports whether values of t have a single-value serialization
// the reader gives.
func supported(t spec.Type) bool {
	switch t.(type) {
	case spec.UnknownType, spec.VariantType, spec.GeometryType, spec.GeographyType:
		return false
	}
	return true
}

// Options tune Compute.
type Options struct {
	// Full computes from every live row, never from an earlier
	// snapshot's sketches.
	Full bool
}

// Compute sketches cols over the live rows of md's snapshot id: from the
// sketches of the newest ancestor whose statistics file has them all when
// every snapshot since is an append (see base), reading only the data
// files those appends added, else (or with opts.Full) from every live row.
// An ancestor's file that cannot be read is an error wrapping ErrBadFile.
func Compute(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, id int64, cols []Column, opts Options) (*Result, error) {
	snap, ok := md.SnapshotByID(id)
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrNoSnapshot, id)
	}
	proj, order, err := projection(Schema(md, snap), cols)
	if err != nil {
		return nil, err
	}
	fs, err := table.LiveFiles(ctx, fio, snap)
	if err != nil {
		return nil, fmt.Errorf("scan snapshot %d: %w", id, err)
	}
	res := &Result{SnapshotID: id, SequenceNumber: snap.SequenceNumber, Columns: cols}
	var prev []*theta.Compact
	if !opts.Full {
		if f, since := base(md, snap, cols); f != nil {
			if prev, err = Sketches(ctx, fio, *f, cols); err != nil {
				return nil, err
			}
			res.Base = f
			added := map[int64]bool{}
			for _, s := range since {
				added[s.SnapshotID] = true
			}
			fs = &table.FileSet{Deletes: fs.Deletes, Data: slices.DeleteFunc(fs.Data, func(e table.FileEntry) bool {
				return e.Entry.SnapshotID == nil || !added[*e.Entry.SnapshotID]
			})}
		}
	}
	res.DataFiles = len(fs.Data)
	sks := make([]*theta.Sketch, len(cols))
	for i := range sks {
		sks[i] = theta.NewDefault()
	}
	rows, err := scan.FileValues(ctx, fio, md, fs, scan.Options{Schema: proj}, func(leaf int, b []byte) {
		sks[order[leaf]].Update(b)
	})
	if err != nil {
		return nil, fmt.Errorf("scan snapshot %d: %w", id, err)
	}
	res.Rows = rows
	for i, s := range sks {
		if prev == nil {
			res.Sketches = append(res.Sketches, s.Result())
			continue
		}
		u := theta.NewUnion(theta.DefaultLgK, theta.DefaultSeed)
		if err := u.Add(prev[i]); err != nil {
			return nil, fmt.Errorf("%w %s: column %s: %w", ErrBadFile, res.Base.StatisticsPath, cols[i].Name, err)
		}
		if err := u.Add(s.Compact()); err != nil {
			return nil, err
		}
		res.Sketches = append(res.Sketches, u.Result())
	}
	return res, nil
}

// projection is the schema that reads cols from schema s: the top-level
// columns, and for a nested field each struct on its path with only the
// fields asked for. scan reads its primitive fields depth first; order
// maps that position to the column's index in cols.
func projection(s *spec.Schema, cols []Column) (*spec.Schema, []int, error) {
	proj := &spec.Schema{ID: s.ID}
	leafCol := map[int]int{} // field id -> index in cols
	for i, c := range cols {
		path, ok := pathTo(s.Fields, c.ID)
		if !ok {
			return nil, nil, fmt.Errorf("%w %q: not in the snapshot's schema", ErrColumn, c.Name)
		}
		leafCol[c.ID] = i
		fields := &proj.Fields
		for _, f := range path[:len(path)-1] {
			j := slices.IndexFunc(*fields, func(g spec.NestedField) bool { return g.ID == f.ID })
			if j < 0 {
				g := f
				g.Type = &spec.StructType{}
				*fields = append(*fields, g)
				j = len(*fields) - 1
			}
			fields = &(*fields)[j].Type.(*spec.StructType).Fields
		}
		leaf := path[len(path)-1]
		*fields = append(*fields, spec.NestedField{ID: leaf.ID, Name: leaf.Name, Type: c.Type, Required: leaf.Required})
	}
	var order []int
	var walk func(fs []spec.NestedField)
	walk = func(fs []spec.NestedField) {
		for _, f := range fs {
			if st, ok := f.Type.(*spec.StructType); ok {
				walk(st.Fields)
				continue
			}
			order = append(order, leafCol[f.ID])
		}
	}
	walk(proj.Fields)
	return proj, order, nil
}

// pathTo returns the fields from the top of fields down to the field with
// id, through structs only.
func pathTo(fields []spec.NestedField, id int) ([]spec.NestedField, bool) {
	for _, f := range fields {
		if f.ID == id {
			return []spec.NestedField{f}, true
		}
		if st, ok := f.Type.(*spec.StructType); ok {
			if rest, ok := pathTo(st.Fields, id); ok {
				return append([]spec.NestedField{f}, rest...), true
			}
		}
	}
	return nil, false
}

// base returns the statistics file of the newest ancestor of snap (snap
// included) with a sketch of every column of cols computed for it, in the
// same type, and the snapshots after it up to snap, when every one of
// them is an append: a sketch cannot take rows off, but the union of the
// ancestor's sketch and one of the rows appends added is the sketch of
// the whole (with icectl's sketches, the very bytes a full computation
// gives). An append adds no delete files, and delete files committed
// before it never apply to the files it adds.
func base(md *spec.TableMetadata, snap *spec.Snapshot, cols []Column) (*spec.StatisticsFile, []*spec.Snapshot) {
	chain := md.Ancestors(snap.SnapshotID)
	for i, s := range chain {
		if f, ok := Registered(md, s.SnapshotID); ok && len(Missing(f, s.SnapshotID, cols)) == 0 && sameTypes(Schema(md, s), cols) {
			if i == 0 {
				return nil, nil // Compute is not asked for what snap's file has
			}
			return &f, chain[:i]
		}
		if s.Operation() != spec.OperationAppend {
			return nil, nil
		}
	}
	return nil, nil
}

// sameTypes reports whether s has every column of cols in the same type:
// a promoted column (int to long) hashes other bytes.
func sameTypes(s *spec.Schema, cols []Column) bool {
	for _, c := range cols {
		f, ok := s.FindField(c.ID)
		if !ok || f.Type != c.Type {
			return false
		}
	}
	return true
}

// Sketches reads the sketches of cols from f. Failures wrap ErrBadFile.
func Sketches(ctx context.Context, fio fileio.FileIO, f spec.StatisticsFile, cols []Column) ([]*theta.Compact, error) {
	bad := func(err error) error {
		return fmt.Errorf("%w %s: %w", ErrBadFile, f.StatisticsPath, err)
	}
	in, err := fio.Open(ctx, f.StatisticsPath)
	if err != nil {
		return nil, bad(err)
	}
	defer in.Close()
	r, err := puffin.OpenReader(in, in.Size())
	if err != nil {
		return nil, bad(err)
	}
	out := make([]*theta.Compact, len(cols))
	for _, b := range r.Metadata().Blobs {
		for i, c := range cols {
			if out[i] != nil || b.Type != BlobType || len(b.Fields) != 1 || int(b.Fields[0]) != c.ID || b.SnapshotID != f.SnapshotID {
				continue
			}
			p, err := r.ReadBlob(b)
			if err != nil {
				return nil, bad(err)
			}
			if out[i], err = theta.Parse(p, theta.DefaultSeed); err != nil {
				return nil, bad(fmt.Errorf("column %s: %w", c.Name, err))
			}
		}
	}
	for i, c := range cols {
		if out[i] == nil {
			return nil, bad(fmt.Errorf("no sketch of column %s", c.Name))
		}
	}
	return out, nil
}
