// Package interop checks that files written by icectl are read identically
// by an independent Iceberg implementation, iceberg-go. It is a separate
// module so that iceberg-go is never linked into the icectl binary.
package interop
