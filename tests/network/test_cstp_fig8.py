#!/usr/bin/env python3
"""The experiment of Fig. 8 of Liu, Schulze, DeFanti, "CSTP: A parallel data
transfer protocol using cross-stream coding" (2011), through the elements on
loopback UDP: 10 streams, 7.5 % average loss in Gilbert-Elliott bursts (mean
6 packets), spread over the streams in the paper's four patterns (uniform,
linear, polynomial, random chop). cstpsink with pipe packets recovers every
frame; the same elements with pipe-width=0 (each stream on its own, the same
total overhead) lose frames. Both asserted on the frame bytes.

The loss is cstpsrc's seeded simulate-loss (tests only): 10 Python relays
could not carry the 120 000 datagrams a pattern needs on this machine
without losing more of their own (docs/elements/cstpsrc.md, "Testing")."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cstp_loopback as cl  # noqa: E402

S = 10
N = 1024
SYMBOL = 64
FRAMES = 8
LOSS = 0.075
BURST = 6.0
OVERHEAD = 0.20
PATTERNS = ["uniform", "linear", "polynomial", "random chop"]


def _xorshift_units(seed, n):
    m = (1 << 64) - 1
    out = []
    for _ in range(n):
        seed ^= seed >> 12
        seed ^= (seed << 25) & m
        seed ^= seed >> 27
        out.append((((seed * 0x2545F4914F6CDD1D) & m) >> 32) / 4294967296.0)
    return out


def pattern_rates(pattern):
    """Per-stream loss rates of a pattern, mean LOSS."""
    if pattern == "uniform":
        w = [1.0] * S
    elif pattern == "linear":
        w = [1.0 + i for i in range(S)]
    elif pattern == "polynomial":
        w = [(1.0 + i) ** 2 for i in range(S)]
    else:
        # the pie cut at S - 1 random points: kernels/tests/test_fountain.c's
        # draw (xorshift64*, seed 0xC0FFEE), 0.4 % to 23.1 %
        cuts = sorted(_xorshift_units(0xC0FFEE, S - 1))
        cuts = [0.0] + cuts + [1.0]
        w = [cuts[i + 1] - cuts[i] for i in range(S)]
    total = sum(w)
    return [min(0.6, LOSS * S * x / total) for x in w]


class Fig8(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # 10 sub-frames of N symbols, 17 bytes short: padding exercised
        size = S * N * SYMBOL - 17
        cls.frames = [cl.frame_bytes(i, size) for i in range(FRAMES)]

    def transfer(self, pattern, pipe_width, seed):
        rates = pattern_rates(pattern)
        sim = '"loss, seed=(uint)%d, burst=(double)%g, rates=(string)%s"' % (
            seed, BURST, ":".join("%.5f" % r for r in rates))
        r = cl.run(self.frames, S,
                   {"packet-size": 32 + SYMBOL, "overhead": OVERHEAD,
                    "pipe-width": pipe_width, "rate": 200_000_000},
                   {"simulate-loss": sim, "latency": 2 * cl.Gst.SECOND},
                   timeout=50)
        delivered, wrong = cl.check_frames(self.frames, r["out"])
        src = r["src"]
        dropped = sum(src["stream-%d-simulated-drops" % s] for s in range(S))
        sent = r["sink"]["packets-sent"]
        print("\n%s p=%.2f: %d/%d frames byte for byte, %d wrong; loss %.2f %% "
              "(per stream %s); local %d, through pipes %d, lost %d; "
              "decode %.1f ms max; %.1f s" % (
                  pattern, pipe_width, len(delivered), FRAMES, wrong,
                  100.0 * dropped / sent,
                  " ".join("%.1f" % (100 * x) for x in rates),
                  src["frames-local"], src["frames-repaired"],
                  src["frames-lost"], src["decode-time-max"] / 1e6,
                  r["elapsed"]))
        # the sockets lost nothing: every datagram sent was seen or dropped
        # by the model, so the loss is the pattern's
        self.assertEqual(src["received"] + dropped, sent)
        self.assertEqual(wrong, 0)
        self.assertEqual(len(delivered) + src["frames-lost"], FRAMES)
        return delivered, src

    def test_fig8(self):
        per_stream_losses = 0
        for k, pattern in enumerate(PATTERNS):
            seed = 100 + k
            delivered, src = self.transfer(pattern, 0.5, seed)
            self.assertEqual(delivered, list(range(FRAMES)),
                             "%s: cstp lost frames" % pattern)
            self.assertGreater(src["frames-repaired"], 0)
            fec, _ = self.transfer(pattern, 0.0, seed)
            per_stream_losses += len(fec) < FRAMES
        self.assertGreater(per_stream_losses, 0,
                           "per-stream coding lost no frame in any pattern")


if __name__ == "__main__":
    unittest.main(verbosity=2)
