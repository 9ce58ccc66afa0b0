#!/usr/bin/env python3
"""Soak: the demo pipeline and gpustream-server run for a while; their memory
and threads must level off.

Three processes run side by side for SECONDS:
  demo     the pipeline of ./run demo (tools/nc_loopback.py: ncencoder,
           rtpncpay, gpusrtpenc, a relay dropping 10 % of the packets,
           gpusrtpdec, rtpncdepay, ncdecoder) on a short clip, again and
           again in one process; every run must give the clip back byte for
           byte;
  server   gpustream-server serving a short H.264 clip over RTSP;
  clients  RTSP clients (rtspsrc, UDP and TCP in turn) that connect, play
           the clip to its end or leave after a moment, and come back.
Once a second the resident memory (VmRSS) and the thread count of each
process are sampled. After the warm-up (a fifth of the run, at least 5 s)
the run fails if a process's memory grows by more than the bound (the
median of the last five samples against that of the five after the
warm-up: --rss-bound-mb plus --rss-bound-pct of the level), if its thread
count at the end exceeds the most it had after the warm-up, or if any run,
session or process reports an error.

Writes samples.jsonl (one JSON object a sample and a closing summary line)
and, where matplotlib is installed, soak.png into --out."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "tools"))


def gst():
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    return Gst


# ---- the children ----

def child_demo(a):
    """./run demo's pipeline, over and over until a.until (a wall-clock time)"""
    import nc_loopback
    from udp_impair import Impairment
    nc_loopback.Gst.init(None)
    out = a.src + ".out"
    i = 0
    while time.time() < a.until:
        r = nc_loopback.run(a.src, out,
                            encoder={"generation-size": 32, "block-size": 1316,
                                     "redundancy-percent": 40},
                            decoder={},
                            impairment=Impairment(loss=0.10, seed=i + 1),
                            srtp_key=os.urandom(30))
        print(json.dumps({"demo-run": i, "identical": r["identical"],
                          "seconds": round(r["seconds"], 2)}), flush=True)
        if not r["identical"]:
            return 1
        i += 1
    return 0


def child_clients(a):
    """RTSP sessions, two at a time, until a.until: each plays the clip to
    EOS or, every third one, leaves after half a second"""
    Gst = gst()
    n = 0
    while time.time() < a.until:
        sessions = []
        for k in range(2):
            protocols = "tcp" if (n + k) % 2 else "udp"
            p = Gst.parse_launch(
                "rtspsrc location=%s protocols=%s ! rtpmp2tdepay ! tsdemux ! "
                "h264parse ! avdec_h264 ! fakesink sync=true" % (a.url, protocols))
            p.set_state(Gst.State.PLAYING)
            sessions.append((n + k, protocols, p))
        for i, protocols, p in sessions:
            leave_early = i % 3 == 2
            msg = p.get_bus().timed_pop_filtered(
                (Gst.SECOND // 2) if leave_early else 30 * Gst.SECOND,
                Gst.MessageType.EOS | Gst.MessageType.ERROR)
            p.set_state(Gst.State.NULL)
            error = None
            if msg is not None and msg.type == Gst.MessageType.ERROR:
                error = msg.parse_error()[0].message
            elif msg is None and not leave_early:
                error = "no EOS within 30 s"
            print(json.dumps({"session": i, "protocols": protocols,
                              "left-early": leave_early and msg is None,
                              "error": error}), flush=True)
            if error:
                return 1
        n += 2
    return 0


# ---- the parent ----

def sample(pid):
    """(VmRSS in KiB, threads) of a live process, or None"""
    try:
        with open("/proc/%d/status" % pid) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]), int(fields["Threads"])
    except (OSError, KeyError, ValueError):
        return None


