package manifest

import (
	"errors"
	"fmt"
	"io"

	"github.com/hamba/avro/v2"
	"github.com/icectl/icectl/iceberg/spec"
)

// This file compiles a manifest's writer schema into the steps an
// EntryScanner runs per entry: each reads one field of the block in place
// (dec), keeping only what SlimEntry holds and skipping the rest.

// dec reads Avro binary values from one decompressed block.
type dec struct {
	b   []byte
	i   int
	err error
}

var errVarint = errors.New("varint overflows a long")

func (d *dec) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.i = len(d.b)
}

func (d *dec) long() int64 {
	if d.i < len(d.b) && d.b[d.i] < 0x80 {
		u := uint64(d.b[d.i])
		d.i++
		return int64(u>>1) ^ -int64(u&1)
	}
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			d.fail(errVarint)
			return 0
		}
		if d.i >= len(d.b) {
			d.fail(io.ErrUnexpectedEOF)
			return 0
		}
		c := d.b[d.i]
		d.i++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1)
}

func (d *dec) int() int32 {
	v := d.long()
	if v != int64(int32(v)) {
		d.fail(errors.New("int value out of range"))
		return 0
	}
	return int32(v)
}

// bytes returns the next bytes or string value, aliasing the block.
func (d *dec) bytes() []byte {
	n := d.long()
	if d.err != nil {
		return nil
	}
	if n < 0 || n > maxBytesValue {
		d.fail(fmt.Errorf("invalid bytes length %d", n))
		return nil
	}
	if int64(len(d.b)-d.i) < n {
		d.fail(io.ErrUnexpectedEOF)
		return nil
	}
	b := d.b[d.i : d.i+int(n) : d.i+int(n)]
	d.i += int(n)
	return b
}

func (d *dec) skip(n int64) {
	if n < 0 || int64(len(d.b)-d.i) < n {
		d.fail(io.ErrUnexpectedEOF)
		return
	}
	d.i += int(n)
}

// scanStep decodes one field of an entry.
type scanStep func(d *dec, e *SlimEntry)

// optReader reads one possibly-null value; ok is false for null.
type optReader[T any] func(d *dec) (v T, ok bool)

// scanNullable is nullable for the scanner's decoder.
func scanNullable[T any](s avro.Schema, base func(avro.Schema) (func(*dec) T, error)) (optReader[T], error) {
	inner, nullIdx, valIdx, err := optional(s)
	if err != nil {
		return nil, err
	}
	badBranch := errors.New("union branch index out of range")
	if inner.Type() == avro.Null {
		return func(d *dec) (T, bool) {
			var zero T
			if nullIdx >= 0 || valIdx >= 0 {
				if d.long() != 0 {
					d.fail(badBranch)
				}
			}
			return zero, false
		}, nil
	}
	f, err := base(inner)
	if err != nil {
		return nil, err
	}
	if nullIdx < 0 && valIdx < 0 {
		return func(d *dec) (T, bool) { return f(d), true }, nil
	}
	if nullIdx < 0 {
		return func(d *dec) (T, bool) {
			var zero T
			if d.long() != 0 {
				d.fail(badBranch)
				return zero, false
			}
			return f(d), true
		}, nil
	}
	n, v := int64(nullIdx), int64(valIdx)
	return func(d *dec) (T, bool) {
		var zero T
		switch d.long() {
		case n:
			return zero, false
		case v:
			return f(d), true
		}
		d.fail(badBranch)
		return zero, false
	}, nil
}

func scanLong(s avro.Schema) (func(*dec) int64, error) {
	switch s.Type() {
	case avro.Long:
		return (*dec).long, nil
	case avro.Int:
		return func(d *dec) int64 { return int64(d.int()) }, nil
	}
	return nil, typeErr(s, "long")
}

// scanInt is intBase for the scanner: a long is read where it fits (dec.int
// checks the range).
func scanInt(s avro.Schema) (func(*dec) int32, error) {
	switch s.Type() {
	case avro.Int, avro.Long:
		return (*dec).int, nil
	}
	return nil, typeErr(s, "int")
}

// scanPresent is unionPrefix for the scanner.
func scanPresent(s avro.Schema) (avro.Schema, func(*dec) bool, error) {
	inner, nullIdx, valIdx, err := optional(s)
	if err != nil {
		return nil, nil, err
	}
	if nullIdx < 0 && valIdx < 0 {
		return inner, func(*dec) bool { return true }, nil
	}
	if inner.Type() == avro.Null {
		return nil, nil, errors.New("is always null")
	}
	n, v := int64(nullIdx), int64(valIdx)
	return inner, func(d *dec) bool {
		switch d.long() {
		case v:
			return true
		case n:
			if nullIdx >= 0 {
				return false
			}
		}
		d.fail(errors.New("union branch index out of range"))
		return false
	}, nil
}

