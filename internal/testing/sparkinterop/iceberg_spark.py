"""Apache Iceberg's Java implementation, through Spark, as icectl's tests use it.

One Spark session (local[2]) per process; a test binary runs two `serve`
processes, sending each request to a free one. `serve` reads one
JSON request per line on stdin and answers one JSON line on stdout,
{"id": N, "result": {...}} or {"id": N, "error": "..."}. The requests:

  corpus    {"root": DIR}
      The corpus of tables Spark writes (build_* below), under
      DIR/HASH/, HASH being that of this file and the Spark and Iceberg
      versions: built on the first request, reused by later ones (and
      later runs) as long as this file is unchanged. Answers the corpus
      directory and its tables: name, format version, features, and the
      reads of its pristine state and after the writes of `write`; and
      apart (hive_tables) the Hive-format tables brought into Iceberg
      (build_hive), with their pristine reads.
  checkout  {"corpus": DIR, "table": NAME, "dest": DIR}
      A private copy of one table to modify: its files are copied under
      dest, and the table's link (DIR/links/NAME, the directory every path
      in its metadata goes through) is pointed at the copy. The copy's
      catalog gets a catalog name used nowhere before. Answers the catalog
      URI (sqlite:////...) and name icectl opens it with, and the table
      identifier. A caller holds DIR/links/NAME.lock (flock) while it uses
      the copy.
  read      {"catalog_uri": U, "catalog_name": C, "table": "ns.t"}
      Row count and an order-independent checksum of every column (the sum
      of xxhash64 of each row as JSON), and on v3 tables the same of each
      row with its _row_id and _last_updated_sequence_number (lineage).
  diff      {... as read, "from_snapshot": S, "limit": N}
      Rows in snapshot S and not in the current one, and the other way
      round, at most N of each: shown when a checksum differs.
  write     {... as read}
      Spark keeps writing: an append, a merge-on-read DELETE,
      CALL system.rewrite_data_files and CALL system.expire_snapshots;
      answers the read after them.
  sql       {"catalog_uri": U, "catalog_name": C, "statements": [Q, ...],
             "conf": {K: V}}
      Runs the statements in order, "{cat}" in them naming catalog C, with
      the session options conf set for them (spark.wap.branch,
      spark.wap.id, ...); answers the rows of the last one, each a JSON
      object. The catalog's database must exist (icectl catalog init).

The catalog is Iceberg's JDBC catalog over SQLite (jdbc.schema-version V1),
which icectl opens as sqlite:////abs/catalog.db with --catalog-name. Every
table has its own catalog database and a unique bigint column id.

Spark 3.5 cannot write timestamp_ns or variant columns (it has no such
types; Iceberg writes them from Spark 4 only), nor fixed, uuid or time
columns, nor equality deletes: the corpus has none of them.

Run as: python iceberg_spark.py --spark DIR serve, DIR being what
scripts/install-spark prints (DIR/jars holds the Iceberg runtime and the
SQLite JDBC driver).
"""

import argparse
import contextlib
import datetime
import fcntl
import glob
import hashlib
import importlib.metadata
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import traceback
import urllib.parse

CORPUS_LAYOUT = 1


def log(*args):
    print("iceberg_spark:", *args, file=sys.stderr, flush=True)


