#!/usr/bin/env python3
"""Tests of the impairment relay itself: the loss we claim in a test is the
loss the relay makes."""

import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from udp_impair import Impairment, Relay  # noqa: E402


def run_model(imp, n):
    sent = []
    for i in range(n):
        for _, p in imp.process(i.to_bytes(4, "big")):
            sent.append(int.from_bytes(p, "big"))
    for _, p in imp.flush():
        sent.append(int.from_bytes(p, "big"))
    return sent


class ModelTests(unittest.TestCase):
    def test_iid_loss_rate(self):
        imp = Impairment(loss=0.10, seed=7)
        sent = run_model(imp, 20000)
        lost = 20000 - len(sent)
        self.assertEqual(lost, imp.stats["dropped"])
        self.assertAlmostEqual(lost / 20000, 0.10, delta=0.01)
        self.assertEqual(sent, sorted(sent))          # no reordering asked

    def test_same_seed_same_decisions(self):
        a = run_model(Impairment(loss=0.2, seed=3), 5000)
        b = run_model(Impairment(loss=0.2, seed=3), 5000)
        c = run_model(Impairment(loss=0.2, seed=4), 5000)
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_gilbert_elliott_bursts(self):
        # mean bad-state sojourn 1/p_bg = 10 packets, all lost in bad state
        imp = Impairment(burst=(0.01, 0.1, 1.0), seed=5)
        sent = set(run_model(imp, 50000))
        runs, cur = [], 0
        for i in range(50000):
            if i in sent:
                if cur:
                    runs.append(cur)
                cur = 0
            else:
                cur += 1
        mean_burst = sum(runs) / len(runs)
        self.assertGreater(mean_burst, 6)             # bursts, not iid drops
        self.assertLess(mean_burst, 15)
        rate = 1 - len(sent) / 50000
        self.assertAlmostEqual(rate, 0.01 / 0.11, delta=0.03)

    def test_drop_range_exact(self):
        sent = run_model(Impairment(drop_ranges=[(10, 19)]), 50)
        self.assertEqual(sent, list(range(10)) + list(range(20, 50)))

    def test_reorder_keeps_every_packet(self):
        imp = Impairment(reorder=0.2, reorder_gap=3, seed=9)
        sent = run_model(imp, 2000)
        self.assertEqual(sorted(sent), list(range(2000)))
        self.assertNotEqual(sent, list(range(2000)))
        self.assertGreater(imp.stats["reordered"], 300)

    def test_duplicate(self):
        imp = Impairment(duplicate=0.5, seed=2)
        sent = run_model(imp, 1000)
        self.assertEqual(len(sent), 1000 + imp.stats["duplicated"])
        self.assertEqual(sorted(set(sent)), list(range(1000)))


class SocketTests(unittest.TestCase):
    def test_relay_forwards_with_loss_over_loopback(self):
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(2.0)
        relay = Relay(("127.0.0.1", 0), sink.getsockname(),
                      Impairment(drop_ranges=[(5, 9)], delay_ms=5)).start()
        src = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(30):
            src.sendto(bytes([i]) * 100, ("127.0.0.1", relay.port))
            time.sleep(0.001)
        got = []
        try:
            while len(got) < 25:
                got.append(sink.recv(2000)[0])
        except socket.timeout:
            pass
        stats = relay.stop()
        sink.close()
        src.close()
        self.assertEqual(got, [i for i in range(30) if not 5 <= i <= 9])
        self.assertEqual(stats["dropped"], 5)
        self.assertEqual(stats["forwarded"], 25)

    def test_rate_limit_paces(self):
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(2.0)
        # 20 packets of 1000 bytes at 800 kbit/s: 10 ms each, ~200 ms in all
        relay = Relay(("127.0.0.1", 0), sink.getsockname(), Impairment(),
                      rate_bps=800e3).start()
        src = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t0 = time.monotonic()
        for i in range(20):
            src.sendto(b"x" * 1000, ("127.0.0.1", relay.port))
        for i in range(20):
            sink.recv(2000)
        elapsed = time.monotonic() - t0
        relay.stop()
        sink.close()
        src.close()
        self.assertGreater(elapsed, 0.15)

    def test_jitter_counts_from_kernel_arrival(self):
        # 100 datagrams 2 ms apart wait in the relay's socket before its
        # thread runs, as when it is starved of CPU; 3 ms of jitter may then
        # swap only neighbours (arrivals within 3 ms), not the whole backlog
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(2.0)
        relay = Relay(("127.0.0.1", 0), sink.getsockname(),
                      Impairment(jitter_ms=3, seed=4))
        src = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for i in range(100):
            src.sendto(bytes([i]) * 100, ("127.0.0.1", relay.port))
            time.sleep(0.002)
        relay.start()
        got = [sink.recv(2000)[0] for _ in range(100)]
        relay.stop()
        sink.close()
        src.close()
        self.assertEqual(sorted(got), list(range(100)))
        depth = max(max(got[:j + 1]) - got[j] for j in range(100))
        self.assertLessEqual(depth, 3, got)


if __name__ == "__main__":
    unittest.main(verbosity=2)
