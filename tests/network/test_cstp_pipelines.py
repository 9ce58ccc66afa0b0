#!/usr/bin/env python3
"""pipelines/cstp-4k.sh run as written (5 frames, a free base port): the file
cstpsrc writes is byte for byte what videotestsrc made; pipelines/cstp-wall.sh
the same way, each of its 4 tiles the rows of the frames it stands for;
pipelines/cstp-cluster.sh, 4 senders each with its band, into one file of
whole frames; and the gst-launch
lines of docs/elements/cstpsink.md and cstpsrc.md, run as written but for
the port, which is chosen free."""

import os
import re
import shlex
import socket
import subprocess
import tempfile
import time
import unittest

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def free_base_port(count):
    """A port p with p..p+count-1 all free a moment ago."""
    for _ in range(200):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        base = s.getsockname()[1]
        s.close()
        if base + count > 65535:
            continue
        socks = []
        try:
            for i in range(count):
                t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(t)
                t.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for t in socks:
                t.close()
    raise RuntimeError("no free port range")


def doc_commands(name):
    """The gst-launch-1.0 lines of a doc page's code blocks (continuations
    joined)."""
    text = open(os.path.join(root, "docs", "elements", name)).read()
    cmds = []
    for block in re.findall(r"```(?:sh|bash)?\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        cmds += [line.strip() for line in joined.splitlines()
                 if line.strip().startswith("gst-launch-1.0")]
    return cmds


class Pipelines(unittest.TestCase):
    def test_cstp_4k_script(self):
        frames = 5
        port = free_base_port(4)
        with tempfile.TemporaryDirectory(prefix="cstp-4k-") as tmp:
            out = os.path.join(tmp, "out.yuv")
            ref = os.path.join(tmp, "ref.yuv")
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(root, "pipelines", "cstp-4k.sh"),
                                str(frames), str(port), out],
                               capture_output=True, text=True, timeout=170)
            print("\n%s%s(%.1f s)" % (p.stdout, p.stderr, time.monotonic() - t0))
            self.assertEqual(p.returncode, 0, p.stderr)
            subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "pattern=ball",
                            "num-buffers=%d" % frames, "!",
                            "video/x-raw,format=I420,width=3840,height=2160,"
                            "framerate=30/1", "!", "filesink",
                            "location=" + ref], check=True, timeout=60)
            self.assertEqual(os.path.getsize(out), frames * 3840 * 2160 * 3 // 2)
            with open(out, "rb") as a, open(ref, "rb") as b:
                self.assertTrue(a.read() == b.read(), "decoded frames differ")

    def test_cstp_wall_script(self):
        # 4 receivers on loopback, each writing its tile: tile i of frame f
        # is rows 180 i .. 180 i + 179 of videotestsrc's frame f
        frames = 5
        port = free_base_port(8)
        frame, tile = 1280 * 720 * 4, 1280 * 180 * 4
        with tempfile.TemporaryDirectory(prefix="cstp-wall-") as tmp:
            ref = os.path.join(tmp, "ref.rgba")
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(root, "pipelines", "cstp-wall.sh"),
                                str(frames), str(port), tmp],
                               capture_output=True, text=True, timeout=170)
            print("\n%s%s(%.1f s)" % (p.stdout, p.stderr, time.monotonic() - t0))
            self.assertEqual(p.returncode, 0, p.stderr)
            subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "pattern=ball",
                            "num-buffers=%d" % frames, "!",
                            "video/x-raw,format=RGBA,width=1280,height=720,"
                            "framerate=30/1", "!", "filesink",
                            "location=" + ref], check=True, timeout=60)
            with open(ref, "rb") as f:
                want = f.read()
            self.assertEqual(len(want), frames * frame)
            for i in range(4):
                with open(os.path.join(tmp, "tile-%d.rgba" % i), "rb") as f:
                    got = f.read()
                self.assertEqual(len(got), frames * tile, "tile %d" % i)
                for n in range(frames):
                    self.assertTrue(
                        got[n * tile:(n + 1) * tile] ==
                        want[n * frame + i * tile:n * frame + (i + 1) * tile],
                        "tile %d of frame %d differs" % (i, n))

    def test_cstp_cluster_script(self):
        # 4 senders on loopback, each with its band of the frame; the one
        # receiver's file is videotestsrc's whole frames
        frames = 10
        port = free_base_port(8)
        frame = 1280 * 720 * 4
        with tempfile.TemporaryDirectory(prefix="cstp-cluster-") as tmp:
            out = os.path.join(tmp, "out.rgba")
            ref = os.path.join(tmp, "ref.rgba")
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(root, "pipelines",
                                             "cstp-cluster.sh"),
                                str(frames), str(port), out],
                               capture_output=True, text=True, timeout=170)
            print("\n%s%s(%.1f s)" % (p.stdout, p.stderr, time.monotonic() - t0))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.count("no warning"), 4, p.stdout)
            subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "pattern=ball",
                            "num-buffers=%d" % frames, "!",
                            "video/x-raw,format=RGBA,width=1280,height=720,"
                            "framerate=30/1", "!", "filesink",
                            "location=" + ref], check=True, timeout=60)
            self.assertEqual(os.path.getsize(out), frames * frame)
            with open(out, "rb") as a, open(ref, "rb") as b:
                self.assertTrue(a.read() == b.read(), "frames differ")

    def test_doc_lines(self):
        # each page shows a receiver and a sender on port 5100
        for page in ("cstpsrc.md", "cstpsink.md"):
            # the multicast lines need a network that carries multicast:
            # network-cstp-multicast runs them in a namespace of its own
            cmds = [c for c in doc_commands(page) if "239.255." not in c]
            recv = [c for c in cmds if "cstpsrc" in c]
            send = [c for c in cmds if "cstpsink" in c]
            self.assertTrue(recv and send, page)
            port = free_base_port(4)
            for r, s in zip(recv, send):
                r = r.replace("port=5100", "port=%d" % port)
                s = s.replace("port=5100", "port=%d" % port)
                rp = subprocess.Popen(shlex.split(r), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
                self.addCleanup(rp.stdout.close)
                time.sleep(1.0)
                sp = subprocess.run(shlex.split(s), capture_output=True,
                                    text=True, timeout=60)
                self.assertEqual(sp.returncode, 0, sp.stderr)
                try:
                    rout, _ = rp.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    rp.kill()
                    rp.wait()
                    self.fail("%s: receiver did not finish: %s" % (page, r))
                print("\n%s\n%s\n%s" % (s, r, rout[-400:]))
                self.assertEqual(rp.returncode, 0, rout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
