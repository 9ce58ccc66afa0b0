#!/usr/bin/env python3
"""gpusrtpenc against srtpenc in the same pipeline shape (the element
benchmark): appsrc pushing RTP in buffer lists of 64 packets (what rtpbin and
the aggregating payloaders push) ! ENCODER ! fakesink sync=false, timed from
the first push to EOS, best (or median) of a few runs. srtpenc is
gst-plugins-bad's, on Debian's libsrtp2 (built on NSS); the kernel-level
comparison with the OpenSSL per-packet anchor is kernels/bench/bench_srtp.
--input buffers puts a passthrough capsfilter before the encoder: it has no
chain_list, so the encoder gets the same packets one buffer at a time (the
per-buffer path: payloaders without aggregation). gpusrtpenc-outlists is
output-lists=true (a protected list pushed as a list; not toward srtpdec).

    bench/bench_srtp_elements.py [--packets N] [--runs N] [--stat best|median]
        [--input lists|buffers|both] [--elements a,b] [--profiles a,b]
        [--payloads 1316,188] [--json FILE]

Needs the build's plugins on the GStreamer path (./run bench srtp sets it)."""

import argparse
import json
import os
import struct
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

KEY_CM = bytes(range(30))       # AES-128 master key || salt
KEY_GCM = bytes(range(28))      # AES-128-GCM: 16 + 12
LIST_LEN = 64

PROFILES = [
    ("AES_CM_128_HMAC_SHA1_80", "rtp-cipher=aes-128-icm rtp-auth=hmac-sha1-80 "
     "rtcp-cipher=aes-128-icm rtcp-auth=hmac-sha1-80", KEY_CM),
    ("AEAD_AES_128_GCM", "rtp-cipher=aes-128-gcm rtp-auth=null "
     "rtcp-cipher=aes-128-gcm rtcp-auth=null", KEY_GCM),
]

ENCODERS = [
    ("srtpenc", "srtpenc"),
    ("gpusrtpenc", "gpusrtpenc backend=cpu"),
    ("gpusrtpenc-batched", "gpusrtpenc backend=cpu cycle=1000000"),
    # a list out per list in: one push per 64 packets instead of 64
    ("gpusrtpenc-outlists", "gpusrtpenc backend=cpu output-lists=true"),
]


def make_lists(n_packets, payload):
    """Buffer lists of RTP packets, sequence numbers from 0 (no wrap)."""
    lists, seq = [], 0
    body = bytes((i * 7) & 0xFF for i in range(payload))
    while seq < n_packets:
        bl = Gst.BufferList.new_sized(LIST_LEN)
        for _ in range(min(LIST_LEN, n_packets - seq)):
            hdr = struct.pack(">BBHII", 0x80, 96, seq & 0xFFFF, seq * 3000,
                              0x5EC0DE)
            bl.insert(-1, Gst.Buffer.new_wrapped(hdr + body))
            seq += 1
        lists.append(bl)
    return lists


def run_once(encoder, policy, key, lists, per_buffer=False):
    desc = ("appsrc name=src format=time is-live=false max-bytes=0 ! %s"
            "%s name=enc %s key=%s ! fakesink sync=false async=false"
            % ("capsfilter ! " if per_buffer else "", encoder, policy,
               key.hex()))
    p = Gst.parse_launch(desc)
    src = p.get_by_name("src")
    src.set_property("caps", Gst.Caps.from_string(
        "application/x-rtp,media=video,clock-rate=90000,encoding-name=MP2T,"
        "payload=96,ssrc=(uint)6209758"))
    bus = p.get_bus()
    p.set_state(Gst.State.PLAYING)
    t0 = time.perf_counter()
    for bl in lists:
        # the same list objects every run: push a (cheap) copy of the list
        src.emit("push-buffer-list", bl.copy())
    src.emit("end-of-stream")
    msg = bus.timed_pop_filtered(120 * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    elapsed = time.perf_counter() - t0
    p.set_state(Gst.State.NULL)
    if msg is None or msg.type != Gst.MessageType.EOS:
        err = msg.parse_error()[0].message if msg else "timeout"
        return None, err
    return elapsed, None


def measure(n_packets, runs, stat="best", inputs=("lists",), elements=None,
            profiles=None, payloads=(1316, 188)):
    """Prints the table; returns the JSON rows."""
    Gst.init(None)
    rows = []
    print("# SRTP elements, one pipeline each: appsrc (lists of %d) ! ENCODER "
          "! fakesink, %d packets, %s of %d" % (LIST_LEN, n_packets, stat,
                                               runs))
    print("%-24s %-20s %-7s %7s %11s %8s %9s" % (
        "profile", "element", "input", "payload", "packets/s", "Gbit/s",
        "x srtpenc"))
    for payload in payloads:
        lists = make_lists(n_packets, payload)
        for inp in inputs:
            for prof, policy, key in PROFILES:
                if profiles and prof not in profiles:
                    continue
                anchor = None
                for name, enc in ENCODERS:
                    if elements and name not in elements:
                        continue
                    times, err = [], None
                    for _ in range(runs):
                        t, err = run_once(enc, policy, key, lists,
                                          inp == "buffers")
                        if t is not None:
                            times.append(t)
                    if not times:
                        print("%-24s %-20s %-7s %7d  refused: %s" % (
                            prof, name, inp, payload, err))
                        continue
                    times.sort()
                    t = times[0] if stat == "best" else times[len(times) // 2]
                    pps = n_packets / t
                    gbps = pps * (payload + 12) * 8 / 1e9
                    if name == "srtpenc":
                        anchor = pps
                    ratio = pps / anchor if anchor else float("nan")
                    print("%-24s %-20s %-7s %7d %11.0f %8.2f %9s" % (
                        prof, name, inp, payload, pps, gbps,
                        "%.2f" % ratio if anchor else "-"))
                    rows.append({"bench": "srtp-elements", "profile": prof,
                                 "element": name, "input": inp,
                                 "payload": payload, "packets": n_packets,
                                 "stat": stat, "packets_per_s": round(pps),
                                 "gbit_per_s": round(gbps, 3),
                                 "ratio_to_srtpenc": round(ratio, 3),
                                 "anchor": "srtpenc"})
    return rows


def bench(results, n_packets=60000, runs=3):
    """For bench/bench.py: the table, and the rows into its results."""
    for r in measure(n_packets, runs, "median", ("lists", "buffers")):
        results.add(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=60000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stat", choices=("best", "median"), default="median")
    ap.add_argument("--input", choices=("lists", "buffers", "both"),
                    default="both")
    ap.add_argument("--elements", default=None,
                    help="comma-separated element names of the table")
    ap.add_argument("--profiles", default=None)
    ap.add_argument("--payloads", default="1316,188")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    split = (lambda v: v.split(",") if v else None)
    rows = measure(a.packets, a.runs, a.stat,
                   ("lists", "buffers") if a.input == "both" else (a.input,),
                   split(a.elements), split(a.profiles),
                   [int(x) for x in a.payloads.split(",")])
    if a.json:
        with open(a.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
