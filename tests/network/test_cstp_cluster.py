#!/usr/bin/env python3
"""A sending cluster: 4 cstpsink processes with `index` and `peers`, each
with its own tile of every frame, exchanging the parts of their pipe packets
and released in step by sender 0; to one cstpsrc through our impairment
relays (uneven bursty loss), or to a display wall of 4 cstpsrc. Frames are
compared byte for byte with what the senders' tiles make together."""

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import cstp_loopback as cl  # noqa: E402
from cstp_cluster import Cluster, collect, receive  # noqa: E402
from udp_impair import Relay  # noqa: E402

Gst = cl.Gst
S = 4
TILE = 320 * 60 * 4          # a 320x240 RGBA frame in four bands
N, RED = 60, 9               # 1280-byte symbols (the largest divisor <= 1368)


class Middle:
    """A man in the middle between two senders of a cluster: sender 0 sees
    sender 1 at .ports[1] and sender 1 sees sender 0 at .ports[0]; what each
    sends the other is forwarded from the port the other expects it from,
    and what sender 0 sends goes through tamper(datagram, history), which
    returns the datagrams to forward in its place."""

    def __init__(self, real_ports, tamper):
        self.real = real_ports
        self.tamper = tamper
        self.socks = []
        for _ in range(2):
            x = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            x.bind(("127.0.0.1", 0))
            x.settimeout(0.05)
            self.socks.append(x)
        self.ports = [x.getsockname()[1] for x in self.socks]
        self.history = []
        self.stop_flag = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        import select
        while not self.stop_flag:
            r, _, _ = select.select(self.socks, [], [], 0.05)
            for x in r:
                data, _ = x.recvfrom(65535)
                if x is self.socks[1]:      # sender 0 -> "sender 1"
                    out = self.tamper(data, self.history)
                    self.history.append(data)
                    for d in out:
                        self.socks[0].sendto(d, ("127.0.0.1", self.real[1]))
                else:                       # sender 1 -> "sender 0"
                    self.socks[1].sendto(data, ("127.0.0.1", self.real[0]))

    def stop(self):
        self.stop_flag = True
        self.thread.join()
        for x in self.socks:
            x.close()


