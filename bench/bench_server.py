#!/usr/bin/env python3
"""./run bench server [--quick]: the serving capacity of gpustream-server
against a stock gst-rtsp-server, measured the way Jin Zhao, Xinya Zhang, Xin
Wang measured their VoD server ("An Architecture Design of GPU-Accelerated
VoD Streaming Servers with Network Coding", 2010, Fig. 7-10).

Media: four 750 kbit/s MPEG-TS files made here (videotestsrc, x264enc,
mpegtsmux bitrate=750000 padding to a constant rate), 60 s each (20 s with
--quick); C channels (1, 30, 200) are hard links to them, channel i to file
i mod 4, so that the page cache holds four files whatever C is.

Servers, each started afresh for every (server, mode, C):
  peer       tests/tools/stock_rtsp_server.py: one unshared media factory per
             file, ( filesrc ! tsparse set-timestamps=true ! rtpmp2tpay )
  plain      gpustream-server, /<file>: the shared sender (one thread and one
             UDP port pair for every session, packets from the content cache)
  nc         gpustream-server, /nc/<file>: network-coded (CPU backend), a
             pipeline per session
  srtp       gpustream-server, /srtp/<file>: SRTP on the shared sender, each
             round's packets of all sessions protected in one batch (CPU)

Load: tests/tools/rtsp_load.py, one process, raw RTSP and UDP sockets. A step
of N sessions: Poisson arrivals at 100 a second, each channel picked by Zipf
popularity (0.5), each session receiving for N / 100 s and 2 s more after
PLAY, so that all N receive together for about two seconds. A step passes
when every session receives at least 95 % of 750 kbit/s (after its first
second) with no error, and the
p95 response time (first request to first media packet) is under 100 ms
above the file's own start-up delay: tsparse stamps the first packet of
these files 188 ms after the start of the stream, and both servers hold it
until then (the strict figure, p95 under 100 ms as it is, is reported too).
A step that fails is run once more (other work on the machine disturbs
single runs), and fails when it fails again. Capacity: N doubles from 128
(64) while steps pass, then is bisected between the last pass and the first
failure to within 35 % (50 %); a search stops after 8 sizes (3) and goes no
higher than 4096 sessions (256): far enough to find where the peer fails
(its pipeline per session meets the open-file limit near 1,200), so that
the ratios are measured, in about 35 minutes (3; --server-max N changes the
limit, --server-channels 1,30 picks the channel counts, --server-modes nc,srtp
our modes: the peer is measured whatever it says);
where no step failed the capacity is a lower bound
("lower_bound": true), as it is where the generator used most of a core.

JSON lines: one per step (bench "server-step") and one per server, mode and
C (bench "server-capacity", with the ratio to the peer's capacity at the same
C measured in the same run). SVGs in build/bench: server-capacity.svg
(capacity against channels), server-response-cdf.svg (response time CDF at
each server's largest passing step), server-cpu.svg (server CPU over time
during those steps); `python3 bench/bench_server.py RESULTS.jsonl DIR` draws
them again from a results file."""

import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import rtsp_load  # noqa: E402

import bench_rtgpu  # noqa: E402  (the SVG writer)

PATTERNS = ("ball", "smpte", "pinwheel", "circular")
MODES = (("peer", "plain", ""), ("gpustream", "plain", ""),
         ("gpustream", "nc", "nc/"), ("gpustream", "srtp", "srtp/"))
TARGETS = {"plain": 2.0, "nc": 1.25, "srtp": 1.25}
COLORS = {"peer/plain": "#444444", "gpustream/plain": "#1f77b4",
          "gpustream/nc": "#d62728", "gpustream/srtp": "#2ca02c"}


def log(msg):
    print(msg, flush=True)


def make_media(directory, seconds):
    """Four constant-rate 750 kbit/s MPEG-TS files (made once per length)."""
    os.makedirs(directory, exist_ok=True)
    files = []
    for i, pattern in enumerate(PATTERNS):
        path = os.path.join(directory, "src%d-%ds.ts" % (i, seconds))
        if not os.path.exists(path):
            tmp = path + ".part"
            subprocess.run(
                ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=%d" % (seconds * 30),
                 "pattern=%s" % pattern, "!",
                 "video/x-raw,width=320,height=240,framerate=30/1", "!",
                 "x264enc", "speed-preset=ultrafast", "bitrate=600", "key-int-max=30",
                 "vbv-buf-capacity=500", "!", "mpegtsmux", "bitrate=750000", "!",
                 "filesink", "location=" + tmp], check=True)
            os.rename(tmp, path)
        files.append(path)
    return files


def channel_dir(root, files, channels):
    """A directory of `channels` hard links ch000.ts ..., to the files in turn."""
    d = os.path.join(root, "channels-%d" % channels)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    names = []
    for i in range(channels):
        name = "ch%03d.ts" % i
        os.link(files[i % len(files)], os.path.join(d, name))
        names.append(name)
    return d, names


