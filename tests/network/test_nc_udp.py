#!/usr/bin/env python3
"""ncencoder / ncdecoder over RTP on real loopback UDP, with loss, bursts,
reordering and delay made by the impairment relay. Every case asserts the
decoded bytes equal the original, or, past the redundancy, that the loss is
reported and the stream goes on."""

import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import nc_loopback  # noqa: E402
from udp_impair import Impairment  # noqa: E402


class NcOverUdp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        nc_loopback.Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="nc-udp-")
        cls.ts = os.path.join(cls.tmp.name, "in.ts")
        nc_loopback.make_test_ts(cls.ts, frames=150)
        cls.rand = os.path.join(cls.tmp.name, "random.bin")
        with open(cls.rand, "wb") as f:
            f.write(random.Random(42).randbytes(1_000_003))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def transfer(self, src, enc, imp, **kw):
        out = os.path.join(self.tmp.name, "out-%s.bin" % self.id().split(".")[-1])
        r = nc_loopback.run(src, out, encoder=enc, impairment=imp, **kw)
        print("\n%s: relay %s, decoder %s" % (self.id(), r["relay"], r["decoder"]))
        return r

    def test_ts_10_percent_random_loss(self):
        r = self.transfer(self.ts, {"generation-size": 32, "block-size": 1316,
                                    "redundancy-percent": 40},
                          Impairment(loss=0.10, seed=11))
        self.assertGreater(r["relay"]["dropped"], 0.07 * r["relay"]["received"])
        self.assertTrue(r["identical"], "decoded bytes differ: %s" % r)
        self.assertEqual(r["decoder"]["generations-lost"], 0)

    def test_random_bytes_bursty_loss(self):
        # Gilbert-Elliott: mean burst 4 packets, ~5 % loss overall
        r = self.transfer(self.rand, {"generation-size": 64, "block-size": 1024,
                                      "redundancy-percent": 35},
                          Impairment(burst=(0.0125, 0.25, 1.0), seed=3))
        self.assertGreater(r["relay"]["dropped"], 0)
        self.assertTrue(r["identical"], "decoded bytes differ: %s" % r)

    def test_reordering_and_jitter_non_systematic_vector(self):
        r = self.transfer(self.rand, {"generation-size": 16, "block-size": 1200,
                                      "redundancy-percent": 30,
                                      "systematic": "false",
                                      "coefficients": "vector"},
                          Impairment(loss=0.05, reorder=0.1, reorder_gap=5,
                                     jitter_ms=3, seed=5))
        self.assertGreater(r["relay"]["reordered"], 0)
        self.assertTrue(r["identical"], "decoded bytes differ: %s" % r)

    def test_srtp_protected_with_loss(self):
        # ncencoder ! rtpncpay ! gpusrtpenc -> 10 % loss -> gpusrtpdec ! ...:
        # every delivered packet authenticates, none is dropped, bytes equal
        r = self.transfer(self.ts, {"generation-size": 32, "block-size": 1316,
                                    "redundancy-percent": 40},
                          Impairment(loss=0.10, seed=13), srtp_key=os.urandom(30))
        self.assertTrue(r["identical"], "decoded bytes differ: %s" % r)
        self.assertEqual(r["srtp"]["recv-count"], r["relay"]["forwarded"])
        self.assertEqual(r["srtp"]["recv-drop-count"], 0)
        self.assertEqual(r["decoder"]["generations-lost"], 0)

    def test_loss_beyond_redundancy_is_reported(self):
        # packets 100..299 all lost: the generations they belong to cannot
        # complete; they are reported lost and the rest still arrives
        r = self.transfer(self.rand, {"generation-size": 16, "block-size": 1024,
                                      "redundancy": 2},
                          Impairment(drop_ranges=[(100, 299)], seed=1))
        dec = r["decoder"]
        self.assertFalse(r["identical"])
        self.assertGreaterEqual(dec["generations-lost"], 200 // 18 - 1)
        self.assertGreater(dec["generations-decoded"], 0)
        # what was decoded came out: everything but the lost generations
        lost_bytes = dec["generations-lost"] * 16 * 1024
        self.assertGreaterEqual(r["output_bytes"], r["input_bytes"] - lost_bytes)


if __name__ == "__main__":
    unittest.main(verbosity=2)
