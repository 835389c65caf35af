// Package theta is the Theta sketch of Apache DataSketches, as far as the
// Puffin blob type apache-datasketches-theta-v1 needs it: an update sketch
// (the library's default QuickSelect family, nominal entries 4096, seed
// 9001, MurmurHash3 x64_128), the union that Iceberg's Spark aggregate
// ends with, and the compact serialization (serial version 3, ordered),
// byte-identical to the Java library's for the same input.
//
// A sketch retains the hashes (MurmurHash3's first half shifted right by
// one) of the distinct values it saw below theta; once it holds more than
// 15/16 of its table (2 x 4096 entries) it keeps the 4096 smallest and
// lowers theta to the next one. The union keeps at most 4096: its result
// is the bottom 4096 hashes of its inputs' union below their smallest
// theta, whatever the order of inputs, so unions of partial results equal
// the result of the whole.
package theta