def first_packet_ms(path):
    """When tsparse set-timestamps=true stamps the file's first buffer: the
    servers send nothing before it."""
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    p = Gst.parse_launch("filesrc location=%s ! tsparse set-timestamps=true ! "
                         "appsink name=s sync=false" % path)
    sink = p.get_by_name("s")
    p.set_state(Gst.State.PLAYING)
    sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
    p.set_state(Gst.State.NULL)
    if sample is None:
        raise RuntimeError("tsparse gave no buffer for %s" % path)
    return sample.get_buffer().pts / 1e6


def start_server(kind, build, directory, names, logdir, tag):
    out = open(os.path.join(logdir, "%s.log" % tag), "w+")
    if kind == "peer":
        args = [sys.executable, os.path.join(SRC, "tests", "tools", "stock_rtsp_server.py"),
                "--port", "0"] + [os.path.join(directory, n) for n in names]
    else:
        args = [os.path.join(build, "pipelines", "server", "gpustream-server"), "--port", "0",
                "--address", "127.0.0.1", "--backend", "cpu", directory]
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 20
    while time.time() < deadline:
        out.seek(0)
        line = out.readline()
        if line.startswith("rtsp://") and line.endswith("\n"):
            return proc, line.strip(), out
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    out.seek(0)
    raise RuntimeError("%s did not start: %s" % (tag, out.read()[-2000:]))


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def stop_server(proc, out):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out.close()


def capacity_search(cfg, kind, mode, prefix, build, directory, names, bound_ms, results,
                    logdir):
    """Steps of N sessions until the capacity is bracketed; returns the
    summary row and the step rows."""
    steps = []
    passed, failed = [], []
    n = cfg["start"]
    retry = False
    while len(passed) + len(failed) < cfg["max_steps"]:
        # a server of its own for every step: an overloaded step leaves
        # sessions behind that would weigh on the next one
        tag = "%s-%s-%d-%d" % (kind, mode, len(names), n)
        proc, url, out = start_server(kind, build, directory, names, logdir, tag)
        load_before = loadavg()
        try:
            # Poisson arrivals at a fixed rate: a step of N sessions ramps
            # up for N / rate seconds, and each session is held until all
            # have played together for the plateau
            ramp = n / cfg["rate"]
            hold = ramp + cfg["plateau"]
            r = rtsp_load.run_step(url, names, n, cfg["rate"], hold, prefix,
                                   mode == "srtp", proc.pid, seed=len(steps) + 1,
                                   response_bound_ms=bound_ms)
            exited = proc.poll()
        finally:
            stop_server(proc, out)
        per = r.pop("per_session")
        strict = r["full_rate_all"] and r["response_ms_p95"] is not None and \
            r["response_ms_p95"] < rtsp_load.RESPONSE_P95_MS
        row = {"area": "server", "bench": "server-step", "server": kind, "mode": mode,
               "step": len(steps) + 1, "passed_strict": strict, "retry": retry,
               "ramp_s": round(ramp, 2), "hold_s": round(hold, 2),
               "arrival_rate": cfg["rate"],
               # the machine's load (1 min) before and after: others' work too
               "loadavg": [load_before, loadavg()],
               "responses_ms": sorted(p["response_ms"] for p in per
                                      if p["response_ms"] is not None)}
        row.update(r)
        results.add(row)
        steps.append(row)
        log("  %-9s %-5s C=%-3d N=%-4d %s  full rate %d/%d, errors %d, p95 %s ms, "
            "rate min %s kbit/s, server CPU %s %% (max %s), %s threads, %s fds, "
            "generator CPU %s %% (max %s)%s" % (
                kind, mode, len(names), n, "pass" if r["passed"] else "FAIL",
                r["full_rate"], n, r["errors"], r["response_ms_p95"], r["rate_kbps_min"],
                r.get("server_process", {}).get("cpu_mean"),
                r.get("server_process", {}).get("cpu_max"),
                r.get("server_process", {}).get("threads_max"),
                r.get("server_process", {}).get("fds_max"),
                r["generator"].get("cpu_mean"), r["generator"].get("cpu_max"),
                "; errors: %s" % "; ".join(r["error_examples"]) if r["errors"] else ""))
        if exited is not None:
            log("  %s exited during the step (status %s)" % (tag, exited))
        # others share the machine: a step fails when it fails twice
        if not r["passed"] and not retry:
            retry = True
            continue
        retry = False
        (passed if r["passed"] else failed).append(n)
        # the next N: double while passing, then bisect
        lo = max(passed, default=0)
        hi = min([f for f in failed if f > lo], default=None)
        if hi is None:
            if r["generator"].get("cpu_mean", 0) > 80:
                log("  (the generator used a whole core: stopping here)")
                break
            if lo * 2 > cfg["max_n"]:
                break
            n = lo * 2
        else:
            if hi - lo <= max(2, lo * cfg["resolution"]):
                break
            n = (lo + hi) // 2 if lo else max(1, hi // 2)
    cap = max(passed, default=0)
    strict = max([s["sessions"] for s in steps if s["passed_strict"]], default=0)
    best = next((s for s in steps if s["sessions"] == cap and s["passed"]), None)
    summary = {"area": "server", "bench": "server-capacity", "server": kind, "mode": mode,
               "channels": len(names), "capacity": cap, "capacity_strict_100ms": strict,
               "first_failure": min([f for f in failed if f > cap], default=None),
               # no step failed above it: the server can serve more
               "lower_bound": not [f for f in failed if f > cap],
               "response_bound_ms": bound_ms, "steps": len(steps),
               "p95_ms_at_capacity": best["response_ms_p95"] if best else None,
               "server_cpu_at_capacity": best.get("server_process", {}).get("cpu_mean")
               if best else None,
               "generator_cpu_max": max((s["generator"].get("cpu_max", 0) for s in steps),
                                        default=None)}
    return summary, steps


