"""./run bench cstp: the cross-stream code and the cstp elements.

1. bench_fountain (kernels/bench): repairs and decode of one sub-frame of N
   symbols of 1280 bytes, N in 512..4096, 5 % and 10 % loss, through ISA-L
   and the scalar reference.
2. The same sizes through PyPI's `raptorq` (RFC 6330 RaptorQ, Rust behind a
   Python binding), installed into a venv under build/anchors when pip can
   fetch it: encode the block with as many repair symbols, decode after the
   same source symbols are lost. Python calls per packet are included in its
   times (one call per packet to decode), so its decode figure is a floor.
   Both codes: the best of 3 runs (the machine is shared).
3. Recovery against overhead, the paper's Fig. 7: 4 streams of 1024
   symbols, per-receiver loss drawn each frame (mean 2, 3, 4 %), frames
   recovered whole against packets sent per stream, for our code with 5 %
   pipe packets and without, and RaptorQ per stream; build/bench/
   cstp-recovery.svg.
3b. Recovery against redundancy under uneven loss over 4 paths: our three
   codes (per stream, half pipes of mixed degree, every packet a pipe of all
   streams) beside one RaptorQ code over the whole frame on the very same
   losses; build/bench/cstp-uneven.svg. And a whole frame's encode and
   decode speed for the three (bench_fountain --frame).
4. Goodput over loopback: S = 2, 4, 8 streams, 5 % loss (cstpsrc's seeded
   simulate-loss, bursts of mean 4), cstpsink with 20 % overhead paced to
   4 Gbit/s over all streams (unpaced, the receiver's sockets overflow), 100
   frames of 4 MB in 8192-byte datagrams (loopback carries them whole; the
   decode work grows with N, so the largest symbols serve best), cstpsrc
   latency 500 ms: bytes of frames delivered intact per second, from the
   first frame pushed to the last one out. Beside
   it the same S plain udpsink -> udpsrc streams without coding and without
   loss (fakesrc, 8192-byte datagrams), whose rate times 0.95 is what plain
   UDP delivers at 5 % loss with every loss left as a hole; the ratio is cstp
   over that. Both on the same 2 cores, sender and receiver sharing them.
5. A sending cluster of S = 2 and 4 processes (cstpsink index / peers)
   beside the single-host sender in the same run, and the bytes each sender
   received for its pipes beside the (S - 1) p R bound."""

import json
import os
import subprocess
import sys
import time

import bench_rtgpu  # the SVG writer

here = os.path.dirname(os.path.abspath(__file__))
RAPTORQ = "raptorq==2.0.0"
NS = (512, 1024, 2048, 4096)
LOSSES = (0.05, 0.10)
SYMBOL = 1280


def log(msg):
    print(msg, flush=True)


def raptorq_python(build):
    """The venv's python with raptorq importable, or None (reason printed)."""
    venv = os.path.join(build, "anchors", "venv-raptorq")
    py = os.path.join(venv, "bin", "python")
    ok = os.path.exists(py) and subprocess.run(
        [py, "-c", "import raptorq"], capture_output=True).returncode == 0
    if ok:
        return py
    r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True,
                       text=True)
    if r.returncode != 0:
        log("`%s -m venv %s` failed: %s" % (sys.executable, venv, r.stderr))
        return None
    r = subprocess.run([py, "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", RAPTORQ],
                       capture_output=True, text=True)
    if r.returncode != 0:
        log("pip could not install %s: %s" % (RAPTORQ, r.stderr[-400:]))
        return None
    return py


