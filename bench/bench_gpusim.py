#!/usr/bin/env python3
"""The gpu-sim area of ./run bench: the host CPU time per packet (per frame
for the frame elements) of the elements' GPU paths, on the simulated CUDA
device (kernels/gpusim, a libcuda.so.1 of ours first on LD_LIBRARY_PATH),
beside the same element's CPU path and a plain GstQueue moving the same
packets in the same run.

Each measurement is one run of build/bench/bench_gpusim (bench/bench_gpusim.c):
the element between a source pad and a sink pad of that program, packets
made beforehand (each a buffer of its own, as a payloader's) and pushed by
one thread at a fixed rate in 1 ms ticks, a warm-up, then a window that
ends when the sink has seen the window's output. CPU time over the window:
the process CPU clock (every thread), and each thread's from
/proc/self/task/TID/schedstat, by thread name. The modes, after the
Collector-only / Zero-load / Full-load split of Kai Zhang, Jiayu Hu, Bei Hua,
"A holistic approach to build real-time stream processing system with GPU"
(2015), section 8, Fig. 9:

  GstQueue (anchor)   queue (unbounded) moving the same packets, same rate
  source and sink     no element: what the program's own push and free cost
  Collector-only      rtgpuqueue processor=copy backend=gpu: batches are
                      collected, swapped and forwarded, no GPU work
  Zero-load           backend=gpu, GPUSIM_MODEL=zero: copies and kernels take
                      no modelled time (host work alone)
  Full-load           backend=gpu, GPUSIM_MODEL=h100: every stream operation
                      lasts as the H100 model says
  CPU path            backend=cpu

The simulator runs each CUDA stream's copies and kernels on a thread of its
own, on this CPU: work a real GPU does. Those threads (bench_gpusim names
them "gpusim-stream", found by their start routine in libcuda.so.1) are
reported as "emulation" and left out of "host work". The source's own
pacing (its CPU time in the sleeps between ticks) is left out of every
figure. Each figure: the run with the least host work of --reps runs
(GstQueue and the bare source: of 3), since other load on the machine only
ever adds.

Targets, printed as pass / fail lines: the worker thread (the scheduler's
gps-worker; the coder pool's GPU coder) <= 0.1 x GstQueue's per-packet cost;
all host work <= 0.5 x GstQueue's. Full-load: the throughput the per-thread
costs predict on the H100's 16-core host (the worker, or where there is none
the streaming thread, bounds it on one core; the other threads share the
other 15) beside the model's end-to-end figure at the element's own batch
size (its copies and launches of the run, as the H100 model times them,
back to back on one CUDA stream), target >= 0.8.

    bench/bench_gpusim.py BUILD [--reps N] [--cases a,b] [--json FILE]

Needs the build's plugins on the GStreamer path (./run bench gpu-sim sets it)."""

import argparse
import json
import os
import subprocess
import sys
import time

PKT = 12 + 7 * 188              # the paper's RTP packet of MPEG-TS: 1328 bytes
NC_HEADER = 24                  # docs/elements/nc-wire-format.md, seed coefficients
H100_CORES = 16                 # the host of docs/benchmarks/gpu-h100.md
WORKER_TARGET, HOST_TARGET, MODEL_TARGET = 0.1, 0.5, 0.8

