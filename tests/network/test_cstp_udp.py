#!/usr/bin/env python3
"""cstpsink -> loopback UDP -> cstpsrc: one stream cut for a second, paths
that reorder and duplicate (tools/udp_impair.py relays, one per stream),
foreign or corrupt datagrams on the ports, and four paths of uneven bursty
loss (every frame the redundancy covers must arrive). Every case compares
the frames that come out with the frames sent, byte for byte."""

import os
import socket
import struct
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cstp_loopback as cl  # noqa: E402
from udp_impair import Impairment  # noqa: E402

Gst = cl.Gst
FPS = 30


class CstpOverUdp(unittest.TestCase):
    def frames(self, count, size):
        return [cl.frame_bytes(i, size) for i in range(count)]

    def cut(self, overhead, pipe_width, degree):
        # 4 streams, 90 frames at 30 per second; stream 1 carries nothing
        # for frames 30..59, one second
        frames = self.frames(90, 4 * 64 * 1000)
        r = cl.run(frames, 4,
                   {"packet-size": 1032, "overhead": overhead,
                    "pipe-width": pipe_width, "stream-degree": degree},
                   {"simulate-loss": '"loss, cut-stream=(int)1, '
                    'cut-first=(uint)30, cut-last=(uint)59"',
                    "latency": 200 * Gst.MSECOND},
                   push_interval=1.0 / FPS, timeout=20)
        delivered, wrong = cl.check_frames(frames, r["out"])
        print("\n%s: overhead %.2f p %.2f %s: %d/90 frames, lost %d, "
              "through pipes %d, cut drops %d, %.1f s" % (
                  self.id().split(".")[-1], overhead, pipe_width, degree,
                  len(delivered), r["src"]["frames-lost"],
                  r["src"]["frames-repaired"],
                  r["src"]["stream-1-simulated-drops"], r["elapsed"]))
        self.assertEqual(wrong, 0)
        self.assertGreater(r["src"]["stream-1-simulated-drops"], 30 * 64)
        return frames, r, delivered

    def test_stream_cut_recovered_within_overhead(self):
        # every pipe covers all 4 streams; the 3 streams left carry 3 x 50 %
        # of N pipe packets: more than the cut stream's N
        _, r, delivered = self.cut(0.5, 1.0, "all")
        self.assertEqual(delivered, list(range(90)))
        self.assertEqual(r["src"]["frames-lost"], 0)
        self.assertGreaterEqual(r["src"]["frames-repaired"], 30)

    def test_stream_cut_beyond_overhead_reported_lost(self):
        # 15 % cannot cover a whole stream: the 30 frames of the cut are
        # reported lost, the rest arrive, and the stream never stalls
        _, r, delivered = self.cut(0.15, 0.5, "mixed")
        self.assertEqual(delivered, list(range(30)) + list(range(60, 90)))
        self.assertEqual(r["src"]["frames-lost"], 30)
        out = r["out"]
        # DISCONT on the first buffer and on the first one after the cut
        self.assertEqual([i for i, o in enumerate(out) if o[2]], [0, 30])
        # timestamps go on from the sender's: frame 60 is 60 frames after 0
        self.assertEqual(out[30][1] - out[0][1], 60 * (Gst.SECOND // FPS))
        # 3 s of frames, the cut given up at its deadline, no stall
        self.assertLess(r["elapsed"], 3.0 + 2.0)

    def test_reordering_and_duplication(self):
        # one relay per stream: 3 % loss, 5 % of the datagrams held back
        # behind 5 others, 5 % sent twice, each path its own seed
        frames = self.frames(30, 4 * 32 * 1000)
        imps = [Impairment(loss=0.03, reorder=0.05, reorder_gap=5,
                           duplicate=0.05, seed=20 + s) for s in range(4)]
        r = cl.run(frames, 4, {"packet-size": 1032, "overhead": 0.35},
                   {"latency": 300 * Gst.MSECOND}, relays=imps,
                   push_interval=1.0 / FPS, timeout=20)
        delivered, wrong = cl.check_frames(frames, r["out"])
        rel = r["relays"]
        print("\nrelays: %s\nsrc: %s" % (rel, r["src"]))
        self.assertGreater(sum(x["reordered"] for x in rel), 0)
        self.assertGreater(sum(x["duplicated"] for x in rel), 0)
        self.assertGreater(sum(x["dropped"] for x in rel), 0)
        self.assertEqual(wrong, 0)
        self.assertEqual(delivered, list(range(30)))
        # every duplicate of a kept packet is seen as one
        self.assertGreater(r["src"]["duplicates"], 0)
        self.assertEqual(r["src"]["bad-datagrams"], 0)

    def test_bad_datagrams_counted_stream_continues(self):
        frames = self.frames(40, 4 * 32 * 1000)
        good = bytearray(32 + 1000)
        # a valid source packet of stream 0 (S = 4, N = 32, 1000-byte
        # symbols, 128000-byte frame), to corrupt field by field
        struct.pack_into(">4sBBBBIHHIIQ", good, 0, b"CSTP", 1, 0, 4, 0, 7, 32,
                         1000, 128000, 3, 0)
        # valid in every field, but its frame of 4 294 901 760 bytes is
        # beyond max-frame-size: 4 streams of N = 16384 symbols of 65535
        big = bytearray(32 + 65535 - 60)
        n_big = 16384
        k_big = 65535 - 60
        struct.pack_into(">4sBBBBIHHIIQ", big, 0, b"CSTP", 1, 0, 4, 1, 9,
                         n_big, k_big, 4 * n_big * k_big - 5, 0, 0)
        big = bytes(big)
        bad = [
            b"",                                    # empty
            b"hello, not a CSTP datagram",          # foreign
            bytes(good[:31]),                       # shorter than a header
            bytes(good[:-1]),                       # payload one byte short
            b"XSTP" + bytes(good[4:]),              # wrong magic
            bytes(good[:4]) + b"\x02" + bytes(good[5:]),   # version 2
            bytes(good[:5]) + b"\x07" + bytes(good[6:]),   # kind 7
            bytes(good[:12]) + b"\x00\x21" + bytes(good[14:]),  # N 33
            bytes(good[:6]) + b"\x05" + bytes(good[7:]),   # S 5, not 4
            b"CSTM\x01\x04\x00\x00" + bytes(8),     # frame packet, truncated
            big,                                    # a 4 GB frame (valid)
        ]
        sent = []

        def inject(ports):
            def run():
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                for rnd in range(3):
                    time.sleep(0.2)
                    for d in bad:
                        s.sendto(d, ("127.0.0.1", ports[1]))
                        sent.append(d)
                    # stream 0's packet on stream 2's port
                    s.sendto(bytes(good), ("127.0.0.1", ports[2]))
                    sent.append(good)
                s.close()
            threading.Thread(target=run, daemon=True).start()

        r = cl.run(frames, 4, {"packet-size": 1032, "overhead": 0.1},
                   {"latency": 300 * Gst.MSECOND}, on_send=inject,
                   push_interval=1.0 / FPS, timeout=20)
        delivered, wrong = cl.check_frames(frames, r["out"])
        src = r["src"]
        print("\nsrc: %s\nmessages: %s" % (src, r["messages"]))
        self.assertEqual(len(sent), 36)
        self.assertEqual(src["bad-datagrams"], 36)
        self.assertEqual(src["stream-1-bad"], 33)
        self.assertEqual(src["stream-2-bad"], 3)
        self.assertEqual(wrong, 0)
        self.assertEqual(delivered, list(range(40)))
        warnings = [m for t, m in r["messages"] if t == Gst.MessageType.WARNING]
        self.assertTrue(any("not a valid CSTP packet" in w for w in warnings),
                        r["messages"])

    def test_uneven_loss_within_redundancy_arrives(self):
        # 60 frames of 320x240 RGBA at 30 fps, cstpsink's defaults but for
        # overhead and rate: N = 57 symbols of 1368 bytes a stream, R = 9
        frames = self.frames(60, 320 * 240 * 4)
        # N = 57 symbols of 1368 bytes a stream, R = 9
        beyond = cl.beyond_redundancy(40, 60, 57, 9)
        results = {}
        for name, props in (("default", {}),
                            ("mixed", {"pipe-width": 0.5,
                                       "stream-degree": "mixed"})):
            sink = {"overhead": 0.15, "rate": 100_000_000}
            sink.update(props)
            r = cl.run(frames, 4, sink, {"latency": 300 * Gst.MSECOND},
                       relays=cl.uneven_paths(40), push_interval=1.0 / FPS,
                       timeout=30)
            delivered, wrong = cl.check_frames(frames, r["out"])
            src = r["src"]
            print("\n%s: %d/60 frames, lost %d, beyond the redundancy %d "
                  "(expected %d), path loss %s" % (
                      name, len(delivered), src["frames-lost"],
                      src["frames-beyond-redundancy"], len(beyond),
                      ["%.1f %%" % (100.0 * x["dropped"] / x["received"])
                       for x in r["relays"]]))
            self.assertEqual(wrong, 0)
            self.assertEqual(src["frames-beyond-redundancy"], len(beyond))
            results[name] = (delivered, src)
        delivered, src = results["default"]
        # every frame whose losses the redundancy covers came out
        self.assertEqual(delivered, [f for f in range(60) if f not in beyond])
        self.assertEqual(src["frames-lost"], len(beyond))
        self.assertLessEqual(len(beyond), 10)
        # half the redundancy in pipes of mixed degree loses frames it covered
        delivered, src = results["mixed"]
        self.assertGreater(src["frames-lost"], len(beyond))


if __name__ == "__main__":
    unittest.main(verbosity=2)
