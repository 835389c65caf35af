// Package pyinterop tests icectl against PyIceberg, as the users who write
// their tables with it have them: PyIceberg writes a table (appends,
// deletes, a column added, add_files of a Parquet file without field ids),
// icectl maintains it through the catalog a .pyiceberg.yaml names, and
// PyIceberg reads every row back and writes on. It holds tests only
// (pyiceberg_tool.py is PyIceberg's side) and must never be imported.
package pyinterop