class Spark:
    """This process's Spark session, and the catalogs registered in it."""

    def __init__(self, spark_dir):
        jars = sorted(glob.glob(os.path.join(spark_dir, "jars", "*.jar")))
        if not any("iceberg-spark-runtime" in j for j in jars):
            raise SystemExit(f"no iceberg-spark-runtime jar in {spark_dir}/jars")
        self.jars = jars
        self.pyspark_version = importlib.metadata.version("pyspark")
        self.catalogs = {}
        self._session = None
        self.scratch = tempfile.mkdtemp(prefix="icectl-spark-session-")

    @property
    def session(self):
        """The session, started on first use (about 10 s): a request
        that finds the corpus built needs none."""
        if self._session is None:
            from pyspark.sql import SparkSession

            self._session = (
                SparkSession.builder.master("local[2]")
                .appName("icectl-interop")
                .config("spark.jars", ",".join(self.jars))
                # The JDBC driver must be on the JVM's own class path for
                # DriverManager to find it.
                .config("spark.driver.extraClassPath", ":".join(self.jars))
                .config("spark.sql.extensions",
                        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "2")
                # Adaptive execution only adds planning to queries this small.
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.default.parallelism", "2")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.jsonGenerator.ignoreNullFields", "false")
                .config("spark.driver.memory", "1g")
                # The JVM's own work, on 2 cores beside the rest of the
                # suite: a process of minutes running many small queries
                # spends less CPU with the client compiler alone (no C2
                # recompilation) and the serial collector (no concurrent GC
                # threads) (docs/bench/tests.md, 2026-12-07).
                .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
                # The session catalog is Iceberg's SparkSessionCatalog (over
                # a JDBC catalog of this process's own), for CALL
                # system.migrate, which replaces a Hive table of the session
                # catalog by an Iceberg table; other tables stay Spark's.
                .config("spark.sql.catalog.spark_catalog", "org.apache.iceberg.spark.SparkSessionCatalog")
                .config("spark.sql.catalog.spark_catalog.type", "jdbc")
                .config("spark.sql.catalog.spark_catalog.uri", "jdbc:sqlite:" + os.path.join(self.scratch, "session.db"))
                .config("spark.sql.catalog.spark_catalog.jdbc.schema-version", "V1")
                .config("spark.sql.catalog.spark_catalog.cache-enabled", "false")
                .config("spark.sql.catalog.spark_catalog.warehouse", "file://" + os.path.join(self.scratch, "warehouse"))
                .getOrCreate()
            )
            self._session.sparkContext.setLogLevel("ERROR")
        return self._session

    def stop(self):
        if self._session is not None:
            self._session.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def sql(self, q):
        return self.session.sql(q)

    @contextlib.contextmanager
    def conf(self, key, value):
        """Sets a session option for the statements of the with block."""
        old = self.session.conf.get(key)
        self.session.conf.set(key, value)
        try:
            yield
        finally:
            self.session.conf.set(key, old)

    def hive_catalog(self, uri, name):
        """Registers Iceberg's HiveCatalog over the metastore at uri as
        Spark catalog name. Spark creates an Iceberg catalog when a
        statement first names it, so one set at runtime works."""
        have = self.catalogs.get(name)
        if have is not None:
            if have != uri:
                raise ValueError(f"catalog {name} is {have}, not {uri}")
            return name
        prefix = f"spark.sql.catalog.{name}"
        conf = self.session.conf
        conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        conf.set(prefix + ".type", "hive")
        conf.set(prefix + ".uri", uri)
        conf.set(prefix + ".cache-enabled", "false")
        self.catalogs[name] = uri
        return name

    def catalog(self, uri, name, warehouse=None, create=False):
        """Registers Iceberg's JDBC catalog over the SQLite database of
        uri (sqlite:////abs.db) as Spark catalog name, whose tables are
        name's rows. A name is registered once: a checkout's catalog gets a
        name of its own, so no catalog ever sees another's database.

        Only create initializes the catalog's tables: Iceberg 1.10 leaves
        the result set of that check open, and the SQLite lock it holds
        would block every commit icectl makes until Spark stops.

        A thrift:// uri is a Hive Metastore: Iceberg's HiveCatalog on it
        (hms_test.go); its tables lie where their databases say."""
        if uri.startswith("thrift://"):
            return self.hive_catalog(uri, name)
        if not uri.startswith("sqlite:///"):
            raise ValueError(f"catalog URI {uri!r}: want sqlite:////abs/path.db")
        path = uri[len("sqlite://"):]
        have = self.catalogs.get(name)
        if have is not None:
            if have != path:
                raise ValueError(f"catalog {name} is {have}, not {path}")
            return name
        prefix = f"spark.sql.catalog.{name}"
        conf = self.session.conf
        conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        conf.set(prefix + ".type", "jdbc")
        conf.set(prefix + ".uri", "jdbc:sqlite:" + path)
        conf.set(prefix + ".jdbc.schema-version", "V1")
        conf.set(prefix + ".jdbc.init-catalog-tables", "true" if create else "false")
        conf.set(prefix + ".warehouse", "file://" + (warehouse or os.path.join(os.path.dirname(path), "warehouse")))
        # icectl commits between Spark's reads: never serve a cached table.
        conf.set(prefix + ".cache-enabled", "false")
        self.catalogs[name] = path
        return name

    def state(self, t):
        """The table's format version, main's head (None before the first
        snapshot) and number of snapshots, from its metadata as Iceberg's
        Java library loads it: what SHOW TBLPROPERTIES and the refs and
        snapshots tables show, without a Spark job for each (a read is
        the tests' most frequent request)."""
        jt = self.session._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(self.session._jsparkSession, t)
        meta = jt.operations().current()
        main = meta.ref("main")
        return meta.formatVersion(), None if main is None else main.snapshotId(), meta.snapshots().size()

    def format_version(self, t):
        return self.state(t)[0]

    def read(self, cat, table):
        t = f"{cat}.{table}"
        fv, main, snapshots = self.state(t)
        row_hash = "CAST(xxhash64(to_json(struct(*))) AS DECIMAL(38,0))"
        cols = [f"count(*) AS n, coalesce(sum({row_hash}), 0) AS h"]
        if fv >= 3:
            cols.append(
                "coalesce(sum(CAST(xxhash64(to_json(struct(*)), _row_id, _last_updated_sequence_number) "
                "AS DECIMAL(38,0))), 0) AS lineage, count(_row_id) AS ids, "
                "count(DISTINCT _row_id) AS distinct_ids, count(_last_updated_sequence_number) AS seqs")
        # One reduce task: the aggregate is a handful of numbers.
        with self.conf("spark.sql.shuffle.partitions", "1"):
            row = self.sql(f"SELECT {', '.join(cols)} FROM {t}").collect()[0]
        out = {"format_version": fv, "rows": row["n"], "checksum": str(row["h"]),
               "snapshot_id": None if main is None else str(main), "snapshots": snapshots}
        if fv >= 3:
            out.update({"lineage": str(row["lineage"]), "row_ids": row["ids"],
                        "distinct_row_ids": row["distinct_ids"], "sequence_numbers": row["seqs"]})
        return out

    def diff(self, cat, table, from_snapshot, limit):
        t = f"{cat}.{table}"
        before = f"SELECT to_json(struct(*)) AS r FROM {t} VERSION AS OF {int(from_snapshot)}"
        now = f"SELECT to_json(struct(*)) AS r FROM {t}"
        gone = self.sql(f"SELECT r FROM (({before}) EXCEPT ALL ({now})) ORDER BY r LIMIT {int(limit)}")
        new = self.sql(f"SELECT r FROM (({now}) EXCEPT ALL ({before})) ORDER BY r LIMIT {int(limit)}")
        return {"only_before": [r[0] for r in gone.collect()],
                "only_now": [r[0] for r in new.collect()]}

    def write(self, cat, table):
        """Spark's writes after icectl: the same statements on every
        table, so that their result depends only on the rows."""
        t = f"{cat}.{table}"
        if self.format_version(t) >= 2:
            self.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ("
                     f"'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')")
        self.sql(f"INSERT INTO {t} SELECT * FROM {t} WHERE id % 10 = 3")
        self.sql(f"DELETE FROM {t} WHERE id % 13 = 4")
        self.sql(f"CALL {cat}.system.rewrite_data_files(table => '{table}', "
                 f"options => map('min-input-files', '2'))")
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        self.sql(f"CALL {cat}.system.expire_snapshots(table => '{table}', "
                 f"older_than => TIMESTAMP '{now}', retain_last => 1)")
        return self.read(cat, table)

    def partition_stats(self, cat, table, snapshot_id):
        """The rows of the partition statistics file registered for
        snapshot_id, read by Iceberg's own reader
        (PartitionStatsHandler.readPartitionStatsFile in the table's
        unified partition type), in file order."""
        jvm = self.session._jvm
        ice = jvm.org.apache.iceberg
        t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(self.session._jsparkSession, f"{cat}.{table}")
        files = [f for f in t.partitionStatisticsFiles() if f.snapshotId() == int(snapshot_id)]
        if not files:
            raise ValueError(f"{table} has no partition statistics for snapshot {snapshot_id}")
        schema = ice.PartitionStatsHandler.schema(ice.Partitioning.partitionType(t), ice.TableUtil.formatVersion(t))
        obj = jvm.java.lang.Class.forName("java.lang.Object")
        rows = []
        stats = ice.PartitionStatsHandler.readPartitionStatsFile(schema, t.io().newInputFile(files[0].path()))
        try:
            it = stats.iterator()
            while it.hasNext():
                s = it.next()
                part = s.partition()
                vals = [part.get(i, obj) for i in range(part.size())]
                rows.append({
                    "partition": [v if v is None or isinstance(v, (int, str, bool, float)) else str(v) for v in vals],
                    "spec_id": s.specId(), "data_record_count": s.dataRecordCount(),
                    "data_file_count": s.dataFileCount(),
                    "total_data_file_size_in_bytes": s.totalDataFileSizeInBytes(),
                    "position_delete_record_count": s.positionDeleteRecordCount(),
                    "position_delete_file_count": s.positionDeleteFileCount(),
                    "equality_delete_record_count": s.equalityDeleteRecordCount(),
                    "equality_delete_file_count": s.equalityDeleteFileCount(),
                    "total_record_count": s.totalRecords(), "last_updated_at": s.lastUpdatedAt(),
                    "last_updated_snapshot_id": s.lastUpdatedSnapshotId(), "dv_count": s.dvCount()})
        finally:
            stats.close()
        return {"path": files[0].path(), "rows": rows}