# What each case pushes and what comes out. rate: items pushed a second;
# items: in the window; an item is a packet, a list of 64 packets, a
# generation's bytes (m coded packets out) or a frame. The rates keep the
# simulator's CPU emulation of the kernels within the 2 cores.
CASES = [
    dict(key="srtp-buffers", title="gpusrtpenc, single buffers",
         what="1328-byte RTP packets, one stream, each pushed alone (a batch of one)",
         args=["--element", "srtpenc", "--input", "buffers"],
         rate=8000, items=8000, warm=800, unit="packet", out_per_item=1,
         anchor=["--input", "buffers", "--size", str(PKT)], bytes=PKT, serial=True),
    dict(key="srtp-lists", title="gpusrtpenc, buffer lists",
         what="1328-byte RTP packets, one stream, in lists of 64 (one batch a list)",
         args=["--element", "srtpenc", "--input", "lists"],
         rate=20000 / 64, items=312, warm=32, unit="packet", out_per_item=64,
         anchor=["--input", "lists", "--size", str(PKT)], bytes=PKT, serial=True),
] + [
    dict(key="rtgpu-%d" % n, title="rtgpuqueue processor=srtp-protect, N = %d" % n,
         what="1328-byte RTP packets, %d stream%s (one per pipeline), cycle 10 ms, "
         "one launch per pipeline batch" % (n, "s" if n > 1 else ""),
         args=["--element", "rtgpuqueue", "--processor", "srtp-protect",
               "--pipelines", str(n), "--cycle", "10000000"],
         collector=["--element", "rtgpuqueue", "--processor", "copy",
                    "--pipelines", str(n), "--cycle", "10000000"],
         rate=20000, items=20000, warm=2000, unit="packet", out_per_item=1,
         anchor=["--input", "buffers", "--size", str(PKT)], bytes=PKT,
         worker="worker")
    for n in (1, 8, 64)
] + [
    dict(key="nc", title="ncencoder, m = 16, k = 1024",
         what="generations of 16 x 1024 bytes, 16 coded packets each (systematic=false, "
         "redundancy=0), one buffer a generation",
         args=["--element", "ncencoder", "--m", "16", "--k", "1024"],
         rate=250, items=250, warm=25, unit="packet", out_per_item=16,
         anchor=["--input", "buffers", "--size", str(1024 + NC_HEADER)],
         anchor_rate=250 * 16, bytes=1024, worker="GPU coder"),
    dict(key="dxt", title="dxtenc format=dxt1, 1080p RGBA",
         what="1920x1080 RGBA frames from the pinned pool dxtenc proposes (as "
         "videotestsrc takes it), 30 a second",
         args=["--element", "dxtenc", "--width", "1920", "--height", "1080"],
         rate=30, items=30, warm=5, unit="frame", out_per_item=1,
         anchor=["--input", "frames", "--size", str(1920 * 1080 * 4)]),
    dict(key="cstp", title="cstpsink, 4 streams",
         what="frames of 200 kB to 4 UDP streams on loopback (nobody listening), "
         "15 % redundancy coded on the coder pool, 20 a second",
         args=["--element", "cstpsink", "--size", "200000"],
         rate=20, items=20, warm=3, unit="frame", out_per_item=1,
         anchor=["--input", "frames", "--size", "200000"], worker="GPU coder"),
]

MODES = [
    # key, label, bench_gpusim args (after the case's), GPUSIM_MODEL
    ("queue", "GstQueue (anchor)", None, "zero"),
    ("direct", "source and sink alone", None, "zero"),
    ("collector", "Collector-only (processor=copy)", ["--backend", "gpu"], "zero"),
    ("zero", "GPU, Zero-load (model zero)", ["--backend", "gpu"], "zero"),
    ("h100", "GPU, Full-load (model h100)", ["--backend", "gpu"], "h100"),
    ("cpu", "CPU path (backend=cpu)", ["--backend", "cpu"], "zero"),
]


def log(msg=""):
    print(msg, flush=True)


def role(t):
    """The part a thread plays, by what bench_gpusim says of it and its name."""
    name = t["name"]
    if t["gpusim"]:
        return "emulation"
    if t["main"]:
        return "source"
    if name == "gps-worker":
        return "worker"
    if name.startswith("gps-fwd"):
        return "forwarders"
    if name.startswith("queue") and name.endswith(":src"):
        return "queue thread"
    if name == "gpsgpu":
        return "GPU coder"
    if name.startswith("gpscpu"):
        return "CPU coders"
    if name == "dxtenc-finish":
        return "finisher"
    return "other"


ROLE_ORDER = ["source", "worker", "forwarders", "queue thread", "GPU coder",
              "CPU coders", "finisher", "other"]


