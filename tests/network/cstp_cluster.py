"""A CSTP sending cluster on this machine, for the tests and the benchmark:
one tests/network/cstp_cluster_sender.py process per stream (Cluster) and
one cstpsrc taking all the streams in this process (receive, collect)."""

import json
import os
import subprocess
import sys
import time

import cstp_loopback as cl

Gst = cl.Gst
here = os.path.dirname(os.path.abspath(__file__))


class Cluster:
    """A sender process per stream (tests/network/cstp_cluster_sender.py),
    stream i to dests[i]; .wait() gives each one's exit status, stats, start
    time and warnings. peers: each process's peers string (default: one
    list of free ports for all)."""

    def __init__(self, dests, frames, tile, props=(), peers=None):
        streams = len(dests)
        if peers is None:
            peers = [",".join("127.0.0.1:%d" % p
                              for p in cl.free_ports(streams))] * streams
        self.procs = [subprocess.Popen(
            [sys.executable, os.path.join(here, "cstp_cluster_sender.py"),
             str(i), str(streams), peers[i], dests[i], str(frames), str(tile)]
            + list(props), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True) for i in range(streams)]

    def wait(self, timeout):
        out = []
        for p in self.procs:
            try:
                stdout, stderr = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                stdout, stderr = p.communicate()
            lines = [json.loads(x) for x in stdout.splitlines()
                     if x.startswith("{")]
            out.append({"rc": p.returncode, "lines": lines,
                        "stderr": stderr[-2000:],
                        "stats": next((x["stats"] for x in lines
                                       if "stats" in x), None),
                        "started": next((x["started"] for x in lines
                                         if "started" in x), None),
                        "warnings": [x["warning"] for x in lines
                                     if "warning" in x]})
        return out


def receive(ports, latency_ms=300, props=""):
    """One cstpsrc for all streams, playing (collect takes its output)."""
    recv = Gst.parse_launch(
        "cstpsrc name=src streams=%d address=127.0.0.1 ports=%s latency=%d %s "
        "! appsink name=out sync=false" % (
            len(ports), ",".join(map(str, ports)), latency_ms * Gst.MSECOND,
            props))
    recv.set_state(Gst.State.PLAYING)
    return recv


def collect(recv, frames, deadline_s, until=None, times=None):
    """Pulls what cstpsrc gives until every frame is decided: (buffers,
    stats, bus warnings), and stops the receiver; with until, returns the
    buffers once that many came out, the receiver still playing. times: a
    list that gets each buffer's time.monotonic () as it comes out."""
    src, out = recv.get_by_name("src"), recv.get_by_name("out")
    got = []
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if until is not None and len(got) >= until:
            return got
        sample = out.emit("try-pull-sample", 100 * Gst.MSECOND)
        if sample is not None:
            if times is not None:
                times.append(time.monotonic())
            b = sample.get_buffer()
            ok, m = b.map(Gst.MapFlags.READ)
            got.append((bytes(m.data), b.pts, False, ""))
            b.unmap(m)
            continue
        st = cl.stats_dict(src.get_property("stats"))
        if st["frames-decoded"] + st["frames-lost"] >= frames \
                and st["frames-decoded"] <= len(got):
            break
    st = cl.stats_dict(src.get_property("stats"))
    warnings = []
    bus = recv.get_bus()
    while True:
        m = bus.pop_filtered(Gst.MessageType.WARNING)
        if m is None:
            break
        warnings.append(m.parse_warning()[0].message)
    recv.set_state(Gst.State.NULL)
    return got, st, warnings
