// Package pyinterop tests icectl against PyIceberg, as the users who write
// their tables with it have them: PyIceberg writes a table (appends,
// deletes, a column added, add_files of a Parquet file without field ids),
// icectl maintains it through the catalog a .pyiceberg.yaml names, and
// PyIceberg reads every row back and writes on. Hive-style directories
// pyarrow wrote, registered by PyIceberg with and without the partition
// columns in the files, go through every verb that reads rows
// (hive_test.go, docs/interop.md). It holds tests only (pyiceberg_tool.py
// and hive_tool.py are PyIceberg's side) and must never be imported.
package pyinterop
