"""Times Iceberg's Spark procedures for scripts/bench.d/spark.

One Spark session (local[2]) runs every job, so that the session's start-up
is paid and reported once, apart from the procedures. A job is SHAPE:VERB
(SHAPE:VERB:warmup, a call to warm the JVM up, reported as such):
the table copy ROOT/copies/SHAPE.spark.VERB (made by scripts/bench.d/spark,
its data files hard links to ROOT/pristine/SHAPE) is put behind
ROOT/links/SHAPE, the directory every path in the table's metadata goes
through, then one CALL runs (sort and zorder take their order and target
file size from the files order and target in the copy) and only the CALL is timed: wall seconds, and
the JVM's CPU seconds (user + system, from /proc/PID/stat) before and after.
After the call, outside the timing, iceberg-go reads the copy back
(icectl-matrix checksum) and Spark counts its rows.

Each result is one JSON line on --out; the first line is the start-up.

Run as: DIR/bin/python spark_procedures.py --spark DIR --root ROOT
--matrix ICECTL_MATRIX --out FILE SHAPE:VERB..., DIR being what
scripts/install-spark prints.
"""

import argparse
import datetime
import glob
import json
import os
import sqlite3
import subprocess
import sys
import time

# The matrix's tables live in namespace ns, one table per catalog database.
NS = "ns"
TICKS = os.sysconf("SC_CLK_TCK")


def log(*args):
    print("spark_procedures:", *args, file=sys.stderr, flush=True)


def jvm_cpu(pid):
    """User + system CPU seconds of the JVM so far (its every thread: the
    executor's two task threads, the driver, the JIT and the collector)."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces: fields count from after ")".
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def jvm_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return None


def ts(t):
    """A Spark SQL timestamp literal of t (the session's time zone is UTC)."""
    return "TIMESTAMP '" + t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f") + "'"


def call(verb, cat, table, orphan_days, copy):
    t = f"'{NS}.{table}'"
    if verb == "compact":
        # rewrite-all as icectl compact --rewrite-all; the matrix's target of
        # 4 GiB (icectl --target-file-size 4GiB) so that both write one file
        # per partition.
        return (f"CALL {cat}.system.rewrite_data_files(table => {t}, options => map("
                f"'rewrite-all', 'true', 'target-file-size-bytes', '{4 << 30}'))")
    if verb in ("dvmerge", "posdeletes"):
        return (f"CALL {cat}.system.rewrite_position_delete_files(table => {t}, "
                f"options => map('rewrite-all', 'true'))")
    if verb == "expire":
        now = datetime.datetime.now(datetime.timezone.utc)
        return f"CALL {cat}.system.expire_snapshots(table => {t}, older_than => {ts(now)}, retain_last => 1)"
    if verb == "orphan":
        # The planted orphans are older than this; everything the generator
        # wrote is younger (Spark refuses less than a day anyway).
        cut = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=orphan_days)
        return f"CALL {cat}.system.remove_orphan_files(table => {t}, older_than => {ts(cut)})"
    if verb == "rewrite-manifests":
        return f"CALL {cat}.system.rewrite_manifests(table => {t})"
    if verb in ("sort", "zorder"):
        # The order (zorder(a,b) for zorder) and the target file size
        # scripts/bench.d/spark gave icectl, from files in the copy.
        order = open(os.path.join(copy, "order")).read().strip()
        target = open(os.path.join(copy, "target")).read().strip()
        return (f"CALL {cat}.system.rewrite_data_files(table => {t}, strategy => 'sort', sort_order => '{order}', "
                f"options => map('rewrite-all', 'true', 'target-file-size-bytes', '{target}'))")
    raise ValueError(f"unknown verb {verb}")


