#!/usr/bin/env python3
"""JSON lines of ./run bench -> a markdown report for docs/benchmarks/.

  bench/bench_report.py [RESULTS.jsonl] [--machine machine.txt]

One table per benchmark, every field of its rows (the anchor and the ratio
beside each figure, as the benchmarks write them), and the run's context
(date, CPU, commit) and, with --machine, the GPU machine's description."""

import argparse
import json
import os
import sys

FIRST = ["op", "impl", "profile", "element", "device", "payload", "size",
         "format", "mode", "quality", "batch", "streams"]
LAST = ["anchor", "ratio", "ratio_to_srtpenc"]


def columns(rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in ("bench", "context") and k not in keys:
                keys.append(k)
    first = [k for k in FIRST if k in keys]
    last = [k for k in LAST if k in keys]
    return first + [k for k in keys if k not in first and k not in last] + last


def cell(v):
    if isinstance(v, float):
        return "%.4g" % v
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", default="build/bench/latest.jsonl")
    p.add_argument("--machine", help="a text file describing the machine")
    a = p.parse_args()
    rows = [json.loads(l) for l in open(a.results) if l.strip()]
    if not rows:
        print("no results in %s" % a.results, file=sys.stderr)
        return 1
    ctx = rows[0].get("context", {})
    print("# Benchmark run %s, commit %s\n" % (ctx.get("date", "?"), ctx.get("commit", "?")))
    print("CPU: %s, %s cores. Results: `%s`.\n" % (ctx.get("cpu", "?"), ctx.get("cores", "?"),
                                                 os.path.basename(a.results)))
    if a.machine and os.path.exists(a.machine):
        print("```\n%s\n```\n" % open(a.machine).read().strip())
    by_bench = {}
    for r in rows:
        by_bench.setdefault(r.get("bench", "?"), []).append(r)
    for bench, rs in by_bench.items():
        cols = columns(rs)
        print("## %s\n" % bench)
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rs:
            print("| " + " | ".join(cell(r.get(c, "")) for c in cols) + " |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
