#!/usr/bin/env python3
"""PSNR against speed for the DXT encoders, from the JSON lines of
./run bench dxt: one point per encoder, mode and format, Mpix/s on a log x
axis, RGB PSNR on y, labelled. Hand-written SVG, no plotting library.

  bench/dxt_plot.py [JSONL ...] [-o OUT.svg] [--title TEXT]

JSONL defaults to build/bench/latest.jsonl; a figure measured twice (our
high mode beside each anchor) is plotted once, at its first value. BC1 only
by default (every encoder has it, quicktex has nothing else; BC3's colour
block is the same, so its points repeat BC1's PSNR): --formats bc1,bc3."""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

# family of an encoder name -> colour
FAMILIES = (("gpustream", "#c0392b"), ("stb_dxt", "#2471a3"), ("squish-sse2", "#7d3c98"),
            ("squish", "#a569bd"), ("quicktex", "#1e8449"))
MARKERS = {"bc1": "circle", "bc3": "square", "ycocg": "diamond"}
TITLE = "DXT encoders: quality against speed (coffee photo 1920x1080, one CPU core)"


def family(enc):
    for prefix, colour in FAMILIES:
        if enc.startswith(prefix):
            return prefix, colour
    return "other", "#555555"


def rows_of(paths):
    for path in paths:
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                yield json.loads(line)


def points_of(rows, formats=("bc1",)):
    points, seen = [], set()
    for r in rows:
        if r.get("bench") != "dxt" or not r.get("mpix_s") or r.get("psnr") is None:
            continue
        if r.get("device", "cpu") != "cpu" or r.get("format") not in formats:
            continue
        key = (r["encoder"], r["format"])
        if key in seen:
            continue
        seen.add(key)
        points.append((r["encoder"], r["format"], float(r["mpix_s"]), float(r["psnr"])))
    return points


def write_svg(rows, path, title=None, formats=("bc1",)):
    """Plots the dxt rows (dicts as in the JSON lines) of the formats into
    path; returns the number of points."""
    points = points_of(rows, formats)
    if points:
        with open(path, "w") as f:
            f.write(render(points, title or TITLE))
    return len(points)


def nice_ticks(lo, hi, step):
    t = math.floor(lo / step) * step
    out = []
    while t <= hi + 1e-9:
        out.append(round(t, 6))
        t += step
    return out


def marker(shape, x, y, colour):
    if shape == "square":
        return '<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s"/>' % (x - 4, y - 4, colour)
    if shape == "diamond":
        return ('<path d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="%s"/>' % (x, y - 5, colour))
    return '<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s"/>' % (x, y, colour)


