#!/usr/bin/env python3
"""./run bench [AREA ...]: every figure beside the anchor measured in the same run.

Areas:
  nc        RLNC encode / decode vs ISA-L called directly and vs the scalar
            reference, the GPU kernel where a GPU is present, and ncencoder in
            a pipeline (fakesrc ! ncencoder ! fakesink) against the raw kernel
  srtp      SRTP protect (AES-CM + HMAC-SHA1-80, AES-GCM) vs OpenSSL per
            packet, as libsrtp's OpenSSL backend does it, and vs libsrtp2;
            then gpusrtpenc (per buffer and batched) vs srtpenc in the same
            pipeline (bench/bench_srtp_elements.py)
  dxt       DXT compression vs stb_dxt and libsquish, PSNR beside speed; then
            the anchors built at bench time under build/anchors (libsquish
            built with SSE2 from Debian's source package, quicktex from PyPI
            in a venv) and the PSNR-vs-speed plot (bench/dxt_anchors.py);
            then dxtenc in a pipeline beside the kernel coding the same frames
            (1080p and 4K, RGBA and UYVY; bench/bench_dxt_element.py)
  rtgpu     the real-time scheduler on the CPU backend (Zhang et al. 2015, Fig. 12/13):
            latency CDF per stream and deadline misses vs offered load and
            cycle I, admission on and off, SRTP protect as the stage; the
            scheduler, rtgpuqueue and gpusrtpenc beside the SRTP kernel; and
            its overhead per packet vs GstQueue (bench/bench_rtgpu.{c,py})
  cstp      the cross-stream code (bench_fountain: ISA-L and scalar, N 512..4096)
            beside PyPI's raptorq in a venv; recovery against overhead (the
            paper's Fig. 7, and uneven loss over 4 paths beside one RaptorQ
            code over the frame); a sending cluster of 2 and 4 processes
            beside one host, its exchange beside the (S - 1) p R bound; and
            cstpsink -> cstpsrc goodput on loopback for 2, 4, 8 streams at 5 %
            loss vs plain udpsink/udpsrc (bench/bench_cstp.py)
  reliability  every fuzz target for a fixed time from the committed seeds
            (execs/s, coverage, corpus kept, seed files; --fuzz-seconds, 30)
            and a short soak whose memory and threads are plotted
            (--soak-seconds, 60) (bench/bench_reliability.py)
  server-files  gpustream-server's file delivery: HTTP segments of 288.6 KB,
            1.4 MB and 10.5 MB sent with sendfile by its workers vs nginx on
            the same machine, the same client; and the memory of sessions on
            one file with 1, 2 and 4 workers (bench/bench_http.py)
  server    gpustream-server's serving capacity (plain, network-coded, SRTP)
            against a stock gst-rtsp-server under one load generator:
            Poisson arrivals, Zipf channels, 750 kbit/s sessions, C = 1, 30,
            200 channels (Zhao et al. 2010, Fig. 7-10; bench/bench_server.py;
            --quick: C = 1 and 200, three steps each)
  gpu-sim   the host CPU time per packet (frame) of the GPU paths on the
            simulated device (kernels/gpusim): gpusrtpenc (buffers, lists),
            rtgpuqueue srtp-protect (N = 1, 8, 64), ncencoder, dxtenc,
            cstpsink, Zero-load and Full-load (Zhang et al. 2015, Fig. 9),
            beside the CPU path and GstQueue moving the same packets, per
            thread, the simulator's emulation of the GPU left out
            (bench/bench_gpusim.{c,py}; docs/benchmarks/gpu-sim.md)
  kernels   every kernel benchmark (nc, srtp, dxt without the elements and
            the anchors built at bench time)
  all       everything

Figures go to stdout as a table and, one JSON object a line, to
build/bench/results-<time>.jsonl (and build/bench/latest.jsonl)."""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