def derive(r):
    """Per-unit figures (ns) of one bench_gpusim result."""
    units = max(1, r["out"])
    roles = {}
    accounted = 0
    for t in r["threads"]:
        ro = role(t)
        ns = t["cpu_ns"]
        if ro == "source":
            ns = max(0, ns - r["pacing_cpu_ns"])
        roles[ro] = roles.get(ro, 0) + ns
        accounted += t["cpu_ns"]
    # threads that ended inside the window: in the process clock only
    gone = max(0, r["process_cpu_ns"] - accounted)
    roles["other"] = roles.get("other", 0) + gone
    total = r["process_cpu_ns"] - r["pacing_cpu_ns"]
    emu = roles.pop("emulation", 0)
    # the rate over the pushes: what the element took (the end of the
    # window may wait for what it holds)
    d = {"units": units,
         "units_per_s": r["pushed"] * r["out_per_item"] / (max(1, r["push_ns"]) / 1e9),
         "all_ns": total / units, "emulation_ns": emu / units,
         "host_ns": (total - emu) / units, "gone_ns": gone / units,
         "roles_ns": {k: v / units for k, v in roles.items() if v > 0 or k == "source"}}
    return d


def run_bench(exe, args, model, reps, env):
    """The best of reps runs (least host work per unit); None if all failed."""
    best = None
    for _ in range(reps):
        e = dict(env, GPUSIM_MODEL=model)
        p = subprocess.run([exe] + args, env=e, capture_output=True, text=True,
                           timeout=180)
        res = None
        for line in p.stdout.splitlines():
            if line.startswith("RESULT "):
                res = json.loads(line[7:])
        expected = res["items"] * res["out_per_item"] if res else 0
        # a stall of the shared machine can overflow a batch: a few lost
        # packets leave the figure per packet out as it is
        if res is None or p.returncode != 0 or res["out"] < 0.99 * expected:
            err = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            log("  (%s: %s)" % (" ".join(args), err[:300]))
            continue
        res["derived"] = derive(res)
        if best is None or res["derived"]["host_ns"] < best["derived"]["host_ns"]:
            best = res
    return best


def fmt_ratio(ns, anchor):
    return "%7.0f (%5.2f)" % (ns, ns / anchor) if anchor else "%7.0f" % ns


# the threads of a worker role, for the target lines
WORKER_THREADS = {"worker": "gps-worker", "GPU coder": "gpsgpu"}


def roles_text(d, anchor):
    parts = []
    for ro in ROLE_ORDER:
        ns = d["roles_ns"].get(ro)
        # a thread that hardly ran (an idle timer) is in the JSON only
        if ns is not None and (ro == "source" or ns >= 0.005 * anchor):
            parts.append("%s %.0f (%.2f)" % (ro, ns, ns / anchor))
    return ", ".join(parts)


def model_e2e(res, case):
    """The model's end-to-end figure (units/s): the run's own copies and
    launches, as the H100 model timed them, back to back on one CUDA
    stream; and the batch (units a launch)."""
    sim = res.get("gpusim") or {}
    busy = sim.get("model_busy_s", 0)
    units = res["derived"]["units"]
    if busy <= 0 or not sim.get("launches"):
        return None, None
    return units / busy, units / sim["launches"]


def predict(d, worker_role):
    """Units/s the per-thread host costs allow on the H100's host: the bound
    thread on one core, the rest on the other cores."""
    bound_role = worker_role if worker_role in d["roles_ns"] else "source"
    bound = d["roles_ns"].get(bound_role, 0)
    rest = max(0.0, d["host_ns"] - bound)
    lim = [1e9 / bound] if bound > 0 else []
    if rest > 0:
        lim.append((H100_CORES - 1) * 1e9 / rest)
    return (min(lim) if lim else None), bound_role, bound, rest