def theta_blobs(spark, cat, table, snapshot_id):
    """The blobs of the statistics file registered for snapshot_id, read
    by Iceberg's Puffin reader, each sketch read by DataSketches' Java
    library (the copy Iceberg's runtime shades): its estimate, and the
    bytes the library writes back."""
    jvm = spark.session._jvm
    ice = jvm.org.apache.iceberg
    sk = jvm.org.apache.iceberg.shaded.org.apache.datasketches
    t = ice.spark.Spark3Util.loadIcebergTable(spark.session._jsparkSession, f"{cat}.{table}")
    files = [f for f in t.statisticsFiles() if f.snapshotId() == int(snapshot_id)]
    if not files:
        raise ValueError(f"{table} has no statistics for snapshot {snapshot_id}")
    reader = ice.puffin.Puffin.read(t.io().newInputFile(files[0].path())).build()
    out = []
    try:
        it = reader.readAll(reader.fileMetadata().blobs()).iterator()
        while it.hasNext():
            pair = it.next()
            meta, data = pair.first(), bytes(ice.util.ByteBuffers.toByteArray(pair.second()))
            b = {"type": meta.type(), "fields": list(meta.inputFields()), "snapshot_id": meta.snapshotId(),
                 "sequence_number": meta.sequenceNumber(), "properties": dict(meta.properties()),
                 "codec": meta.compressionCodec(), "bytes": data.hex()}
            if meta.type() == "apache-datasketches-theta-v1":
                c = sk.theta.CompactSketch.wrap(sk.memory.Memory.wrap(bytearray(data)))
                b["estimate"] = c.getEstimate()
                b["java_bytes"] = bytes(c.toByteArray()).hex()
            out.append(b)
    finally:
        reader.close()
    return {"path": files[0].path(), "blobs": out}


# --- the corpus ----------------------------------------------------------

def rows_sql(lo, hi, step_seconds=600, parts=2):
    """Rows id in [lo, hi) of the common columns, in parts files (one per
    Spark task; more on partitioned tables)."""
    return f"""SELECT id,
        concat('c', CAST(id % 3 AS STRING)) AS category,
        timestamp_seconds(1717200000 + id * {step_seconds}) AS ts,
        CAST(id * 1.25 AS DECIMAL(12,2)) AS amount,
        CASE WHEN id % 19 = 0 THEN NULL
             ELSE repeat(substr('abcdefghij', CAST(id % 10 AS INT) + 1, 1), CAST(id % 17 AS INT)) END AS note
      FROM range({lo}, {hi}, 1, {parts})"""


COMMON_COLUMNS = "id bigint, category string, ts timestamp, amount decimal(12,2), note string"


def mor(fv):
    props = {"format-version": str(fv)}
    if fv >= 2:
        props.update({"write.delete.mode": "merge-on-read",
                      "write.update.mode": "merge-on-read",
                      "write.merge.mode": "merge-on-read"})
    return "TBLPROPERTIES (" + ", ".join(f"'{k}'='{v}'" for k, v in props.items()) + ")"


def build_deletes(s, t, fv, partitioned_by=""):
    """Small files in batches, then deletes and updates: position-delete
    files on v2, deletion vectors on v3 (on v1, copy-on-write)."""
    s.sql(f"CREATE TABLE {t} ({COMMON_COLUMNS}) USING iceberg {partitioned_by} {mor(fv)}")
    for i in range(5):
        s.sql(f"INSERT INTO {t} {rows_sql(i * 160, (i + 1) * 160)}")
    s.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    s.sql(f"UPDATE {t} SET note = 'updated' WHERE id % 11 = 1")
    s.sql(f"DELETE FROM {t} WHERE id BETWEEN 100 AND 130")
    # More small files (on v1 the deletes rewrote whole partitions).
    for i in range(5, 9):
        s.sql(f"INSERT INTO {t} {rows_sql(i * 160, i * 160 + 40)}")
    if fv >= 2:
        s.sql(f"MERGE INTO {t} t USING (SELECT id, 'merged' AS note FROM range(0, 1500, 13)) m "
              f"ON t.id = m.id WHEN MATCHED THEN UPDATE SET t.note = m.note")
        s.sql(f"DELETE FROM {t} WHERE id % 7 = 3")


