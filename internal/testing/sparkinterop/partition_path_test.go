package sparkinterop

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/icectl/icectl/iceberg/table"
	"github.com/icectl/icectl/internal/testing/testenv"
)

// TestPartitionPathsBesideSpark has Spark (Java's
// PartitionSpec.partitionToPath) write rows with awkward values into a
// table partitioned by identity on every type Spark 3.5 writes and by
// every transform, and checks that each data file lies in the directory
// table.PartitionPathOf gives for the partition tuple its manifest entry
// holds. Time, uuid, fixed and nanosecond timestamps, which Spark 3.5
// cannot write, are covered by iceberg/table's TestHumanValue alone.
func TestPartitionPathsBesideSpark(t *testing.T) {
	t.Parallel()
	testenv.Need(t, testenv.Spark, "PySpark and Iceberg's Spark runtime (scripts/install-spark)")
	work(t, "") // before the test's deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := newWapTable(ctx, t, t.TempDir(), "ppath")
	w.mustSQL(nil, "CREATE NAMESPACE {cat}.ns",
		"CREATE TABLE {cat}.ns.t (id INT, b BOOLEAN, i INT, l BIGINT, f FLOAT, d DOUBLE, "+
			"dec DECIMAL(9,2), tiny DECIMAL(12,10), s STRING, `na me/é` STRING, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, bin BINARY, dt2 DATE) "+
			"USING iceberg TBLPROPERTIES ('format-version'='2') PARTITIONED BY (b, i, l, f, d, dec, tiny, s, `na me/é`, dt, ts, ntz, bin, "+
			"years(dt), months(dt2), days(ntz), hours(ts), bucket(4, s), truncate(3, s), truncate(10, i), truncate(50, dec), truncate(2, bin))",
		"INSERT INTO {cat}.ns.t VALUES "+
			// every value null
			"(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "+
			// reserved characters, unicode, values before 1970, fractions,
			// scientific notation (floats, a decimal of adjusted exponent -8)
			"(2, true, -7, -9223372036854775808, CAST(1e10 AS FLOAT), 1.0E-5, -1.50, 0.00000001, "+
			"'a b/c=d%e+f~g*h_i.j-k:é😀', '?&#', DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.5', "+
			"TIMESTAMP_NTZ '2024-02-29 10:15:30.000120', X'FF00FB', DATE '1969-12-31'), "+
			// plain values; a zero decimal of scale 10 is 0E-10, an empty binary empty
			"(3, false, 42, 1234567890123, CAST(1.5 AS FLOAT), 12345678.9, 123.45, 0, "+
			"'plain', '', DATE '2024-02-29', TIMESTAMP '2024-02-29 10:00:00', TIMESTAMP_NTZ '1900-01-01 00:00:00', X'', DATE '2024-02-29'), "+
			// an hour and a day before 1970, float and double thresholds
			"(4, true, 0, 0, CAST(0.001 AS FLOAT), 1.0E7, 0.01, 0.0000012345, "+
			"'  ', 'x', DATE '1900-02-28', TIMESTAMP '1969-01-01 05:30:00.123456', TIMESTAMP_NTZ '1969-12-31 23:00:00', X'00', DATE '1969-01-15')")
	tbl := w.load()
	md := tbl.Metadata
	fs, err := table.LiveFiles(ctx, tbl.IO, md.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Data) != 4 {
		t.Fatalf("Spark wrote %d data files, want one per row (4)", len(fs.Data))
	}
	// Local paths in any spelling (file:/p, Hadoop's, for file:///p).
	local := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "file:"); ok {
			return "/" + strings.TrimLeft(rest, "/")
		}
		return p
	}
	prefix := local(table.DataLocation(md)) + "/"
	for _, e := range fs.Data {
		df := e.Entry.DataFile
		ps, ok := md.SpecByID(int(df.SpecID))
		if !ok {
			t.Fatalf("%s: no spec %d", df.FilePath, df.SpecID)
		}
		rel, ok := strings.CutPrefix(local(df.FilePath), prefix)
		if !ok {
			t.Errorf("data file %s is not under the data location %s", df.FilePath, prefix)
			continue
		}
		if got := table.PartitionPathOf(md.CurrentSchema(), ps, df.Partition); got != path.Dir(rel) {
			t.Errorf("partition %v:\nJava's directory %s\n   PartitionPathOf %s", df.Partition, path.Dir(rel), got)
		}
	}
}