class Results:
    def __init__(self, path):
        self.path = path
        self.rows = []
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "w")
        self.context = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                        "cpu": cpu_model(), "cores": os.cpu_count(),
                        "commit": self._commit()}

    @staticmethod
    def _commit():
        try:
            return subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.abspath(__file__))
                                  ).stdout.strip()
        except OSError:
            return ""

    def add(self, row):
        row = dict(row)
        row.setdefault("context", self.context)
        self.rows.append(row)
        self.f.write(json.dumps(row) + "\n")
        self.f.flush()

    def close(self):
        self.f.close()


KERNEL_BENCHES = {"nc": ("bench_rlnc", "bench_rlnc_gpu"),
                  "srtp": ("bench_srtp", "bench_srtp_gpu"),
                  "dxt": ("bench_dxt", "bench_dxt_gpu")}


def find_exe(build, name):
    for root, _, files in os.walk(os.path.join(build, "kernels")):
        if name in files and os.access(os.path.join(root, name), os.X_OK):
            return os.path.join(root, name)
    return None


def run_kernel_bench(build, results, areas):
    """Runs the kernel benchmark programs of the areas (the GPU ones where
    built); their JSON lines join ours. Returns the rows."""
    rows = []
    for area in sorted(areas):
        for name in KERNEL_BENCHES.get(area, ()):
            exe = find_exe(build, name)
            if exe is None:
                print("(%s not built)" % name)
                continue
            rows += run_one(exe, name, build, results)
    return rows


def run_one(exe, name, build, results):
    rows = []
    jpath = os.path.join(build, "bench", name + ".jsonl")
    if os.path.exists(jpath):
        os.remove(jpath)
    args = [exe, "--json", jpath]
    print("$ " + " ".join(args), flush=True)
    rc = subprocess.run(args).returncode
    if rc == 77:                  # the kernels' convention: no device, skipped
        print("(%s skipped: no device)" % name)
        return rows
    if rc != 0:
        raise SystemExit("bench: %s failed with exit status %d" % (name, rc))
    if os.path.exists(jpath):
        for line in open(jpath):
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                results.add(r)
                rows.append(r)
    return rows


def kernel_encode_mbps(rows, m, k):
    """Our CPU encode figure at (m, k) from bench_rlnc's lines."""
    for r in rows:
        if r.get("bench") == "rlnc" and r.get("op") == "encode" and \
                r.get("m") == m and r.get("k") == k and r.get("device", "cpu") == "cpu":
            return r.get("mbps")
    return None


def element_encode_mbps(m, k, total_mb, backend="cpu"):
    """fakesrc ! ncencoder ! fakesink, coded output MB/s. systematic=false and
    redundancy=0 make the element compute m coded blocks per generation, the
    same work as the kernel bench's encode (n = m)."""
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    bufsize = m * k
    nbuf = max(1, int(total_mb * 1e6 / bufsize))
    desc = ("fakesrc num-buffers=%d sizetype=fixed sizemax=%d filltype=nothing ! "
            "ncencoder generation-size=%d block-size=%d systematic=false redundancy=0 "
            "backend=%s ! fakesink sync=false"
            % (nbuf, bufsize, m, k, backend))
    p = Gst.parse_launch(desc)
    t0 = time.perf_counter()
    p.set_state(Gst.State.PLAYING)
    msg = p.get_bus().timed_pop_filtered(300 * Gst.SECOND,
                                         Gst.MessageType.EOS | Gst.MessageType.ERROR)
    dt = time.perf_counter() - t0
    p.set_state(Gst.State.NULL)
    if msg is None or msg.type == Gst.MessageType.ERROR:
        raise RuntimeError("element bench failed: " + desc)
    return nbuf * bufsize / dt / 1e6, desc


