package puffin

import "errors"

// Errors returned (wrapped) when a deletion vector blob is malformed.
// Callers can tell a checksum failure from a truncated read or a DV that
// does not match its manifest entry.
var (
	ErrDVBadCRC       = errors.New("deletion vector CRC mismatch")
	ErrDVBadMagic     = errors.New("deletion vector magic mismatch")
	ErrDVCardinality  = errors.New("deletion vector cardinality mismatch")
	ErrDVKeyTooLarge  = errors.New("deletion vector bucket key too large")
	ErrDVKeyOrder     = errors.New("deletion vector bucket keys not strictly ascending")
	ErrDVTruncated    = errors.New("deletion vector truncated")
	ErrDVTrailingData = errors.New("deletion vector has trailing data")
	ErrDVLength       = errors.New("deletion vector length field invalid")
	ErrDVCorrupt      = errors.New("deletion vector bitmap corrupt")
)
