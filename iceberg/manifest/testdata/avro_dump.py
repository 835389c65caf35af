"""Independent reader for the manifest tests: dumps an Avro container file as
JSON with every record keyed by its Iceberg field id, using Debian's
python3-avro (never the Go code under test)."""
import json
import sys

import avro.schema
from avro.datafile import DataFileReader
from avro.io import DatumReader


def by_id(schema, value):
    if value is None:
        return None
    t = schema.type
    if t == "union":
        for s in schema.schemas:
            if s.type == "null":
                continue
            return by_id(s, value)
    if t == "record":
        out = {}
        for f in schema.fields:
            fid = f.other_props.get("field-id", f.name)
            out[str(fid)] = by_id(f.type, value.get(f.name))
        return out
    if t == "array":
        return [by_id(schema.items, v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # logical types: decimal, uuid, date, timestamp


def main():
    out = []
    for path in sys.argv[1:]:
        with open(path, "rb") as fh:
            r = DataFileReader(fh, DatumReader())
            schema = r.datum_reader.writers_schema
            meta = {k: v.decode() for k, v in r.meta.items() if not k.startswith("avro.")}
            records = [by_id(schema, rec) for rec in r]
            out.append({"schema": schema.to_json(), "meta": meta, "records": records})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
