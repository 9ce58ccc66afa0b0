#!/usr/bin/env python3
"""GPU benchmark JSON lines (the bench.jsonl of ./run gpu-check) -> SVG.

  bench/gpu_plots.py BENCH.jsonl OUTDIR

  srtp-gpu-latency.svg   per-packet latency p99 against end-to-end Gbit/s,
                         one point per batch size, one line per CUDA stream
                         count and kernel (Zhang et al. 2015, Fig. 6)
  dxt-gpu-batch.svg      frame latency and frames/s against batch-blocks,
                         1080p and 4K, RGBA and UYVY in (Kim et al. 2011, Fig. 2-3)

Same drawing code as the rtgpu plots (bench_rtgpu.svg)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rtgpu import COLORS, Panel, load, svg  # noqa: E402


def srtp_plot(rows, outdir, device):
    rows = [r for r in rows if r.get("bench") == "srtp_gpu" and r.get("payload") == 1316]
    panels = []
    for op in ("AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM"):
        mine = [r for r in rows if r["op"] == op]
        if not mine:
            continue
        p = Panel(op + ", 1316 B", "end to end, Gbit/s", "p99 latency per packet (ms)",
                  0, 350, 0, 12, logx=False, xticks=[0, 50, 100, 150, 200, 250, 300, 350],
                  yticks=[0, 2, 4, 6, 8, 10, 12])
        p.vline(100, "100 Gbit/s")
        i = 0
        for impl in ("gpu-e2e", "gpu-e2e-warp"):
            for ns in sorted({r["streams"] for r in mine if r["impl"] == impl}):
                pts = sorted((r["batch"], r["gbps"], r["lat_p99_us"] / 1000)
                             for r in mine if r["impl"] == impl and r["streams"] == ns)
                p.line([(g, l) for _, g, l in pts], COLORS[i % len(COLORS)], 2.0,
                       dash="5,3" if impl.endswith("warp") else None,
                       label="%s, %d stream%s" % ("warp" if impl.endswith("warp") else "thread",
                                                  ns, "s" if ns > 1 else ""))
                i += 1
        panels.append(p)
    if not panels:
        return None
    return svg(panels, os.path.join(outdir, "srtp-gpu-latency.svg"),
               "bench_srtp_gpu on %s: batches of 256 to 65536 packets (left to right along a "
               "line), pinned host memory in and out. Dashed: one warp per packet" % device)


def dxt_plot(rows, outdir, device):
    rows = [r for r in rows if r.get("bench") == "dxt_gpu_sliced"]
    if not rows:
        return None
    panels = []
    for key, ylabel, ymax, ticks in (
            ("lat_p50_us", "frame latency p50 (ms)", 6, [0, 1, 2, 3, 4, 5, 6]),
            ("fps_end_to_end", "frames/s, back to back", 12000,
             [0, 2000, 4000, 6000, 8000, 10000, 12000])):
        p = Panel("DXT1 fast, %s" % ("latency" if key.startswith("lat") else "throughput"),
                  "batch-blocks (log scale)", ylabel, 500, 600000, 0, ymax,
                  xticks=[1000, 3000, 10000, 30000, 100000, 300000], yticks=ticks)
        p.vline(23040, "default")
        i = 0
        for size in ("1920x1080", "3840x2160"):
            for inp in ("rgba", "uyvy"):
                pts = sorted((r["batch_blocks"], r[key] / (1000 if key.startswith("lat") else 1))
                             for r in rows if r["size"] == size and r["input"] == inp)
                p.line(pts, COLORS[i % len(COLORS)], 2.0, label="%s %s" % (size, inp.upper()))
                i += 1
        panels.append(p)
    return svg(panels, os.path.join(outdir, "dxt-gpu-batch.svg"),
               "bench_dxt_gpu on %s: a frame from pinned host memory in slices of batch-blocks "
               "over 3 CUDA streams. Latency: frames one at a time" % device)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    rows = load(sys.argv[1])
    device = next((r["device"] for r in rows if r.get("bench") == "srtp_gpu"), "the GPU")
    os.makedirs(sys.argv[2], exist_ok=True)
    for path in (srtp_plot(rows, sys.argv[2], device), dxt_plot(rows, sys.argv[2], device)):
        if path:
            print("plot: %s" % path)


if __name__ == "__main__":
    main()
