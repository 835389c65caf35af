package colstats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/icectl/icectl/iceberg/fileio"
	"github.com/icectl/icectl/iceberg/puffin/theta"
	"github.com/icectl/icectl/iceberg/scan"
	"github.com/icectl/icectl/iceberg/spec"
)

// BlobType is the Puffin blob type of a column's sketch.
const BlobType = "apache-datasketches-theta-v1"

// NDVProperty is the blob property that holds the sketch's estimate.
const NDVProperty = "ndv"

// ErrNoSnapshot is wrapped by the error for a snapshot the table does not
// have.
var ErrNoSnapshot = errors.New("no such snapshot")

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
// column of a primitive type, as Java's action does. A name that is not a
// top-level column of a primitive type the sketch takes is an error
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
		switch {
		case f == nil && strings.Contains(n, "."):
			return nil, fmt.Errorf("%w %q: only top-level columns are sketched", ErrColumn, n)
		case f == nil:
			return nil, fmt.Errorf("%w %q: the schema has no such column", ErrColumn, n)
		}
		if _, ok := f.Type.(spec.PrimitiveType); !ok || !supported(f.Type) {
			return nil, fmt.Errorf("%w %q: a %s column has no single-value serialization to sketch", ErrColumn, n, f.Type)
		}
		out = append(out, Column{ID: f.ID, Name: f.Name, Type: f.Type})
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

// Compute sketches cols over the live rows of md's snapshot id.
func Compute(ctx context.Context, fio fileio.FileIO, md *spec.TableMetadata, id int64, cols []Column) (*Result, error) {
	snap, ok := md.SnapshotByID(id)
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrNoSnapshot, id)
	}
	proj := &spec.Schema{ID: Schema(md, snap).ID}
	for _, c := range cols {
		proj.Fields = append(proj.Fields, spec.NestedField{ID: c.ID, Name: c.Name, Type: c.Type})
	}
	sks := make([]*theta.Sketch, len(cols))
	for i := range sks {
		sks[i] = theta.NewDefault()
	}
	res := &Result{SnapshotID: id, SequenceNumber: snap.SequenceNumber, Columns: cols}
	rows, err := scan.Values(ctx, fio, md, snap, scan.Options{Schema: proj}, func(col int, b []byte) {
		sks[col].Update(b)
	})
	if err != nil {
		return nil, err
	}
	res.Rows = rows
	for _, s := range sks {
		res.Sketches = append(res.Sketches, s.Result())
	}
	return res, nil
}
