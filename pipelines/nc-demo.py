#!/usr/bin/env python3
"""./run demo: the main job on a built-in input, through the real elements.

A test video is encoded to MPEG-TS, network-coded by ncencoder, carried over
RTP/UDP on loopback, SRTP-protected by gpusrtpenc, through a relay that drops
10 % of the packets, authenticated and decrypted by gpusrtpdec, decoded by
ncdecoder and compared with the original, byte for byte."""

import argparse
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
import nc_loopback  # noqa: E402
from udp_impair import Impairment  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--loss", type=float, default=0.10)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--generation-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=1316)
    p.add_argument("--redundancy-percent", type=int, default=40)
    p.add_argument("--backend", default="auto")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-srtp", action="store_true",
                   help="plain RTP, without gpusrtpenc / gpusrtpdec")
    a = p.parse_args()
    # a fresh random master key and salt; never printed
    srtp_key = None if a.no_srtp else os.urandom(30)

    nc_loopback.Gst.init(None)
    with tempfile.TemporaryDirectory(prefix="gpustream-demo-") as tmp:
        src = os.path.join(tmp, "input.ts")
        out = os.path.join(tmp, "decoded.ts")
        print("1. making the input: %d frames of videotestsrc, H.264 in MPEG-TS" % a.frames)
        nc_loopback.make_test_ts(src, frames=a.frames)
        print("   %s: %d bytes" % (src, os.path.getsize(src)))
        enc = {"generation-size": a.generation_size, "block-size": a.block_size,
               "redundancy-percent": a.redundancy_percent, "backend": a.backend}
        srtp_tx = "" if a.no_srtp else " ! gpusrtpenc (AES-CM-128 + HMAC-SHA1-80, random key)"
        srtp_rx = "" if a.no_srtp else " ! gpusrtpdec"
        print("2. ncencoder %s ! rtpncpay%s ! udpsink -> relay (%.0f %% loss, seed %d)"
              " -> udpsrc%s ! rtpncdepay ! ncdecoder ! filesink"
              % (" ".join("%s=%s" % kv for kv in enc.items()), srtp_tx,
                 a.loss * 100, a.seed, srtp_rx))
        r = nc_loopback.run(src, out, encoder=enc,
                            decoder={"backend": a.backend},
                            impairment=Impairment(loss=a.loss, seed=a.seed),
                            srtp_key=srtp_key)
        rl, dec = r["relay"], r["decoder"]
        print("3. what happened (%.1f s):" % r["seconds"])
        print("   RTP packets sent      %8d" % rl["received"])
        print("   dropped by the relay  %8d  (%.1f %%)"
              % (rl["dropped"], 100.0 * rl["dropped"] / max(1, rl["received"])))
        print("   delivered             %8d" % rl["forwarded"])
        for key in ("backend", "generations-decoded", "generations-lost", "packets-received",
                    "packets-innovative", "packets-redundant", "packets-dependent",
                    "packets-bad", "decode-latency-avg-us", "decode-latency-max-us"):
            if key in dec:
                print("   %-21s %8s" % (key.replace("-", " "), dec[key]))
        if r["srtp"]:
            sr = r["srtp"]
            print("   SRTP packets authenticated and decrypted %d, dropped %d"
                  " (auth failures %d, replays %d), backend %s"
                  % (sr.get("recv-count", 0), sr.get("recv-drop-count", 0),
                     sr.get("auth-fail-count", 0), sr.get("replay-count", 0),
                     sr.get("backend", "?")))
        print("   bytes in %d, bytes out %d, matching %s"
              % (r["input_bytes"], r["output_bytes"], r["matching_bytes"]))
        if r["identical"]:
            print("OK: the decoded MPEG-TS is identical to the original despite the loss.")
            return 0
        print("FAIL: the decoded stream differs from the original.")
        return 1


if __name__ == "__main__":
    sys.exit(main())
