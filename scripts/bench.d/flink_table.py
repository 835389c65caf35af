"""Prints scripts/bench.d/flink's results as the table of docs/benchmarks.md.

One row per shape, the shape where icectl is least ahead of Spark in CPU
seconds first. Spark's and Flink's figures are the timed call's or job's
(their start-up, with a warm-up call on a tiny table, in the last columns);
peak memory is the JVM's high-water mark over the whole process.

Run as: python3 flink_table.py RESULTS.jsonl
"""

import json
import sys


def main():
    by = {}
    for d in map(json.loads, open(sys.argv[1])):
        by.setdefault(d["shape"], {})[d["tool"]] = d
    rows = []
    for shape, t in by.items():
        ice = t.get("icectl")
        sp = timed(t.get("spark"), "verb")
        fl = timed(t.get("flink"), "label")
        if fl and fl.get("error") and t["flink"].get("why"):
            fl["error"] = t["flink"]["why"]
        ic = float(ice["cpu_s"]) if ice else None
        ratio = lambda o: (o["cpu_s"] / max(ic, 0.01)) if (ic and o and "cpu_s" in o and not o.get("error")) else None
        rows.append((ratio(sp) if ratio(sp) is not None else 1e9, shape, t, ice, sp, fl, ratio(sp), ratio(fl)))
    rows.sort(key=lambda r: r[0])
    print("| shape | v | data / delete files, MB | icectl s | icectl CPU-s | icectl MiB | Spark s | Spark CPU-s "
          "| Spark MiB | Flink s | Flink CPU-s | Flink MiB | Spark / icectl CPU | Flink / icectl CPU "
          "| rows = model (icectl / Spark / Flink) | files after (icectl / Spark / Flink) | start-up s, CPU-s (Spark / Flink) |")
    print("|---" * 17 + "|")
    f = lambda x: "-" if x is None else f"{x:.1f}"
    for _, shape, t, ice, sp, fl, rs, rf in rows:
        any_ = ice or next(iter(t.values()))
        cells = [shape, any_["v"], f"{any_['data_files']} / {any_['delete_files']}, {any_['size_mb']}"]
        cells += [ice["wall_s"], ice["cpu_s"], ice["rss_mib"]] if ice else ["not run"] * 3
        for o in (sp, fl):
            if o is None:
                cells += ["not run", "-", "-"]
            elif o.get("error"):
                cells += [f"failed: {o['error'][:120]}", o.get("cpu_s", "-"), o.get("peak", "-")]
            else:
                cells += [o["wall_s"], o["cpu_s"], o.get("peak", "-")]
        cells += [f(rs), f(rf)]
        cells.append(" / ".join(ok(t.get(k)) for k in ("icectl", "spark", "flink")))
        cells.append(" / ".join(t[k].get("files_after", "-") if k in t else "-" for k in ("icectl", "spark", "flink")))
        cells.append(" / ".join(startup(o) for o in (sp, fl)))
        print("| " + " | ".join(str(c) for c in cells) + " |")


def timed(d, key):
    """The timed run of a Spark or Flink result (the warm-up and the totals
    apart), with the JVM's peak RSS and start-up folded in."""
    if d is None:
        return None
    runs = d.get("runs", [])
    out = {}
    warm = None
    for r in runs:
        if r.get("warmup"):
            out["warmup_s"] = r.get("wall_s")
            warm = r
        elif "startup_s" in r:
            out["startup_s"], out["startup_cpu_s"] = r["startup_s"], r.get("startup_cpu_s")
            if warm is not None and "wall_s" in warm:
                # An earlier FlinkMaintenance printed its start-up after the
                # warm-up: the start-up is what came before it.
                out["startup_s"] = round(r["startup_s"] - warm["wall_s"], 2)
                out["startup_cpu_s"] = round(r["startup_cpu_s"] - warm["cpu_s"], 2)
        elif "jvm_peak_rss_mib" in r:
            out["peak"] = r["jvm_peak_rss_mib"]
        elif key in r or "error" in r:
            out.update({k: v for k, v in r.items() if k in ("wall_s", "cpu_s", "error")})
    if "wall_s" not in out and "error" not in out:
        out["error"] = "no timed run"
    return out


def ok(d):
    if d is None:
        return "-"
    a = d.get("after") or {}
    return "yes" if a.get("ok") else f"NO ({a.get('error')})"


def startup(o):
    if not o or "startup_s" not in o:
        return "-"
    return f"{o['startup_s']}, {o.get('startup_cpu_s')} (+ warm-up {o.get('warmup_s')} s)"


if __name__ == "__main__":
    main()
