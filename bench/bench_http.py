#!/usr/bin/env python3
"""./run bench server-files: gpustream-server's file delivery and its one
content cache.

1. Throughput of whole-segment delivery over HTTP (sendfile) for the
   segment sizes of the D-DASH sets used by Woo-Yeong Jeong, Youngjae Lee,
   Jin-Soo Kim, "A High-Performance Media Streaming Architecture based on
   KVM", 2018 (288.6 KB, 1.4 MB, 10.5 MB): gpustream-server --workers W
   --http-port against Debian's nginx (sendfile on, W worker processes, its
   own configuration in a temporary directory, on loopback), the same files
   from the page cache, the same client (build/bench/bench_http_fetch: C
   keep-alive connections at once). Rounds alternate between the two
   servers; the best round of each is kept. Target: >= 0.9 of nginx.
2. Memory with sessions on one file: K rtspsrc clients of one MPEG-TS file
   served by one process and by W workers; Rss and Pss of all the server's
   processes (/proc/PID/smaps_rollup) and of their mappings of the file
   (/proc/PID/smaps): the file's pages count once (Pss) whatever W is.

Run alone: bench/bench_http.py --build build [--seconds 4 --rounds 3]."""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENTS = (("288.6KB", 288_600), ("1.4MB", 1_400_000), ("10.5MB", 10_500_000))
FILES_PER_SIZE = 8
CONNECTIONS = 32

NGINX_CONF = """\
worker_processes %(workers)d;
daemon off;
master_process on;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log warn;
%(user)s
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path %(dir)s/body;
    proxy_temp_path %(dir)s/proxy;
    fastcgi_temp_path %(dir)s/fastcgi;
    uwsgi_temp_path %(dir)s/uwsgi;
    scgi_temp_path %(dir)s/scgi;
    types { video/iso.segment m4s; video/mp2t ts; }
    server {
        listen 127.0.0.1:%(port)d;
        root %(root)s;
    }
}
"""


def log(msg):
    print(msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout_s=20):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_ours(server_exe, media, workers, http=True):
    """gpustream-server on free ports; returns (process, rtsp port, http port)"""
    argv = [server_exe, "--port", "0", "--address", "127.0.0.1",
            "--workers", str(workers)]
    if http:
        argv += ["--http-port", "0"]
    p = subprocess.Popen(argv + [media], stdout=subprocess.PIPE, text=True)
    rtsp = int(p.stdout.readline().strip().rsplit(":", 1)[1].strip("/"))
    http_port = None
    if http:
        http_port = int(p.stdout.readline().strip().rsplit(":", 1)[1].strip("/"))
    for _ in range(workers if workers > 1 else 0):
        p.stdout.readline()
    assert wait_port(rtsp) and (http_port is None or wait_port(http_port))
    return p, rtsp, http_port


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if p.stdout:
        p.stdout.close()


