#!/usr/bin/env python3
"""dxtenc beside its kernel on the same frame, in the same run (the dxt area
of ./run bench calls it after the kernel benchmarks).

The frames: the test photograph of kernels/bench/bench_dxt (mirror-tiled to
1920x1080 RGBA), scaled to 3840x2160 and converted to UYVY by GStreamer's
videoscale / videoconvert; written raw under BUILD/bench/dxt-frames/.

The kernel: `bench_dxt --frame`, which codes the frame again and again the
way dxtenc's CPU path does (dxt_encode_frame_threads, one thread per CPU,
slices of dxtenc's default batch-blocks), frames/s over the run.

The element: appsrc ! dxtenc format=dxt1 quality=fast ! fakesink, the
frame pushed again and again as fast as dxtenc takes it, two ways:
  pool     upstream writes its frames into buffers of the pool dxtenc
           proposes in the ALLOCATION query (a pinned pool on the GPU, a
           system-memory one on the CPU), as a pool-aware source does;
  no pool  one buffer of upstream's own memory, pushed again and again.
Frames/s from the first frame in to the last out (after a warm-up), and
per-frame latency from dxtenc's sink pad to its source pad (pad probes).
Kernel and element runs alternate, twice by default; each keeps its best.
On a machine where bench_dxt_gpu ran, dxtenc backend=gpu is measured too,
beside the kernel end to end from pinned host memory in slices of the
same size (bench_dxt_gpu's dxt_gpu_sliced rows). Target: the element at
>= 0.8 of its kernel.

    bench/bench_dxt_element.py BUILD [--seconds S] [--rounds N] [--json FILE]
"""

import argparse
import json
import os
import subprocess
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

SIZES = ((1920, 1080), (3840, 2160))
FORMATS = ("RGBA", "UYVY")
WARMUP = 3                      # frames left out of the element's figures
TARGET = 0.8


def frame_bytes(w, h, fmt):
    return w * h * (4 if fmt == "RGBA" else 2)


def convert(src_path, w, h, fmt, out_path):
    """The 1920x1080 RGBA photo frame as a w x h frame of fmt (tight rows)."""
    data = open(src_path, "rb").read()
    pipe = Gst.parse_launch(
        "appsrc name=src caps=video/x-raw,format=RGBA,width=1920,height=1080,"
        "framerate=30/1 ! videoscale method=bilinear ! videoconvert ! "
        "video/x-raw,format=%s,width=%d,height=%d ! appsink name=sink sync=false"
        % (fmt, w, h))
    src, sink = pipe.get_by_name("src"), pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    buf = Gst.Buffer.new_wrapped(data)
    buf.pts = 0
    src.emit("push-buffer", buf)
    src.emit("end-of-stream")
    sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
    pipe.set_state(Gst.State.NULL)
    if sample is None:
        raise RuntimeError("no %dx%d %s frame from videoconvert" % (w, h, fmt))
    out = sample.get_buffer().extract_dup(0, frame_bytes(w, h, fmt))
    if len(out) != frame_bytes(w, h, fmt):
        raise RuntimeError("a %dx%d %s frame of %d bytes" % (w, h, fmt, len(out)))
    with open(out_path, "wb") as f:
        f.write(out)


def make_frames(build, bench_dxt):
    d = os.path.join(build, "bench", "dxt-frames")
    os.makedirs(d, exist_ok=True)
    photo = os.path.join(d, "photo-1920x1080-RGBA.raw")
    subprocess.run([bench_dxt, "--dump-rgba", photo], check=True)
    frames = {}
    for w, h in SIZES:
        for fmt in FORMATS:
            path = os.path.join(d, "%dx%d-%s.raw" % (w, h, fmt))
            if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(photo):
                convert(photo, w, h, fmt, path)
            frames[(w, h, fmt)] = path
    return frames


