"""Hive-style directories pyarrow writes, registered in Iceberg by PyIceberg
(tests only; TestPyIcebergHiveDirectories is the other side).

  hive_tool.py serve HOME   answer one JSON command per stdin line with one
                            JSON line on stdout, in one Python process:
    ["build"]               write the source directories under HOME/src and
                            register the tables (below); answers their names
                            and source directories
    ["read", TABLE]         PyIceberg's rows of TABLE: {"rows": [...]}, every
                            value as JSON (dates, decimals, timestamps as
                            strings)
    ["evolve", TABLE]       a new default partition spec (evolve below)
    ["files", TABLE]        each live data file: whether it stores each
                            partition field's source column, whether every
                            value stored gives its partition value, and for
                            identity fields whether the column's metrics
                            (bounds, value and NULL counts) say so

The catalog is "py" of the .pyiceberg.yaml PYICEBERG_HOME names.

The tables (format v2, merge-on-read deletes), the same 300 rows each,
identity-partitioned on eight columns of seven types, two files per
partition directory, one directory __HIVE_DEFAULT_PARTITION__ throughout:

  hive.with_columns   pyarrow wrote the Hive directories with each file
                      holding the partition columns; Table.add_files infers
                      each file's partition from the column's bounds
  hive.add_files      pq.write_to_dataset(partition_cols=...) left the
                      partition columns out of the files; Table.add_files
                      registers them anyway, every partition value NULL:
                      PyIceberg 0.12 takes partition values from the file's
                      metrics only, never from the path, and a file without
                      the (optional) column gets NULL
  hive.path_values    ds.write_dataset(partitioning_flavor="hive") left them
                      out; registered through PyIceberg's lower-level API
                      (parquet_file_to_data_file, the partition values taken
                      from the directory names by pyarrow's HivePartitioning,
                      a fast append): the values live only in the manifests'
                      partition structs (the spec's projection rule 1)

and shapes.two_decimals, which PyIceberg appends to (12 rows), partitioned
by identity on two decimal(10,2) columns.
"""

import datetime
import decimal
import glob
import json
import os
import sys

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyiceberg.catalog import load_catalog
from pyiceberg.conversions import from_bytes
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.manifest import DATA_FILE_TYPE
from pyiceberg.partitioning import PartitionField, PartitionSpec, partition_record_value
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, IdentityTransform, TruncateTransform, YearTransform
from pyiceberg.typedef import Record
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

CATALOG = "py"

# Partition columns: name, Iceberg type, Arrow type.
PARTS = [
    ("p_int", IntegerType(), pa.int32()),
    ("p_long", LongType(), pa.int64()),
    ("p_str", StringType(), pa.string()),
    ("p_date", DateType(), pa.date32()),
    ("p_dec", DecimalType(10, 2), pa.decimal128(10, 2)),
    ("p_bool", BooleanType(), pa.bool_()),
    ("p_ts", TimestampType(), pa.timestamp("us")),
    ("p_double", DoubleType(), pa.float64()),
]

# Row id % 4 picks its partition: three value combinations (reserved and
# non-ASCII characters, dates and times before 1970, negative decimals,
# a fraction of a second) and NULL in every column.
COMBOS = [
    (1, 10**12, "a b=c", datetime.date(2024, 1, 2), decimal.Decimal("1.50"), True,
     datetime.datetime(2024, 6, 3, 2, 2, 2), 2.5),
    (-1, -5, "z/\u00fc%", datetime.date(1969, 12, 31), decimal.Decimal("-2.25"), False,
     datetime.datetime(1969, 12, 31, 23, 59, 59, 123456), -0.5),
    (1, -5, "a b=c", datetime.date(1969, 12, 31), decimal.Decimal("1.50"), False,
     datetime.datetime(2024, 6, 3, 2, 2, 2), -0.5),
    (None,) * len(PARTS),
]

ROWS = 300
TABLES = ("hive.with_columns", "hive.add_files", "hive.path_values")
TWO_DECIMALS = "shapes.two_decimals"
PROPS = {"format-version": "2", "write.delete.mode": "merge-on-read"}


def schema():
    fields = [
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "v", StringType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
    ]
    for i, (name, typ, _) in enumerate(PARTS):
        fields.append(NestedField(4 + i, name, typ, required=False))
    return Schema(*fields)


def spec():
    return PartitionSpec(*[PartitionField(4 + i, 1000 + i, IdentityTransform(), name) for i, (name, _, _) in enumerate(PARTS)])