func scanBytes(s avro.Schema) (func(*dec) []byte, error) {
	switch s.Type() {
	case avro.String, avro.Bytes:
		return (*dec).bytes, nil
	}
	return nil, typeErr(s, "string")
}

// internFormat returns the usual file formats as constants.
func internFormat(b []byte) string {
	switch string(b) {
	case "PARQUET":
		return "PARQUET"
	case "AVRO":
		return "AVRO"
	case "ORC":
		return "ORC"
	case "PUFFIN":
		return "PUFFIN"
	}
	return string(b)
}

// compileEntry builds the steps of the manifest_entry record root, and
// p.partition, the decoder of partition tuples.
func compileEntry(root *avro.RecordSchema, p *scanProgram) ([]scanStep, error) {
	var steps []scanStep
	for _, f := range root.Fields() {
		id, ok := fieldID(f)
		if !ok {
			id, ok = entryFieldNames[f.Name()]
		}
		var st scanStep
		var err error
		if ok {
			switch id {
			case 0:
				st, err = scanField(f.Type(), scanInt, func(e *SlimEntry, v int32) { e.Status = EntryStatus(v) })
			case 3:
				st, err = scanField(f.Type(), scanLong, func(e *SlimEntry, v int64) { e.SequenceNumber, e.HasSequenceNumber = v, true })
			case 4:
				st, err = scanField(f.Type(), scanLong, func(e *SlimEntry, v int64) { e.FileSequenceNumber, e.HasFileSequenceNumber = v, true })
			case 2:
				st, err = compileDataFile(f.Type(), p)
			}
			if err != nil {
				return nil, fmt.Errorf("manifest_entry field %s (id %d): %w", f.Name(), id, err)
			}
		}
		if st == nil {
			if st, err = skipStep(f.Type()); err != nil {
				return nil, fmt.Errorf("manifest_entry field %s: %w", f.Name(), err)
			}
		}
		steps = append(steps, st)
	}
	if p.partition == nil {
		return nil, errors.New("data_file has no partition")
	}
	return steps, nil
}

func compileDataFile(t avro.Schema, p *scanProgram) (scanStep, error) {
	inner, present, err := scanPresent(t)
	if err != nil {
		return nil, err
	}
	rec, ok := inner.(*avro.RecordSchema)
	if !ok {
		return nil, typeErr(inner, "data_file record")
	}
	types := make([]spec.Type, len(p.meta.Spec.Fields))
	if p.meta.Schema != nil {
		for i, f := range p.meta.Spec.PartitionType(p.meta.Schema).Fields {
			types[i] = f.Type
		}
	}
	var steps []scanStep
	for _, f := range rec.Fields() {
		id, ok := fieldID(f)
		if !ok {
			id, ok = dataFileFieldNames[f.Name()]
		}
		var st scanStep
		var err error
		if ok {
			ft := f.Type()
			switch id {
			case 134:
				st, err = scanField(ft, scanInt, func(e *SlimEntry, v int32) { e.Content = FileContent(v) })
			case 100:
				st, err = scanField(ft, scanBytes, func(e *SlimEntry, v []byte) { e.Path = v })
			case 101:
				st, err = scanField(ft, scanBytes, func(e *SlimEntry, v []byte) { e.Format = internFormat(v) })
			case 103:
				st, err = scanField(ft, scanLong, func(e *SlimEntry, v int64) { e.RecordCount = v })
			case 104:
				st, err = scanField(ft, scanLong, func(e *SlimEntry, v int64) { e.FileSizeInBytes = v })
			case 142:
				st, err = scanField(ft, scanLong, func(e *SlimEntry, v int64) { e.FirstRowID, e.HasFirstRowID = v, true })
			case 102:
				// The tuple is kept as bytes; the full decoder turns them
				// into values once per distinct partition.
				pd, derr := dataFileField(102, f, p.meta.Spec.Fields, types, readOptions{})
				if derr != nil {
					return nil, derr
				}
				p.partition = pd
				sk, serr := scanSkipper(ft, nil)
				if serr != nil {
					return nil, serr
				}
				st = func(d *dec, e *SlimEntry) {
					start := d.i
					sk(d)
					if d.err == nil {
						e.Partition = d.b[start:d.i:d.i]
					}
				}
			}
			if err != nil {
				return nil, fmt.Errorf("data_file field %s (id %d): %w", f.Name(), id, err)
			}
		}
		if st == nil {
			if st, err = skipStep(f.Type()); err != nil {
				return nil, fmt.Errorf("data_file field %s: %w", f.Name(), err)
			}
		}
		steps = append(steps, st)
	}
	return func(d *dec, e *SlimEntry) {
		if !present(d) {
			d.fail(errors.New("data_file is null"))
			return
		}
		for _, st := range steps {
			st(d, e)
		}
	}, nil
}

