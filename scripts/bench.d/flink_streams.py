"""Writes the streamed tables of scripts/bench.d/flink with a real Flink job.

It creates one SQLite catalog database per shape (Iceberg's JDBC catalog,
schema V1, WAL mode as internal/testing/flinkinterop does) under
ROOT/links/SHAPE/catalog.db, then runs internal/testing/flinkinterop's
flink_job.py once, with one stream per shape, so that every table is
written by the same checkpoints: one commit per checkpoint, a data file per
partition per commit, and on upsert tables an equality delete file (and
position deletes or a DV) per commit. Each catalog is named after its
shape, - made _ (Flink wants a name per catalog).

Run as: python3 flink_streams.py --flink DIR --root ROOT --job FLINK_JOB_PY
--checkpoints DIR --log FILE --rows N --rate R --checkpoint-ms MS
SHAPE:KEYS:PARTITIONS:FORMAT_VERSION...
"""

import argparse
import glob
import json
import os
import sqlite3
import subprocess
import sys
import time

DDL = [
    """CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))""",
    """CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255), property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))""",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flink", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--job", required=True, help="flink_job.py")
    ap.add_argument("--checkpoints", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--rate", type=int, required=True)
    ap.add_argument("--checkpoint-ms", type=int, required=True)
    ap.add_argument("shapes", nargs="+")
    a = ap.parse_args()
    streams = []
    for sh in a.shapes:
        name, keys, parts, fv = sh.split(":")
        link = os.path.join(a.root, "links", name)
        os.makedirs(os.path.join(link, "wh"), exist_ok=True)
        db = os.path.join(link, "catalog.db")
        con = sqlite3.connect(db)
        con.execute("PRAGMA journal_mode=WAL")
        for d in DDL:
            con.execute(d)
        con.commit()
        con.close()
        streams.append({"catalog_db": db, "catalog_name": name.replace("-", "_"), "warehouse": os.path.join(link, "wh"),
                        "table": "ns.t", "keys": int(keys), "partitions": int(parts),
                        "format_version": int(fv)})
    chk = a.checkpoints
    os.makedirs(chk, exist_ok=True)
    spec = {"checkpoint_dir": chk, "checkpoint_ms": a.checkpoint_ms, "restore": "", "rows": a.rows,
            "rows_per_second": a.rate, "streams": streams}
    jars = sorted(glob.glob(os.path.join(a.flink, "jars", "*.jar")))
    env = dict(os.environ, HADOOP_CLASSPATH=":".join(jars))
    t0 = time.monotonic()
    with open(a.log, "w") as logf:
        # PyFlink's JVM logs on stdout too: all of it goes to the log.
        r = subprocess.run([os.path.join(a.flink, "bin", "python"), os.path.basename(a.job), json.dumps(spec)],
                           cwd=os.path.dirname(os.path.abspath(a.job)), env=env, stdout=logf, stderr=logf)
    if r.returncode != 0:
        sys.exit(f"flink_streams: the Flink job failed (exit {r.returncode}); see {a.log}")
    for st in streams:
        # Out of WAL mode, so that the database is one file a copy takes
        # whole (leaving WAL mode checkpoints the log into it).
        # The job's JVM may still hold its connections while it exits:
        # wait for them a while (the mode change needs the database alone);
        # a database left in WAL mode is still whole to scripts/bench.d/flink,
        # which copies catalogs with SQLite's backup.
        for attempt in range(24):
            try:
                con = sqlite3.connect(st["catalog_db"], timeout=5)
                con.execute("PRAGMA journal_mode=DELETE")
                con.close()
                break
            except sqlite3.OperationalError as e:
                if attempt == 23:
                    print(f"flink_streams: {st['catalog_db']} left in WAL mode: {e}", file=sys.stderr)
                time.sleep(1)
    print(f"flink_streams: {len(streams)} tables written in {time.monotonic() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
