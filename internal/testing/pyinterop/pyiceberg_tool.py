"""PyIceberg as a writer and reader of tables icectl maintains (tests only).

Every command loads its catalog the way a PyIceberg user's code does:
load_catalog(NAME) with the .pyiceberg.yaml found through PYICEBERG_HOME.
Output is one JSON document on stdout.

  serve                          answer one command per stdin line (a JSON
                                 array: ["read", TABLE], ...) with one JSON
                                 line on stdout, {"error": ...} when it
                                 failed, in one Python process: the tests'
                                 form, which pays pyarrow's and PyIceberg's
                                 imports once, not once a command. Each
                                 command still loads the catalog afresh and
                                 disposes of its connections after.
                                 PyIceberg reads .pyiceberg.yaml when it is
                                 imported: start it once the file is final.

  write TABLE VERSION PLAIN_DIR  create TABLE (format VERSION) and give it
                                 a history: appends, a copy-on-write delete,
                                 a column added, add_files of a Parquet file
                                 written without field ids (so the table
                                 gets a name mapping); PLAIN_DIR "-"
                                 skips add_files
  append TABLE FIRST N [BRANCH]  append N rows with ids FIRST..FIRST+N-1
                                 (to BRANCH, main by default)
  delete TABLE MOD               delete the rows whose id % MOD == 0
  branch TABLE NAME              create branch NAME at main's head
  register TABLE METADATA        register_table, then read it
  read TABLE [REF]               {"rows": n, "checksum": hex, "ids": [...],
                                 "snapshot": id}: the checksum is over every
                                 column of every row, independent of row
                                 order; REF is a branch or tag (main)
"""

import hashlib
import json
import os
import sys
import traceback

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import EqualTo, In
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

CATALOG = os.environ.get("ICECTL_PYICEBERG_CATALOG", "py")

# The catalogs the current command loaded, closed after it (serve).
_loaded = []


def catalog():
    cat = load_catalog(CATALOG)
    _loaded.append(cat)
    return cat


def close_catalogs():
    """Release what a command's catalogs hold (SQLite connections), as the
    end of a one-shot process does."""
    while _loaded:
        _loaded.pop().close()


def schema():
    return Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
        NestedField(4, "tags", ListType(7, StringType(), element_required=False), required=False),
        NestedField(
            5,
            "addr",
            StructType(
                NestedField(8, "city", StringType(), required=False),
                NestedField(9, "zip", IntegerType(), required=False),
            ),
            required=False,
        ),
    )


def rows(first, n, with_note=False):
    ids = list(range(first, first + n))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([None if i % 11 == 0 else "n%d" % i for i in ids], pa.string()),
        "amount": pa.array([i * 1.5 if i % 5 else None for i in ids], pa.float64()),
        "tags": pa.array([["t%d" % (i % 3)] * (i % 4) if i % 9 else None for i in ids], pa.list_(pa.string())),
        "addr": pa.array(
            [{"city": "c%d" % (i % 7), "zip": 1000 + i} if i % 13 else None for i in ids],
            pa.struct([("city", pa.string()), ("zip", pa.int32())]),
        ),
    }
    if with_note:
        cols["note"] = pa.array(["note %d" % i for i in ids], pa.string())
    return cols


def arrow_for(table, cols):
    target = table.schema().as_arrow()
    return pa.table({f.name: cols.get(f.name, pa.nulls(len(cols["id"]), f.type)) for f in target}, schema=target)


def write(ident, version, plain_dir):
    cat = catalog()
    ns = ident.split(".")[0]
    if ns not in [n[0] for n in cat.list_namespaces()]:
        cat.create_namespace(ns)
    t = cat.create_table(ident, schema=schema(), properties={"format-version": str(version)})
    for first in (0, 100, 200):
        t.append(arrow_for(t, rows(first, 100)))
        t = cat.load_table(ident)
    t.delete(EqualTo("id", 150))
    t = cat.load_table(ident)
    with t.update_schema() as u:
        u.add_column("note", StringType())
    t = cat.load_table(ident)
    t.append(arrow_for(t, rows(300, 50, with_note=True)))
    t = cat.load_table(ident)
    if plain_dir == "-":
        return {"snapshot": t.current_snapshot().snapshot_id, "format_version": t.format_version}
    # A file as another tool wrote it: no field ids, columns in another
    # order; add_files finds them through the name mapping it sets.
    cols = rows(400, 30, with_note=True)
    plain = pa.table({k: cols[k] for k in ("note", "name", "id", "amount", "tags", "addr")})
    os.makedirs(plain_dir, exist_ok=True)
    path = os.path.join(plain_dir, "plain-400.parquet")
    pq.write_table(plain, path)
    if any(f.metadata and b"PARQUET:field_id" in f.metadata for f in pq.read_schema(path)):
        raise SystemExit("the plain file has field ids")
    t.add_files([path])
    t = cat.load_table(ident)
    return {"snapshot": t.current_snapshot().snapshot_id, "format_version": t.format_version}


def append(ident, first, n, branch="main"):
    cat = catalog()
    t = cat.load_table(ident)
    t.append(arrow_for(t, rows(first, n, with_note=True)), branch=branch)
    return {"snapshot": cat.load_table(ident).snapshot_by_name(branch).snapshot_id}


def branch(ident, name):
    cat = catalog()
    t = cat.load_table(ident)
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, name).commit()
    return {"snapshot": t.current_snapshot().snapshot_id}


def register(ident, metadata):
    cat = catalog()
    cat.register_table(ident, metadata)
    return read(ident)


def delete(ident, mod):
    cat = catalog()
    t = cat.load_table(ident)
    ids = t.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    doomed = [i for i in ids if i is not None and i % mod == 0]
    # One copy-on-write delete of them all: a delete per row (38 commits,
    # each rewriting a file) cost 7 CPU-seconds and showed nothing more.
    if doomed:
        t.delete(In("id", doomed))
    return {"deleted": len(doomed)}


def canonical(v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [canonical(x) for x in v]
    return v


def read(ident, ref="main"):
    cat = catalog()
    t = cat.load_table(ident)
    snap = t.snapshot_by_name(ref)
    data = t.scan(snapshot_id=snap.snapshot_id).to_arrow()
    lines = sorted(json.dumps(canonical(r), sort_keys=True, default=str) for r in data.to_pylist())
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    ids = sorted(r["id"] for r in data.select(["id"]).to_pylist())
    return {"rows": len(lines), "checksum": h.hexdigest(), "ids": ids, "columns": data.column_names,
            "snapshot": snap.snapshot_id}


def run(cmd, args):
    if cmd == "write":
        return write(args[0], int(args[1]), args[2])
    if cmd == "append":
        return append(args[0], int(args[1]), int(args[2]), *args[3:])
    if cmd == "delete":
        return delete(args[0], int(args[1]))
    if cmd == "branch":
        return branch(args[0], args[1])
    if cmd == "register":
        return register(args[0], args[1])
    if cmd == "read":
        return read(*args)
    raise SystemExit("unknown command %r" % cmd)


def serve():
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            res = run(cmd[0], cmd[1:])
        except (Exception, SystemExit):  # the test prints it
            res = {"error": traceback.format_exc()}
        finally:
            close_catalogs()
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


def main(argv):
    if argv[1] == "serve":
        serve()
    else:
        print(json.dumps(run(argv[1], argv[2:])))


if __name__ == "__main__":
    main(sys.argv)