def build_schema_evolution(s, t, fv):
    """Files under seven schemas: a column added at the top and in a
    struct, columns renamed, one dropped, columns moved, int -> long,
    float -> double and decimal(9,2) -> decimal(12,2)."""
    s.sql(f"CREATE TABLE {t} (id bigint, i int, f float, d decimal(9,2), "
          f"st struct<a: int, b: string>, name string, gone string) USING iceberg {mor(fv)}")

    def ins(lo, hi, cols):
        s.sql(f"INSERT INTO {t} SELECT {cols} FROM range({lo}, {hi}, 1, 2)")

    base = ("id, CAST(id * 3 AS INT), CAST(id / 4.0 AS FLOAT), CAST(id * 1.5 AS DECIMAL(9,2)), "
            "named_struct('a', CAST(id AS INT), 'b', concat('b', id))")
    ins(0, 100, base + ", concat('n', id), concat('g', id)")
    s.sql(f"ALTER TABLE {t} ADD COLUMN extra string")
    ins(100, 200, base + ", concat('n', id), concat('g', id), concat('e', id)")
    s.sql(f"ALTER TABLE {t} ADD COLUMN st.c double")
    st3 = "named_struct('a', CAST(id AS INT), 'b', concat('b', id), 'c', id / 8.0)"
    base3 = ("id, CAST(id * 3 AS INT), CAST(id / 4.0 AS FLOAT), CAST(id * 1.5 AS DECIMAL(9,2)), " + st3)
    ins(200, 300, base3 + ", concat('n', id), concat('g', id), concat('e', id)")
    s.sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
    s.sql(f"ALTER TABLE {t} RENAME COLUMN st.b TO bee")
    ins(300, 400, base3 + ", concat('n', id), concat('g', id), concat('e', id)")
    s.sql(f"ALTER TABLE {t} DROP COLUMN gone")
    ins(400, 500, base3 + ", concat('n', id), concat('e', id)")
    s.sql(f"ALTER TABLE {t} ALTER COLUMN extra FIRST")
    s.sql(f"ALTER TABLE {t} ALTER COLUMN d AFTER id")
    # extra, id, d, i, f, st, full_name
    ins(500, 600, "concat('e', id), id, CAST(id * 1.5 AS DECIMAL(9,2)), CAST(id * 3 AS INT), "
                  "CAST(id / 4.0 AS FLOAT), " + st3 + ", concat('n', id)")
    s.sql(f"ALTER TABLE {t} ALTER COLUMN i TYPE bigint")
    s.sql(f"ALTER TABLE {t} ALTER COLUMN f TYPE double")
    s.sql(f"ALTER TABLE {t} ALTER COLUMN d TYPE decimal(12,2)")
    ins(600, 700, "concat('e', id), id, CAST(id * 1000.5 AS DECIMAL(12,2)), id * 5000000000, "
                  "id / 3.0, " + st3 + ", concat('n', id)")
    if fv >= 2:
        s.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
        s.sql(f"UPDATE {t} SET full_name = 'renamed' WHERE id % 9 = 2")


def build_spec_evolution(s, t, fv):
    """Files under five partition specs: identity, a bucket added, the
    identity dropped, the bucket count changed, a day transform added;
    then deletes under every spec."""
    s.sql(f"CREATE TABLE {t} ({COMMON_COLUMNS}) USING iceberg PARTITIONED BY (category) {mor(fv)}")
    batches = iter(range(20))

    def two():
        for _ in range(2):
            i = next(batches)
            s.sql(f"INSERT INTO {t} {rows_sql(i * 50, (i + 1) * 50)}")

    two()
    s.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id) AS id_b4")
    two()
    s.sql(f"ALTER TABLE {t} DROP PARTITION FIELD category")
    two()
    s.sql(f"ALTER TABLE {t} DROP PARTITION FIELD id_b4")
    s.sql(f"ALTER TABLE {t} ADD PARTITION FIELD bucket(8, id) AS id_b8")
    two()
    s.sql(f"ALTER TABLE {t} ADD PARTITION FIELD days(ts) AS ts_day")
    two()
    if fv >= 2:
        s.sql(f"DELETE FROM {t} WHERE id % 6 = 0")
        s.sql(f"UPDATE {t} SET note = 'updated' WHERE id % 10 = 7")


def build_sorted(s, t, fv):
    """A sort order (category, then id descending), files written in it."""
    s.sql(f"CREATE TABLE {t} ({COMMON_COLUMNS}) USING iceberg {mor(fv)}")
    s.sql(f"ALTER TABLE {t} WRITE ORDERED BY category ASC NULLS FIRST, id DESC NULLS LAST")
    for i in range(6):
        # Interleaved id ranges, so the files overlap.
        s.sql(f"INSERT INTO {t} SELECT * FROM ({rows_sql(0, 900)}) WHERE id % 6 = {i}")
    s.sql(f"DELETE FROM {t} WHERE id % 8 = 5")