def batch(first, n):
    ids = list(range(first, first + n))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([None if i % 11 == 0 else "v%d" % i for i in ids], pa.string()),
        "amount": pa.array([None if i % 7 == 0 else i * 0.25 for i in ids], pa.float64()),
    }
    for j, (name, _, typ) in enumerate(PARTS):
        cols[name] = pa.array([COMBOS[i % len(COMBOS)][j] for i in ids], typ)
    return pa.table(cols)


def hive_partitioning():
    """pyarrow's parse of the directory names. It cannot parse a decimal
    (26.0: "constructing scalars of type decimal128(10, 2) from unboxed
    values"): those come as strings, for path_value to convert."""
    return ds.partitioning(pa.schema([(name, pa.string() if pa.types.is_decimal(typ) else typ)
                                      for name, _, typ in PARTS]), flavor="hive")


def path_value(name, v):
    return decimal.Decimal(v) if v is not None and name == "p_dec" else v


def build(home):
    cat = load_catalog(CATALOG)
    cat.create_namespace("hive")
    src = os.path.join(home, "src")
    names = [name for name, _, _ in PARTS]
    halves = [(batch(0, ROWS // 2), "a-{i}.parquet"), (batch(ROWS // 2, ROWS - ROWS // 2), "b-{i}.parquet")]

    # pq.write_to_dataset and ds.write_dataset write the same layout;
    # each wrote one of the tables.
    w2d = os.path.join(src, "write_to_dataset")
    wds = os.path.join(src, "write_dataset")
    for data, template in halves:
        pq.write_to_dataset(data, w2d, partition_cols=names, basename_template=template)
        ds.write_dataset(data, wds, format="parquet", partitioning=names, partitioning_flavor="hive",
                         basename_template=template, existing_data_behavior="overwrite_or_ignore")

    # The same directories, each file holding its partition columns: the
    # rows pyarrow reads back from the directories, partition columns
    # filled from the path by its HivePartitioning.
    withcols = os.path.join(src, "with_columns")
    dataset = ds.dataset(wds, format="parquet", partitioning=hive_partitioning())
    for frag in dataset.get_fragments():
        rel = os.path.relpath(frag.path, wds)
        os.makedirs(os.path.dirname(os.path.join(withcols, rel)), exist_ok=True)
        rows = frag.to_table(schema=dataset.schema)
        rows = rows.set_column(rows.schema.get_field_index("p_dec"), "p_dec", rows["p_dec"].cast(pa.decimal128(10, 2)))
        pq.write_table(rows, os.path.join(withcols, rel))

    def files(root):
        out = sorted(glob.glob(os.path.join(root, "**", "*.parquet"), recursive=True))
        if len(out) != 2 * len(COMBOS):
            raise SystemExit("%s holds %d files, want %d" % (root, len(out), 2 * len(COMBOS)))
        return out

    stored = {}
    for ident, root in zip(TABLES, (withcols, w2d, wds)):
        stored[ident] = sorted(set(pq.read_schema(files(root)[0]).names) & set(names))
    if stored["hive.with_columns"] != sorted(names) or stored["hive.add_files"] or stored["hive.path_values"]:
        raise SystemExit("partition columns stored: %s" % stored)

    for ident in TABLES[:2]:
        t = cat.create_table(ident, schema=schema(), partition_spec=spec(), properties=PROPS)
        t.add_files(files(withcols if ident == "hive.with_columns" else w2d))

    # add_files has no way to take partition values from the path: the
    # same steps by hand, the values from pyarrow's parse of the path.
    # DataFile (a positional Record) has no setter for its partition.
    PARTITION = [f.name for f in DATA_FILE_TYPE[2].fields].index("partition")
    t = cat.create_table("hive.path_values", schema=schema(), partition_spec=spec(), properties=PROPS)
    with t.transaction() as tx:
        tx.set_properties(**{"schema.name-mapping.default": t.schema().name_mapping.model_dump_json()})
        meta = tx.table_metadata
        fields = meta.spec().fields
        with tx.update_snapshot().fast_append() as fa:
            for frag in ds.dataset(wds, format="parquet", partitioning=hive_partitioning()).get_fragments():
                keys = ds.get_partition_keys(frag.partition_expression)  # NULLs are absent
                df = parquet_file_to_data_file(t.io, meta, frag.path)
                df[PARTITION] = Record(*[partition_record_value(f, path_value(f.name, keys.get(f.name)), meta.schema()) for f in fields])
                fa.append_data_file(df)

    # PyIceberg's own writer, two decimal(10,2) partition fields: its
    # manifests define the Avro fixed "decimal_10_2" once for each.
    cat.create_namespace("shapes")
    dec = DecimalType(10, 2)
    t = cat.create_table(TWO_DECIMALS, schema=Schema(NestedField(1, "id", LongType(), required=False),
                                                     NestedField(2, "p_dec", dec, required=False),
                                                     NestedField(3, "q_dec", dec, required=False)),
                         partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p_dec"),
                                                      PartitionField(3, 1001, IdentityTransform(), "q_dec")),
                         properties={"format-version": "2"})
    for first in (0, 6):
        ids = range(first, first + 6)
        t.append(pa.table({
            "id": pa.array(ids, pa.int64()),
            "p_dec": pa.array([[decimal.Decimal("1.50"), decimal.Decimal("-2.25"), None][i % 3] for i in ids], pa.decimal128(10, 2)),
            "q_dec": pa.array([[decimal.Decimal("1.50"), decimal.Decimal("0.01")][i % 2] for i in ids], pa.decimal128(10, 2)),
        }))
        t = cat.load_table(TWO_DECIMALS)

    return {"two_decimals": TWO_DECIMALS, "tables": list(TABLES), "sources": {"hive.with_columns": withcols, "hive.add_files": w2d,
                                                "hive.path_values": wds}}


def read(ident):
    t = load_catalog(CATALOG).load_table(ident)
    return {"rows": t.scan().to_arrow().to_pylist(), "snapshot": t.current_snapshot().snapshot_id}


def files(ident):
    """What each live data file stores of its partition source columns."""
    t = load_catalog(CATALOG).load_table(ident)
    out = []
    for task in t.scan().plan_files():
        f = task.file
        spec_fields = t.specs()[f.spec_id].fields
        path = f.file_path.removeprefix("file://")
        names = set(pq.read_schema(path).names)
        bad = []
        for i, pf in enumerate(spec_fields):
            name = t.schema().find_column_name(pf.source_id)
            typ = t.schema().find_field(pf.source_id).field_type
            want = f.partition[i]
            if name not in names:
                bad.append("%s not stored" % name)
                continue
            fn = pf.transform.transform(typ)
            got = {fn(partition_record_value(pf, v, t.schema()) if v is not None else None)
                   for v in pq.read_table(path, columns=[name])[name].to_pylist()}
            if got != {want}:
                bad.append("%s holds %s, partition %s %r" % (name, sorted(map(repr, got)), pf.name, want))
            if pf.transform != IdentityTransform():
                continue
            # The metrics readers prune on: the bounds are the value, no
            # NULL (all NULL in the NULL partition).
            bounds = [from_bytes(typ, b[pf.source_id]) if pf.source_id in b else None for b in (f.lower_bounds, f.upper_bounds)]
            bounds = [partition_record_value(pf, v, t.schema()) for v in bounds]
            nulls = f.record_count if want is None else 0
            if bounds != [want, want] or f.null_value_counts.get(pf.source_id) != nulls or \
                    f.value_counts.get(pf.source_id) != f.record_count:
                bad.append("%s metrics: bounds %r, %s NULL of %s values (want %r, %d NULL of %d)" % (
                    name, bounds, f.null_value_counts.get(pf.source_id), f.value_counts.get(pf.source_id), want,
                    nulls, f.record_count))
        out.append({"path": f.file_path, "spec": f.spec_id, "rows": f.record_count, "problems": bad})
    return {"files": out}


def evolve(ident):
    """A new default spec: p_bool and p_str's identity fields gone,
    bucket(4, p_str), truncate(10, p_long) and year(p_date) added."""
    t = load_catalog(CATALOG).load_table(ident)
    with t.update_spec() as u:
        u.remove_field("p_bool")
        u.remove_field("p_str")
        u.add_field("p_str", BucketTransform(4), "p_str_bucket")
        u.add_field("p_long", TruncateTransform(10), "p_long_trunc")
        u.add_field("p_date", YearTransform(), "p_date_year")
    return {"spec": load_catalog(CATALOG).load_table(ident).spec().spec_id}


def serve(home):
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd[0] == "build":
                res = build(home)
            elif cmd[0] == "read":
                res = read(cmd[1])
            elif cmd[0] == "evolve":
                res = evolve(cmd[1])
            elif cmd[0] == "files":
                res = files(cmd[1])
            else:
                raise ValueError("unknown command %r" % cmd[0])
        except Exception as e:  # the test prints it
            res = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(res, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"] or len(sys.argv) != 3:
        raise SystemExit("usage: hive_tool.py serve HOME")
    serve(sys.argv[2])