def plots(summaries, steps, outdir, channels_list):
    paths = []
    # capacity against channels (Fig. 7b and 10 as one number per C)
    ymax = max([s["capacity"] for s in summaries] + [10]) * 1.1
    ystep = next(t for t in (5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000)
                 if ymax / t <= 6)
    ytop = int(math.ceil(ymax / ystep) * ystep)
    xs = sorted(channels_list)
    cap = bench_rtgpu.Panel("Serving capacity", "channels", "sessions at full rate",
                            min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1, 0, ytop,
                            logx=max(xs) > min(xs), xticks=xs,
                            yticks=list(range(0, ytop + 1, ystep)))
    for key, color in COLORS.items():
        kind, mode = key.split("/")
        pts = [(s["channels"], s["capacity"]) for s in summaries
               if s["server"] == kind and s["mode"] == mode]
        cap.line(sorted(pts), color, 2.0, label=key)
    paths.append(bench_rtgpu.svg([cap], os.path.join(outdir, "server-capacity.svg"),
                                 "Most concurrent sessions each receiving >= 95 % of 750 "
                                 "kbit/s with p95 response time within 100 ms of the "
                                 "files' start-up delay. peer: stock gst-rtsp-server. "
                                 "A point where no step failed is a lower bound"))
    # response time CDF at each capacity step (Fig. 8 and 10), one panel per C
    panels = []
    cpu_panels = []
    for c in xs:
        best = []
        for s in summaries:
            if s["channels"] != c:
                continue
            cand = [st for st in steps if st["server"] == s["server"] and
                    st["mode"] == s["mode"] and st["channels"] == c and
                    st["sessions"] == s["capacity"] and st["passed"]]
            if cand:
                best.append(cand[0])
        if not best:
            continue
        hi = max(max(b["responses_ms"]) for b in best if b["responses_ms"])
        xmax = min(t for t in bench_rtgpu.LAT_TICKS + [1e9] if t >= hi)
        p = bench_rtgpu.Panel("Response time, %d channel%s" % (c, "s" if c > 1 else ""),
                              "first request to first packet (ms, log scale)",
                              "fraction of sessions", 10, xmax, 0, 1,
                              xticks=[t for t in bench_rtgpu.LAT_TICKS if 10 <= t <= xmax],
                              yticks=[0, 0.25, 0.5, 0.75, 1])
        p.vline(rtsp_load.RESPONSE_P95_MS, "100 ms")
        p.vline(best[0]["response_bound_ms"], "p95 bound")
        tmax = max(max((x[0] for x in b.get("server_process_series", [])), default=1) for b in best)
        cpu = bench_rtgpu.Panel("Server CPU, %d channel%s" % (c, "s" if c > 1 else ""),
                                "seconds into the step", "CPU (% of one core)", 0, tmax, 0,
                                200, logx=False,
                                xticks=list(range(0, int(tmax) + 1, 2)),
                                yticks=[0, 50, 100, 150, 200])
        for b in best:
            key = "%s/%s" % (b["server"], b["mode"])
            r = b["responses_ms"]
            p.line([(v, (i + 1) / len(r)) for i, v in enumerate(r)], COLORS[key], 2.0,
                   label="%s N=%d" % (key, b["sessions"]))
            cpu.line([(x[0], x[1]) for x in b.get("server_process_series", [])], COLORS[key], 1.5,
                     label="%s N=%d" % (key, b["sessions"]))
        panels.append(p)
        cpu_panels.append(cpu)
    if panels:
        paths.append(bench_rtgpu.svg(panels, os.path.join(outdir, "server-response-cdf.svg"),
                                     "Response time of every session of the largest passing "
                                     "step of each server"))
        paths.append(bench_rtgpu.svg(cpu_panels, os.path.join(outdir, "server-cpu.svg"),
                                     "Server CPU (utime + stime from /proc, 2 cores = 200 %) "
                                     "during the largest passing step of each server"))
    return paths