func scanField[T any](t avro.Schema, base func(avro.Schema) (func(*dec) T, error), assign func(*SlimEntry, T)) (scanStep, error) {
	rd, err := scanNullable(t, base)
	if err != nil {
		return nil, err
	}
	return func(d *dec, e *SlimEntry) {
		if v, ok := rd(d); ok {
			assign(e, v)
		}
	}, nil
}

func skipStep(t avro.Schema) (scanStep, error) {
	sk, err := scanSkipper(t, nil)
	if err != nil {
		return nil, err
	}
	return func(d *dec, _ *SlimEntry) { sk(d) }, nil
}

// scanBlockItems runs fn for every item of an Avro array or map. A block
// with a byte size is skipped whole when skip is set.
func scanBlockItems(d *dec, skip bool, fn func()) {
	for d.err == nil {
		n := d.long()
		if d.err != nil || n == 0 {
			return
		}
		if n < 0 {
			size := d.long()
			if skip && d.err == nil {
				d.skip(size)
				continue
			}
			n = -n
		}
		for i := int64(0); i < n && d.err == nil; i++ {
			fn()
		}
	}
}

// scanSkipper is skipper for the scanner's decoder.
func scanSkipper(s avro.Schema, stack []string) (func(*dec), error) {
	if len(stack) > 64 {
		return nil, fmt.Errorf("avro schema nests too deeply")
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		name := ref.Schema().(avro.NamedSchema).FullName()
		for _, n := range stack {
			if n == name {
				return nil, fmt.Errorf("recursive avro type %s is not supported", name)
			}
		}
		return scanSkipper(ref.Schema(), stack)
	}
	if s.Type() == avro.Null {
		return func(*dec) {}, nil
	}
	switch t := s.(type) {
	case *avro.PrimitiveSchema:
		switch t.Type() {
		case avro.Boolean:
			return func(d *dec) { d.skip(1) }, nil
		case avro.Int, avro.Long:
			return func(d *dec) { d.long() }, nil
		case avro.Float:
			return func(d *dec) { d.skip(4) }, nil
		case avro.Double:
			return func(d *dec) { d.skip(8) }, nil
		case avro.String, avro.Bytes:
			return func(d *dec) { d.bytes() }, nil
		}
	case *avro.FixedSchema:
		n := t.Size()
		if n < 0 || n > maxBytesValue {
			return nil, fmt.Errorf("fixed %s of %d bytes is too large", t.FullName(), n)
		}
		return func(d *dec) { d.skip(int64(n)) }, nil
	case *avro.EnumSchema:
		return func(d *dec) { d.long() }, nil
	case *avro.RecordSchema:
		stack = append(stack, t.FullName())
		fs := make([]func(*dec), 0, len(t.Fields()))
		for _, f := range t.Fields() {
			sk, err := scanSkipper(f.Type(), stack)
			if err != nil {
				return nil, err
			}
			fs = append(fs, sk)
		}
		return func(d *dec) {
			for _, f := range fs {
				f(d)
			}
		}, nil
	case *avro.ArraySchema:
		if zeroWidth(t.Items(), 0) {
			return nil, fmt.Errorf("arrays of zero-width items are not supported")
		}
		el, err := scanSkipper(t.Items(), stack)
		if err != nil {
			return nil, err
		}
		return func(d *dec) { scanBlockItems(d, true, func() { el(d) }) }, nil
	case *avro.MapSchema:
		val, err := scanSkipper(t.Values(), stack)
		if err != nil {
			return nil, err
		}
		return func(d *dec) { scanBlockItems(d, true, func() { d.bytes(); val(d) }) }, nil
	case *avro.UnionSchema:
		types := t.Types()
		branches := make([]func(*dec), len(types))
		for i, b := range types {
			sk, err := scanSkipper(b, stack)
			if err != nil {
				return nil, err
			}
			branches[i] = sk
		}
		return func(d *dec) {
			i := d.long()
			if i < 0 || i >= int64(len(branches)) {
				d.fail(errors.New("union branch index out of range"))
				return
			}
			branches[i](d)
		}, nil
	}
	return nil, fmt.Errorf("unsupported avro type %s", s.Type())
}