class CstpCluster(unittest.TestCase):
    def frames(self, count):
        return [cl.frame_bytes(f, S * TILE) for f in range(count)]

    def test_cluster_uneven_loss_within_redundancy_arrives(self):
        frames = self.frames(60)
        ports, relay_ports = cl.free_ports(S), cl.free_ports(S)
        imps = cl.uneven_paths(40)
        relays = [Relay(("127.0.0.1", relay_ports[s]),
                        ("127.0.0.1", ports[s]), imps[s], idle_exit=0).start()
                  for s in range(S)]
        beyond = cl.beyond_redundancy(40, 60, N, RED)
        recv = receive(ports)
        cluster = Cluster(["127.0.0.1:%d" % p for p in relay_ports], 60,
                          TILE, ["overhead=0.15", "rate=100000000"])
        got, st, rx_warnings = collect(recv, 60, 40)
        senders = cluster.wait(30)
        for r in relays:
            r.stop()
        delivered, wrong = cl.check_frames(frames, got)
        master = senders[0]["stats"]
        print("\ncluster: %d/60 frames, lost %d, beyond the redundancy %d "
              "(expected %d); senders ready apart: max %.2f ms, mean %.2f "
              "ms; streams arriving apart: max %.2f ms, mean %.2f ms; "
              "release wait max %.1f ms" % (
                  len(delivered), st["frames-lost"],
                  st["frames-beyond-redundancy"], len(beyond),
                  master["sync-skew-max"] / 1e6,
                  master["sync-skew-mean"] / 1e6,
                  st["arrival-skew-max"] / 1e6, st["arrival-skew-mean"] / 1e6,
                  max(x["stats"]["release-wait-max"] for x in senders) / 1e6))
        for i, x in enumerate(senders):
            s = x["stats"]
            print("sender %d: exchange %d bytes received (bound %d), %d sent; "
                  "parts missing %d, bad %d, warnings %s" % (
                      i, s["exchange-bytes-received"],
                      s["exchange-bound-bytes"], s["exchange-bytes-sent"],
                      s["parts-missing"], s["exchange-bad"], x["warnings"]))
            self.assertEqual(x["rc"], 0, x["stderr"])
            self.assertEqual(s["frames"], 60)
            self.assertEqual(s["parts-missing"], 0)
            self.assertEqual(s["exchange-bad"], 0)
            self.assertEqual(s["frames-unsynchronised"], 0)
            # with every pipe of all 4 streams, each of a sender's 9 pipes a
            # frame takes 3 parts: exactly the (S - 1) p R bound
            self.assertEqual(s["exchange-parts-received"], 60 * (S - 1) * RED)
            self.assertEqual(s["exchange-bytes-received"],
                             s["exchange-bound-bytes"])
            self.assertEqual(x["warnings"], [])
        self.assertEqual(master["frames-released-partial"], 0)
        self.assertGreater(master["sync-skew-max"], 0)
        # released together, the streams of a frame start within a few ms
        # of each other, however far apart their sources had it
        self.assertGreater(st["arrival-skew-max"], 0)
        self.assertLess(st["arrival-skew-mean"], master["sync-skew-mean"])
        self.assertEqual(wrong, 0)
        self.assertEqual(st["frames-beyond-redundancy"], len(beyond))
        self.assertEqual(delivered, [f for f in range(60) if f not in beyond])

    def test_sender_killed_is_reported(self):
        frames = self.frames(150)
        ports = cl.free_ports(S)
        recv = receive(ports)
        cluster = Cluster(["127.0.0.1:%d" % p for p in ports], 150, TILE,
                          ["overhead=0.15"])
        # once 30 frames came out, sender 2 dies mid-stream; the others go on
        first = collect(recv, 150, 60, until=30)
        cluster.procs[2].send_signal(signal.SIGKILL)
        got, st, rx_warnings = collect(recv, 150, 30)
        got = first + got
        senders = cluster.wait(30)
        delivered, wrong = cl.check_frames(frames, got)
        print("\nkilled sender 2: %d/150 frames (first %s, last %s), lost %d; "
              "receiver: %s" % (len(delivered), delivered[:1],
                                delivered[-1:], st["frames-lost"],
                                rx_warnings))
        for i, x in enumerate(senders):
            print("sender %d: rc %s, warnings %s" % (i, x["rc"],
                                                     x["warnings"]))
        self.assertEqual(wrong, 0)
        self.assertEqual(senders[2]["rc"], -signal.SIGKILL)
        # the frames before it arrive whole, those after it are lost (a
        # whole stream is beyond 15 % of redundancy), and the rest still
        # leave on time: the others finish
        self.assertGreaterEqual(len(delivered), 30)
        self.assertEqual(delivered, list(range(len(delivered))))
        self.assertEqual(st["frames-decoded"] + st["frames-lost"], 150)
        for i in (0, 1, 3):
            x = senders[i]
            self.assertEqual(x["rc"], 0, x["stderr"])
            self.assertEqual(x["stats"]["frames"], 150)
            self.assertFalse(x["stats"]["peer-2-alive"])
            self.assertTrue(any("sender 2" in w for w in x["warnings"]),
                            x["warnings"])
        self.assertTrue(any("sent nothing for frame" in w
                            for w in senders[0]["warnings"]))
        self.assertGreater(senders[0]["stats"]["frames-released-partial"], 0)
        self.assertTrue(any(w.startswith("stream 2: nothing arrived")
                            for w in rx_warnings), rx_warnings)

    def test_forged_exchange_changes_only_counters(self):
        frames = self.frames(60)
        ports = cl.free_ports(S)
        recv = receive(ports)
        cluster = Cluster(["127.0.0.1:%d" % p for p in ports], 60, TILE,
                          ["overhead=0.15"])
        # sender 1's exchange port, from the sender's own arguments
        peers = cluster.procs[1].args[4].split(",")
        target = ("127.0.0.1", int(peers[1].split(":")[1]))
        part = bytearray(32 + 1280)
        # a part of sender 1's pipe 0 of frame 5 from "sender 0": well
        # formed, but from an address that is not sender 0's
        part[0:8] = b"CSTX\x01\x01\x04\x00"
        part[8:24] = (5).to_bytes(4, "big") + N.to_bytes(2, "big") + \
            (1280).to_bytes(2, "big") + (S * TILE).to_bytes(4, "big") + \
            b"\x01\x00\x00\x00"
        forged = [bytes(part), bytes(part[:40]), b"CSTX" + bytes(20),
                  b"not an exchange datagram", bytes(part[:4]) + b"\x02"
                  + bytes(part[5:])]
        # once frames come out, sender 1's exchange socket is open (a
        # slower start, under ASan, took longer than a second)
        first = collect(recv, 60, 60, until=5)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(3):
            for d in forged:
                s.sendto(d, target)
            time.sleep(0.2)
        s.close()
        got, st, _ = collect(recv, 60, 30)
        got = first + got
        senders = cluster.wait(30)
        delivered, wrong = cl.check_frames(frames, got)
        bad = senders[1]["stats"]["exchange-bad"]
        print("\nforged: %d/60 frames; sender 1 exchange-bad %d, warnings %s"
              % (len(delivered), bad, senders[1]["warnings"]))
        self.assertEqual(wrong, 0)
        self.assertEqual(delivered, list(range(60)))
        self.assertEqual(bad, 3 * len(forged))
        self.assertEqual(senders[1]["stats"]["exchange-parts-received"],
                         60 * (S - 1) * RED)
        self.assertTrue(any("exchange port" in w
                            for w in senders[1]["warnings"]))

    def test_replayed_and_duplicated_exchange_changes_only_counters(self):
        # two senders, everything sender 0 sends sender 1 passing through a
        # man in the middle that sends each datagram twice, every 7th one
        # also cut short, and every 5th an old one again (its frame already
        # sent: late); sender 1's frames stay whole, only counters move
        tile = 320 * 120 * 4
        frames = [cl.frame_bytes(f, 2 * tile) for f in range(60)]
        ports, real = cl.free_ports(2), cl.free_ports(2)
        count = [0]

        def tamper(d, history):
            count[0] += 1
            out = [d, d]
            if count[0] % 7 == 0:
                out.append(d[:len(d) // 2])
            if count[0] % 5 == 0 and len(history) > 120:
                out.append(history[-120])
            return out

        mid = Middle(real, tamper)
        peers = ["127.0.0.1:%d,127.0.0.1:%d" % (real[0], mid.ports[1]),
                 "127.0.0.1:%d,127.0.0.1:%d" % (mid.ports[0], real[1])]
        recv = receive(ports)
        cluster = Cluster(["127.0.0.1:%d" % p for p in ports], 60, tile,
                          ["overhead=0.15"], peers=peers)
        got, st, _ = collect(recv, 60, 40)
        senders = cluster.wait(30)
        mid.stop()
        delivered, wrong = cl.check_frames(frames, got)
        s1 = senders[1]["stats"]
        print("\nman in the middle: %d/60 frames; sender 1: duplicates %d, "
              "late %d, bad %d, parts received %d, missing %d" % (
                  len(delivered), s1["exchange-duplicates"],
                  s1["exchange-late"], s1["exchange-bad"],
                  s1["exchange-parts-received"], s1["parts-missing"]))
        for x in senders:
            self.assertEqual(x["rc"], 0, x["stderr"])
        self.assertEqual(wrong, 0)
        self.assertEqual(delivered, list(range(60)))
        red = 18                    # N = 120 symbols of 1280 bytes, 15 %
        self.assertEqual(s1["exchange-parts-received"], 60 * red)
        self.assertEqual(s1["parts-missing"], 0)
        # (each part twice; a loopback socket may drop a copy under load)
        self.assertGreaterEqual(s1["exchange-duplicates"], 60 * red * 9 // 10)
        self.assertGreater(s1["exchange-late"], 0)
        self.assertGreater(s1["exchange-bad"], 0)

    def test_cluster_to_display_wall(self):
        # 4 senders to 4 wall receivers (cstpsrc index/peers, one process
        # each): receiver 2 loses 8 % in bursts of 4; its tile comes back
        # through pipes its peers reduce, and every receiver shows the same
        # frames, each tile the bytes its sender had
        frames = self.frames(60)
        ports, wall_peers = cl.free_ports(S), cl.free_ports(S)
        peers = ",".join("127.0.0.1:%d" % p for p in wall_peers)
        tmp = tempfile.mkdtemp(prefix="cstp-cluster-wall-")
        receivers = []
        for i in range(S):
            props = "streams=%d index=%d ports=%s peers=%s latency=%d" % (
                S, i, ",".join(map(str, ports)), peers, 800 * Gst.MSECOND)
            if i == 2:
                props += (' simulate-loss="loss, seed=(uint)7, burst=(double)4,'
                          ' rates=(string)0.08"')
            receivers.append(subprocess.Popen(
                [sys.executable, os.path.join(here, "cstp_wall_receiver.py"),
                 "--props", props, "--out", os.path.join(tmp, "%d.json" % i),
                 "--timeout", "60"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True))
        try:
            for p in receivers:
                self.assertEqual(p.stdout.readline().strip(), "ready")
            time.sleep(0.5)
            cluster = Cluster(["127.0.0.1:%d" % p for p in ports], 60,
                              TILE, ["overhead=0.15"])
            senders = cluster.wait(40)
            time.sleep(2.5)
            results = []
            for i, p in enumerate(receivers):
                p.stdin.write("stop\n")
                p.stdin.flush()
            for i, p in enumerate(receivers):
                self.assertEqual(p.wait(30), 0)
                with open(os.path.join(tmp, "%d.json" % i)) as f:
                    results.append(json.load(f))
        finally:
            for p in receivers:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stdin.close()
                p.stdout.close()
            for name in os.listdir(tmp):
                os.unlink(os.path.join(tmp, name))
            os.rmdir(tmp)
        for x in senders:
            self.assertEqual(x["rc"], 0, x["stderr"])
        shown = []
        for i, r in enumerate(results):
            tiles = {hashlib.sha256(f[i * TILE:(i + 1) * TILE]).hexdigest(): n
                     for n, f in enumerate(frames)}
            got = [tiles.get(b["sha256"]) for b in r["buffers"]]
            st = r["stats"]
            print("\nreceiver %d: %d tiles, lost %d, peer-repaired %d, "
                  "barrier-dropped %d, simulated drops %d" % (
                      i, len(got), st["frames-lost"],
                      st["frames-peer-repaired"],
                      st["frames-barrier-dropped"],
                      st["stream-%d-simulated-drops" % i]))
            self.assertNotIn(None, got)       # every tile its sender's bytes
            shown.append(got)
        # the barrier: every receiver shows the same frames
        for got in shown[1:]:
            self.assertEqual(got, shown[0])
        self.assertEqual(shown[0], list(range(60)))
        self.assertGreater(results[2]["stats"]["stream-2-simulated-drops"], 0)
        self.assertGreater(results[2]["stats"]["frames-peer-repaired"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