def start_nginx(nginx, media, workers, tmp):
    conf_dir = os.path.join(tmp, "nginx")
    os.makedirs(conf_dir, exist_ok=True)
    port = free_port()
    conf = os.path.join(conf_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF % {
            "workers": workers, "dir": conf_dir, "port": port, "root": media,
            # as root, nginx's workers would be 'nobody'; keep the caller's
            "user": "user root;" if os.geteuid() == 0 else ""})
    p = subprocess.Popen([nginx, "-p", conf_dir, "-c", conf, "-e",
                          os.path.join(conf_dir, "error.log")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    if not wait_port(port):
        p.kill()
        raise RuntimeError("nginx did not start: %s" % p.communicate()[1])
    return p, port


def fetch(fetch_exe, port, seconds, paths):
    run = subprocess.run([fetch_exe, str(port), str(CONNECTIONS), str(seconds)]
                         + paths, capture_output=True, text=True,
                         timeout=seconds + 60)
    row = json.loads(run.stdout)
    if "error" in row:
        raise RuntimeError("bench_http_fetch: %s" % row["error"])
    return row


def bench_throughput(build, results, tmp, seconds, rounds, workers):
    server_exe = os.path.join(build, "pipelines", "server", "gpustream-server")
    fetch_exe = os.path.join(build, "bench", "bench_http_fetch")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        log("server-files: no nginx (apt-get install nginx): throughput not measured")
        return
    version = subprocess.run([nginx, "-v"], capture_output=True,
                             text=True).stderr.strip()
    media = os.path.join(tmp, "segments")
    os.makedirs(media)
    paths = {}
    for label, size in SEGMENTS:
        paths[label] = []
        for i in range(FILES_PER_SIZE):
            name = "seg-%s-%d.m4s" % (label, i)
            with open(os.path.join(media, name), "wb") as f:
                f.write(os.urandom(size))
            paths[label].append("/" + name)
    # other users (nginx's workers drop root to no one else, but be sure)
    os.chmod(tmp, 0o755)
    os.chmod(media, 0o755)

    ours, _, ours_port = start_ours(server_exe, media, workers)
    theirs, nginx_port = start_nginx(nginx, media, workers, tmp)
    try:
        for label, size in SEGMENTS:
            # the page cache holds every file before timing
            for port in (ours_port, nginx_port):
                fetch(fetch_exe, port, 1, paths[label])
            best = {}
            for _ in range(rounds):
                for name, port in (("gpustream-server", ours_port),
                                   ("nginx", nginx_port)):
                    row = fetch(fetch_exe, port, seconds, paths[label])
                    mbps = row["bytes"] / row["seconds"] / 1e6
                    if mbps > best.get(name, (0,))[0]:
                        best[name] = (mbps, row["responses"] / row["seconds"])
            for name in ("gpustream-server", "nginx"):
                results.add({"bench": "server-files-http", "server": name,
                             "segment": label, "segment_bytes": size,
                             "connections": CONNECTIONS, "workers": workers,
                             "seconds": seconds, "rounds": rounds,
                             "throughput_MBps": best[name][0],
                             "responses_per_s": best[name][1],
                             "nginx_version": version,
                             # the machine may be shared: how busy it was
                             "loadavg_1min": os.getloadavg()[0]})
            ratio = best["gpustream-server"][0] / best["nginx"][0]
            results.add({"bench": "server-files-http-ratio", "segment": label,
                         "segment_bytes": size, "ratio_vs_nginx": ratio,
                         "target": 0.9, "device": "cpu"})
            log("%-8s segments: gpustream-server %7.0f MB/s (%6.0f/s), nginx "
                "%7.0f MB/s (%6.0f/s): ratio %.2f (target 0.9)" % (
                    label, best["gpustream-server"][0],
                    best["gpustream-server"][1], best["nginx"][0],
                    best["nginx"][1], ratio))
    finally:
        stop(ours)
        stop(theirs)


def server_pids(p):
    pids = [p.pid]
    try:
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            pids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return pids


def memory_of(pids, path):
    """kB: Rss and Pss of all pids, and of their mappings of path"""
    total = {"rss_kb": 0, "pss_kb": 0, "file_rss_kb": 0, "file_pss_kb": 0}
    for pid in pids:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Rss:"):
                    total["rss_kb"] += int(line.split()[1])
                elif line.startswith("Pss:"):
                    total["pss_kb"] += int(line.split()[1])
        inside = False
        with open("/proc/%d/smaps" % pid) as f:
            for line in f:
                fields = line.split()
                if not fields[0].endswith(":") and "-" in fields[0]:
                    inside = len(fields) >= 6 and fields[5] == path
                elif inside and fields[0] == "Rss:":
                    total["file_rss_kb"] += int(fields[1])
                elif inside and fields[0] == "Pss:":
                    total["file_pss_kb"] += int(fields[1])
    return total


def bench_memory(build, results, tmp, workers, sessions=8):
    server_exe = os.path.join(build, "pipelines", "server", "gpustream-server")
    media = os.path.join(tmp, "clips")
    os.makedirs(media)
    clip = os.path.realpath(os.path.join(media, "movie.ts"))
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=240",
                    "pattern=snow", "!",
                    "video/x-raw,width=320,height=240,framerate=30/1", "!",
                    "x264enc", "speed-preset=ultrafast", "bitrate=8000",
                    "key-int-max=30", "!", "mpegtsmux", "!", "filesink",
                    "location=" + clip], check=True, timeout=120)
    size_kb = os.path.getsize(clip) / 1024
    for w in sorted({1, workers, 4}):
        server, rtsp_port, _ = start_ours(server_exe, media, w, http=False)
        clients = [subprocess.Popen(
            ["gst-launch-1.0", "-q", "rtspsrc",
             "location=rtsp://127.0.0.1:%d/movie.ts" % rtsp_port,
             "protocols=tcp", "!", "fakesink"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(sessions)]
        try:
            # the 8 s clip plays to its end; its mapping lingers after
            for c in clients:
                c.wait(60)
            pids = server_pids(server)
            mem = memory_of(pids, clip)
            serving = sum(1 for pid in pids[1:] or pids
                          if memory_of([pid], clip)["file_rss_kb"] > 0)
        finally:
            for c in clients:
                if c.poll() is None:
                    c.kill()
            stop(server)
        row = {"bench": "server-files-memory", "workers": w,
               "processes": len(pids), "sessions": sessions,
               "processes_mapping_the_file": serving,
               "file_kb": round(size_kb), **mem}
        results.add(row)
        log("%d session(s) of one %.0f kB file, %d worker(s) (%d serving it): "
            "all processes Rss %d kB, Pss %d kB; the file's mappings Rss %d kB,"
            " Pss %d kB" % (sessions, size_kb, w, serving, mem["rss_kb"],
                            mem["pss_kb"], mem["file_rss_kb"],
                            mem["file_pss_kb"]))


def bench(build, results, seconds=4, rounds=3):
    workers = max(2, os.cpu_count() or 2)
    tmp = tempfile.mkdtemp(prefix="gpustream-bench-files-")
    try:
        bench_throughput(build, results, tmp, seconds, rounds, workers)
        bench_memory(build, results, tmp, workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from bench import Results  # noqa: E402
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    out = os.path.join(a.build, "bench", "server-files.jsonl")
    r = Results(out)
    bench(a.build, r, a.seconds, a.rounds)
    r.close()
    print("JSON lines: %s" % out)