RAPTORQ_CHILD = r"""
import json, sys, time
from raptorq import Encoder, Decoder
n, k, loss = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
data = bytes((i * 2654435761 >> 13) & 255 for i in range(n * k))
lost = int(n * loss + 0.5)
t_enc = t_dec = 1e30
for rep in range(3):  # best of 3: the machine is shared
    t0 = time.perf_counter()
    enc = Encoder.with_defaults(data, k)
    packets = enc.get_encoded_packets(lost)
    t_enc = min(t_enc, time.perf_counter() - t0)
    step = n // lost
    drop = set(i for i in range(n) if i % step == 0 and i // step < lost)
    keep = [p for i, p in enumerate(packets) if i not in drop]
    t0 = time.perf_counter()
    dec = Decoder.with_defaults(len(data), k)
    out = None
    used = 0
    for p in keep:
        used += 1
        out = dec.decode(p)
        if out is not None:
            break
    t_dec = min(t_dec, time.perf_counter() - t0)
bits = n * k * 8
print(json.dumps({"bench": "fountain-raptorq", "n": n, "symbol": k,
                  "loss": loss, "repairs": lost, "packets": len(packets),
                  "encode_gbps": bits / t_enc / 1e9,
                  "decode_gbps": bits / t_dec / 1e9,
                  "decoded": out == data, "packets_used": used}))
"""


