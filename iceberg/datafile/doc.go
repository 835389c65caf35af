// Package datafile reads and writes the Parquet files of an Iceberg table:
// data files, position-delete files and equality-delete files.
//
// Columns are matched by Iceberg field id, never by name or position, so a
// file written under an older schema reads correctly under a newer one
// (renames, added columns, type promotions). Files written without field ids
// are read only through the table's name mapping.
//
// Reads stream in record batches: memory use is bounded by the row group and
// batch sizes, never by the file size. The package must never guess a column
// it cannot match by id or by mapping, and never return a value that is not
// the stored one or the one Iceberg's inheritance rules define (defaults,
// _pos, row lineage).
//
// A Transcoder rewrites files column by column without Arrow: every
// primitive type but geo, and structs, lists and maps of them (their
// leaves copied with repetition and definition levels). Left to Reader and
// Writer: sorted rewrites (rows must be whole to order), geo, variant and
// unknown columns, and inputs whose nested columns have another layout
// than the output's (see Transcoder).
package datafile
