// FlinkMaintenance times Iceberg's own Flink table maintenance
// (org.apache.iceberg.flink.maintenance.api.TableMaintenance, iceberg-flink-runtime
// 1.10.0) for scripts/bench.d/flink: one JVM, one local mini-cluster per job,
// as an operator who runs Flink's maintenance as a job of its own would.
//
// Each argument LABEL=DB,CATALOG,WAREHOUSE,TASK names a table (Iceberg's
// JDBC catalog over the SQLite file DB, catalog name CATALOG, table ns.t)
// and a task: rewrite (RewriteDataFiles, rewrite-all, one file per
// partition) or expire (ExpireSnapshots, retain the last one, older than
// now). A label that starts with "warmup" is a call that only warms the JVM
// up: it is reported with the start-up. Every job is one-shot: the monitor
// source sees the table's snapshots, the trigger fires on the first commit
// it counts, and the job is cancelled once the task's commit is in the
// catalog (the catalog's metadata_location moves, read over JDBC every
// 50 ms). Only that span is timed: wall seconds and the JVM's CPU seconds
// (every thread). One JSON line per job on stdout; the first line is the
// start-up (JVM start to the first job, the warm-up), the last the JVM's
// totals.
//
// Build and run as scripts/bench.d/flink does: javac -cp JARS, java -cp
// OUT:JARS FlinkMaintenance LABEL=... (JARS: pyflink/lib/*.jar and the jars
// scripts/install-flink installs).

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.ExpireSnapshots;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;

public class FlinkMaintenance {
  static final long TIMEOUT_MS = Long.getLong("bench.timeout.ms", 3_600_000L);

  static double cpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }

  static long hwmMiB() throws Exception {
    for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (l.startsWith("VmHWM:")) {
        return Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024;
      }
    }
    return -1;
  }

  static String metadataLocation(Connection c) throws Exception {
    try (Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'ns' AND table_name = 't'")) {
      return r.next() ? r.getString(1) : null;
    }
  }

  static int lockRows(Path lockDb) {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + lockDb);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM flink_maintenance_lock")) {
      return r.next() ? r.getInt(1) : 0;
    } catch (Exception e) {
      return 0; // no lock table yet: the trigger has not opened its lock
    }
  }

  static String q(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  public static void main(String[] args) throws Exception {
    long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
    boolean first = true;
    int n = 0;
    for (String arg : args) {
      String label = arg.substring(0, arg.indexOf('='));
      String[] f = arg.substring(arg.indexOf('=') + 1).split(",");
      String db = f[0], cat = f[1], wh = f[2], task = f[3];
      boolean warm = label.startsWith("warmup");
      if (first) {
        first = false;
        System.out.println(
            "{\"startup_s\": "
                + (System.currentTimeMillis() - jvmStart) / 1000.0
                + ", \"startup_cpu_s\": "
                + String.format("%.2f", cpuSeconds())
                + "}");
      }
      Map<String, String> props = new HashMap<>();
      props.put("uri", "jdbc:sqlite:" + db);
      props.put("jdbc.schema-version", "V1");
      props.put("jdbc.init-catalog-tables", "false");
      props.put("warehouse", "file://" + wh);
      props.put("cache-enabled", "false");
      TableLoader loader =
          TableLoader.fromCatalog(
              CatalogLoader.custom(cat, props, new Configuration(), "org.apache.iceberg.jdbc.JdbcCatalog"),
              TableIdentifier.of("ns", "t"));
      Map<String, String> lockProps = new HashMap<>();
      lockProps.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "true");
      Path lockDb = Files.createTempFile("flink-maintenance-lock", ".db");
      JdbcLockFactory locks = new JdbcLockFactory("jdbc:sqlite:" + lockDb, label + "-" + n, lockProps);
      n++;

      String doc = "{\"label\": " + q(label) + ", \"task\": " + q(task) + ", \"warmup\": " + warm;
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
        String before = metadataLocation(c);
        double c0 = cpuSeconds();
        long w0 = System.nanoTime();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // As Spark's local[2]: two task slots' worth of parallelism.
        env.setParallelism(2);
        TableMaintenance.Builder b =
            TableMaintenance.forTable(env, loader, locks)
                .uidSuffix(label)
                .rateLimit(Duration.ofMillis(100))
                .lockCheckDelay(Duration.ofMillis(100));
        if (task.equals("rewrite")) {
          b.add(
              RewriteDataFiles.builder()
                  .scheduleOnCommitCount(1)
                  .rewriteAll(true)
                  .targetFileSizeBytes(4L << 30));
        } else {
          b.add(
              ExpireSnapshots.builder()
                  .scheduleOnCommitCount(1)
                  .retainLast(1)
                  .maxSnapshotAge(Duration.ZERO));
        }
        b.append();
        JobClient job = env.executeAsync("icectl-bench-flink-" + label);
        String after = before;
        String error = null;
        // The trigger takes the lock (a row of the lock table) and the task's
        // end releases it, committed or failed: a lock seen and gone with no
        // commit is a failed task (its exception is in Flink's log).
        boolean locked = false;
        while (after.equals(before)) {
          int held = lockRows(lockDb);
          if (held > 0) {
            locked = true;
          } else if (locked && metadataLocation(c).equals(before)) {
            error = "the task ended without a commit (Flink's log on stderr says why)";
            break;
          }
          if (job.getJobStatus().get().isTerminalState()) {
            error = "the job ended before the task committed: " + job.getJobStatus().get();
            break;
          }
          if ((System.nanoTime() - w0) / 1_000_000 > TIMEOUT_MS) {
            error = "no commit in " + TIMEOUT_MS / 1000 + " s";
            break;
          }
          Thread.sleep(50);
          after = metadataLocation(c);
        }
        long w1 = System.nanoTime();
        double c1 = cpuSeconds();
        if (task.equals("expire") && error == null) {
          // ExpireSnapshots deletes the files after its commit: give it
          // until the job has been idle, and count it.
          Thread.sleep(2000);
          w1 = System.nanoTime() - 2_000_000_000L;
          c1 = cpuSeconds();
        }
        job.cancel().get();
        doc += String.format(", \"wall_s\": %.3f, \"cpu_s\": %.2f", (w1 - w0) / 1e9, c1 - c0);
        if (error != null) {
          doc += ", \"error\": " + q(error);
        } else {
          loader.open();
          Table t = loader.loadTable();
          Snapshot s = t.currentSnapshot();
          doc += ", \"operation\": " + q(s.operation()) + ", \"summary\": {";
          String sep = "";
          for (Map.Entry<String, String> e : s.summary().entrySet()) {
            doc += sep + q(e.getKey()) + ": " + q(e.getValue());
            sep = ", ";
          }
          doc += "}";
          int snaps = 0;
          for (Snapshot ignored : t.snapshots()) {
            snaps++;
          }
          doc += ", \"snapshots_after\": " + snaps;
          loader.close();
        }
      } catch (Exception e) {
        doc += ", \"error\": " + q(String.valueOf(e));
      }
      System.out.println(doc + "}");
      System.out.flush();
      Files.deleteIfExists(lockDb);
    }
    System.out.println(
        "{\"jvm_peak_rss_mib\": "
            + hwmMiB()
            + ", \"jvm_cpu_s\": "
            + String.format("%.2f", cpuSeconds())
            + ", \"total_s\": "
            + (System.currentTimeMillis() - jvmStart) / 1000.0
            + "}");
    System.exit(0);
  }
}
