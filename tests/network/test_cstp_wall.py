#!/usr/bin/env python3
"""The CSTP display wall: one cstpsink, four cstpsrc receivers (`index`,
`peers`), each in a network namespace of its own (a bridge between them and
the sender), each receiving one stream and outputting its tile, exchanging
reduced pipe packets and frame states with the others. Loss is uneven, per
receiver (cstpsrc's seeded simulate-loss). Every case compares every tile
with the part of the sent frame it stands for, byte for byte, and the
frame numbers and timestamps across the receivers. The same cases run on
loopback, in one namespace, where namespaces cannot be made."""

import atexit
import hashlib
import json
import math
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cstp_loopback as cl  # noqa: E402

Gst = cl.Gst
HERE = os.path.dirname(os.path.abspath(__file__))
RECEIVER = os.path.join(HERE, "cstp_wall_receiver.py")
S = 4
FPS = 30
# RGBA 320x240: 307200 bytes; 300-byte symbols, N = 256 per stream, so each
# tile is 76800 bytes: 60 whole rows, raw video of its own
WIDTH, HEIGHT = 320, 240
PACKET = 332
CAPS = "video/x-raw,format=RGBA,width=%d,height=%d,framerate=%d/1" % (
    WIDTH, HEIGHT, FPS)


# what a SIGTERM (a test timeout) must take down at once: the receivers'
# processes and the namespaces
LIVE_PROCS = set()
LIVE_NETS = set()


def on_sigterm(*_):
    for p in list(LIVE_PROCS):
        p.kill()
    for n in list(LIVE_NETS):
        n.cleanup()
    os._exit(1)