def run_raptorq(build, results):
    py = raptorq_python(build)
    if py is None:
        log("(raptorq anchor skipped)")
        return
    for n in NS:
        for loss in LOSSES:
            r = subprocess.run([py, "-c", RAPTORQ_CHILD, str(n), str(SYMBOL),
                                str(loss)], capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0:
                log("raptorq n=%d failed: %s" % (n, r.stderr[-300:]))
                continue
            row = json.loads(r.stdout.strip().splitlines()[-1])
            results.add(row)
            log("raptorq  N=%5d loss %2d %%: encode %.3f Gbit/s, decode %.3f "
                "Gbit/s, decoded %s" % (n, loss * 100, row["encode_gbps"],
                                        row["decode_gbps"], row["decoded"]))


RAPTORQ_RECOVERY_CHILD = r"""
import json, random, sys
from raptorq import Encoder, Decoder
frames, n, k, streams = int(sys.argv[1]), 1024, 16, 4
rng = random.Random(7)
for mean in (0.02, 0.03, 0.04):
    for extra in (0, 10, 20, 30, 40, 50, 60, 80, 100, 150):
        sent = n + (n * extra + 500) // 1000
        whole = 0
        for f in range(frames):
            ok = True
            for s in range(streams):
                data = rng.randbytes(n * k)
                packets = Encoder.with_defaults(data, k).get_encoded_packets(
                    sent - n)
                rate = 2 * mean * rng.random()
                dec = Decoder.with_defaults(len(data), k)
                out = None
                for p in packets:
                    if rng.random() < rate:
                        continue
                    out = dec.decode(p)
                    if out is not None:
                        break
                if out != data:
                    ok = False
            whole += ok
        print(json.dumps({"bench": "fountain-recovery", "code": "raptorq",
                          "streams": streams, "n": n, "pipe": 0.0,
                          "mean_loss": mean, "sent": sent, "frames": frames,
                          "whole": whole}), flush=True)
"""

# Fig. 7 of the paper: frames recovered whole against packets sent per
# stream; ours with and without pipe packets, RaptorQ per stream beside them
RECOVERY_FRAMES = 500
RECOVERY_FRAMES_RAPTORQ = 200


def json_rows(argv, timeout, what):
    """The JSON lines a child program prints (its failure logged)."""
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        log("%s failed: %s" % (what, r.stderr[-300:]))
    return [json.loads(line) for line in r.stdout.splitlines()
            if line.startswith("{")]


def code_and_raptorq_rows(build, results, exe, args, child, child_args,
                          what):
    """Our code's rows (exe args) and the RaptorQ child's, both recorded."""
    rows = json_rows([exe] + args, 1200, what) if exe else []
    py = raptorq_python(build)
    if py is not None:
        rows += json_rows([py, "-c", child] + child_args, 3600,
                          "raptorq " + what)
    for row in rows:
        results.add(row)
    return rows


def run_recovery(build, results, find_exe, outdir):
    rows = code_and_raptorq_rows(
        build, results, find_exe(build, "bench_fountain"),
        ["--recovery", str(RECOVERY_FRAMES)], RAPTORQ_RECOVERY_CHILD,
        [str(RECOVERY_FRAMES_RAPTORQ)], "recovery")
    for mean in (0.02, 0.03, 0.04):
        line = []
        for code, pipe, name in (("cstp", 0.05, "cstp p=5%"),
                                 ("cstp", 0.0, "cstp p=0"),
                                 ("raptorq", 0.0, "raptorq")):
            pts = sorted((r["sent"], r["whole"], r["frames"]) for r in rows
                         if r["code"] == code and r["pipe"] == pipe and
                         r["mean_loss"] == mean)
            if pts:
                line.append("%s %s" % (name, " ".join(
                    "%d:%d/%d" % p for p in pts)))
        log("recovery, mean loss %d %%: %s" % (round(mean * 100),
                                                "; ".join(line)))
    if rows:
        log("plot: %s" % recovery_plot(rows, outdir))


def recovery_plot(rows, outdir):
    sents = sorted({r["sent"] for r in rows})
    p = bench_rtgpu.Panel(
        "S = 4 streams of N = 1024 symbols", "packets sent per stream (N')",
        "frames recovered whole", min(sents), max(sents), 0, 1, logx=False,
        xticks=[x for x in (1024, 1050, 1075, 1100, 1125, 1150, 1175)
                if x <= max(sents)], yticks=[0, 0.25, 0.5, 0.75, 1])
    colors = {0.02: "#1e8449", 0.03: "#2471a3", 0.04: "#c0392b"}
    for mean, color in colors.items():
        for code, pipe, dash, name in (("cstp", 0.05, None, "cstp p = 5 %"),
                                       ("cstp", 0.0, "6,3", "cstp p = 0"),
                                       ("raptorq", 0.0, "2,3", "RaptorQ")):
            pts = sorted((r["sent"], r["whole"] / r["frames"]) for r in rows
                         if r["code"] == code and r["pipe"] == pipe and
                         r["mean_loss"] == mean)
            if pts:
                p.line(pts, color, 2.0, dash=dash,
                       label="%s, %d %%" % (name, round(mean * 100)))
    return bench_rtgpu.svg(
        [p], os.path.join(outdir, "cstp-recovery.svg"),
        "The experiment of the paper's Fig. 7: each stream sends its N "
        "sources and N' - N redundancy packets (p: share of pipe packets "
        "over all 4 streams). Each frame, each receiver loses packets at a "
        "rate drawn uniformly in [0, 2 m] for a mean m of 2, 3 or 4 % (the "
        "colours). RaptorQ: each stream on its own, RFC 6330 from PyPI")


# Uneven loss over 4 paths (1 % and 3 % single losses, 8 % in bursts of
# mean 4, 16 % in bursts of mean 8): a 320x240 RGBA frame in cstpsink's
# default 1368-byte symbols is N = 57 a stream. test_fountain --uneven gives
# our three codes' counts; the child below replays the very same losses
# (test_fountain's xorshift64* Gilbert-Elliott channels, seeds and packet
# order, re-implemented: its counts of frames within the redundancy equal
# the C program's) on one RaptorQ code over the whole frame, the upper
# reference: path s carries source symbols s N .. s N + N - 1 and repair
# symbols s R .. s R + R - 1.
UNEVEN_FRAMES = 600
RAPTORQ_UNEVEN_CHILD = r"""
import json, sys
from raptorq import Encoder, Decoder
M = (1 << 64) - 1
class Ge:
    # kernels/tests/test_fountain.c's xorshift64* Gilbert-Elliott channel
    def __init__(self, rate, burst, seed):
        self.s = seed & M
        self.p_bg = 1.0 / burst
        self.p_gb = rate * self.p_bg / (1 - rate)
        self.bad = self.unit() < rate
    def unit(self):
        s = self.s
        s ^= s >> 12; s ^= (s << 25) & M; s ^= s >> 27
        self.s = s
        return (((s * 0x2545F4914F6CDD1D) & M) >> 32) / 4294967296.0
    def lost(self):
        lost = self.bad
        self.bad = self.unit() >= self.p_bg if self.bad else self.unit() < self.p_gb
        return lost
frames, S, N, K = int(sys.argv[1]), 4, 57, 16
rates, bursts = (0.01, 0.03, 0.08, 0.16), (1, 1, 4, 8)
data = bytes((i * 2654435761 >> 13) & 255 for i in range(S * N * K))
packets = Encoder.with_defaults(data, K).get_encoded_packets(S * 17)
assert len(packets) == S * N + S * 17
for red in range(2, 18):
    ch = [Ge(rates[s], bursts[s], 1 * 0x9E3779B9 + s + 1) for s in range(S)]
    within = whole = 0
    for f in range(frames):
        kept = []
        for s in range(S):
            for i in range(N + red):
                if ch[s].lost():
                    continue
                kept.append(packets[s * N + i] if i < N else
                            packets[S * N + s * red + (i - N)])
        within += len(kept) >= S * N
        dec = Decoder.with_defaults(len(data), K)
        out = None
        for p in kept:
            out = dec.decode(p)
            if out is not None:
                break
        whole += out == data
    print(json.dumps({"bench": "cstp-uneven", "code": "raptorq-frame", "streams": S, "n": N,
                      "redundancy": red, "frames": frames, "within": within, "whole": whole}), flush=True)
"""


def run_uneven(build, results, find_exe, outdir):
    rows = code_and_raptorq_rows(
        build, results, find_exe(build, "test_fountain"),
        ["--uneven", str(UNEVEN_FRAMES)], RAPTORQ_UNEVEN_CHILD,
        [str(UNEVEN_FRAMES)], "uneven recovery")
    for red in sorted({r["redundancy"] for r in rows}):
        cells = {r["code"]: r for r in rows if r["redundancy"] == red}
        within = next(iter(cells.values()))["within"]
        log("uneven, R = %2d (%4.1f %%): within the redundancy %d/%d; %s" % (
            red, 100.0 * red / 57, within, UNEVEN_FRAMES, ", ".join(
                "%s %d" % (c, cells[c]["whole"]) for c in
                ("own", "mixed", "all", "raptorq-frame") if c in cells)))
    if rows:
        log("plot: %s" % uneven_plot(rows, outdir))
    exe = find_exe(build, "bench_fountain")
    if exe:
        for row in json_rows([exe, "--frame"], 600, "bench_fountain --frame"):
            results.add(row)
            log("frame of 4 x 1024 x 1280 B, 15 %% redundancy, uneven loss, "
                "code %-5s: %d/%d whole, encode %.2f Gbit/s, decode %.2f "
                "Gbit/s" % (row["code"], row["whole"], row["frames"],
                            row["encode_gbps"], row["decode_gbps"]))


def uneven_plot(rows, outdir):
    reds = sorted({r["redundancy"] for r in rows})
    p = bench_rtgpu.Panel(
        "4 streams of N = 57, uneven bursty loss (mean 7 %)",
        "redundancy per stream (% of N)", "frames recovered whole",
        100.0 * min(reds) / 57, 100.0 * max(reds) / 57, 0, 1, logx=False,
        xticks=[5, 10, 15, 20, 25, 30], yticks=[0, 0.25, 0.5, 0.75, 1])
    for code, color, dash, name in (
            ("raptorq-frame", "#7f8c8d", "2,3", "RaptorQ over the frame"),
            ("all", "#1e8449", None, "cstp, every pipe all S (default)"),
            ("mixed", "#2471a3", "6,3", "cstp, p = 0.5 mixed"),
            ("own", "#c0392b", "6,3", "cstp, p = 0 (per stream)")):
        pts = sorted((100.0 * r["redundancy"] / 57, r["whole"] / r["frames"])
                     for r in rows if r["code"] == code)
        if pts:
            p.line(pts, color, 2.0, dash=dash, label=name)
    pts = sorted((100.0 * r["redundancy"] / 57, r["within"] / r["frames"])
                 for r in rows if r["code"] == "all")
    if pts:
        p.line(pts, "#000000", 1.0, dash="1,2",
               label="frames within the redundancy")
    return bench_rtgpu.svg(
        [p], os.path.join(outdir, "cstp-uneven.svg"),
        "Four paths lose 1 %, 3 % (single losses), 8 % (bursts of mean 4) "
        "and 16 % (bursts of mean 8); each stream sends its N = 57 sources "
        "and R redundancy packets; 600 frames a point, the same losses for "
        "every code. A frame counts when all four sub-frames decode")


def cstp_goodput(streams, frames=100, loss=0.05, rate=0, code=None):
    """code: cstpsink's pipe-width and stream-degree (default: half the
    redundancy pipes of mixed degree, as the figures of docs/benchmarks/
    cstp.md were measured; {} for cstpsink's defaults)."""
    sys.path.insert(0, os.path.join(here, "..", "tests", "network"))
    import cstp_loopback as cl
    size = 4 << 20
    data = [cl.frame_bytes(i, size) for i in range(frames)]
    sim = '"loss, seed=(uint)5, burst=(double)4, rates=(string)%g"' % loss
    if code is None:
        code = {"pipe-width": 0.5, "stream-degree": "mixed"}
    sink = {"packet-size": 8192, "overhead": 0.20, "rate": rate}
    sink.update(code)
    r = cl.run(data, streams, sink,
               {"simulate-loss": sim, "latency": cl.Gst.SECOND // 2},
               timeout=120)
    delivered, wrong = cl.check_frames(data, r["out"])
    src = r["src"]
    simulated = sum(src["stream-%d-simulated-drops" % s] for s in range(streams))
    return {"bench": "cstp-goodput", "streams": streams, "loss": loss,
            "code": code.get("stream-degree", "all") if code else "default",
            "rate_per_stream": rate,
            "socket_loss": 1 - (src["received"] + simulated) /
            r["sink"]["packets-sent"],
            "overhead": 0.20, "frames": frames, "delivered": len(delivered),
            "wrong": wrong, "seconds": r["elapsed_to_last"],
            "goodput_mbps": len(delivered) * size * 8 / r["elapsed_to_last"]
            / 1e6,
            "decode_ms_max": r["src"]["decode-time-max"] / 1e6}


# A sending cluster beside the single-host sender: 40 frames of 512
# symbols of 8160 bytes (4,177,920 bytes, about 4 MiB), the frame cut into S
# tiles, one cstp_cluster_sender.py process per tile (tests/network),
# 8192-byte datagrams, 20 % overhead, half pipes of mixed degree, paced to 4
# Gbit/s over all streams, 5 % loss in bursts of mean 4 at the receiver;
# goodput = bytes of intact frames over the time from the first frame pushed
# (the senders make their tiles before that; CLOCK_MONOTONIC is the same in
# every process) to the last frame out.
CLUSTER_FRAMES = 40
CLUSTER_PACKET = 8192
CLUSTER_FRAME = 512 * (CLUSTER_PACKET - 32)


def single_host_goodput(streams, frames=CLUSTER_FRAMES, loss=0.05, code=()):
    sys.path.insert(0, os.path.join(here, "..", "tests", "network"))
    import cstp_loopback as cl
    size = CLUSTER_FRAME
    data = [cl.frame_bytes(i, size) for i in range(frames)]
    sim = '"loss, seed=(uint)5, burst=(double)4, rates=(string)%g"' % loss
    sink = {"packet-size": CLUSTER_PACKET, "overhead": 0.20,
            "rate": 4_000_000_000 // streams}
    sink.update(kv.split("=", 1) for kv in code)
    r = cl.run(data, streams, sink,
               {"simulate-loss": sim, "latency": cl.Gst.SECOND // 2},
               timeout=120)
    delivered, wrong = cl.check_frames(data, r["out"])
    return {"bench": "cstp-sender-goodput", "sender": "one host",
            "code": "default" if code == () else "mixed", "streams": streams, "frames": frames, "delivered": len(delivered),
            "wrong": wrong, "goodput_mbps": len(delivered) * size * 8
            / r["elapsed_to_last"] / 1e6}


def cluster_goodput(streams, frames=CLUSTER_FRAMES, loss=0.05, code=None):
    """code: the pipes' cstpsink properties (default: half pipes of mixed
    degree, as the single-host rows; () for cstpsink's defaults)."""
    sys.path.insert(0, os.path.join(here, "..", "tests", "network"))
    import cstp_loopback as cl
    from cstp_cluster import Cluster, collect, receive
    size = CLUSTER_FRAME
    tile = size // streams
    data = [cl.frame_bytes(i, size) for i in range(frames)]
    ports = cl.free_ports(streams)
    sim = '"loss, seed=(uint)5, burst=(double)4, rates=(string)%g"' % loss
    recv = receive(ports, latency_ms=500, props="simulate-loss=%s" % sim)
    if code is None:
        code = ("pipe-width=0.5", "stream-degree=mixed")
    cluster = Cluster(["127.0.0.1:%d" % p for p in ports], frames, tile,
                      ["packet-size=%d" % CLUSTER_PACKET, "overhead=0.20",
                       "rate=%d" % (4_000_000_000 // streams), "--fps=0"]
                      + list(code))
    times = []
    got, _, _ = collect(recv, frames, 240, times=times)
    senders = cluster.wait(60)
    stats = [x["stats"] for x in senders if x["stats"]]
    started = [x["started"] for x in senders if x["started"] is not None]
    delivered, wrong = cl.check_frames(data, got)
    per_frame = [x["exchange-bytes-received"] / max(1, x["frames"])
                 for x in stats]
    bound = [x["exchange-bound-bytes"] / max(1, x["frames"]) for x in stats]
    return {"bench": "cstp-sender-goodput", "sender": "cluster",
            "code": "default" if code == () else "mixed", "streams": streams,
            "frames": frames, "delivered": len(delivered), "wrong": wrong,
            "goodput_mbps": len(delivered) * size * 8
            / (times[-1] - min(started)) / 1e6 if times and started else 0.0,
            "exchange_bytes_per_frame": sum(per_frame) / max(1, len(per_frame)),
            "exchange_bound_per_frame": sum(bound) / max(1, len(bound)),
            "exchange_share_of_tile": (sum(per_frame) / max(1, len(per_frame)))
            / tile,
            "sync_skew_mean_ms": (senders[0]["stats"] or {}).get(
                "sync-skew-mean", 0) / 1e6,
            "release_wait_mean_ms": sum(x["release-wait-mean"] for x in stats)
            / max(1, len(stats)) / 1e6}


def run_cluster(results):
    mixed = ("pipe-width=0.5", "stream-degree=mixed")
    for s, code in ((2, mixed), (4, mixed), (4, ())):
        one = single_host_goodput(s, code=code)
        many = cluster_goodput(s, code=code)
        many["ratio_vs_one_host"] = (many["goodput_mbps"] / one["goodput_mbps"]
                                     if one["goodput_mbps"] else 0.0)
        results.add(one)
        results.add(many)
        log("S=%d, %s: cluster of %d sender processes %.0f Mbit/s of intact "
            "frames (%d/%d), one host %.0f (%d/%d): ratio %.2f; exchange %.0f "
            "bytes received a sender a frame (%.1f %% of its tile), bound "
            "%.0f; senders ready apart %.2f ms on average, waiting %.2f ms" % (
                s, "every pipe all S (the default)" if code == ()
                else "half pipes of mixed degree", s, many["goodput_mbps"],
                many["delivered"], many["frames"], one["goodput_mbps"],
                one["delivered"], one["frames"], many["ratio_vs_one_host"],
                many["exchange_bytes_per_frame"],
                100 * many["exchange_share_of_tile"],
                many["exchange_bound_per_frame"], many["sync_skew_mean_ms"],
                many["release_wait_mean_ms"]))


def plain_udp(streams, datagrams=20000, size=8192):
    sys.path.insert(0, os.path.join(here, "..", "tests", "network"))
    import cstp_loopback as cl
    Gst = cl.Gst
    ports = cl.free_ports(streams)
    recv = Gst.parse_launch(" ".join(
        "udpsrc address=127.0.0.1 port=%d buffer-size=8388608 ! "
        "fakesink name=f%d sync=false async=false" % (p, i)
        for i, p in enumerate(ports)))
    send = Gst.parse_launch(" ".join(
        "fakesrc num-buffers=%d sizetype=fixed sizemax=%d filltype=zero ! "
        "udpsink host=127.0.0.1 port=%d sync=false async=false" % (
            datagrams // streams, size, p) for p in ports))
    recv.set_state(Gst.State.PLAYING)
    time.sleep(0.5)
    t0 = time.monotonic()
    send.set_state(Gst.State.PLAYING)
    send.get_bus().timed_pop_filtered(120 * Gst.SECOND, Gst.MessageType.EOS |
                                      Gst.MessageType.ERROR)
    t1 = time.monotonic()
    time.sleep(0.3)
    got = sum(cl.stats_dict(recv.get_by_name("f%d" % i).get_property("stats"))
              ["rendered"] for i in range(streams))
    send.set_state(Gst.State.NULL)
    recv.set_state(Gst.State.NULL)
    rate = got * size * 8 / (t1 - t0) / 1e6
    return {"bench": "udp-plain", "streams": streams, "datagrams": datagrams,
            "received": got, "seconds": t1 - t0, "rate_mbps": rate,
            "at_5pct_loss_mbps": rate * 0.95}


def bench(build, results, run_one, find_exe):
    exe = find_exe(build, "bench_fountain")
    if exe:
        for row in run_one(exe, "bench_fountain", build, results):
            log("fountain N=%5d loss %2d %%: encode %.3f Gbit/s (scalar "
                "%.3f), decode %.3f Gbit/s" % (
                    row["n"], row["loss"] * 100, row["encode_gbps"],
                    row["scalar_encode_gbps"], row["decode_gbps"]))
    run_raptorq(build, results)
    run_recovery(build, results, find_exe, os.path.join(build, "bench"))
    run_uneven(build, results, find_exe, os.path.join(build, "bench"))
    run_cluster(results)
    for s in (2, 4, 8):
        # paced to 4 Gbit/s in all: unpaced, the sockets overflow (17 % of
        # the datagrams at S = 4) while the receiver decodes
        c = cstp_goodput(s, rate=4_000_000_000 // s)
        p = plain_udp(s)
        c["ratio_vs_plain_udp"] = c["goodput_mbps"] / p["at_5pct_loss_mbps"]
        results.add(p)
        results.add(c)
        log("S=%d: cstp %.0f Mbit/s of intact frames (%d/%d, decode max %.1f "
            "ms, socket loss %.2f %%), plain UDP %.0f Mbit/s received -> %.0f "
            "at 5 %%; ratio %.2f" % (
                s, c["goodput_mbps"], c["delivered"], c["frames"],
                c["decode_ms_max"], 100 * c["socket_loss"], p["rate_mbps"], p["at_5pct_loss_mbps"],
                c["ratio_vs_plain_udp"]))
        if s == 4:
            # cstpsink's defaults: every redundancy packet a pipe of all S
            d = cstp_goodput(s, rate=4_000_000_000 // s, code={})
            d["ratio_vs_plain_udp"] = d["goodput_mbps"] / p["at_5pct_loss_mbps"]
            results.add(d)
            log("S=4, cstpsink's default code (every pipe all S): cstp %.0f "
                "Mbit/s of intact frames (%d/%d, decode max %.1f ms, socket "
                "loss %.2f %%); ratio %.2f" % (
                    d["goodput_mbps"], d["delivered"], d["frames"],
                    d["decode_ms_max"], 100 * d["socket_loss"],
                    d["ratio_vs_plain_udp"]))
