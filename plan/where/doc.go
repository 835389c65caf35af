// Package where parses the --where expression of icectl's maintenance
// commands and evaluates it against data files' partition tuples.
//
// The language is a small SQL subset: comparisons (=, !=, <>, <, <=, >, >=),
// IN (...), NOT IN (...), IS NULL and IS NOT NULL on table columns, joined
// with AND, OR, NOT and parentheses. Literals are integers, decimals,
// 'strings' (” escapes a quote), TRUE/FALSE, DATE 'yyyy-mm-dd' and
// TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.ffffff]'; a bare 'yyyy-mm-dd...' string is
// read as a date or timestamp when compared with such a column.
//
// Evaluation follows Java's inclusive projection (the scan that
// rewrite_data_files runs with ignoreResiduals): a file is selected when its
// partition MAY contain a matching row, so a partition whose rows only partly
// match is selected whole. A predicate that no partition field of a file's
// spec can project (a column that is not partitioned, a range on a bucket
// column, != on a time or truncate column, a void or unknown transform) is an
// error naming the column and the spec: this package must never quietly
// select every file.
package where
