#!/usr/bin/env python3
"""One sender of a CSTP sending cluster, as its own process: cstpsink with
`index` and `peers`, fed its tile of each frame from an appsrc. Frame f is
cstp_loopback.frame_bytes(f, streams * tile); this sender's tile is bytes
index * tile .. of it, so the frames a receiver puts together are known.

    cstp_cluster_sender.py INDEX STREAMS PEERS DEST FRAMES TILE [--fps=F]
                           [PROP=VALUE...]

DEST: host:port of this stream's receiver. Makes its FRAMES tiles, then
pushes them at F per second (30; 0: as fast as the sink takes them), then
EOS. Prints {"started": T} (time.monotonic, CLOCK_MONOTONIC, at the first
push), one JSON line per bus warning or error and, at the end, one with
the sink's stats ({"stats": {...}})."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cstp_loopback as cl  # noqa: E402

Gst = cl.Gst


def main(argv):
    index, streams, peers, dest = int(argv[0]), int(argv[1]), argv[2], argv[3]
    frames, tile = int(argv[4]), int(argv[5])
    fps = 30.0
    rest = []
    for a in argv[6:]:
        if a.startswith("--fps="):
            fps = float(a[len("--fps="):])
        else:
            rest.append(a)
    props = " ".join(rest)
    pipe = Gst.parse_launch(
        "appsrc name=in format=time caps=application/x-test-frames ! "
        "cstpsink name=sink streams=%d index=%d peers=%s destinations=%s "
        "sync=false %s" % (streams, index, peers,
                           ",".join([dest] * streams), props))
    appsrc = pipe.get_by_name("in")
    sink = pipe.get_by_name("sink")
    bus = pipe.get_bus()

    def drain():
        while True:
            m = bus.pop_filtered(Gst.MessageType.WARNING | Gst.MessageType.ERROR
                                 | Gst.MessageType.EOS)
            if m is None:
                return False
            if m.type == Gst.MessageType.EOS:
                return True
            err, _ = (m.parse_warning() if m.type == Gst.MessageType.WARNING
                      else m.parse_error())
            print(json.dumps({"warning" if m.type == Gst.MessageType.WARNING
                              else "error": err.message}), flush=True)
            if m.type == Gst.MessageType.ERROR:
                sys.exit(1)

    # made before the first frame, so that a sender is not slowed by it
    tiles = [cl.frame_bytes(f, streams * tile)[index * tile:(index + 1) * tile]
             for f in range(frames)]
    pipe.set_state(Gst.State.PLAYING)
    t0 = time.monotonic()
    print(json.dumps({"started": t0}), flush=True)
    for f in range(frames):
        buf = Gst.Buffer.new_wrapped(tiles[f])
        buf.pts = f * Gst.SECOND // 30
        buf.duration = Gst.SECOND // 30
        appsrc.emit("push-buffer", buf)
        drain()
        delay = t0 + (f + 1) / fps - time.monotonic() if fps else 0
        if delay > 0:
            time.sleep(delay)
    appsrc.emit("end-of-stream")
    deadline = time.monotonic() + 60
    while not drain() and time.monotonic() < deadline:
        time.sleep(0.02)
    print(json.dumps({"stats": cl.stats_dict(sink.get_property("stats"))}),
          flush=True)
    pipe.set_state(Gst.State.NULL)


if __name__ == "__main__":
    main(sys.argv[1:])