def build_types(s, t, fv):
    """Every type Spark writes to Iceberg, with nulls, NaN, infinities,
    -0.0, extreme values, empty and non-ASCII strings, nested values."""
    s.sql(f"""CREATE TABLE {t} (id bigint, b boolean, i int, l bigint, f float, d double,
        dec_small decimal(9,2), dec_mid decimal(18,6), dec_big decimal(38,10),
        dt date, ts timestamp, ts_ntz timestamp_ntz, s string, bin binary,
        st struct<x: int, y: string, z: struct<zz: double>>,
        arr array<int>, arr_st array<struct<k: string, v: bigint>>,
        m map<string, int>, m_st map<int, struct<p: string>>) USING iceberg {mor(fv)}""")
    specials = "array(CAST('NaN' AS DOUBLE), CAST('Infinity' AS DOUBLE), CAST('-Infinity' AS DOUBLE), -0.0D, 0.0D)"
    for k in range(3):
        lo, hi = k * 200, (k + 1) * 200
        s.sql(f"""INSERT INTO {t} SELECT id,
            CASE WHEN id % 5 = 0 THEN NULL ELSE id % 2 = 0 END,
            CASE id % 50 WHEN 1 THEN 2147483647 WHEN 2 THEN -2147483648 ELSE CAST(id * 7 AS INT) END,
            CASE id % 50 WHEN 3 THEN 9223372036854775807 WHEN 4 THEN -9223372036854775808 ELSE id * 1000003 END,
            CAST(element_at({specials}, CAST(id % 7 AS INT) + 1) AS FLOAT),
            coalesce(element_at({specials}, CAST(id % 9 AS INT) + 1), id / 7.0D),
            CAST(id * 0.37 AS DECIMAL(9,2)),
            CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(-id * 12.345678 AS DECIMAL(18,6)) END,
            CAST(id * 123456789.0123456789 AS DECIMAL(38,10)),
            date_add(DATE '1969-12-25', CAST(id * 37 AS INT)),
            timestamp_micros(id * 86400000123 - 100000000000),
            CAST(timestamp_micros(id * 3600000001) AS TIMESTAMP_NTZ),
            CASE id % 4 WHEN 0 THEN '' WHEN 1 THEN concat('héllo ✓ ', id) WHEN 2 THEN NULL
                 ELSE repeat('x', CAST(id % 300 AS INT)) END,
            CASE WHEN id % 3 = 0 THEN NULL ELSE encode(concat('bin', id), 'utf-8') END,
            CASE WHEN id % 8 = 0 THEN NULL ELSE named_struct('x', CAST(id AS INT), 'y',
                 CASE WHEN id % 2 = 0 THEN NULL ELSE concat('y', id) END,
                 'z', named_struct('zz', id / 3.0D)) END,
            CASE WHEN id % 10 = 0 THEN NULL WHEN id % 10 = 1 THEN array()
                 ELSE sequence(0, CAST(id % 5 AS INT)) END,
            transform(sequence(1, CAST(id % 3 AS INT) + 1), e -> named_struct('k', concat('k', e), 'v', id * e)),
            CASE WHEN id % 7 = 0 THEN NULL ELSE map(concat('a', id), CAST(id AS INT), 'b', NULL) END,
            map(CAST(id AS INT), named_struct('p', concat('p', id)))
          FROM range({lo}, {hi}, 1, 2)""")
    if fv >= 2:
        s.sql(f"DELETE FROM {t} WHERE id % 9 = 4")


def build_add_files(s, t, fv, location, staging, partitioned, rename):
    """Plain Parquet written by Spark without field ids, imported with
    CALL system.add_files (which sets schema.name-mapping.default), and
    deleted from. Unpartitioned, only the imported files. Partitioned
    (identity grp, Hive-style directories: the files hold no grp), then
    columns renamed and added, and Spark's own files (with field ids) in a
    partition of imported files and in a new one."""
    cols = ["id", "CAST(id % 100 AS INT) AS qty", "concat('n', id) AS name",
            "named_struct('x', id * 2, 'y', concat('y', id)) AS nested",
            "CASE WHEN id % 4 = 0 THEN NULL ELSE array(id, id + 1) END AS tags"]
    schema = "id bigint, qty int, name string, nested struct<x: bigint, y: string>, tags array<bigint>"
    spec = ""
    df = s.session.range(0, 600, 1, 6)
    if partitioned:
        df = df.selectExpr(*cols, "CAST(id % 3 AS INT) AS grp")
        df.write.partitionBy("grp").parquet("file://" + staging)
        schema += ", grp int"
        spec = "PARTITIONED BY (grp)"
    else:
        df.selectExpr(*cols).write.parquet("file://" + staging)
    imported = os.path.join(location, "imported")
    for f in sorted(glob.glob(os.path.join(staging, "**", "part-*.parquet"), recursive=True)):
        dest = os.path.join(imported, os.path.relpath(os.path.dirname(f), staging))
        os.makedirs(dest, exist_ok=True)
        shutil.move(f, dest)
    shutil.rmtree(staging)
    s.sql(f"CREATE TABLE {t} ({schema}) USING iceberg {spec} LOCATION 'file://{location}' {mor(fv)}")
    cat, table = t.split(".", 1)
    s.sql(f"CALL {cat}.system.add_files(table => '{table}', "
          f"source_table => '`parquet`.`file://{imported}`')")
    if rename:
        s.sql(f"ALTER TABLE {t} RENAME COLUMN name TO label")
        s.sql(f"ALTER TABLE {t} RENAME COLUMN nested.y TO why")
        s.sql(f"ALTER TABLE {t} ADD COLUMN later string")
    s.sql(f"DELETE FROM {t} WHERE id % 9 = 0")
    if partitioned:
        later = ", concat('later', id)" if rename else ""
        s.sql(f"INSERT INTO {t} SELECT id, CAST(id % 100 AS INT), concat('n', id), "
              f"named_struct('x', id * 2, 'y', concat('y', id)), array(id), "
              f"CAST(2 + id % 2 AS INT){later} FROM range(600, 700, 1, 2)")


HIVE_COLUMNS = "id bigint, v string, n int, ts timestamp, amount decimal(10,2)"
HIVE_PARTITIONS = [("p_int", "int"), ("p_bigint", "bigint"), ("p_string", "string"), ("p_date", "date"),
                   ("p_decimal", "decimal(10,2)"), ("p_bool", "boolean")]


