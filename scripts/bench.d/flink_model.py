"""Checks a streamed table of scripts/bench.d/flink against its generator.

flink_job.py (internal/testing/flinkinterop) writes the sequence
seq = 0..rows-1: an append stream the row (id = seq, v = seq, s = 'v' || seq),
an upsert stream with K keys the row (id = seq % K, ...) over the key's last
one, so the finished table holds, for every key k, the row of the largest
seq below rows with seq % K = k; with P partitions every row has p = id % P.
The table is read by the iceberg-go reader (iceberg-read scan: every
position, equality delete and DV applied by iceberg-go, not by icectl) and
must equal that model row for row. Prints one JSON line: rows read, ok,
and the first difference.

Run as: python3 flink_model.py --reader iceberg-read --db DB --catalog C
--rows N --keys K --partitions P
"""

import argparse
import json
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reader", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--keys", type=int, required=True)
    ap.add_argument("--partitions", type=int, required=True)
    a = ap.parse_args()
    out = subprocess.run([a.reader, "scan", "--catalog-uri", "sqlite:///" + a.db, "--catalog-name", a.catalog,
                          "--table", "ns.t"], check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["rows"]
    want = {}
    if a.keys > 0:
        for k in range(min(a.keys, a.rows)):
            last = k + ((a.rows - 1 - k) // a.keys) * a.keys
            want[k] = last
    else:
        want = {i: i for i in range(a.rows)}
    err = None
    seen = set()
    for r in rows:
        i, v = r.get("id"), r.get("v")
        if i in seen:
            err = f"key {i} twice"
            break
        seen.add(i)
        if want.get(i) != v or r.get("s") != f"v{v}":
            err = f"row {r}: want v={want.get(i)}"
            break
        if a.partitions > 0 and r.get("p") != i % a.partitions:
            err = f"row {r}: want p={i % a.partitions}"
            break
    if err is None and len(seen) != len(want):
        err = f"{len(seen)} keys, want {len(want)}"
    print(json.dumps({"rows": len(rows), "ok": err is None, "error": err}))


if __name__ == "__main__":
    main()
