// Package filecat is the file (Hadoop layout) catalog: a warehouse
// directory where namespaces are directories and a table is a directory
// holding metadata/vN.metadata.json files and metadata/version-hint.text.
//
// A commit claims version N+1 by creating vN+1.metadata.json exclusively
// (a hard link of a fully written temporary file, which fails when the name
// exists), then rewrites version-hint.text. That claim is atomic only on a
// local (POSIX) file system, so the catalog accepts local warehouses only:
// on object stores such as S3 two writers could both "create" the same
// version and one commit would be silently lost.
//
// OpenMetadataFile opens any metadata file, anywhere, for inspection; such
// a table can never be committed.
//
// Open creates nothing (a missing warehouse is an error, so reading never
// runs mkdir); Create makes the warehouse directory.
//
// The package must never overwrite an existing metadata version.
package filecat