def build_hive(s, t, fv, location, staging, mode, legacy=False):
    """A Hive-format table (Spark's session catalog, USING parquet,
    PARTITIONED BY identity columns of six types) brought into Iceberg
    with CALL system.add_files, system.snapshot or system.migrate (mode),
    or with "java" Iceberg's Java API (import_with_java), a timestamp
    partition column added: its files, written by Spark's own Parquet
    writer without field ids, do not hold the partition columns, whose values are only in the directory names
    and, once imported, in each manifest entry's partition struct. Four
    partitions (k = id % 4), the fourth with every partition column NULL
    (__HIVE_DEFAULT_PARTITION__), eight files each. Then merge-on-read
    DELETEs (position deletes on v2, deletion vectors on v3) in every
    partition, and an UPDATE in one partition only (p_int = 1), so that
    the other partitions keep only imported data files.

    Iceberg 1.10's procedures cannot import a timestamp partition column
    (Conversions.fromPartitionString: "Unsupported type for
    fromPartitionString: timestamptz"), hence "java".
    With legacy, Spark writes the Hive table's files as older Spark and
    Hive did (issue 35): timestamps as INT96 and decimals in the legacy
    layout (spark.sql.parquet.writeLegacyFormat: FIXED_LEN_BYTE_ARRAY).
    The string partition values are ASCII: Java writes a value's
    URL-encoded form into the directory names of the files it writes
    ("s%C3%A9" on disk), which iceberg-go 0.7 decodes again when it opens
    a file, and fails."""
    hive = os.path.join(os.path.dirname(staging), "hive")
    src = "default.hive_" + t.rsplit(".", 1)[1]
    partitions = HIVE_PARTITIONS + ([("p_ts", "timestamp")] if mode == "java" else [])
    parts = ", ".join(f"{c} {ty}" for c, ty in partitions)
    names = ", ".join(c for c, _ in partitions)
    s.sql(f"DROP TABLE IF EXISTS spark_catalog.{src}")
    s.sql(f"CREATE TABLE spark_catalog.{src} ({HIVE_COLUMNS}, {parts}) USING parquet "
          f"PARTITIONED BY ({names}) LOCATION 'file://{hive}'")
    k = "id % 4"
    vals = ["CAST({k} - 1 AS INT)", "({k} + 1) * 5000000000", "concat('s ', {k})",
            "date_add(DATE '1969-12-30', CAST({k} AS INT))", "CAST({k} * 1.25 - 1 AS DECIMAL(10,2))", "{k} = 1",
            "timestamp_seconds(1717200000 + {k} * 90061)"][:len(partitions)]
    cols = ", ".join(f"CASE WHEN {k} = 3 THEN NULL ELSE {v.format(k=k)} END" for v in vals)
    # Micros, as Iceberg's writers, unless legacy: Spark's default is INT96.
    with s.conf("spark.sql.parquet.outputTimestampType", "INT96" if legacy else "TIMESTAMP_MICROS"), \
            s.conf("spark.sql.parquet.writeLegacyFormat", "true" if legacy else "false"):
        for lo in (0, 200):
            s.sql(f"INSERT INTO spark_catalog.{src} SELECT id, concat('v', id), "
                  f"CASE WHEN id % 10 = 0 THEN NULL ELSE CAST(id * 3 AS INT) END, "
                  f"timestamp_seconds(1717200000 + id * 3600), CAST(id * 1.25 - 100 AS DECIMAL(10,2)), "
                  f"{cols} FROM range({lo}, {lo + 200}, 1, 4)")
    cat, table = t.split(".", 1)
    if mode in ("add_files", "java"):
        s.sql(f"CREATE TABLE {t} ({HIVE_COLUMNS}, {parts}) USING iceberg PARTITIONED BY ({names}) "
              f"LOCATION 'file://{location}' {mor(fv)}")
        if mode == "java":
            import_with_java(s, t, hive)
        else:
            s.sql(f"CALL {cat}.system.add_files(table => '{table}', source_table => 'spark_catalog.{src}')")
    else:
        props = {"format-version": str(fv), "write.delete.mode": "merge-on-read",
                 "write.update.mode": "merge-on-read", "write.merge.mode": "merge-on-read"}
        props = ", ".join(f"'{k}', '{v}'" for k, v in props.items())
        if mode == "snapshot":
            s.sql(f"CALL {cat}.system.snapshot(source_table => 'spark_catalog.{src}', table => '{t}', "
                  f"location => 'file://{location}', properties => map({props}))")
        else:
            # migrate replaces the Hive table by an Iceberg table of the
            # session catalog, its metadata under the Hive table's
            # location; the table's own catalog registers that metadata.
            s.sql(f"CALL spark_catalog.system.migrate(table => 'spark_catalog.{src}', properties => map({props}))")
            j = s.session._jvm
            migrated = j.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(s.session._jsparkSession, f"spark_catalog.{src}")
            metadata = migrated.operations().current().metadataFileLocation()
            s.sql(f"CALL {cat}.system.register_table(table => '{table}', metadata_file => '{metadata}')")
    s.sql(f"DELETE FROM {t} WHERE id % 7 = 3")
    s.sql(f"DELETE FROM {t} WHERE id % 13 = 6")
    s.sql(f"UPDATE {t} SET v = concat(v, '-u') WHERE id % 11 = 5 AND p_int = 1")


# name -> (format version, builder, features). Features tell the Go test
# what applies: "sort" (compact --sort), "name_mapping" (add_files).
CORPUS = {
    "v1_partitioned": (1, lambda s, t, fv, **_: build_deletes(s, t, fv, "PARTITIONED BY (category)"), []),
    "v2_unpartitioned_deletes": (2, lambda s, t, fv, **_: build_deletes(s, t, fv), []),
    "v2_partitioned_deletes": (2, lambda s, t, fv, **_: build_deletes(s, t, fv, "PARTITIONED BY (category, days(ts))"), []),
    "v3_unpartitioned_dvs": (3, lambda s, t, fv, **_: build_deletes(s, t, fv), []),
    "v3_partitioned_dvs": (3, lambda s, t, fv, **_: build_deletes(s, t, fv, "PARTITIONED BY (category, bucket(4, id))"), []),
    "v2_schema_evolution": (2, lambda s, t, fv, **_: build_schema_evolution(s, t, fv), []),
    "v3_schema_evolution": (3, lambda s, t, fv, **_: build_schema_evolution(s, t, fv), []),
    "v2_spec_evolution": (2, lambda s, t, fv, **_: build_spec_evolution(s, t, fv), []),
    "v3_spec_evolution": (3, lambda s, t, fv, **_: build_spec_evolution(s, t, fv), []),
    "v2_sorted": (2, lambda s, t, fv, **_: build_sorted(s, t, fv), ["sort"]),
    "v2_types": (2, lambda s, t, fv, **_: build_types(s, t, fv), []),
    "v3_types": (3, lambda s, t, fv, **_: build_types(s, t, fv), []),
    "v2_add_files": (2, lambda s, t, fv, **kw: build_add_files(s, t, fv, partitioned=False, rename=False, **kw),
                     ["name_mapping"]),
    "v3_add_files_partitioned": (3, lambda s, t, fv, **kw: build_add_files(s, t, fv, partitioned=True, rename=True, **kw),
                                 ["name_mapping"]),
}