def measure(build, reps, only=None):
    exe = os.path.join(build, "bench", "bench_gpusim")
    simdir = os.path.join(build, "kernels", "gpusim")
    if not os.access(exe, os.X_OK) or not os.path.exists(os.path.join(simdir, "libcuda.so.1")):
        log("(bench_gpusim or the simulated device not built: the CUDA toolkit's "
            "headers were not found at configure time)")
        return []
    env = dict(os.environ, GPUSIM_QUIET="1")
    env["LD_LIBRARY_PATH"] = simdir + (":" + env["LD_LIBRARY_PATH"]
                                       if env.get("LD_LIBRARY_PATH") else "")
    rows = []
    anchors = {}                # (args) -> result, shared by the cases that push the same
    t_start = time.time()
    log("\nHost CPU time per packet (frame) of the GPU paths on the simulated device "
        "(kernels/gpusim), ns, beside\nGstQueue moving the same packets at the same rate "
        "in this run (x GstQueue in brackets).\n"
        "  emulation    the simulator's stream threads (named gpusim-stream by bench_gpusim: "
        "their start\n               routine is in libcuda.so.1): the copies and kernels, "
        "which a real GPU does; left out of host work\n"
        "  host work    every other thread of the process: its CPU clock less the emulation\n"
        "  all threads  the process CPU clock over the window\n"
        "Both less the source's pacing (its CPU time in the sleeps between ticks). Each row "
        "is the best of %d runs\n(GstQueue and the bare source and sink: of 3); the machine "
        "may be shared, and other load only adds." % reps)
    for case in CASES:
        if only and case["key"] not in only:
            continue
        common = ["--rate", "%g" % case["rate"], "--items", str(case["items"]),
                  "--warm", str(case["warm"])]
        # the anchor pushes what comes out of the element, at its rate
        arate = case.get("anchor_rate", case["rate"])
        aitems = int(case["items"] * arate / case["rate"])
        awarm = max(1, int(case["warm"] * arate / case["rate"]))
        acommon = ["--rate", "%g" % arate, "--items", str(aitems), "--warm", str(awarm)]
        results = {}
        for mode, label, margs, model in MODES:
            if mode in ("queue", "direct"):
                args = ["--element", "queue" if mode == "queue" else "direct"] + \
                    case["anchor"] + acommon
                k = tuple(args)
                if k not in anchors:
                    anchors[k] = run_bench(exe, args, model, 3, env)
                res = anchors[k]
            elif mode == "collector":
                if "collector" not in case:
                    continue
                res = run_bench(exe, case["collector"] + margs + common, model, reps, env)
            else:
                res = run_bench(exe, case["args"] + margs + common, model, reps, env)
            if res is not None:
                results[mode] = res
        rows += report(case, results)
    log("\n(gpu-sim: %.0f s)" % (time.time() - t_start))
    return rows