def render(points, title):
    W, H = 900, 560
    L, R, T, B = 70, 30, 50, 60           # margins
    pw, ph = W - L - R, H - T - B
    xs = [p[2] for p in points]
    ys = [p[3] for p in points]
    x0 = 10 ** (math.log10(min(xs)) - 0.2)
    x1 = 10 ** (math.log10(max(xs)) + 0.45)     # room for the labels
    y0 = math.floor(min(ys) * 2) / 2 - 0.25
    y1 = math.ceil(max(ys) * 2) / 2 + 0.25

    def px(v):
        return L + (math.log10(v) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * pw

    def py(v):
        return T + (y1 - v) / (y1 - y0) * ph

    fmts = sorted({p[1] for p in points})
    title = "%s, %s" % (title, "/".join(f.upper() for f in fmts))
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">' % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="28" font-size="15" font-weight="bold">%s</text>' % (L, escape(title))]
    # grid and axes
    d = 10 ** math.floor(math.log10(x0))
    while d <= x1:
        for m in range(1, 10):
            v = d * m
            if v < x0 or v > x1:
                continue
            x = px(v)
            o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>'
                     % (x, T, x, T + ph, "#bbbbbb" if m == 1 else "#eeeeee"))
            if m in (1, 2, 5):
                o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x, T + ph + 18, v))
        d *= 10
    step = 0.5 if y1 - y0 <= 6 else 1.0
    for v in nice_ticks(y0, y1, step):
        if v < y0 - 1e-9:
            continue
        y = py(v)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>' % (L, y, L + pw, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.1f</text>' % (L - 6, y + 4, v))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333333"/>'
             % (L, T, pw, ph))
    o.append('<text x="%.1f" y="%d" text-anchor="middle">encode speed, Mpix/s, one core (log scale)</text>'
             % (L + pw / 2, H - 18))
    o.append('<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">'
             'RGB PSNR, dB</text>' % (T + ph / 2, T + ph / 2))
    # points first, then labels: each at the first of a few places around its
    # point that overlaps no marker, no label placed before and no border
    fmts = sorted({p[1] for p in points})
    marks = [(px(p[2]), py(p[3])) for p in points]
    for (x, y), p in zip(marks, points):
        o.append(marker(MARKERS.get(p[1], "circle"), x, y, family(p[0])[1]))
    boxes = []

    def free(bx, by, bw, bh, own):
        if bx < L + 2 or bx + bw > L + pw - 2 or by < T + 2 or by + bh > T + ph - 2:
            return False
        for i, (mx, my) in enumerate(marks):
            if i != own and mx + 6 > bx and mx - 6 < bx + bw and my + 6 > by and my - 6 < by + bh:
                return False
        return all(bx + bw <= x0_ or x0_ + w_ <= bx or by + bh <= y0_ or y0_ + h_ <= by
                   for x0_, y0_, w_, h_ in boxes)

    order = sorted(range(len(points)), key=lambda i: (-points[i][3], points[i][2]))
    for i in order:
        enc, fmt, mpix, psnr = points[i]
        x, y = marks[i]
        colour = family(enc)[1]
        label = enc if len(fmts) == 1 else "%s %s" % (enc, fmt)
        tw, th = 6.8 * len(label), 13
        spots = [(8, -th / 2), (-8 - tw, -th / 2), (6, -th - 4), (6, 4), (-tw - 6, -th - 4),
                 (-tw - 6, 4), (-tw / 2, -th - 8), (-tw / 2, 8)]
        spots += [(dx, dy + k * (1 if dy > 0 else -1) * 13) for k in range(1, 6)
                  for dx, dy in spots[2:6]]
        for dx, dy in spots:
            if free(x + dx, y + dy, tw, th, i):
                break
        else:
            dx, dy = spots[0]
        bx, by = x + dx, y + dy
        boxes.append((bx, by, tw, th))
        if abs(dy + th / 2) > 14:          # far from its point: a leader line
            ly = by + th if dy < 0 else by
            lx = min(max(x, bx), bx + tw)
            o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="0.7"/>'
                     % (x, y, lx, ly, colour))
        o.append('<text x="%.1f" y="%.1f" fill="%s">%s</text>' % (bx, by + th - 3, colour, escape(label)))
    # legend: the marker of each format, when there are several
    lx, ly = L + 10, T + ph - 12
    for fmt, shape in MARKERS.items():
        if len(fmts) > 1 and fmt in fmts:
            o.append(marker(shape, lx, ly - 4, "#333333"))
            o.append('<text x="%d" y="%d">%s</text>' % (lx + 9, ly, fmt))
            lx += 60
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("jsonl", nargs="*",
                   default=[os.path.join(here, "..", "build", "bench", "latest.jsonl")])
    p.add_argument("-o", "--output", default="dxt-psnr-speed.svg")
    p.add_argument("--title", default=TITLE)
    p.add_argument("--formats", default="bc1",
                   help="comma-separated formats to plot (bc1, bc3, ycocg; default bc1)")
    a = p.parse_args()
    n = write_svg(rows_of(a.jsonl), a.output, a.title, tuple(a.formats.split(",")))
    if not n:
        print("dxt_plot: no dxt rows in " + ", ".join(a.jsonl), file=sys.stderr)
        return 1
    print("dxt_plot: %d points -> %s" % (n, a.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
