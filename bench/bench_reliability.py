#!/usr/bin/env python3
"""./run bench reliability: how far the fuzz targets get from the committed
seeds in a fixed time, and a short soak.

Fuzzing: every target of tests/fuzz/fuzz.sh for the same time (30 s each;
--fuzz-seconds or GS_BENCH_FUZZ_SECONDS), from the committed seed corpus
alone (new inputs go to an empty directory under build/bench/), built with
clang under ASan + UBSan in build-fuzz/ as `./run fuzz` builds it. Per
target: inputs run, execs/s, coverage (libFuzzer's cov: edges), the corpus
libFuzzer kept (inputs and bytes) and the number of committed seed files.

Soak: tests/soak/soak.py for 60 s (--soak-seconds or GS_BENCH_SOAK_SECONDS):
the resident memory and thread count of gpustream-server, the demo pipeline
and the RTSP clients once a second, as JSON lines (one row per process with
its series, and the soak's summary), drawn as build/bench/reliability-soak.svg.
"""

import json
import os
import subprocess
import sys
import time

import bench_rtgpu

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
PROCESS_COLORS = {"server": "#c0392b", "demo": "#2471a3", "clients": "#1e8449"}


def log(msg):
    print(msg, flush=True)


def parse_fuzz_summary(text):
    """The table fuzz.sh prints at its end: one dict per target."""
    rows = []
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.split()[:2] == ["target", "result"])
    except StopIteration:
        return rows
    for line in lines[start + 1:]:
        f = line.split()
        if len(f) != 7 or line.startswith("("):
            continue
        target, result, execs, rate, cov, corpus, seeds = f
        units, _, size = corpus.partition("/")
        rows.append({"target": target, "result": result,
                     "execs": int(execs) if execs.isdigit() else None,
                     "execs_per_s": int(rate) if rate.isdigit() else None,
                     "cov_edges": int(cov) if cov.isdigit() else None,
                     "corpus_inputs": int(units) if units.isdigit() else None,
                     "corpus_size": size or None,
                     "seed_files": int(seeds)})
    return rows


def bench_fuzz(build, results, seconds):
    corpus = os.path.join(build, "bench", "fuzz-corpus-%d" % int(time.time()))
    os.makedirs(corpus)
    env = dict(os.environ, GS_FUZZ_CORPUS_DIR=corpus)
    log("fuzz: every target for %d s from the committed seeds (new inputs in %s)"
        % (seconds, corpus))
    p = subprocess.run(["bash", os.path.join(SRC, "tests", "fuzz", "fuzz.sh"), "all",
                        str(seconds)], env=env, stdout=subprocess.PIPE, text=True)
    if p.returncode == 77:
        log("fuzz: skipped: clang with libFuzzer is missing (Debian: clang libclang-rt-14-dev)")
        return True
    rows = parse_fuzz_summary(p.stdout)
    for r in rows:
        r.update({"area": "reliability", "bench": "fuzz", "seconds": seconds})
        results.add(r)
        log("fuzz %-10s %-5s %10s inputs, %7s execs/s, cov %5s edges, corpus %s inputs / %s, "
            "%d seed files" % (r["target"], r["result"], r["execs"], r["execs_per_s"],
                               r["cov_edges"], r["corpus_inputs"], r["corpus_size"],
                               r["seed_files"]))
    if p.returncode != 0 or not rows:
        log("fuzz: FAILED (exit %d): see build-fuzz/fuzz-TARGET.log" % p.returncode)
        return False
    return True


def soak_plot(samples, path, seconds, warm=None):
    """RSS and threads per process against time, two panels; a dashed line
    where the soak's warm-up ends (its bounds apply after it)."""
    tmax = max((s[0] for series in samples.values() for s in series), default=1) or 1
    rss_max = max((s[1] for series in samples.values() for s in series), default=1024) / 1024.0
    thr_max = max((s[2] for series in samples.values() for s in series), default=1)
    xstep = 10 if tmax <= 120 else 60
    xticks = list(range(0, int(tmax) + 1, xstep))
    rss_top = (int(rss_max / 20) + 1) * 20
    thr_top = (int(thr_max / 5) + 1) * 5
    rss = bench_rtgpu.Panel("Resident memory", "seconds", "RSS (MiB)", 0, tmax, 0, rss_top,
                            logx=False, xticks=xticks, yticks=list(range(0, rss_top + 1, 20)))
    thr = bench_rtgpu.Panel("Threads", "seconds", "threads", 0, tmax, 0, thr_top,
                            logx=False, xticks=xticks, yticks=list(range(0, thr_top + 1, 5)))
    for name, series in samples.items():
        color = PROCESS_COLORS.get(name, "#444")
        rss.line([(s[0], s[1] / 1024.0) for s in series], color, 1.5, label=name)
        thr.line([(s[0], s[2]) for s in series], color, 1.5, label=name)
    if warm is not None:
        rss.vline(warm, "warm-up ends")
        thr.vline(warm, "warm-up ends")
    return bench_rtgpu.svg([rss, thr], path,
                           "Soak of %d s (tests/soak/soak.py): one sample a second. "
                           "server: gpustream-server; demo: the NC + SRTP loopback pipeline; "
                           "clients: RTSP clients coming and going" % seconds)


def bench_soak(build, results, seconds):
    out = os.path.join(build, "bench", "soak")
    log("soak: %d s (samples in %s)" % (seconds, out))
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "soak", "soak.py"),
                        "--seconds", str(seconds), "--out", out, "--server",
                        os.path.join(build, "pipelines", "server", "gpustream-server")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples, summary = {}, None
    try:
        with open(os.path.join(out, "samples.jsonl")) as f:
            for line in f:
                row = json.loads(line)
                if "summary" in row:
                    summary = row["summary"]
                else:
                    samples.setdefault(row["process"], []).append(
                        (row["t"], row["rss_kib"], row["threads"]))
    except OSError:
        pass
    for name, series in samples.items():
        results.add({"area": "reliability", "bench": "soak-series", "process": name,
                     "seconds": seconds, "t": [s[0] for s in series],
                     "rss_kib": [s[1] for s in series], "threads": [s[2] for s in series]})
    if summary is not None:
        results.add({"area": "reliability", "bench": "soak", "seconds": seconds,
                     "passed": p.returncode == 0, "summary": summary})
        for name in ("server", "demo", "clients"):
            s = summary.get(name)
            if s:
                log("soak %-7s RSS %6.1f MiB after the warm-up -> %6.1f MiB at the end, "
                    "threads %d -> %d (most %d)" % (
                        name, s["rss-kib-after-warm-up"] / 1024.0, s["rss-kib-end"] / 1024.0,
                        s["threads-after-warm-up"], s["threads-end"], s["threads-max"]))
    if samples:
        warm = summary.get("warm-up-seconds") if summary else None
        log("soak: plot %s" % soak_plot(samples, os.path.join(build, "bench",
                                                               "reliability-soak.svg"),
                                        seconds, warm))
    if p.returncode != 0:
        log("soak: FAILED (exit %d):\n%s" % (p.returncode, p.stdout[-2000:]))
        return False
    return True


def bench(build, results, fuzz_seconds=None, soak_seconds=None):
    fuzz_seconds = fuzz_seconds or int(os.environ.get("GS_BENCH_FUZZ_SECONDS", 30))
    soak_seconds = soak_seconds or int(os.environ.get("GS_BENCH_SOAK_SECONDS", 60))
    ok = bench_fuzz(build, results, fuzz_seconds)
    ok = bench_soak(build, results, soak_seconds) and ok
    return ok
