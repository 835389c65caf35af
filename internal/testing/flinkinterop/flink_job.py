"""A Flink streaming job with Iceberg's sink, as icectl's tests run it.

One job (one local mini-cluster, one JVM) writes every stream of the spec
it is given, each into its own table of its own catalog: Iceberg's JDBC
catalog over a SQLite file (jdbc.schema-version V1), the catalog icectl
opens as sqlite:////abs/catalog.db with --catalog-name. The spec is one
JSON object on the command line:

  {"checkpoint_dir": DIR, "checkpoint_ms": N, "restore": PATH or "",
   "rows": N, "rows_per_second": R,
   "streams": [{"catalog_db": PATH, "catalog_name": C, "warehouse": DIR,
                "table": "ns.t", "keys": K or 0, "format_version": 2|3,
                "partitions": P (optional, default 0),
                "properties": {NAME: VALUE, ...} (optional)}]}

Each stream reads Flink's datagen source, a sequence seq = 0..rows-1 at
rows_per_second, deterministic and restored from checkpoints, at
parallelism 1 so that the rows reach the sink in seq order. A stream with
keys K > 0 upserts (identifier field id, write.upsert.enabled: an equality
delete of the key with every row) the row (id = seq % K, v = seq,
s = 'v' || seq): key k's final row is the largest seq below rows with
seq % K = k. A stream with keys 0 appends (id = seq, v = seq, s = ...).
A stream with partitions P > 0 has a fourth column p = id % P, the
table's identity partition (and, upserting, part of its key, as Iceberg's
Flink sink wants of an upsert table's partition columns); scripts/bench.d/flink
writes such tables.

The catalog databases must exist (created by the caller, in WAL mode:
Iceberg 1.10's JdbcCatalog keeps a ResultSet open after its table-exists
check, which holds an SQLite read lock, and every other writer then gets
SQLITE_BUSY; in WAL mode readers do not block the writer). A commit that
finds the database locked waits (busy_timeout 10 minutes, not sqlite-jdbc's
3 s): the tests hold a catalog's write lock to stop a commit half-way. The
tables are created when missing, with the stream's extra properties. Checkpoints go to checkpoint_dir and are retained
when the job is cancelled or killed; restore names one (its chk-N
directory) to start from. The job runs until the sequence ends (the sink
commits at the final checkpoint) or the process is killed. It prints
"job JOBID" on stdout once submitted.

Run as: DIR/bin/python flink_job.py SPEC, DIR being what
scripts/install-flink prints, with HADOOP_CLASSPATH holding DIR/jars/*.
"""

import json
import sys

from pyflink.common import Configuration
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    spec = json.loads(sys.argv[1])
    conf = Configuration()
    conf.set_string("parallelism.default", "1")
    conf.set_string("execution.checkpointing.interval", f"{spec['checkpoint_ms']}ms")
    conf.set_string("execution.checkpointing.dir", "file://" + spec["checkpoint_dir"])
    conf.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
    conf.set_string("execution.checkpointing.num-retained", "3")
    conf.set_string("execution.checkpointing.checkpoints-after-tasks-finish", "true")
    # A restart would replay from the last checkpoint inside this JVM; the
    # tests restart by restoring a new job instead, so a failure ends it.
    conf.set_string("restart-strategy.type", "none")
    if spec.get("restore"):
        conf.set_string("execution.state-recovery.path", "file://" + spec["restore"])
    env = TableEnvironment.create(
        EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build())

    env.execute_sql(f"""
        CREATE TEMPORARY TABLE gen (seq BIGINT) WITH (
          'connector' = 'datagen',
          'rows-per-second' = '{spec['rows_per_second']}',
          'fields.seq.kind' = 'sequence',
          'fields.seq.start' = '0',
          'fields.seq.end' = '{spec['rows'] - 1}')""")
    stmts = env.create_statement_set()
    for st in spec["streams"]:
        cat = st["catalog_name"]
        ns, name = st["table"].rsplit(".", 1)
        env.execute_sql(f"""
            CREATE CATALOG {cat} WITH (
              'type' = 'iceberg',
              'catalog-impl' = 'org.apache.iceberg.jdbc.JdbcCatalog',
              'uri' = 'jdbc:sqlite:{st['catalog_db']}',
              'jdbc.schema-version' = 'V1',
              'jdbc.init-catalog-tables' = 'false',
              'warehouse' = 'file://{st['warehouse']}',
              'jdbc.busy_timeout' = '600000',
              'cache-enabled' = 'false')""")
        env.execute_sql(f"CREATE DATABASE IF NOT EXISTS {cat}.{ns}")
        table = f"{cat}.{ns}.{name}"
        props = ", ".join(f"'{k}' = '{v}'" for k, v in
                          {"format-version": st["format_version"], **st.get("properties", {})}.items())
        parts = st.get("partitions", 0)
        pcol, pkey, pby, pval = "", "", "", ""
        if parts > 0:
            pcol, pkey, pby = ", p BIGINT NOT NULL", ", p", "PARTITIONED BY (p)"
        if st["keys"] > 0:
            idx = f"seq % {st['keys']}"
            if parts > 0:
                pval = f", {idx} % {parts}"
            env.execute_sql(f"""
                CREATE TABLE IF NOT EXISTS {table} (
                  id BIGINT NOT NULL, v BIGINT, s STRING{pcol},
                  PRIMARY KEY (id{pkey}) NOT ENFORCED
                ) {pby} WITH ({props}, 'write.upsert.enabled' = 'true')""")
            stmts.add_insert_sql(
                f"INSERT INTO {table} SELECT {idx}, seq, CONCAT('v', CAST(seq AS STRING)){pval} FROM gen")
        else:
            if parts > 0:
                pval = f", seq % {parts}"
            env.execute_sql(f"""
                CREATE TABLE IF NOT EXISTS {table} (id BIGINT NOT NULL, v BIGINT, s STRING{pcol})
                {pby} WITH ({props})""")
            stmts.add_insert_sql(
                f"INSERT INTO {table} SELECT seq, seq, CONCAT('v', CAST(seq AS STRING)){pval} FROM gen")
    result = stmts.execute()
    client = result.get_job_client()
    print("job", client.get_job_id(), flush=True)
    result.wait()
    print("finished", flush=True)


if __name__ == "__main__":
    main()