def import_with_java(s, t, hive):
    """Appends the Parquet files under hive (Hive-style key=value
    directories) to table t with Iceberg's Java API, as add_files does
    (the table's name mapping, each file's metrics from its footer, its
    partition from its directories), for a timestamp partition column,
    which add_files refuses: the value is the directory's, read as UTC
    (the session's time zone, in which Spark named it)."""
    j = s.session._jvm
    ice = j.org.apache.iceberg
    tbl = j.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(s.session._jsparkSession, t)
    mapping = ice.mapping.MappingUtil.create(tbl.schema())
    tbl.updateProperties().set("schema.name-mapping.default", ice.mapping.NameMappingParser.toJson(mapping)).commit()
    spec = tbl.spec()
    ptype = spec.partitionType()
    append = tbl.newAppend()
    for path in sorted(glob.glob(os.path.join(hive, "**", "*.parquet"), recursive=True)):
        part = ice.PartitionData(ptype)
        dirs = dict(urllib.parse.unquote(d).split("=", 1) for d in os.path.relpath(os.path.dirname(path), hive).split(os.sep))
        for i, field in enumerate(ptype.fields()):
            v = dirs[field.name()]
            if v == "__HIVE_DEFAULT_PARTITION__":
                v = None
            elif field.type().typeId().toString() == "TIMESTAMP":
                ts = datetime.datetime.fromisoformat(v).replace(tzinfo=datetime.timezone.utc)
                v = (ts - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)
            else:
                v = ice.types.Conversions.fromPartitionString(field.type(), v)
            part.set(i, v)
        f = tbl.io().newInputFile("file:" + path)
        metrics = ice.parquet.ParquetUtil.fileMetrics(f, ice.MetricsConfig.forTable(tbl), mapping)
        append.appendFile(ice.DataFiles.builder(spec).withPath("file:" + path).withFormat(ice.FileFormat.PARQUET)
                          .withFileSizeInBytes(os.path.getsize(path)).withMetrics(metrics).withPartition(part).build())
    append.commit()


# The Hive-format tables brought into Iceberg (build_hive): name ->
# (format version, builder, features). They are listed apart (corpus.json's
# hive_tables), for the tests of identity partitions whose values are
# only in the manifests, and have no read after Spark's writes.
HIVE_CORPUS = {
    f"hive_{mode}_v{fv}": (fv, lambda s, t, fv, mode=mode, **kw: build_hive(s, t, fv, mode=mode, **kw), [])
    for mode in ("add_files", "snapshot") for fv in (2, 3)
}
HIVE_CORPUS["hive_migrate_v2"] = (2, lambda s, t, fv, **kw: build_hive(s, t, fv, mode="migrate", **kw), [])
HIVE_CORPUS["hive_legacy_add_files_v3"] = (
    3, lambda s, t, fv, **kw: build_hive(s, t, fv, mode="add_files", legacy=True, **kw), [])
# Feature "p_ts": a timestamp partition column too.
HIVE_CORPUS["hive_java_timestamp_v3"] = (
    3, lambda s, t, fv, **kw: build_hive(s, t, fv, mode="java", **kw), ["p_ts"])

NAMESPACE = "ns"