def make_media(directory):
    Gst = gst()
    import nc_loopback
    clip = os.path.join(directory, "media", "clip.ts")
    os.mkdir(os.path.dirname(clip))
    p = Gst.parse_launch(
        "videotestsrc num-buffers=60 ! video/x-raw,width=320,height=240,"
        "framerate=30/1 ! x264enc speed-preset=ultrafast key-int-max=30 ! "
        "mpegtsmux ! filesink location=%s" % clip)
    p.set_state(Gst.State.PLAYING)
    msg = p.get_bus().timed_pop_filtered(60 * Gst.SECOND,
                                         Gst.MessageType.EOS | Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    if msg is None or msg.type != Gst.MessageType.EOS:
        raise RuntimeError("could not make the server's clip")
    demo_src = os.path.join(directory, "demo.ts")
    nc_loopback.make_test_ts(demo_src, frames=30, width=320, height=240)
    return os.path.dirname(clip), demo_src


def judge(name, series, warm_index, bound_mb, bound_pct):
    """Failure messages for one process's samples [(t, rss_kb, threads)]"""
    after = series[warm_index:]
    if len(after) < 10:
        return ["%s: only %d samples after the warm-up" % (name, len(after))]
    rss_start = statistics.median(s[1] for s in after[:5])
    rss_end = statistics.median(s[1] for s in after[-5:])
    allowed = bound_mb * 1024 + rss_start * bound_pct / 100.0
    threads_max = max(s[2] for s in after[:-5])
    threads_end = statistics.median(s[2] for s in after[-5:])
    problems = []
    if rss_end - rss_start > allowed:
        problems.append("%s: RSS grew %d KiB after the warm-up (%d -> %d KiB), more than "
                        "the bound of %d KiB" % (name, rss_end - rss_start, rss_start,
                                                 rss_end, allowed))
    if threads_end > threads_max:
        problems.append("%s: %d threads at the end, at most %d before"
                        % (name, threads_end, threads_max))
    return problems


def plot(samples, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("soak: matplotlib is not installed: no plot (the JSON lines have the samples)")
        return
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for name, series in samples.items():
        ax1.plot([s[0] for s in series], [s[1] / 1024.0 for s in series], label=name)
        ax2.plot([s[0] for s in series], [s[2] for s in series], label=name)
    ax1.set_ylabel("RSS (MiB)")
    ax2.set_ylabel("threads")
    ax2.set_xlabel("seconds")
    ax1.legend()
    fig.savefig(path)
    print("soak: plot in %s" % path)


def parent(a):
    server_bin = a.server or os.environ.get("GPUSTREAM_SERVER")
    if not server_bin:
        print("soak: no server binary (--server or GPUSTREAM_SERVER)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    jsonl = os.path.join(a.out, "samples.jsonl")
    with tempfile.TemporaryDirectory(prefix="gpustream-soak-") as tmp:
        media, demo_src = make_media(tmp)
        until = time.time() + a.seconds
        server = subprocess.Popen([server_bin, "--port", "0", "--address", "127.0.0.1",
                                   media], stdout=subprocess.PIPE, text=True)
        url = server.stdout.readline().strip() + "clip.ts"
        me = [sys.executable, os.path.abspath(__file__), "--until", repr(until)]
        logs = {n: open(os.path.join(a.out, n + ".log"), "w") for n in ("demo", "clients")}
        procs = {
            "server": server,
            "demo": subprocess.Popen(me + ["--child", "demo", "--src", demo_src],
                                     stdout=logs["demo"], stderr=subprocess.STDOUT),
            "clients": subprocess.Popen(me + ["--child", "clients", "--url", url],
                                        stdout=logs["clients"], stderr=subprocess.STDOUT),
        }
        samples = {n: [] for n in procs}
        t0 = time.time()
        problems = []
        with open(jsonl, "w") as out:
            while time.time() < until:
                t = round(time.time() - t0, 1)
                for name, p in procs.items():
                    s = sample(p.pid)
                    if s is None or p.poll() is not None:
                        if name == "server" or p.returncode:
                            problems.append("%s exited early (%s)" % (name, p.returncode))
                        continue
                    samples[name].append((t, s[0], s[1]))
                    out.write(json.dumps({"t": t, "process": name, "rss_kib": s[0],
                                          "threads": s[1]}) + "\n")
                out.flush()
                if problems:
                    break
                time.sleep(1)
            # the children stop at `until` by themselves, after their current run
            for name in ("demo", "clients"):
                try:
                    rc = procs[name].wait(120)
                except subprocess.TimeoutExpired:
                    procs[name].kill()
                    rc = "hung"
                if rc:
                    problems.append("%s failed (%s): see %s" % (
                        name, rc, os.path.join(a.out, name + ".log")))
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                problems.append("server did not stop on SIGTERM within 10 s")
            server.stdout.close()
            for f in logs.values():
                f.close()
            warm = max(5, int(a.seconds / 5))
            summary = {"seconds": a.seconds, "warm-up-seconds": warm,
                       "rss-bound-mb": a.rss_bound_mb, "rss-bound-pct": a.rss_bound_pct}
            if not problems:
                for name, series in samples.items():
                    warm_index = next((i for i, s in enumerate(series) if s[0] >= warm),
                                      len(series))
                    problems += judge(name, series, warm_index, a.rss_bound_mb,
                                      a.rss_bound_pct)
                    after = series[warm_index:]
                    if after:
                        summary[name] = {
                            "rss-kib-after-warm-up": statistics.median(s[1] for s in after[:5]),
                            "rss-kib-end": statistics.median(s[1] for s in after[-5:]),
                            "threads-after-warm-up": after[0][2],
                            "threads-max": max(s[2] for s in after),
                            "threads-end": after[-1][2]}
            for name in ("demo", "clients"):
                with open(os.path.join(a.out, name + ".log")) as f:
                    summary[name + "-lines"] = sum(1 for _ in f)
            summary["problems"] = problems
            out.write(json.dumps({"summary": summary}) + "\n")
    for name in ("server", "demo", "clients"):
        if name in summary:
            s = summary[name]
            print("soak: %-7s RSS %6.1f -> %6.1f MiB after the warm-up, threads %d -> %d "
                  "(max %d)" % (name, s["rss-kib-after-warm-up"] / 1024.0,
                                s["rss-kib-end"] / 1024.0, s["threads-after-warm-up"],
                                s["threads-end"], s["threads-max"]))
    plot(samples, os.path.join(a.out, "soak.png"))
    print("soak: samples in %s" % jsonl)
    for p in problems:
        print("soak: FAIL: %s" % p)
    if not problems:
        print("soak: OK (%d s)" % a.seconds)
    return 1 if problems else 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=int, default=300)
    p.add_argument("--out", default="soak-out")
    p.add_argument("--server", help="gpustream-server (default: $GPUSTREAM_SERVER)")
    p.add_argument("--rss-bound-mb", type=float, default=8.0)
    p.add_argument("--rss-bound-pct", type=float, default=5.0)
    p.add_argument("--child", choices=("demo", "clients"), help=argparse.SUPPRESS)
    p.add_argument("--until", type=float, help=argparse.SUPPRESS)
    p.add_argument("--src", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child == "demo":
        return child_demo(a)
    if a.child == "clients":
        return child_clients(a)
    return parent(a)


if __name__ == "__main__":
    sys.exit(main())
