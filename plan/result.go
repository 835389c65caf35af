package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/icectl/icectl/iceberg/table"
)

// Result is a computed plan whose groups' input files are kept as records
// (in a temporary file once they are many) and read back when the plan is
// written: WriteText needs none of them, WriteJSON streams them group by
// group, and Plan builds the whole document. Close releases the records.
type Result struct {
	p       *Plan // without the groups' Inputs
	spans   []span
	spill   *spill
	ix      *deleteIndex
	parts   []table.Partition
	formats []string
	buf     []byte // read buffer, kept from group to group
}

// span is where a group's input files are in the spill.
type span struct {
	start, end int64
	files      int
}

// Summary returns the plan without the groups' input files: everything
// else, totals included, is as in Plan's. It must not be modified.
func (res *Result) Summary() *Plan { return res.p }

// WriteText writes the human summary of the plan (Plan.WriteText).
func (res *Result) WriteText(w io.Writer) error { return res.p.WriteText(w) }

// Close releases the records of the input files.
func (res *Result) Close() error { return res.spill.close() }

// Plan returns the whole plan, every group with its input files.
func (res *Result) Plan() (*Plan, error) {
	p := *res.p
	p.Groups = make([]Group, len(res.p.Groups))
	copy(p.Groups, res.p.Groups)
	var a applicable
	reasons := map[uint8][]string{}
	for i := range p.Groups {
		g := &p.Groups[i]
		g.Inputs = make([]InputFile, 0, g.InputFiles)
		err := res.eachInput(i, func(rec record) error {
			f := InputFile{
				Path:               string(rec.path()),
				FileFormat:         res.formats[rec.format()],
				SizeBytes:          rec.size(),
				RecordCount:        rec.records(),
				DataSequenceNumber: rec.seq(),
			}
			if rec.flags()&flagFileSeq != 0 {
				v := rec.fileSeq()
				f.FileSequenceNumber = &v
			}
			if rec.flags()&flagFirstRowID != 0 {
				v := rec.firstRowID()
				f.FirstRowID = &v
			}
			rs, ok := reasons[rec.reasons()]
			if !ok {
				rs = reasonList(rec.reasons())
				reasons[rec.reasons()] = rs
			}
			f.Reasons = rs
			res.find(&a, rec)
			if a.dv >= 0 {
				ref := deleteRef(res.ix.dels[a.dv].e)
				f.Deletes.DV = &ref
			}
			for _, d := range a.pos {
				f.Deletes.Position = append(f.Deletes.Position, deleteRef(res.ix.dels[d].e))
			}
			for _, d := range a.eq {
				f.Deletes.Equality = append(f.Deletes.Equality, deleteRef(res.ix.dels[d].e))
			}
			g.Inputs = append(g.Inputs, f)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return &p, nil
}

func reasonList(bits uint8) []string {
	var out []string
	for i, name := range reasonNames {
		if bits&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// find fills a with the deletes that apply to the file of rec.
func (res *Result) find(a *applicable, rec record) {
	key := res.parts[rec.part()].Key
	res.ix.find(a, rec.path(), key, res.ix.forPartition(key), rec.seq())
}

// eachInput calls fn with the record of each input file of group i, in
// order.
func (res *Result) eachInput(i int, fn func(record) error) error {
	s := res.spans[i]
	if res.buf == nil {
		res.buf = make([]byte, 64<<10)
	}
	rd := &spillReader{s: res.spill, off: s.start, end: s.end, buf: res.buf}
	defer func() { res.buf = rd.buf }()
	for range s.files {
		rec := rd.next()
		if rec == nil {
			if rd.err != nil {
				return rd.err
			}
			return fmt.Errorf("plan: the input files of group %d are short", i+1)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the plan as JSON, the same bytes as Plan().MarshalJSON,
// group by group: it holds one group's input files at a time at most.
func (res *Result) WriteJSON(w io.Writer) error {
	p := res.p
	e := jsonWriter{w: w, buf: make([]byte, 0, 64<<10)}
	e.raw(`{"format":`)
	e.value(p.Format)
	e.raw(`,"version":`)
	e.int(int64(p.Version))
	e.raw(`,"created_at":`)
	e.value(p.CreatedAt)
	// The table's fields are the document's own, as Plan marshals the
	// embedded TableRef.
	if ref, err := json.Marshal(p.TableRef); err != nil {
		e.err = fmt.Errorf("json: %w", err)
	} else {
		e.raw(",")
		e.raw(string(ref[1 : len(ref)-1]))
	}
	e.raw(`,"branch":`)
	e.value(p.Branch)
	e.raw(`,"base_snapshot":`)
	e.value(p.Base)
	e.raw(`,"options":`)
	e.value(p.Options)
	if p.Sort {
		e.raw(`,"sort":true`)
	}
	if p.SortOrder != "" {
		e.raw(`,"sort_order":`)
		e.value(p.SortOrder)
	}
	if len(p.ZOrder) > 0 {
		e.raw(`,"zorder":`)
		e.value(p.ZOrder)
	}
	e.raw(`,"groups":[`)
	var a applicable
	for i := range p.Groups {
		g := &p.Groups[i]
		if i > 0 {
			e.raw(",")
		}
		e.raw(`{"id":`)
		e.string(g.ID)
		e.raw(`,"index":`)
		e.int(int64(g.Index))
		e.raw(`,"partition_index":`)
		e.int(int64(g.PartitionIndex))
		e.raw(`,"spec_id":`)
		e.int(int64(g.SpecID))
		e.raw(`,"partition":`)
		e.value(g.Partition)
		e.raw(`,"partition_tuple":`)
		e.value(g.PartitionTuple)
		e.raw(`,"inputs":[`)
		n := 0
		err := res.eachInput(i, func(rec record) error {
			if n > 0 {
				e.raw(",")
			}
			n++
			res.find(&a, rec)
			return e.input(res, rec, &a)
		})
		if err != nil {
			return err
		}
		e.raw(`],"input_files":`)
		e.int(int64(g.InputFiles))
		e.raw(`,"input_bytes":`)
		e.int(g.InputBytes)
		e.raw(`,"input_records":`)
		e.int(g.InputRecords)
		e.raw(`,"known_deleted_records":`)
		e.int(g.KnownDeletedRecords)
		e.raw(`,"expected_output_files":`)
		e.int(int64(g.ExpectedOutputFiles))
		e.raw(`,"expected_output_bytes":`)
		e.int(g.ExpectedOutputBytes)
		e.raw(`,"split_size_bytes":`)
		e.int(g.SplitSize)
		e.raw(`,"retire":`)
		e.value(g.Retire)
		e.raw("}")
		if e.err != nil {
			return e.err
		}
	}
	e.raw(`],"retire_after_groups":`)
	e.value(p.RetireAfterGroups)
	if len(p.DanglingDeletes) > 0 {
		e.raw(`,"dangling_deletes":`)
		e.value(p.DanglingDeletes)
	}
	e.raw(`,"totals":`)
	e.value(p.Totals)
	e.raw("}")
	return e.flush()
}

// jsonWriter appends JSON to a buffer and writes it out in large pieces;
// the first error sticks.
type jsonWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *jsonWriter) raw(s string) { e.buf = append(e.buf, s...) }

func (e *jsonWriter) int(v int64) { e.buf = strconv.AppendInt(e.buf, v, 10) }

func (e *jsonWriter) string(s string) { e.buf = appendJSONString(e.buf, s) }

// value writes v as json.Marshal does.
func (e *jsonWriter) value(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("json: %w", err)
		}
		return
	}
	e.buf = append(e.buf, b...)
	e.maybeFlush()
}

func (e *jsonWriter) maybeFlush() {
	if len(e.buf) >= 48<<10 {
		_ = e.flush()
	}
}

func (e *jsonWriter) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
	return e.err
}

// input writes one InputFile.
func (e *jsonWriter) input(res *Result, rec record, a *applicable) error {
	b := e.buf
	b = append(b, `{"path":`...)
	b = appendJSONString(b, rec.path())
	b = append(b, `,"file_format":`...)
	b = appendJSONString(b, res.formats[rec.format()])
	b = append(b, `,"size_bytes":`...)
	b = strconv.AppendInt(b, rec.size(), 10)
	b = append(b, `,"record_count":`...)
	b = strconv.AppendInt(b, rec.records(), 10)
	b = append(b, `,"data_sequence_number":`...)
	b = strconv.AppendInt(b, rec.seq(), 10)
	b = append(b, `,"file_sequence_number":`...)
	if rec.flags()&flagFileSeq != 0 {
		b = strconv.AppendInt(b, rec.fileSeq(), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"first_row_id":`...)
	if rec.flags()&flagFirstRowID != 0 {
		b = strconv.AppendInt(b, rec.firstRowID(), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"reasons":`...)
	if bits := rec.reasons(); bits == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		n := 0
		for i, name := range reasonNames {
			if bits&(1<<i) != 0 {
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = appendJSONString(b, name)
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"deletes":{`...)
	sep := false
	refs := func(key string, ds []int) error {
		if len(ds) == 0 {
			return nil
		}
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, key...)
		b = append(b, '[')
		for i, d := range ds {
			if i > 0 {
				b = append(b, ',')
			}
			j, err := res.ix.refJSON(d)
			if err != nil {
				return err
			}
			b = append(b, j...)
		}
		b = append(b, ']')
		return nil
	}
	if a.dv >= 0 {
		j, err := res.ix.refJSON(a.dv)
		if err != nil {
			return err
		}
		b = append(b, `"dv":`...)
		b = append(b, j...)
		sep = true
	}
	if err := refs(`"position":`, a.pos); err != nil {
		return err
	}
	if err := refs(`"equality":`, a.eq); err != nil {
		return err
	}
	b = append(b, "}}"...)
	e.buf = b
	e.maybeFlush()
	return e.err
}

// appendJSONString appends s as encoding/json writes a string: HTML
// characters, control characters, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by U+FFFD.
func appendJSONString[S []byte | string](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		c, size := utf8.DecodeRuneInString(string(s[i : i+n]))
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe marks the ASCII bytes encoding/json copies as they are (with
// HTML escaping, its default).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()
