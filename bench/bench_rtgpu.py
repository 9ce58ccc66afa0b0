#!/usr/bin/env python3
"""The rtgpu area of ./run bench: runs bench_rtgpu (bench/bench_rtgpu.c,
built in build/bench) and draws its figures as SVG, without matplotlib.

  bench(build, results)             run it, add its JSON lines to results,
                                    write the SVGs next to them in build/bench
  python3 bench_rtgpu.py JSONL DIR [PREFIX]
                                    the SVGs of a results file into DIR,
                                    named PREFIX-*.svg (default rtgpu)

Figures (after the paper's Fig. 12 and 13):
  rtgpu-cdf-cycle.svg   latency CDF per stream at a fixed load, one colour per I
  rtgpu-cdf-load.svg    latency CDF per stream at I = 5 ms, one colour per load,
                        admission on and off
  rtgpu-misses.svg      share of packets past the deadline or dropped late
                        vs offered load"""

import json
import math
import os
import subprocess
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def find_bench(build):
    exe = os.path.join(build, "bench", "bench_rtgpu")
    return exe if os.access(exe, os.X_OK) else None


def bench(build, results, extra_args=()):
    exe = find_bench(build)
    if exe is None:
        print("(bench_rtgpu not built: the plugins are disabled?)")
        return []
    jpath = os.path.join(build, "bench", "rtgpu.jsonl")
    os.makedirs(os.path.dirname(jpath), exist_ok=True)
    if os.path.exists(jpath):
        os.remove(jpath)
    args = [exe, "--json", jpath] + list(extra_args)
    print("\n$ " + " ".join(args), flush=True)
    rc = subprocess.run(args).returncode
    if rc != 0:
        raise SystemExit("bench: bench_rtgpu failed with exit status %d" % rc)
    rows = load(jpath)
    for r in rows:
        r.setdefault("context", results.context)
        results.add(r)
    for path in plot(rows, os.path.join(build, "bench")):
        print("plot: %s" % path)
    return rows


def load(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


# ---- SVG ----------------------------------------------------------------------

class Panel:
    """One plot: log-scaled x (latency, ms) or linear x, linear y."""

    def __init__(self, title, xlabel, ylabel, xmin, xmax, ymin, ymax,
                 logx=True, xticks=None, yticks=None):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.xmin, self.xmax, self.ymin, self.ymax = xmin, xmax, ymin, ymax
        self.logx = logx
        self.xticks = xticks or []
        self.yticks = yticks or []
        self.lines = []     # (points, color, width, dash, label)
        self.vlines = []    # (x, label)

    def line(self, pts, color, width=1.0, dash=None, label=None, opacity=1.0):
        self.lines.append((pts, color, width, dash, label, opacity))

    def vline(self, x, label):
        self.vlines.append((x, label))


def _x(p, x, x0, w):
    if p.logx:
        x = max(x, p.xmin)
        f = (math.log10(x) - math.log10(p.xmin)) / (math.log10(p.xmax) - math.log10(p.xmin))
    else:
        f = (x - p.xmin) / (p.xmax - p.xmin)
    return x0 + min(max(f, 0.0), 1.0) * w


def _y(p, y, y0, h):
    f = (y - p.ymin) / (p.ymax - p.ymin)
    return y0 + h - min(max(f, 0.0), 1.0) * h


def _esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(panels, path, caption, pw=460, ph=300):
    ml, mr, mt, mb = 60, 170, 40, 50
    cols = min(len(panels), 2)
    rows = (len(panels) + cols - 1) // cols
    W = cols * (pw + ml + mr)
    H = rows * (ph + mt + mb) + 44
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           ]
    for k, part in enumerate(caption.split(". ")):
        out.append('<text x="10" y="%d" font-size="11" fill="#444">%s</text>'
                   % (H - 22 + 14 * k, _esc(part)))
    for i, p in enumerate(panels):
        x0 = (i % cols) * (pw + ml + mr) + ml
        y0 = (i // cols) * (ph + mt + mb) + mt
        out.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>'
                   % (x0, y0 - 12, _esc(p.title)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>'
                   % (x0, y0, pw, ph))
        for t in p.xticks:
            X = _x(p, t, x0, pw)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X, y0, X, y0 + ph))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X, y0 + ph + 15, "%g" % t))
        for t in p.yticks:
            Y = _y(p, t, y0, ph)
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, Y, x0 + pw, Y))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (x0 - 5, Y + 4, "%g" % t))
        out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
                   % (x0 + pw // 2, y0 + ph + 35, _esc(p.xlabel)))
        out.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle">%s</text>'
                   % (x0 - 42, y0 + ph // 2, _esc(p.ylabel)))
        for x, label in p.vlines:
            X = _x(p, x, x0, pw)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" '
                       'stroke-dasharray="4,3"/>' % (X, y0, X, y0 + ph))
            out.append('<text x="%.1f" y="%d" font-size="10">%s</text>' % (X + 3, y0 + 12, _esc(label)))
        ly = y0 + 10
        for pts, color, width, dash, label, opacity in p.lines:
            if not pts:
                continue
            d = " ".join("%.1f,%.1f" % (_x(p, x, x0, pw), _y(p, y, y0, ph)) for x, y in pts)
            out.append('<polyline fill="none" stroke="%s" stroke-width="%.1f" '
                       'stroke-opacity="%.2f"%s points="%s"/>'
                       % (color, width, opacity,
                          ' stroke-dasharray="%s"' % dash if dash else "", d))
            if label:
                out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                           % (x0 + pw + 10, ly, x0 + pw + 30, ly, color,
                              ' stroke-dasharray="%s"' % dash if dash else ""))
                out.append('<text x="%d" y="%d">%s</text>' % (x0 + pw + 35, ly + 4, _esc(label)))
                ly += 16
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