def slice_rows(w, batch_blocks):
    """dxtenc's slice height in block rows for batch-blocks (gpsdxt.c)."""
    return max(1, batch_blocks // ((w + 3) // 4)) if batch_blocks else 0


def kernel_cpu(bench_dxt, path, w, h, fmt, batch_blocks, seconds):
    p = subprocess.run([bench_dxt, "--frame", path, "%dx%d" % (w, h), fmt.lower(), "0",
                        str(slice_rows(w, batch_blocks)), str(seconds)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("bench_dxt --frame failed: " + p.stderr.strip())
    return json.loads(p.stdout.strip().splitlines()[-1])


def element_run(backend, w, h, fmt, data, use_pool, seconds):
    """Frames/s and per-frame latency of dxtenc fed the frame as fast as it
    takes it, for about `seconds`; None when the pipeline fails."""
    caps = Gst.Caps.from_string("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1"
                                % (fmt, w, h))
    pipe = Gst.parse_launch(
        "appsrc name=src format=time max-buffers=4 block=true ! "
        "dxtenc name=enc backend=%s format=dxt1 quality=fast ! "
        "fakesink name=sink sync=false" % backend)
    src, enc = pipe.get_by_name("src"), pipe.get_by_name("enc")
    src.set_property("caps", caps)
    t_in, lat, outs = {}, [], []

    def on_in(pad, info):
        t_in[info.get_buffer().pts] = time.monotonic_ns()
        return Gst.PadProbeReturn.OK

    def on_out(pad, info):
        now = time.monotonic_ns()
        t0 = t_in.pop(info.get_buffer().pts, None)
        if t0 is not None:
            lat.append(now - t0)
            outs.append((t0, now))
        return Gst.PadProbeReturn.OK

    enc.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_in)
    enc.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_out)
    if pipe.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
        pipe.set_state(Gst.State.NULL)
        return None
    pool = None
    if use_pool:
        # what a pool-aware upstream does: ask dxtenc for a pool, write the
        # frames into its buffers (filled once here: a pool hands its buffers
        # back with their bytes, so the loop below only acquires and pushes)
        q = Gst.Query.new_allocation(caps, True)
        if enc.get_static_pad("sink").query(q) and q.get_n_allocation_pools() > 0:
            pool = q.parse_nth_allocation_pool(0)[0]
        if pool is None:
            pipe.set_state(Gst.State.NULL)
            return {"error": "dxtenc proposed no pool"}
        cfg = pool.get_config()
        Gst.BufferPool.config_set_params(cfg, caps, len(data), 8, 0)
        pool.set_config(cfg)
        pool.set_active(True)
        held = []
        for _ in range(8):
            ok, b = pool.acquire_buffer(None)
            b.fill(0, data)
            held.append(b)
        del held
    else:
        frame = Gst.Buffer.new_wrapped(data)
    bus = pipe.get_bus()
    n, t_end, err = 0, time.monotonic() + seconds + 1, None
    while time.monotonic() < t_end or n < 2 * WARMUP:
        if pool is not None:
            ok, b = pool.acquire_buffer(None)
        else:
            b = frame.copy()        # shares the memory: no copy of the pixels
        b.pts = n * Gst.SECOND // 30
        b.duration = Gst.SECOND // 30
        if src.emit("push-buffer", b) != Gst.FlowReturn.OK:
            break
        n += 1
        msg = bus.pop_filtered(Gst.MessageType.ERROR)
        if msg:
            err = msg.parse_error()[0].message
            break
    src.emit("end-of-stream")
    bus.timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipe.set_state(Gst.State.NULL)
    if pool is not None:
        pool.set_active(False)
    if err or len(outs) <= WARMUP + 1:
        return {"error": err or "%d frames out" % len(outs)}
    outs, lat = outs[WARMUP:], sorted(lat[WARMUP:])
    wall = (outs[-1][1] - outs[0][0]) / 1e9
    return {"frames": len(outs), "fps": len(outs) / wall,
            "ms_p50": lat[len(lat) // 2] / 1e6, "ms_p99": lat[(len(lat) * 99) // 100] / 1e6,
            "ms_max": lat[-1] / 1e6}


def gpu_kernel_fps(krows, w, h, fmt, batch_blocks):
    for r in krows or ():
        if (r.get("bench") == "dxt_gpu_sliced" and r.get("input") == fmt.lower()
                and r.get("size") == "%dx%d" % (w, h) and r.get("batch_blocks") == batch_blocks):
            return r.get("fps_end_to_end")
    return None


ROW = "%-5s %-9s %-7s %-8s %9s %18s %9s %6s"


def bench(build, results, krows=None, seconds=2.0, rounds=2):
    """Prints the table; adds one JSON row per element run to results."""
    Gst.init(None)
    bench_dxt = os.path.join(build, "kernels", "bench", "bench_dxt")
    if Gst.ElementFactory.find("dxtenc") is None:
        print("(dxtenc not found: the plugins are not built?)")
        return []
    batch_blocks = Gst.ElementFactory.make("dxtenc").get_property("batch-blocks")
    frames = make_frames(build, bench_dxt)
    backends = ["cpu"]
    if any(r.get("bench") == "dxt_gpu_sliced" for r in krows or ()):
        backends.append("gpu")
    print("\ndxtenc (DXT1 fast) beside its kernel on the same frame, this run "
          "(kernel: dxt_encode_frame_threads on %d threads, slices of %d blocks; "
          "on the GPU: bench_dxt_gpu end to end from pinned memory); "
          "frames/s, the best of %d interleaved runs of %.0f s, per-frame ms of "
          "the element p50 / p99; target ratio >= %.1f"
          % (os.cpu_count(), batch_blocks, rounds, seconds, TARGET), flush=True)
    print(ROW % ("input", "size", "backend", "upstream", "element", "ms p50 / p99",
                 "kernel", "ratio"))
    rows = []
    for (w, h, fmt), path in frames.items():
        data = open(path, "rb").read()
        size = "%dx%d" % (w, h)
        # kernel and element runs interleaved, `rounds` times, the best of
        # each kept: on a shared machine a burst of other load then spoils
        # one run, not the ratio
        best = {}
        for _ in range(rounds):
            k = kernel_cpu(bench_dxt, path, w, h, fmt, batch_blocks, seconds)
            if k["fps"] > best.get("kernel", {"fps": 0})["fps"]:
                best["kernel"] = k
            for backend in backends:
                for up in ("pool", "no pool"):
                    e = element_run(backend, w, h, fmt, data, up == "pool", seconds)
                    old = best.get((backend, up))
                    if e and "error" not in e and (not old or "error" in old
                                                   or e["fps"] > old["fps"]):
                        best[(backend, up)] = e
                    elif old is None:
                        best[(backend, up)] = e or {"error": "the pipeline failed"}
        k = best["kernel"]
        for backend in backends:
            kfps = k["fps"] if backend == "cpu" else gpu_kernel_fps(krows, w, h, fmt,
                                                                     batch_blocks)
            for up in ("pool", "no pool"):
                e = best[(backend, up)]
                if "error" in e:
                    print(ROW % (fmt, size, backend, up, "failed", e["error"],
                                 "%.1f" % kfps if kfps else "n/a", ""))
                    continue
                ratio = e["fps"] / kfps if kfps else None
                print(ROW % (fmt, size, backend, up, "%.1f" % e["fps"],
                             "%.2f / %.2f" % (e["ms_p50"], e["ms_p99"]),
                             "%.1f" % kfps if kfps else "n/a",
                             "%.2f" % ratio if ratio else "n/a"), flush=True)
                r = dict(bench="dxt-element", element="dxtenc", codec="bc1", quality="fast",
                         input=fmt.lower(), size=size, backend=backend, upstream=up,
                         batch_blocks=batch_blocks, kernel_fps=kfps, ratio=ratio,
                         kernel=("dxt_encode_frame_threads" if backend == "cpu"
                                 else "bench_dxt_gpu dxt_gpu_sliced"),
                         kernel_threads=k["threads"] if backend == "cpu" else None,
                         rounds=rounds, device=backend, **e)
                rows.append(r)
                if results is not None:
                    results.add(r)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json")
    a = p.parse_args()
    rows = bench(a.build, None, None, a.seconds, a.rounds)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    GLib.set_prgname("bench_dxt_element")
    main()