def relink(root, shape, target):
    link = os.path.join(root, "links", shape)
    tmp = link + ".tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def checksum(matrix, db, cat, table):
    out = subprocess.run([matrix, "checksum", "--catalog-uri", "sqlite:///" + db, "--catalog-name", cat,
                          "--table", f"{NS}.{table}"], check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["rows"], str(d["checksum"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spark", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--matrix", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--orphan-days", type=int, default=7)
    ap.add_argument("jobs", nargs="+")
    a = ap.parse_args()
    jars = sorted(glob.glob(os.path.join(a.spark, "jars", "*.jar")))
    if not any("iceberg-spark-runtime" in j for j in jars):
        raise SystemExit(f"no iceberg-spark-runtime jar in {a.spark}/jars")
    out = open(a.out, "w")

    def emit(doc):
        out.write(json.dumps(doc) + "\n")
        out.flush()

    # Start-up: from importing pyspark to a session that has answered one
    # query (the JVM started, Spark's context and SQL planner loaded).
    t0 = time.monotonic()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icectl-bench-spark")
        .config("spark.jars", ",".join(jars))
        # The JDBC driver must be on the JVM's own class path for
        # DriverManager to find it.
        .config("spark.driver.extraClassPath", ":".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # Enough for the largest shape at scale 1-4 on a 2-core machine
        # shared with others; Spark's default 1g is as much.
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SELECT 1").collect()
    startup = time.monotonic() - t0
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    emit({"startup_s": round(startup, 2), "startup_cpu_s": round(jvm_cpu(pid), 2),
          "spark": spark.version, "jvm_pid": pid})
    log(f"session up in {startup:.1f} s ({jvm_cpu(pid):.1f} CPU-s of the JVM)")

    for n, job in enumerate(a.jobs):
        # SHAPE:VERB, or SHAPE:VERB:warmup for a call that only warms up.
        shape, verb, *warm = job.split(":")
        copy = os.path.join(a.root, "copies", f"{shape}.spark.{verb}")
        db = os.path.join(copy, "catalog.db")
        table = open(os.path.join(copy, "table")).read().strip()
        # A catalog name of its own per copy: a Spark catalog, once
        # registered, keeps its JDBC connections to that database.
        cat = f"c{n}"
        con = sqlite3.connect(db)
        with con:
            for tbl in ("iceberg_tables", "iceberg_namespace_properties"):
                con.execute(f"UPDATE {tbl} SET catalog_name = ?", (cat,))
        con.close()
        prefix = f"spark.sql.catalog.{cat}"
        spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set(prefix + ".type", "jdbc")
        spark.conf.set(prefix + ".uri", "jdbc:sqlite:" + db)
        # V1: the iceberg_tables of iceberg-go and icectl has iceberg_type,
        # so Iceberg reads it as is; never initialize (it would only create
        # tables that exist) and never cache (each copy is read once).
        spark.conf.set(prefix + ".jdbc.schema-version", "V1")
        spark.conf.set(prefix + ".jdbc.init-catalog-tables", "false")
        spark.conf.set(prefix + ".warehouse", "file://" + os.path.join(a.root, "links", shape, "wh"))
        spark.conf.set(prefix + ".cache-enabled", "false")
        relink(a.root, shape, copy)
        q = call(verb, cat, table, a.orphan_days, copy)
        doc = {"shape": shape, "verb": verb, "call": q, "warmup": bool(warm)}
        try:
            # Loading the table is part of what an operator's CALL does; it
            # is timed with it.
            c0, w0 = jvm_cpu(pid), time.monotonic()
            rows = spark.sql(q).collect()
            w1, c1 = time.monotonic(), jvm_cpu(pid)
            doc.update(wall_s=round(w1 - w0, 3), cpu_s=round(c1 - c0, 2))
            if verb == "orphan":
                doc["result"] = {"orphan_files": len(rows)}
            else:
                doc["result"] = {k: v for k, v in rows[0].asDict().items()} if rows else {}
            doc["spark_count"] = spark.sql(f"SELECT count(*) FROM {cat}.{NS}.{table}").collect()[0][0]
            if verb in ("dvmerge", "posdeletes"):
                fmts = spark.sql(f"SELECT file_format, count(*) FROM {cat}.{NS}.{table}.delete_files "
                                 f"GROUP BY file_format").collect()
                doc["delete_files_after"] = {r[0]: r[1] for r in fmts}
        except Exception as e:  # a shape Spark cannot open: say why, go on
            # Py4J's first line only names the call; the Java exception's
            # own message is the first line that names an exception.
            lines = [ln.strip(": \t") for ln in str(e).splitlines()]
            why = [ln for ln in lines if "Exception" in ln or "Error" in ln]
            doc["error"] = (why or lines or ["?"])[0][:400]
        try:
            doc["rows"], doc["checksum"] = checksum(a.matrix, db, cat, table)
        except subprocess.CalledProcessError as e:
            doc["checksum_error"] = e.stderr.strip()[:300]
        emit(doc)
        log(f"{shape} {verb}: {doc.get('wall_s')} s, {doc.get('cpu_s')} CPU-s {doc.get('error', '')}")
    # The JVM is not a child /usr/bin/time waits for: its totals are its own.
    emit({"jvm_peak_rss_mib": jvm_hwm_mib(pid), "jvm_cpu_s": round(jvm_cpu(pid), 2),
          "total_s": round(time.monotonic() - t0, 2)})
    spark.stop()


if __name__ == "__main__":
    main()