def _cdf_pts(cdf):
    # cdf: latency (ms) at 0, 1, ..., 100 % of the packets
    return [(v, i / 100.0) for i, v in enumerate(cdf)]


LAT_TICKS = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]


def _cdf_panel(title, runs, label_of, deadline):
    hi = max([r["lat_max_ms"] for r in runs] + [deadline * 2])
    xmax = min(t for t in LAT_TICKS + [1e9] if t >= hi)
    ticks = LAT_TICKS if xmax <= 200 else [1, 5, 10, 50, 100, 500, 1000, 5000]
    p = Panel(title, "latency (ms, log scale)", "fraction of packets", 0.5, xmax, 0, 1,
              xticks=[t for t in ticks if t <= xmax], yticks=[0, 0.25, 0.5, 0.75, 1])
    p.vline(deadline, "deadline %g ms" % deadline)
    for i, r in enumerate(runs):
        c = COLORS[i % len(COLORS)]
        for s in r.get("per_stream", []):
            p.line(_cdf_pts(s["cdf_ms"]), c, 0.8, opacity=0.45)
        p.line(_cdf_pts(r["cdf_ms"]), c, 2.0, label=label_of(r))
    return p


def plot(rows, outdir, prefix="rtgpu"):
    rows = [r for r in rows if r.get("bench") == "rtgpu"]
    loads = [r for r in rows if r.get("op") == "load"]
    if not loads:
        return []
    os.makedirs(outdir, exist_ok=True)
    ctx = rows[0].get("context", {})
    r0 = loads[0]
    caption = ("bench_rtgpu: %d-byte RTP, SRTP protect (%s) on the CPU backend, %s s a run, "
               "worker %s, %s, %d busy loop(s) beside it; %s%s"
               % (r0["packet_bytes"], r0["impl"], r0["duration_s"],
                  "at SCHED_FIFO" if r0.get("worker_realtime") else "at normal priority",
                  "keep-deadlines" if r0.get("keep_deadlines", True) else
                  "the paper's scheduler (no keep-deadlines)", r0.get("hogs", 0),
                  ctx.get("cpu", "CPU"), (", commit " + ctx["commit"]) if ctx.get("commit") else ""))
    deadline = r0["deadline_ms"]
    cycles = sorted({r["cycle_ms"] for r in loads})
    pcts = sorted({r["load_pct"] for r in loads})
    made = []

    # Fig. 12: fixed load, I varies (admission on)
    panels = []
    for pct in [x for x in (50, 100) if x in pcts] or pcts[:1]:
        runs = [r for c in cycles for r in loads
                if r["cycle_ms"] == c and r["load_pct"] == pct and r["admission"]]
        panels.append(_cdf_panel("load %d %% of B_I, admission on" % pct, runs,
                                 lambda r: "I = %g ms" % r["cycle_ms"], deadline))
    made.append(svg(panels, os.path.join(outdir, prefix + "-cdf-cycle.svg"),
                    "Latency CDF vs scheduling cycle I (thin: each stream; thick: all). " + caption))

    # Fig. 13: fixed I, load varies; admission on and off
    ic = 5 if 5 in cycles else cycles[0]
    panels = []
    for adm in (True, False):
        runs = [r for pct in pcts for r in loads
                if r["cycle_ms"] == ic and r["load_pct"] == pct and r["admission"] == adm]
        panels.append(_cdf_panel("I = %g ms, admission %s" % (ic, "on" if adm else "off"), runs,
                                 lambda r: "%d %% (%d/%d streams)" % (
                                     r["load_pct"], r["streams_admitted"], r["streams_offered"]),
                                 deadline))
    made.append(svg(panels, os.path.join(outdir, prefix + "-cdf-load.svg"),
                    "Latency CDF vs offered load (thin: each stream; thick: all). " + caption))

    # misses vs load, per I, admission on (solid) / off (dashed); a packet
    # dropped late (keep-deadlines) did not make its deadline either
    p = Panel("packets past the %g ms deadline or dropped late" % deadline,
              "offered load (% of calibrated B_I)",
              "% of the admitted streams' packets", min(pcts), max(pcts), 0, 100, logx=False,
              xticks=pcts, yticks=[0, 25, 50, 75, 100])
    for i, c in enumerate(cycles):
        for adm in (True, False):
            pts = []
            for pct in pcts:
                rr = [r for r in loads if r["cycle_ms"] == c and r["load_pct"] == pct
                      and r["admission"] == adm]
                if rr and rr[0]["packets"]:
                    late = rr[0].get("drops_late", 0)
                    pts.append((pct, 100.0 * (rr[0]["misses"] + late) /
                                (rr[0]["packets"] + late)))
            p.line(pts, COLORS[i % len(COLORS)], 2.0, None if adm else "6,4",
                   "I = %g ms, admission %s" % (c, "on" if adm else "off"))
    made.append(svg([p], os.path.join(outdir, prefix + "-misses.svg"),
                    "Deadline misses vs offered load. " + caption))
    return made


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench_rtgpu.py RESULTS.jsonl OUTDIR [PREFIX]")
    for path in plot(load(sys.argv[1]), sys.argv[2], *sys.argv[3:]):
        print(path)
