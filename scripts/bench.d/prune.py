"""Counts the data files a range predicate lets a reader skip, for
scripts/bench.d/spark's sort and zorder runs (the pruning gain of a sorted
or z-ordered rewrite).

The table's current snapshot is read through icectl's own decoders
(`icectl inspect metadata` and `inspect manifest`, JSON): a live data file
is skippable for a predicate `lo <= col < hi` (each term of a conjunction)
when its column bounds in the manifest lie wholly outside the range, or
the column is null in every row. A file without bounds for the column is
read. Prints one JSON object: files, rows, and for each predicate the
files skippable and the rows left to read.

Run as: python3 prune.py --icectl BIN --db CATALOG.db --table NS.T
NAME=COL:LO:HI[,COL:LO:HI]...
"""

import argparse
import json
import sqlite3
import subprocess


def inspect(icectl, kind, path):
    out = subprocess.run([icectl, "inspect", kind, path, "--output", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def local(path):
    return path[len("file:"):] if path.startswith("file:") else path


def live_data_files(icectl, db, table):
    ns, name = table.rsplit(".", 1)
    con = sqlite3.connect(db)
    try:
        (loc,) = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
                             (ns, name)).fetchone()
    finally:
        con.close()
    md = inspect(icectl, "metadata", local(loc))
    snap = next(s for s in md["snapshots"] if s["snapshot_id"] == md["current_snapshot_id"])
    files = []
    for m in inspect(icectl, "manifest", local(snap["manifest_list"]))["entries"]:
        if m["content"] != "data":
            continue
        for e in inspect(icectl, "manifest", local(m["manifest_path"]))["entries"]:
            if e["status"] != "deleted":
                files.append(e["data_file"])
    return files


def skippable(df, terms):
    cols = {c["name"]: c for c in df["columns"] if c.get("name")}
    for col, lo, hi in terms:
        c = cols.get(col)
        if c is None:
            continue
        if c["value_count"] is not None and c["value_count"] == c["null_value_count"]:
            return True
        lower, upper = c["lower_bound"], c["upper_bound"]
        if lower is None or upper is None:
            continue
        if upper < lo or lower >= hi:
            return True
    return False


def parse_pred(s):
    name, _, body = s.partition("=")
    terms = []
    for t in body.split(","):
        col, lo, hi = t.split(":")
        terms.append((col, float(lo), float(hi)))
    return name, terms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icectl", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("preds", nargs="+", type=parse_pred)
    a = ap.parse_args()
    files = live_data_files(a.icectl, a.db, a.table)
    doc = {"files": len(files), "rows": sum(f["record_count"] for f in files), "predicates": {}}
    for name, terms in a.preds:
        skip = [f for f in files if skippable(f, terms)]
        doc["predicates"][name] = {"skippable": len(skip),
                                   "rows_to_read": doc["rows"] - sum(f["record_count"] for f in skip)}
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
