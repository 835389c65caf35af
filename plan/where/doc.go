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
// Selection is at file granularity, as Spark's rewrite_data_files where
// is: a file is selected when it MAY contain a matching row, and a verb
// then rewrites whole files. Two tests decide it, both conservative:
//
//   - the predicate is projected onto each partition field derived from
//     its column, through the field's transform (Java's inclusive
//     projection): identity, truncate and year/month/day/hour project
//     comparisons, bucket only = and IN, void never; a predicate no field
//     can project keeps every partition;
//   - the file's column metrics (lower and upper bounds, value, null and
//     NaN counts) rule it out when no row can match (Java's
//     InclusiveMetricsEvaluator); missing or unreadable metrics keep it.
//
// NOT is pushed down to the predicates when the filter is bound, as Java's
// rewriteNot does; != and NOT IN never rule out a file by its metrics.
// Each file is evaluated against its own partition spec.
package where
