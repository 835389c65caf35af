// Reads a Parquet file with DuckDB and prints its rows and the field ids of
// its schema as JSON, so Go tests can check our writer against an
// independent reader. Usage: node duckdb_read.mjs FILE
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const lit = "'" + file.replaceAll("'", "''") + "'";

const rows = await conn.runAndReadAll(`SELECT * FROM read_parquet(${lit})`);
const schema = await conn.runAndReadAll(
  `SELECT name, field_id, type, logical_type FROM parquet_schema(${lit})`);

const plain = (v) => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object') {
    if (Array.isArray(v.items)) return v.items.map(plain); // LIST
    if (v.entries && typeof v.entries === 'object' && !Array.isArray(v.entries)) {
      return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, plain(x)])); // STRUCT
    }
    if ('toString' in v && v.constructor && v.constructor.name !== 'Object') return v.toString();
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
};

process.stdout.write(JSON.stringify({
  columns: rows.columnNames(),
  rows: rows.getRows().map((r) => r.map(plain)),
  schema: schema.getRowObjects().map(plain),
}));
