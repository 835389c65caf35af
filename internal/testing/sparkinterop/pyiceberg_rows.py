"""PyIceberg's read of a table of Iceberg's JDBC catalog over SQLite, for
hive_test.go: the rows as a JSON list of objects, dates as YYYY-MM-DD,
decimals as strings, timestamps as microseconds since the epoch.

Usage: python pyiceberg_rows.py sqlite:////abs/catalog.db CATALOG_NAME NS.TABLE
"""

import datetime
import decimal
import json
import sys

from pyiceberg.catalog.sql import SqlCatalog

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def plain(v):
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        return (v - EPOCH) // datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def main(uri, name, ident):
    # The catalog's tables exist (Java created them): PyIceberg must not.
    cat = SqlCatalog(name, uri=uri, init_catalog_tables="false")
    rows = cat.load_table(ident).scan().to_arrow().to_pylist()
    json.dump([{k: plain(v) for k, v in r.items()} for r in rows], sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
