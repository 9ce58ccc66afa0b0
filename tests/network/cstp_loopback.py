"""Frames through cstpsink -> loopback UDP -> cstpsrc, in one process.

The frames are appsrc buffers of known content; what cstpsrc gives back is
collected from an appsink with its timestamps and flags, so a test compares
bytes. Ports are chosen free by the system, never fixed. Loss comes from
cstpsrc's seeded simulate-loss (for tests only) or from tools/udp_impair.py
relays put between the two (one per stream: a path each)."""

import hashlib
import os
import socket
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from udp_impair import Impairment, Relay  # noqa: E402

Gst.init(None)


def free_ports(n):
    """n UDP ports that were free a moment ago (bound to 0, then closed)."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def frame_bytes(i, size):
    """Frame i: bytes nobody could guess without sending them."""
    out = bytearray()
    seed = b"cstp-frame-%d" % i
    block = 0
    while len(out) < size:
        out += hashlib.sha256(seed + block.to_bytes(4, "big")).digest()
        block += 1
    return bytes(out[:size])


def stats_dict(s):
    return {s.nth_field_name(i): s.get_value(s.nth_field_name(i))
            for i in range(s.n_fields())}


def _props(d):
    return " ".join("%s=%s" % (k, v) for k, v in d.items())


def run(frames, streams, sink_props=None, src_props=None, relays=None,
        caps="application/x-test-frames", frame_duration=Gst.SECOND // 30,
        push_interval=0.0, timeout=30.0, on_send=None):
    """Sends `frames` (list of bytes) and returns a dict: out (list of
    (bytes, pts, discont)), src and sink stats, relay stats (list), elapsed.
    relays: one udp_impair.Impairment per stream (or None for a direct path).
    on_send: called with the sender's socket ports after the pipelines start
    (for tests that inject datagrams)."""
    sink_props = dict(sink_props or {})
    src_props = dict(src_props or {})
    ports = free_ports(streams)
    relay_objs = []
    dest_ports = ports
    if relays:
        relay_ports = free_ports(streams)
        for s in range(streams):
            r = Relay(("127.0.0.1", relay_ports[s]), ("127.0.0.1", ports[s]),
                      relays[s], idle_exit=0).start()
            relay_objs.append(r)
        dest_ports = relay_ports
    src_props.setdefault("latency", 300 * Gst.MSECOND)
    recv = Gst.parse_launch(
        "cstpsrc name=src streams=%d address=127.0.0.1 ports=%s %s ! "
        "appsink name=out sync=false emit-signals=false" % (
            streams, ",".join(map(str, ports)), _props(src_props)))
    src = recv.get_by_name("src")
    out = recv.get_by_name("out")
    dests = ",".join("127.0.0.1:%d" % p for p in dest_ports)
    send = Gst.parse_launch(
        "appsrc name=in format=time caps=%s ! cstpsink name=sink streams=%d "
        "destinations=%s sync=false %s" % (caps, streams, dests,
                                           _props(sink_props)))
    appsrc = send.get_by_name("in")
    sink = send.get_by_name("sink")
    got, out_times = [], []
    try:
        # the sockets are bound once set_state returns (READY -> PAUSED); a
        # live pipeline only completes PLAYING with its first buffer
        assert recv.set_state(Gst.State.PLAYING) != Gst.StateChangeReturn.FAILURE
        assert send.set_state(Gst.State.PLAYING) != Gst.StateChangeReturn.FAILURE
        if on_send:
            on_send(ports)
        t0 = time.monotonic()
        for i, f in enumerate(frames):
            buf = Gst.Buffer.new_wrapped(f)
            buf.pts = i * frame_duration
            buf.duration = frame_duration
            appsrc.emit("push-buffer", buf)
            if push_interval:
                time.sleep(push_interval)
        appsrc.emit("end-of-stream")
        msg = send.get_bus().timed_pop_filtered(
            int(timeout * Gst.SECOND), Gst.MessageType.EOS | Gst.MessageType.ERROR)
        assert msg is not None, "sender did not finish in %s s" % timeout
        if msg.type == Gst.MessageType.ERROR:
            raise AssertionError("sender: %s" % (msg.parse_error(),))
        deadline = time.monotonic() + timeout
        last_out = None
        while time.monotonic() < deadline:
            sample = out.emit("try-pull-sample", 100 * Gst.MSECOND)
            if sample is not None:
                last_out = time.monotonic()
                out_times.append(last_out)
                b = sample.get_buffer()
                ok, m = b.map(Gst.MapFlags.READ)
                got.append((bytes(m.data), b.pts,
                            b.has_flags(Gst.BufferFlags.DISCONT),
                            sample.get_caps().to_string()))
                b.unmap(m)
                continue
            st = stats_dict(src.get_property("stats"))
            if st["frames-decoded"] + st["frames-lost"] >= len(frames) \
                    and st["frames-decoded"] <= len(got):
                break
        elapsed = time.monotonic() - t0
        src_stats = stats_dict(src.get_property("stats"))
        sink_stats = stats_dict(sink.get_property("stats"))
        msgs = []
        bus = recv.get_bus()
        while True:
            m = bus.pop()
            if m is None:
                break
            if m.type in (Gst.MessageType.WARNING, Gst.MessageType.ERROR):
                err, dbg = (m.parse_warning() if
                            m.type == Gst.MessageType.WARNING else
                            m.parse_error())
                msgs.append((m.type, "%s (%s)" % (err.message, dbg)))
    finally:
        send.set_state(Gst.State.NULL)
        recv.set_state(Gst.State.NULL)
    relay_stats = [r.stop() for r in relay_objs]
    return {"out": got, "src": src_stats, "sink": sink_stats,
            "relays": relay_stats, "elapsed": elapsed, "messages": msgs,
            "ports": ports, "out_times": out_times,
            # until the last frame came out (a frame lost at the end is
            # only declared lost once its latency passed)
            "elapsed_to_last": (last_out - t0) if last_out else elapsed}


def check_frames(frames, out):
    """(delivered, wrong): how many output buffers equal a sent frame, and how
    many equal none; output must be in order."""
    index = {hashlib.sha256(f).digest(): i for i, f in enumerate(frames)}
    delivered, wrong, last = [], 0, -1
    for data, _pts, _discont, _caps in out:
        i = index.get(hashlib.sha256(data).digest())
        if i is None or i <= last:
            wrong += 1
            continue
        delivered.append(i)
        last = i
    return delivered, wrong


# Four paths of uneven loss: 1 % and 3 % independent, 8 % in bursts of mean
# 4, 16 % in bursts of mean 8 (Gilbert-Elliott, all lost while bad)
UNEVEN = ((0.01, None), (0.03, None), (0.08, 4), (0.16, 8))


def uneven_paths(seed):
    """One udp_impair.Impairment per path of UNEVEN, seeded seed + path."""
    imps = []
    for s, (rate, burst) in enumerate(UNEVEN):
        if burst is None:
            imps.append(Impairment(loss=rate, seed=seed + s))
        else:
            p_bg = 1.0 / burst
            imps.append(Impairment(burst=(rate * p_bg / (1 - rate), p_bg, 1.0),
                                   seed=seed + s))
    return imps


def beyond_redundancy(seed, frames, n, red):
    """The frames of which the uneven paths (seed) drop more code packets
    than the S x red redundancy sent, from the very draws the relays make:
    a path carries each frame's frame packet, then its n + red code
    packets, in order."""
    per_path = 1 + n + red
    lost = [[0] * frames for _ in UNEVEN]
    for s, imp in enumerate(uneven_paths(seed)):
        for i in range(frames * per_path):
            if imp._lost(i) and i % per_path != 0:
                lost[s][i // per_path] += 1
    return {f for f in range(frames)
            if sum(lost[s][f] for s in range(len(UNEVEN))) > len(UNEVEN) * red}