def _terminate(signum, frame):
    # servers are stopped in capacity_search's finally
    raise SystemExit("bench server: stopped by signal %d" % signum)


def bench(build, results, quick=False, max_sessions=None, channels=None, modes=None):
    signal.signal(signal.SIGTERM, _terminate)
    cfg = ({"seconds": 20, "rate": 100.0, "plateau": 2.0, "start": 64, "max_n": 256,
            "max_steps": 3, "resolution": 0.5, "channels": (1, 200)} if quick else
           {"seconds": 60, "rate": 100.0, "plateau": 2.0, "start": 128, "max_n": 4096,
            "max_steps": 8, "resolution": 0.35, "channels": (1, 30, 200)})
    if max_sessions:
        cfg["max_n"] = max_sessions
    if channels:
        cfg["channels"] = tuple(channels)
    server = os.path.join(build, "pipelines", "server", "gpustream-server")
    if not os.access(server, os.X_OK):
        log("server: %s is not built (the plugins are disabled?): nothing measured" % server)
        return False
    # a few thousand sockets: raise the open-file limit for us and the servers
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = os.path.join(build, "bench", "server")
    logdir = os.path.join(root, "logs")
    os.makedirs(logdir, exist_ok=True)
    log("server: making four %d s 750 kbit/s MPEG-TS files in %s" % (cfg["seconds"], root))
    files = make_media(os.path.join(root, "media"), cfg["seconds"])
    rates = [os.path.getsize(f) * 8 / cfg["seconds"] / 1e3 for f in files]
    start_ms = max(first_packet_ms(f) for f in files)
    bound = rtsp_load.RESPONSE_P95_MS + start_ms
    log("server: file rates %s kbit/s; tsparse stamps the first packet at %.0f ms: a step "
        "passes with p95 response < %.0f ms" % (", ".join("%.0f" % r for r in rates),
                                                start_ms, bound))
    summaries, all_steps = [], []
    for c in cfg["channels"]:
        directory, names = channel_dir(root, files, c)
        peer_cap, peer_lower = None, True
        for kind, mode, prefix in MODES:
            # the peer always: the ratios are to it, in the same run
            if modes and kind != "peer" and mode not in modes:
                continue
            s, steps = capacity_search(cfg, kind, mode, prefix, build, directory, names,
                                       bound, results, logdir)
            if kind == "peer":
                peer_cap, peer_lower = s["capacity"], s["lower_bound"]
            else:
                s["peer_capacity"] = peer_cap
                s["ratio_to_peer_plain"] = round(s["capacity"] / peer_cap, 3) \
                    if peer_cap else None
                # where a search found no failure its capacity is a lower
                # bound, and so is the ratio (ours) or it is an upper one
                s["ratio_is"] = {(False, False): "measured", (True, False): "at least",
                                 (False, True): "at most", (True, True): "unknown"}[
                    (s["lower_bound"], peer_lower)]
                s["target_ratio"] = TARGETS[mode]
            s["file_kbps"] = [round(r, 1) for r in rates]
            s["start_delay_ms"] = round(start_ms, 1)
            results.add(s)
            summaries.append(s)
            all_steps += steps
            log("server %-9s %-5s C=%-3d capacity %s%d sessions (strict p95 < 100 ms: %d)%s"
                % (kind, mode, c, "at least " if s["lower_bound"] else "", s["capacity"],
                   s["capacity_strict_100ms"],
                   "" if kind == "peer" else ", %s %s x the peer's plain (target %g x)"
                   % (s["ratio_is"], s["ratio_to_peer_plain"], TARGETS[mode])))
    for path in plots(summaries, all_steps, os.path.join(build, "bench"), cfg["channels"]):
        log("plot: %s" % path)
    return True


def plot_file(jsonl, outdir):
    """The SVGs of a results file's server rows."""
    rows = [json.loads(line) for line in open(jsonl) if line.startswith("{")]
    summaries = [r for r in rows if r.get("bench") == "server-capacity"]
    steps = [r for r in rows if r.get("bench") == "server-step"]
    return plots(summaries, steps, outdir, sorted({s["channels"] for s in summaries}))


if __name__ == "__main__":
    # python3 bench/bench_server.py JSONL DIR: the SVGs of a results file into DIR
    if len(sys.argv) != 3:
        sys.exit("usage: bench_server.py RESULTS.jsonl OUTDIR")
    for path in plot_file(sys.argv[1], sys.argv[2]):
        print(path)
