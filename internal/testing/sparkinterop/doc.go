// Package sparkinterop tests icectl against the reference implementation,
// Apache Iceberg's Java library, through Spark: every table of a corpus
// Spark writes (iceberg_spark.py: formats v1-v3, position deletes and
// deletion vectors, schema and partition evolution, a sort order, files
// imported without field ids) is maintained by the icectl binary, verb by
// verb, and read by Spark after each verb that commits (rewrite-manifests,
// expire and orphan, which write no data or delete file, once after the
// three), which must see the same rows (and on v3 the same row lineage),
// and by iceberg-go after every verb; then Spark writes on the maintained
// table and must get what the same writes make of the table as Spark left
// it. Hive-format tables Spark brought into Iceberg (add_files, snapshot,
// migrate), whose files hold no identity partition column, are walked
// apart (hive_test.go): every partition value must count as many rows
// after each verb, and iceberg-go, PyIceberg and DuckDB read the values
// Spark reads. A table Spark creates in the Hive Metastore
// ($ICECTL_TEST_HMS_URI) is maintained by icectl through the metastore and
// raced by Spark's appends (hms_test.go).
//
// What Spark's own procedures make of a pristine corpus table, and its
// reads of one, are kept beside the corpus from run to run
// (reference_test.go), as the corpus keeps Spark's writes.
//
// Spark runs in two Python processes per test binary (iceberg_spark.py
// serve, one Spark session each; a request goes to whichever is free),
// from what scripts/install-spark installs ($ICECTL_TEST_SPARK).
// The package has no non-test code and must never grow any: it is not
// part of the product.
package sparkinterop