def corpus_hash(spark):
    h = hashlib.sha256()
    with open(__file__, "rb") as f:
        h.update(f.read())
    h.update(f"layout {CORPUS_LAYOUT} pyspark {spark.pyspark_version}".encode())
    for j in spark.jars:
        h.update(os.path.basename(j).encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def flocked(path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def corpus(spark, root):
    """The corpus under root/HASH, built when missing."""
    root = os.path.abspath(root)
    os.makedirs(root, exist_ok=True)
    digest = corpus_hash(spark)
    d = os.path.join(root, digest)
    index = os.path.join(d, "corpus.json")
    with flocked(os.path.join(root, "build.lock")):
        if not os.path.exists(index):
            # Earlier versions' corpora are of no use to this version, but
            # another checkout on the same machine (a branch, a CI run)
            # may be reading one right now: the four built last stay
            # (about 25 MB each), older ones go.
            others = [o for o in glob.glob(os.path.join(root, "*"))
                      if os.path.isdir(o) and os.path.basename(o) != digest]
            others.sort(key=os.path.getmtime, reverse=True)
            for old in others[4:]:
                shutil.rmtree(old, ignore_errors=True)
            shutil.rmtree(d, ignore_errors=True)
            build_corpus(spark, d)
    with open(index) as f:
        doc = json.load(f)
    doc["dir"] = d
    return doc


def build_corpus(spark, d):
    """Builds every table of CORPUS in d/pristine/NAME (its catalog.db and
    warehouse), each through the link d/links/NAME, so that every path its
    metadata holds goes through the link; then records each table's read
    and its read after Spark's writes (on a checkout)."""
    log(f"building the Spark corpus in {d} (once per version of this script)")
    os.makedirs(os.path.join(d, "pristine"))
    os.makedirs(os.path.join(d, "links"))

    def build_one(name, fv, build, features):
        pristine = os.path.join(d, "pristine", name)
        os.makedirs(pristine)
        link = os.path.join(d, "links", name)
        os.symlink(os.path.join("..", "pristine", name), link)
        cat = spark.catalog("sqlite:///" + os.path.join(pristine, "catalog.db"), "build_" + name,
                            warehouse=os.path.join(link, "warehouse"), create=True)
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {cat}.{NAMESPACE}")
        location = os.path.join(link, "warehouse", NAMESPACE, name)
        t = f"{cat}.{NAMESPACE}.{name}"
        build(spark, t, fv, location=location, staging=os.path.join(link, "staging"))
        log(f"built {name}")
        return {"name": name, "table": f"{NAMESPACE}.{name}", "format_version": fv,
                "features": features, "pristine": spark.read(cat, f"{NAMESPACE}.{name}")}

    tables = [build_one(name, fv, build, features) for name, (fv, build, features) in CORPUS.items()]
    hive_tables = [build_one(name, fv, build, features) for name, (fv, build, features) in HIVE_CORPUS.items()]
    # What Spark's writes make of each pristine table: the expectation
    # for the same writes after icectl maintained it.
    with tempfile.TemporaryDirectory(prefix="icectl-spark-") as tmp:
        for entry in tables:
            name = entry["name"]
            with flocked(os.path.join(d, "links", name + ".lock")):
                co = checkout(spark, d, name, os.path.join(tmp, name), "expect")
                cat = spark.catalog(co["catalog_uri"], co["catalog_name"])
                entry["after_write"] = spark.write(cat, entry["table"])
                relink(d, name, os.path.join("..", "pristine", name))
    with open(os.path.join(d, "corpus.json.tmp"), "w") as f:
        json.dump({"tables": tables, "hive_tables": hive_tables}, f, indent=1)
    os.rename(os.path.join(d, "corpus.json.tmp"), os.path.join(d, "corpus.json"))


def relink(d, name, target):
    link = os.path.join(d, "links", name)
    tmp = link + ".new"
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


_checkouts = 0


def checkout(spark, d, name, dest, tag="t"):
    """Copies pristine/NAME to dest, points links/NAME at it, and renames
    the copy's catalog (catalog_name) to one this process never used."""
    global _checkouts
    src = os.path.join(d, "pristine", name)
    if not os.path.isdir(src):
        raise ValueError(f"no table {name} in the corpus {d}")
    dest = os.path.abspath(dest)
    shutil.copytree(src, dest, symlinks=True)
    _checkouts += 1
    new_name = f"{tag}{os.getpid()}_{_checkouts}"
    db = os.path.join(dest, "catalog.db")
    con = sqlite3.connect(db)
    try:
        with con:
            for tbl in ("iceberg_tables", "iceberg_namespace_properties"):
                con.execute(f"UPDATE {tbl} SET catalog_name = ?", (new_name,))
    finally:
        con.close()
    relink(d, name, dest)
    return {"catalog_uri": "sqlite:///" + db, "catalog_name": new_name, "table": f"{NAMESPACE}.{name}"}


def run_sql(spark, a):
    """The "sql" request: statements with session options set."""
    cat = spark.catalog(a["catalog_uri"], a["catalog_name"])
    conf = spark.session.conf
    opts = a.get("conf") or {}
    old = {k: conf.get(k, None) for k in opts}
    try:
        for k, v in opts.items():
            conf.set(k, v)
        df = None
        for q in a["statements"]:
            df = spark.sql(q.replace("{cat}", cat))
        rows = [json.loads(r) for r in df.toJSON().collect()] if df is not None else []
    finally:
        for k, v in old.items():
            if v is None:
                conf.unset(k)
            else:
                conf.set(k, v)
    return {"rows": rows}


# --- the server ----------------------------------------------------------

def handle(spark, req):
    cmd, a = req["cmd"], req.get("args", {})
    if cmd == "corpus":
        return corpus(spark, a["root"])
    if cmd == "checkout":
        return checkout(spark, a["corpus"], a["table"], a["dest"])
    if cmd == "sql":
        return run_sql(spark, a)
    if cmd == "theta_blobs":
        return theta_blobs(spark, spark.catalog(a["catalog_uri"], a["catalog_name"]), a["table"], a["snapshot_id"])
    if cmd in ("read", "write", "diff", "partition_stats"):
        cat = spark.catalog(a["catalog_uri"], a["catalog_name"])
        if cmd == "partition_stats":
            return spark.partition_stats(cat, a["table"], a["snapshot_id"])
        if cmd == "read":
            return spark.read(cat, a["table"])
        if cmd == "write":
            return spark.write(cat, a["table"])
        return spark.diff(cat, a["table"], a["from_snapshot"], a.get("limit", 10))
    raise ValueError(f"unknown command {cmd!r}")


def serve(spark, out):
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            resp = {"id": req["id"], "result": handle(spark, req)}
        except Exception as e:  # the error goes to the caller, the session lives on
            log(traceback.format_exc())
            # A Java exception's own message, not Py4J's "error calling oN".
            java = getattr(e, "java_exception", None)
            msg = (str(java.toString()) if java is not None else str(e)).strip().splitlines()
            resp = {"id": req["id"], "error": f"{type(e).__name__}: {msg[0] if msg else ''}"[:2000]}
        out.write(json.dumps(resp) + "\n")
        out.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spark", default=os.environ.get("ICECTL_TEST_SPARK"),
                   help="directory scripts/install-spark prints (default $ICECTL_TEST_SPARK)")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("serve", help="answer JSON requests on stdin")
    c = sub.add_parser("corpus", help="build (or find) the corpus under ROOT, print its index")
    c.add_argument("root")
    r = sub.add_parser("read", help="print one table's rows and checksum")
    r.add_argument("--catalog-uri", required=True)
    r.add_argument("--catalog-name", required=True)
    r.add_argument("--table", required=True)
    args = p.parse_args()
    if not args.spark:
        p.error("--spark or ICECTL_TEST_SPARK is required")
    # Answers go to the real stdout; everything else the process or the JVM
    # it starts prints goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    spark = Spark(args.spark)
    if args.cmd == "serve":
        serve(spark, out)
    elif args.cmd == "corpus":
        out.write(json.dumps(corpus(spark, args.root), indent=1) + "\n")
    else:
        spark.catalog(args.catalog_uri, args.catalog_name)
        out.write(json.dumps(spark.read(args.catalog_name, args.table)) + "\n")
    out.flush()
    spark.stop()


if __name__ == "__main__":
    main()
