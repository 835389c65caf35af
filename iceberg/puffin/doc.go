// Package puffin reads and writes Puffin files and the deletion-vector-v1
// blobs they carry.
//
// Puffin files hold deletion vectors and table statistics. A deletion
// vector that decodes wrong silently resurrects or hides rows, so this
// package validates every byte it reads (sizes, offsets, magic numbers,
// checksums, Roaring container headers) and writes exactly the bytes Java
// Iceberg writes. It must never panic or allocate without bound on
// malformed input, and never accept a file it cannot fully account for.
package puffin
