"""Writes golden.json: compact Theta sketches made by Apache DataSketches'
Java library, for theta_test.go. CLASSPATH is either Iceberg's Spark
runtime jar (which shades datasketches-java 6.2.0 in Iceberg 1.10.2) or
Maven Central's datasketches-java and datasketches-memory jars, joined by
':'; both give the same file (checked with 6.1.1 and memory 3.0.2).

    $ICECTL_TEST_SPARK/bin/python golden.py $ICECTL_TEST_SPARK/jars/iceberg-spark-runtime-*.jar > golden.json
    $ICECTL_TEST_SPARK/bin/python golden.py datasketches-java-6.1.1.jar:datasketches-memory-3.0.2.jar > golden.json

Each case names its input values, turned into bytes here as Iceberg's
single-value serialization does, and updates the sketch with
UpdateSketch.update(ByteBuffer) as Iceberg's ThetaSketchAgg does. "compact"
is UpdateSketch.compact().toByteArray(); "union" is the Union of that
sketch's result, the step Spark's aggregate ends with.
"""
import hashlib
import json
import struct
import sys

from py4j.java_gateway import JavaGateway


def cases():
    le64 = lambda v: struct.pack("<q", v)
    le32 = lambda v: struct.pack("<i", v)
    yield "empty", []
    yield "one-long", [le64(42)]
    yield "ints-100", [le32(i) for i in range(100)]
    yield "strings", [s.encode() for s in ["a", "b", "", "a", "héllo", "b"]]
    yield "doubles", [struct.pack("<d", d) for d in [0.0, -0.0, 1.5, float("nan"), float("inf")]]
    yield "longs-5000", [le64(i) for i in range(5000)]
    yield "longs-20000", [le64(i * 7919) for i in range(20000)]


def digest(sketch):
    """The serialization: whole when short, else its length, first 32
    bytes and SHA-256 (the golden file stays small)."""
    b = bytes(sketch.toByteArray())
    d = {"len": len(b), "estimate": sketch.getEstimate()}
    if len(b) <= 1024:
        d["hex"] = b.hex()
    else:
        d["head"] = b[:32].hex()
        d["sha256"] = hashlib.sha256(b).hexdigest()
    return d


def main():
    gw = JavaGateway.launch_gateway(classpath=sys.argv[1], die_on_exit=True)
    jvm = gw.jvm
    ds = jvm.org.apache.datasketches
    if "iceberg-spark-runtime" in sys.argv[1]:
        ds = jvm.org.apache.iceberg.shaded.org.apache.datasketches
    theta = ds.theta
    out = []
    for name, values in cases():
        sk = theta.UpdateSketch.builder().build()
        for v in values:
            sk.update(jvm.java.nio.ByteBuffer.wrap(bytearray(v)))
        compact = sk.compact()
        union = theta.SetOperationBuilder().buildUnion()
        union.union(compact)
        res = union.getResult()
        out.append({"name": name, "compact": digest(compact), "union": digest(res)})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    gw.shutdown()


if __name__ == "__main__":
    main()