def bench_nc_elements(results, krows):
    print("\nncencoder in a pipeline vs the raw kernel (coded output, CPU backend)")
    print("%6s %6s %12s %12s %8s" % ("m", "k", "element MB/s", "kernel MB/s", "ratio"))
    for m, k in ((64, 1024), (64, 4096)):
        kernel = kernel_encode_mbps(krows, m, k)
        best = 0.0
        for _ in range(3):
            mbps, desc = element_encode_mbps(m, k, 200)
            best = max(best, mbps)
        ratio = best / kernel if kernel else None
        print("%6d %6d %12.1f %12s %8s" % (m, k, best,
              "%.1f" % kernel if kernel else "n/a", "%.2f" % ratio if ratio else "n/a"))
        results.add({"bench": "nc-element", "op": "ncencoder", "m": m, "k": k,
                     "mbps": round(best, 1), "anchor": "kernel rlnc_encode",
                     "anchor_mbps": kernel, "ratio": round(ratio, 3) if ratio else None,
                     "target": 0.8, "device": "cpu", "pipeline": desc})


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("areas", nargs="*", default=["all"])
    p.add_argument("--fuzz-seconds", type=int,
                   help="reliability: seconds per fuzz target (default 30, or GS_BENCH_FUZZ_SECONDS)")
    p.add_argument("--soak-seconds", type=int,
                   help="reliability: seconds of soak (default 60, or GS_BENCH_SOAK_SECONDS)")
    p.add_argument("--quick", action="store_true",
                   help="server: a shorter run (about 3 minutes instead of 35)")
    p.add_argument("--server-max", type=int,
                   help="server: the most sessions a step tries (4096; 256 with --quick)")
    p.add_argument("--server-channels",
                   help="server: channel counts, comma-separated (1,30,200; 1,200 with --quick)")
    p.add_argument("--server-modes",
                   help="server: our modes to measure, comma-separated (plain,nc,srtp: all); "
                   "the peer is measured in every run")
    p.add_argument("--rtgpu-args", default="",
                   help="rtgpu: options for bench_rtgpu, space-separated (e.g. "
                   "\"--cycle-ms 2 --rt-priority 0 --hog 2 --no-keep-deadlines\")")
    a = p.parse_args()
    areas = set(a.areas)
    if "all" in areas:
        areas = {"nc", "srtp", "dxt", "rtgpu"}
    if "kernels" in areas:
        areas = (areas - {"kernels"}) | {"nc-kernels", "srtp-kernels",
                                         "dxt-kernels"}
    unknown = areas - {"nc", "nc-kernels", "srtp", "srtp-kernels", "dxt",
                       "dxt-kernels", "rtgpu", "cstp", "reliability",
                       "server-files", "server", "gpu-sim"}
    if unknown:
        p.error("unknown area(s): " + ", ".join(sorted(unknown)))

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(a.build, "bench", "results-%s.jsonl" % stamp)
    results = Results(out)
    print("machine: %s, %d cores (CPU figures)" % (cpu_model(), os.cpu_count()))
    krows = run_kernel_bench(a.build, results,
                             {x.replace("-kernels", "") for x in areas})
    if "nc" in areas:
        bench_nc_elements(results, krows)
    if "srtp" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_srtp_elements
        bench_srtp_elements.bench(results)
    if "dxt" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import dxt_anchors
        dxt_anchors.bench(a.build, results, krows)
        import bench_dxt_element
        bench_dxt_element.bench(a.build, results, krows)
    if "cstp" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_cstp
        bench_cstp.bench(a.build, results, run_one, find_exe)
    if "rtgpu" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_rtgpu
        bench_rtgpu.bench(a.build, results, a.rtgpu_args.split())
    if "gpu-sim" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_gpusim
        bench_gpusim.bench(a.build, results)
    if "server-files" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_http
        bench_http.bench(a.build, results)
    ok = True
    if "reliability" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_reliability
        ok = bench_reliability.bench(a.build, results, a.fuzz_seconds, a.soak_seconds)
    if "server" in areas:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_server
        channels = [int(c) for c in a.server_channels.split(",")] \
            if a.server_channels else None
        modes = a.server_modes.split(",") if a.server_modes else None
        ok = bench_server.bench(a.build, results, a.quick, a.server_max, channels,
                                modes) and ok
    results.close()
    latest = os.path.join(a.build, "bench", "latest.jsonl")
    if os.path.lexists(latest):
        os.remove(latest)
    os.symlink(os.path.basename(out), latest)
    print("\nJSON lines: %s" % out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
