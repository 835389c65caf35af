// Package flinkinterop tests icectl's maintenance of tables a real Flink
// job writes while it writes: PyFlink on a local mini-cluster with
// Iceberg's Flink sink (flink_job.py, from what scripts/install-flink
// installs, $ICECTL_TEST_FLINK) streams into tables of SQLite catalogs,
// an append stream and upsert streams (identifier field id, equality
// deletes) on v2 and v3, from a deterministic sequence whose every prefix
// the tests can model. icectl's maintain runs beside the job, the job is
// killed mid-checkpoint and restored from its last checkpoint, and every
// table read (icectl's reader, iceberg-go, Spark when $ICECTL_TEST_SPARK
// is set) must equal the model: no key duplicated, none lost, no update
// lost; a control table whose expiry drops Flink's commit must fail it.
//
// The package has no non-test code and must never grow any: it is not
// part of the product.
package flinkinterop