def report(case, results):
    unit = case["unit"]
    q = results.get("queue")
    anchor = q["derived"]["host_ns"] if q else None
    log("\n== %s: %s; %g %ss a second" % (
        case["title"], case["what"],
        case["rate"] * case["out_per_item"] if unit == "packet" else case["rate"], unit))
    log("%-33s %9s %15s %15s %10s  %s" % (
        "mode", unit + "s/s", "host work", "all threads", "emulation",
        "host work by thread (x GstQueue)"))
    rows = []
    for mode, label, _, model in MODES:
        res = results.get(mode)
        if res is None:
            continue
        d = res["derived"]
        log("%-33s %9.0f %15s %15s %10s  %s" % (
            label, d["units_per_s"], fmt_ratio(d["host_ns"], anchor),
            fmt_ratio(d["all_ns"], anchor),
            "%.0f" % d["emulation_ns"] if res.get("gpusim") else "-",
            roles_text(d, anchor) if anchor else ""))
        row = {"bench": "gpu-sim", "case": case["key"], "title": case["title"],
               "mode": mode, "mode_label": label, "element": res["element"],
               "backend": None if mode in ("queue", "direct") else res["backend"],
               "model": model if res.get("gpusim") else None,
               "unit": unit, "units": d["units"], "units_per_s": round(d["units_per_s"], 1),
               "rate_items_per_s": res["rate_items_per_s"], "items": res["items"],
               "lost": max(0, res["items"] * res["out_per_item"] - res["out"]),
               "host_ns": round(d["host_ns"], 1), "all_ns": round(d["all_ns"], 1),
               "emulation_ns": round(d["emulation_ns"], 1),
               "roles_ns": {k: round(v, 1) for k, v in d["roles_ns"].items()},
               "threads": [dict(t, role=role(t)) for t in res["threads"] if t["cpu_ns"] > 0],
               "pacing_cpu_ns": res["pacing_cpu_ns"], "process_cpu_ns": res["process_cpu_ns"],
               "wall_ns": res["wall_ns"], "gpusim": res.get("gpusim"),
               "element_stats": res.get("element_stats"),
               "anchor": "GstQueue", "anchor_ns": round(anchor, 1) if anchor else None,
               "ratio_host": round(d["host_ns"] / anchor, 3) if anchor else None}
        rows.append(row)
    if not anchor:
        return rows
    worker_role = case.get("worker")
    for mode in ("collector", "zero", "h100"):
        res = results.get(mode)
        if res is None:
            continue
        d = res["derived"]
        row = next(r for r in rows if r["mode"] == mode)
        tag = dict(collector="Collector-only", zero="Zero-load", h100="Full-load")[mode]
        if worker_role and worker_role in d["roles_ns"]:
            w = d["roles_ns"][worker_role] / anchor
            row["ratio_worker"] = round(w, 3)
            row["pass_worker"] = w <= WORKER_TARGET
            log("  %-14s %s %.0f ns = %.3f x GstQueue: %s (target <= %.1f)" % (
                tag + ":", "worker (%s)" % WORKER_THREADS[worker_role],
                d["roles_ns"][worker_role], w,
                "PASS" if w <= WORKER_TARGET else "FAIL", WORKER_TARGET))
        else:
            log("  %-14s worker: none (the element launches from the streaming thread, "
                "'source')" % (tag + ":"))
        h = d["host_ns"] / anchor
        row["pass_host"] = h <= HOST_TARGET
        log("  %-14s all host work %.0f ns = %.3f x GstQueue: %s (target <= %.1f)" % (
            "", d["host_ns"], h, "PASS" if h <= HOST_TARGET else "FAIL", HOST_TARGET))
        if mode != "h100":
            continue
        e2e, batch = model_e2e(res, case)
        pred, bound_role, bound, rest = predict(d, worker_role)
        row.update({"model_e2e_per_s": round(e2e, 1) if e2e else None,
                    "batch_units_per_launch": round(batch, 2) if batch else None,
                    "predicted_per_s": round(pred, 1) if pred else None,
                    "bound_thread": bound_role})
        if not e2e or not pred:
            continue
        ratio = pred / e2e
        row["ratio_model"] = round(ratio, 3)
        row["pass_model"] = ratio >= MODEL_TARGET
        bits = (lambda x: " (%.2f Gbit/s)" % (x * case["bytes"] * 8 / 1e9)) \
            if case.get("bytes") else (lambda x: "")
        if rest >= 0.01 * bound:
            others = "the other threads %.0f ns on %d cores -> %.0f k/s" % (
                rest, H100_CORES - 1, (H100_CORES - 1) * 1e6 / rest)
        else:
            others = "no other host thread works"
        log("  %-14s on the H100's host: %s %.0f ns on one core -> %.0f k/s; %s;" % (
            "", bound_role, bound, 1e6 / bound if bound else float("inf"), others))
        at = "%.1f %ss a launch" % (batch, unit) if batch >= 1 else \
            "%.1f launches a %s" % (1 / batch, unit)
        log("  %-14s predicted %.0f %ss/s%s, the model's end to end %.0f/s%s at %s (one "
            "CUDA stream): %.2f x: %s (target >= %.1f)" % (
                "", pred, unit, bits(pred), e2e, bits(e2e), at, ratio,
                "PASS" if ratio >= MODEL_TARGET else "FAIL", MODEL_TARGET))
        if case.get("serial"):
            # the streaming thread waits for each batch: host and device in series
            serial = 1e9 / (d["host_ns"] + 1e9 / e2e)
            row["serial_per_s"] = round(serial, 1)
            log("  %-14s (this path waits for each batch in the streaming thread: host "
                "and device in series, about %.0f %ss/s on one stream)" % ("", serial, unit))
    return rows


def bench(build, results, reps=2):
    """For bench/bench.py: the tables, the rows into its results and
    build/bench/gpu-sim.jsonl."""
    rows = measure(build, reps)
    path = os.path.join(build, "bench", "gpu-sim.jsonl")
    with open(path, "w") as f:
        for r in rows:
            r.setdefault("context", results.context)
            results.add(r)
            f.write(json.dumps(r) + "\n")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--cases", default=None,
                    help="comma-separated: " + ",".join(c["key"] for c in CASES))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = measure(a.build, a.reps, a.cases.split(",") if a.cases else None)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
