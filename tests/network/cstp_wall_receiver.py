#!/usr/bin/env python3
"""One receiver of a CSTP display wall, as a process of its own (the wall
tests start one per network namespace): cstpsrc with `index` and `peers`
into an appsink. Prints "ready" once its sockets are bound; on "stop" on
stdin (or after --timeout seconds) writes JSON to --out: every buffer's
offset (the sender's frame number), PTS, DISCONT flag, SHA-256 and caps,
the element's stats and its warning messages."""

import argparse
import hashlib
import json
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--props", required=True,
                    help="cstpsrc properties, as on a gst-launch line")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    Gst.init(None)
    pipe = Gst.parse_launch("cstpsrc name=src %s ! appsink name=out "
                            "sync=false emit-signals=false" % a.props)
    src, out = pipe.get_by_name("src"), pipe.get_by_name("out")
    got, done = [], threading.Event()

    def pull():
        while not done.is_set():
            sample = out.emit("try-pull-sample", 50 * Gst.MSECOND)
            if sample is None:
                continue
            b = sample.get_buffer()
            ok, m = b.map(Gst.MapFlags.READ)
            got.append({"offset": b.offset, "pts": b.pts,
                        "discont": b.has_flags(Gst.BufferFlags.DISCONT),
                        "sha256": hashlib.sha256(bytes(m.data)).hexdigest(),
                        "size": m.size,
                        "caps": sample.get_caps().to_string()})
            b.unmap(m)

    if pipe.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
        msg = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
        print("error: %s" % ("%s (%s)" % (msg.parse_error()[0].message,
                                          msg.parse_error()[1])
                             if msg else "?"), flush=True)
        sys.exit(1)
    t = threading.Thread(target=pull)
    t.start()
    print("ready", flush=True)
    stopper = threading.Thread(target=sys.stdin.readline, daemon=True)
    stopper.start()
    stopper.join(a.timeout)
    time.sleep(0.1)
    st = src.get_property("stats")
    stats = {st.nth_field_name(i): st.get_value(st.nth_field_name(i))
             for i in range(st.n_fields())}
    done.set()
    t.join()
    msgs = []
    bus = pipe.get_bus()
    while True:
        m = bus.pop()
        if m is None:
            break
        if m.type == Gst.MessageType.WARNING:
            err, dbg = m.parse_warning()
            msgs.append(["warning", "%s (%s)" % (err.message, dbg)])
        elif m.type == Gst.MessageType.ERROR:
            err, dbg = m.parse_error()
            msgs.append(["error", "%s (%s)" % (err.message, dbg)])
    pipe.set_state(Gst.State.NULL)
    with open(a.out, "w") as f:
        json.dump({"buffers": got, "stats": stats, "messages": msgs}, f)


if __name__ == "__main__":
    main()