def remove_stale():
    """Namespaces and links of an earlier run that was killed outright (its
    pid is in their names): nothing else could remove them."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True,
                         text=True).stdout
    for name in re.findall(r"^cw(\d+)n\d+", out, re.M):
        if not os.path.exists("/proc/%s" % name):
            for i in range(S):
                subprocess.run(["ip", "netns", "del", "cw%sn%d" % (name, i)],
                               stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "link", "del", "cw%sbr" % name],
                           stderr=subprocess.DEVNULL)


def tile_of(frame, s):
    k = PACKET - 32
    n = math.ceil(math.ceil(len(frame) / k) / S)
    return frame[s * n * k:min((s + 1) * n * k, len(frame))]


class Net:
    """Where the receivers live: namespaces on a bridge, or loopback."""

    def __init__(self, namespaces):
        self.namespaces = namespaces
        self.tag = "cw%d" % os.getpid()
        self.made = []
        self.links = []
        self.subnet = "10.%d.%d" % (200 + random.randrange(50),
                                    random.randrange(250))
        if namespaces:
            remove_stale()
            LIVE_NETS.add(self)
            atexit.register(self.cleanup)
            try:
                self._setup()
            except BaseException:
                self.cleanup()
                raise

    def _ip(self, *args):
        subprocess.run(["ip"] + list(args), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def _setup(self):
        br = self.tag + "br"
        self._ip("link", "add", br, "type", "bridge")
        self.links.append(br)
        self._ip("addr", "add", "%s.254/24" % self.subnet, "dev", br)
        self._ip("link", "set", br, "up")
        for i in range(S):
            ns, veth = "%sn%d" % (self.tag, i), "%sv%d" % (self.tag, i)
            self._ip("netns", "add", ns)
            self.made.append(ns)
            self._ip("link", "add", veth, "type", "veth", "peer", "name",
                     "eth0", "netns", ns)
            self.links.append(veth)
            self._ip("link", "set", veth, "master", br)
            self._ip("link", "set", veth, "up")
            self._ip("-n", ns, "addr", "add", "%s.%d/24" % (self.subnet, i + 1),
                     "dev", "eth0")
            self._ip("-n", ns, "link", "set", "eth0", "up")
            self._ip("-n", ns, "link", "set", "lo", "up")

    def host(self, i):
        return "%s.%d" % (self.subnet, i + 1) if self.namespaces else "127.0.0.1"

    def prefix(self, i):
        return ["ip", "netns", "exec", self.made[i]] if self.namespaces else []

    def cleanup(self):
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        for link in self.links:
            subprocess.run(["ip", "link", "del", link], stderr=subprocess.DEVNULL)
        self.made, self.links = [], []


def namespaces_work():
    probe = "cwprobe%d" % os.getpid()
    ok = subprocess.run(["ip", "netns", "add", probe], stderr=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL).returncode == 0
    if ok:
        subprocess.run(["ip", "netns", "del", probe])
    return ok


def wall(net, frames, sink_props, loss, start=range(S), latency_ms=800,
         inject=None, kill_at=None):
    """Sends frames to a wall of S receivers (those in `start`; the others
    never run) and returns each started receiver's JSON result.
    loss[i]: receiver i's simulate-loss string, or None. kill_at: (i, n)
    kills receiver i (SIGKILL) before frame n is sent; it has no result."""
    if net.namespaces:
        stream_port, peer_port = 47000 + random.randrange(1000), 48500
        ports = [stream_port] * S
        peer_ports = [peer_port] * S
    else:
        free = cl.free_ports(2 * S)
        ports, peer_ports = free[:S], free[S:]
    peers = ",".join("%s:%d" % (net.host(i), peer_ports[i]) for i in range(S))
    tmp = tempfile.mkdtemp(prefix="cstp-wall-")
    procs = {}
    try:
        for i in start:
            props = ("streams=%d index=%d ports=%s peers=%s latency=%d" % (
                S, i, ",".join(map(str, ports)), peers,
                latency_ms * Gst.MSECOND))
            if loss[i]:
                props += " simulate-loss=%s" % loss[i]
            p = subprocess.Popen(
                net.prefix(i) + [sys.executable, RECEIVER, "--props", props,
                                 "--out", os.path.join(tmp, "%d.json" % i),
                                 "--timeout", "60"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            procs[i] = p
            LIVE_PROCS.add(p)
        for i, p in procs.items():
            line = p.stdout.readline().strip()
            assert line == "ready", "receiver %d: %r" % (i, line)
        # a heartbeat from every peer before the first frame
        time.sleep(0.5)
        if inject:
            inject(net, peer_ports, ports)
        dests = ",".join("%s:%d" % (net.host(i), ports[i]) for i in range(S))
        send = Gst.parse_launch(
            "appsrc name=in format=time caps=%s ! cstpsink name=sink "
            "streams=%d destinations=%s packet-size=%d sync=false %s" % (
                CAPS, S, dests, PACKET,
                " ".join("%s=%s" % kv for kv in sink_props.items())))
        appsrc = send.get_by_name("in")
        assert send.set_state(Gst.State.PLAYING) != Gst.StateChangeReturn.FAILURE
        for n, f in enumerate(frames):
            if kill_at and kill_at[1] == n:
                procs[kill_at[0]].kill()
                procs[kill_at[0]].wait()
                LIVE_PROCS.discard(procs[kill_at[0]])
            buf = Gst.Buffer.new_wrapped(f)
            buf.pts = n * Gst.SECOND // FPS
            buf.duration = Gst.SECOND // FPS
            appsrc.emit("push-buffer", buf)
            time.sleep(1.0 / FPS)
        appsrc.emit("end-of-stream")
        msg = send.get_bus().timed_pop_filtered(
            20 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        send.set_state(Gst.State.NULL)
        assert msg is not None and msg.type == Gst.MessageType.EOS, msg
        # past every deadline and the barrier's grace
        time.sleep(2 * latency_ms / 1000 + 1.0)
        results = {}
        if kill_at:
            del procs[kill_at[0]]
        for i, p in procs.items():
            p.stdin.write("stop\n")
            p.stdin.flush()
        for i, p in procs.items():
            assert p.wait(30) == 0, "receiver %d exited %d" % (i, p.returncode)
            with open(os.path.join(tmp, "%d.json" % i)) as f:
                results[i] = json.load(f)
        return results
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
            LIVE_PROCS.discard(p)
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


class Wall:
    namespaces = True

    @classmethod
    def setUpClass(cls):
        cls.net = Net(cls.namespaces)

    @classmethod
    def tearDownClass(cls):
        cls.net.cleanup()

    def frames(self, count):
        return [cl.frame_bytes(i, WIDTH * HEIGHT * 4) for i in range(count)]

    def check_tiles(self, frames, res, expect_ids):
        """Every receiver output exactly the frames expect_ids (sender's frame
        numbers from the first one), each tile equal to its part of the
        frame, with the same timestamps' spacing everywhere."""
        first = {i: r["buffers"][0]["offset"] for i, r in res.items()
                 if r["buffers"]}
        base = min(first.values())
        for i, r in res.items():
            ids = [b["offset"] - base for b in r["buffers"]]
            self.assertEqual(ids, expect_ids, "receiver %d" % i)
            for b, n in zip(r["buffers"], ids):
                self.assertEqual(b["sha256"], hashlib.sha256(
                    tile_of(frames[n], i)).hexdigest(),
                    "receiver %d frame %d" % (i, n))
                self.assertIn("height=(int)%d" % (HEIGHT // S), b["caps"])
            # the sender's spacing; a tile whose frame packet was lost gets
            # the previous frame's duration added (the sender rounds each
            # 1/30 s down to whole ns: a few ns per frame)
            pts = [b["pts"] - r["buffers"][0]["pts"] for b in r["buffers"]]
            want = [(n - ids[0]) * Gst.SECOND // FPS for n in ids]
            self.assertTrue(all(abs(a - b) < 1000 for a, b in zip(pts, want)),
                            "receiver %d: %s != %s" % (i, pts, want))
            self.assertEqual(r["stats"]["exchange-bad"], 0, r["messages"])

    def test_uneven_loss_every_tile_of_every_frame(self):
        frames = self.frames(30)
        # uneven bursty loss, and receiver 3 loses its whole stream for
        # frames 10..14: only its peers' pipe packets can rebuild those tiles
        loss = ['"loss, seed=(uint)%d, burst=(double)3, rates=(string)%s%s"' % (
            i + 1, r, c) for i, (r, c) in enumerate([
                ("0.01", ""), ("0.03", ""), ("0.05", ""),
                ("0.02", ", cut-stream=(int)3, cut-first=(uint)10, "
                 "cut-last=(uint)14")])]
        res = wall(self.net, frames, {"overhead": 1.0, "pipe-width": 0.5,
                                      "stream-degree": "all"}, loss)
        for i, r in sorted(res.items()):
            st = r["stats"]
            print("\nreceiver %d: out %d, lost %d, through peers %d, barrier "
                  "drops %d, pipes sent %s received %s" % (
                      i, len(r["buffers"]), st["frames-lost"],
                      st["frames-peer-repaired"], st["frames-barrier-dropped"],
                      [st.get("peer-%d-pipes-sent" % p, 0) for p in range(S)],
                      [st.get("peer-%d-pipes-received" % p, 0)
                       for p in range(S)]))
        self.check_tiles(frames, res, list(range(30)))
        st3 = res[3]["stats"]
        self.assertGreater(st3["stream-3-simulated-drops"], 5 * 256)
        self.assertGreaterEqual(st3["frames-peer-repaired"], 5)
        self.assertGreater(sum(st3["peer-%d-pipes-received" % p]
                               for p in range(3)), 5 * 256)
        for r in res.values():
            self.assertEqual(r["stats"]["frames-lost"], 0)
            self.assertEqual(r["stats"]["peers-alive"], S - 1)

    def test_barrier_drops_a_frame_everywhere(self):
        frames = self.frames(30)
        # 15 % overhead cannot rebuild a whole stream: receiver 2 gives up
        # frames 10..14, and the barrier drops them on every receiver
        loss = [None, None, '"loss, cut-stream=(int)2, cut-first=(uint)10, '
                'cut-last=(uint)14"', None]
        res = wall(self.net, frames, {"overhead": 0.15, "pipe-width": 0.5},
                   loss)
        expect = [n for n in range(30) if not 10 <= n <= 14]
        self.check_tiles(frames, res, expect)
        for i, r in res.items():
            st = r["stats"]
            self.assertEqual(st["frames-lost"], 5, "receiver %d" % i)
            if i != 2:
                # their own tiles decoded; the barrier dropped them
                self.assertEqual(st["frames-barrier-dropped"], 5)
            after = [b for b in r["buffers"] if b["offset"] -
                     r["buffers"][0]["offset"] == 15]
            self.assertTrue(after and after[0]["discont"], "receiver %d" % i)

    def test_dead_peer_does_not_stall_the_wall(self):
        # receiver 3 never runs: the others output every frame on time
        frames = self.frames(20)
        res = wall(self.net, frames, {"overhead": 0.15, "pipe-width": 0.5},
                   [None] * S, start=range(3))
        self.check_tiles(frames, res, list(range(20)))
        for r in res.values():
            self.assertEqual(r["stats"]["peers-alive"], 2)

    def test_peer_dying_midway_does_not_stall_the_wall(self):
        # receiver 3 is killed after 20 frames: the others wait for it at
        # most until it is gone (a second of silence), then go on; every
        # frame comes out of all three, the same frames
        frames = self.frames(60)
        t0 = time.monotonic()
        res = wall(self.net, frames, {"overhead": 0.15, "pipe-width": 0.5},
                   [None] * S, kill_at=(3, 20))
        print("\n%.1f s; frames out %s" % (time.monotonic() - t0, [
            len(r["buffers"]) for r in res.values()]))
        self.assertEqual(sorted(res), [0, 1, 2])
        self.check_tiles(frames, res, list(range(60)))
        for r in res.values():
            self.assertEqual(r["stats"]["peers-alive"], 2)

    def test_foreign_exchange_datagrams_dropped_and_counted(self):
        def inject(net, peer_ports, ports):
            junk = [b"CSTW\x01\x09" + bytes(10),         # unknown type
                    b"CSTW\x01\x01\x04\x00" + bytes(9),  # truncated status
                    b"not a wall packet at all"]
            # from an address that is not receiver 0's entry in peers
            status = (b"CSTW\x01\x01\x04\x00" + (0).to_bytes(4, "big") +
                      bytes([1, 0, 0, 0, 3]))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            for d in junk + [status]:
                s.sendto(d, (net.host(1), peer_ports[1]))
            s.close()
        frames = self.frames(10)
        res = wall(self.net, frames, {"overhead": 0.15, "pipe-width": 0.5},
                   [None] * S, inject=inject)
        r1 = res[1]
        self.assertEqual(r1["stats"]["exchange-bad"], 4)
        self.assertTrue(any("exchange packet" in m[1] for m in r1["messages"]),
                        r1["messages"])
        # the forged "dropped" state of frame 0 was not believed
        ids = [b["offset"] - r1["buffers"][0]["offset"] for b in r1["buffers"]]
        self.assertEqual(ids, list(range(10)))
        res[1]["stats"]["exchange-bad"] = 0
        self.check_tiles(frames, res, list(range(10)))


class WallNamespaces(Wall, unittest.TestCase):
    namespaces = True


class WallLoopback(Wall, unittest.TestCase):
    namespaces = False


if __name__ == "__main__":
    # network-cstp-wall: the namespaces (77, a skip, where they cannot be
    # made); network-cstp-wall-loopback: the same cases on loopback
    loopback = "--loopback" in sys.argv
    if not loopback and not namespaces_work():
        print("network namespaces cannot be made here: skipped")
        sys.exit(77)
    # a timeout's SIGTERM still runs the cleanups (atexit, finally)
    signal.signal(signal.SIGTERM, on_sigterm)
    cls = WallLoopback if loopback else WallNamespaces
    suite = unittest.TestLoader().loadTestsFromTestCase(cls)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)
