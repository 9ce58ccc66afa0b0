#!/usr/bin/env python3
"""The network-coding commands of README.md and docs/elements/ run exactly as a
user copies them (gst-launch-1.0 in a shell, over loopback UDP, a
multi-megabyte MPEG-TS, unpaced by anything but what the command says), and
do what the docs say: the bytes arrive identical, through 10 % loss too, a
relay works with the caps the docs give it, and a receiver that remuxes what
it recovers makes an MP4 with every frame."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import nc_loopback  # noqa: E402
from udp_impair import Impairment, Relay  # noqa: E402


def commands(doc):
    """The gst-launch-1.0 commands in a Markdown file's code blocks, with
    their continuation lines joined."""
    out, in_block, cur = [], False, None
    with open(os.path.join(ROOT, doc)) as f:
        lines = f.readlines()
    for line in lines:
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            continue
        text = line.rstrip("\n")
        if cur is not None:
            cur += " " + text.strip().rstrip("\\").strip()
            if not text.rstrip().endswith("\\"):
                out.append(cur)
                cur = None
        elif text.startswith("gst-launch-1.0"):
            cur = text.rstrip().rstrip("\\").strip()
            if not text.rstrip().endswith("\\"):
                out.append(cur)
                cur = None
    return out


def pick(cmds, *must):
    found = [c for c in cmds if all(m in c for m in must)]
    assert len(found) == 1, (must, cmds)
    return found[0]


class Launch:
    """gst-launch-1.0 in a shell, as a user starts it."""
    running = []

    def __init__(self, cmd, cwd):
        self.cmd = cmd
        self.p = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=cwd,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        self.lines = []
        Launch.running.append(self)

    @classmethod
    def kill_all(cls):
        """What a failed test left running would hold the ports."""
        for launch in cls.running:
            if launch.p.poll() is None:
                os.killpg(launch.p.pid, signal.SIGKILL)
            launch.p.wait()
            launch.p.stdout.close()
        cls.running = []

    def wait_playing(self, timeout=20):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            line = self.p.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if "Setting pipeline to PLAYING" in line:
                return
        raise AssertionError("not playing: %s\n%s" % (self.cmd, "".join(self.lines)))

    def interrupt(self, timeout=30):
        """Ctrl-C, which a terminal sends to the whole process group: with -e
        the pipeline ends with EOS."""
        os.killpg(self.p.pid, signal.SIGINT)
        return self.finish(timeout)

    def finish(self, timeout=300):
        out, _ = self.p.communicate(timeout=timeout)
        self.lines.append(out or "")
        return self.p.returncode, "".join(self.lines)


def settle(path, quiet_s=1.5, timeout_s=60):
    """Waits until the file stops growing."""
    last, since, t0 = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        size = os.path.getsize(path) if os.path.exists(path) else -1
        if size != last:
            last, since = size, time.monotonic()
        elif time.monotonic() - since > quiet_s:
            return
        time.sleep(0.1)


def ffprobe_frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0",
                          "-count_frames", "-show_entries",
                          "stream=nb_read_frames", "-of", "json", path],
                         capture_output=True, text=True, check=True).stdout
    return int(json.loads(out)["streams"][0]["nb_read_frames"])


class DocsCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        nc_loopback.Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="nc-docs-")
        cls.dir = cls.tmp.name
        cls.movie = os.path.join(cls.dir, "movie.ts")
        nc_loopback.make_test_ts(cls.movie, frames=450, pattern="snow")
        cls.size = os.path.getsize(cls.movie)
        assert cls.size > 3_000_000, cls.size

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def tearDown(self):
        Launch.kill_all()

    def setUp(self):
        for name in ("received.ts", "received.mp4"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                os.unlink(path)

    def send_and_receive(self, receiver, sender, relay=None):
        rx = Launch(receiver, self.dir)
        rx.wait_playing()
        if relay is not None:
            sender = sender.replace("port=5000", "port=%d" % relay.port)
        tx = Launch(sender, self.dir)
        rc, out = tx.finish()
        self.assertEqual(rc, 0, out)
        settle(os.path.join(self.dir, "received.ts"))
        rc, out = rx.interrupt()
        self.assertEqual(rc, 0, out)
        with open(self.movie, "rb") as a, \
                open(os.path.join(self.dir, "received.ts"), "rb") as b:
            got = b.read()
            self.assertEqual(len(got), self.size, out[-2000:])
            self.assertTrue(got == a.read(), "received bytes differ")
        return out

    def test_readme_sender_receiver(self):
        cmds = commands("README.md")
        out = self.send_and_receive(pick(cmds, "udpsrc", "ncdecoder"),
                                    pick(cmds, "filesrc", "ncencoder"))
        self.assertNotIn("WARNING", out)

    def test_readme_through_ten_percent_loss(self):
        cmds = commands("README.md")
        imp = Impairment(loss=0.10, seed=21)
        relay = Relay(("127.0.0.1", 0), ("127.0.0.1", 5000), imp).start()
        try:
            self.send_and_receive(pick(cmds, "udpsrc", "ncdecoder"),
                                  pick(cmds, "filesrc", "ncencoder"), relay)
        finally:
            relay.stop()
        self.assertGreater(imp.stats["dropped"], 0.08 * imp.stats["received"])

    def test_rtpnc_and_ncdecoder_docs(self):
        rtp = commands("docs/elements/rtpnc.md")
        self.send_and_receive(pick(rtp, "udpsrc"), pick(rtp, "filesrc"))
        dec = commands("docs/elements/ncdecoder.md")
        self.send_and_receive(pick(dec, "udpsrc"), pick(rtp, "filesrc"))

    def test_relay_and_mp4_receiver(self):
        cmds = commands("docs/elements/ncencoder.md")
        rx = Launch(pick(cmds, "port=5002", "mp4mux"), self.dir)
        rx.wait_playing()
        relay = Launch(pick(cmds, "udpsrc port=5000", "rtpncpay"), self.dir)
        relay.wait_playing()
        tx = Launch(pick(cmds, "filesrc", "redundancy-percent=40"), self.dir)
        rc, out = tx.finish()
        self.assertEqual(rc, 0, out)
        time.sleep(1.5)
        rc, out = relay.interrupt()
        self.assertEqual(rc, 0, out)
        settle(os.path.join(self.dir, "received.mp4"))
        rc, out = rx.interrupt()
        self.assertEqual(rc, 0, out)
        self.assertEqual(ffprobe_frames(os.path.join(self.dir, "received.mp4")),
                         ffprobe_frames(self.movie))

    def test_in_process_examples(self):
        cmds = commands("docs/elements/ncencoder.md")
        for cmd in (pick(cmds, "videotestsrc"), pick(cmds, "audiotestsrc")):
            rc, out = Launch(cmd, self.dir).finish(timeout=120)
            self.assertEqual(rc, 0, out)
            self.assertNotIn("WARNING", out)
            self.assertIn("Got EOS", out)

    def test_scheduled_example(self):
        cmds = commands("docs/elements/ncencoder.md")
        rx = Launch(pick(commands("README.md"), "udpsrc", "ncdecoder"), self.dir)
        rx.wait_playing()
        rc, out = Launch(pick(cmds, "cycle=2000000"), self.dir).finish()
        self.assertEqual(rc, 0, out)
        settle(os.path.join(self.dir, "received.ts"))
        rc, out = rx.interrupt()
        self.assertEqual(rc, 0, out)
        with open(os.path.join(self.dir, "received.ts"), "rb") as b:
            self.assertEqual(len(b.read()), self.size)

    def test_scripts(self):
        # pipelines/nc-sender.sh sends in real time: a 3 s file
        short = os.path.join(self.dir, "short.ts")
        nc_loopback.make_test_ts(short, frames=90)
        out_ts = os.path.join(self.dir, "received.ts")
        script = os.path.join(ROOT, "pipelines")
        rx = Launch("%s/nc-receiver.sh %s 5002" % (script, out_ts), self.dir)
        rx.wait_playing()
        relay = Launch("%s/nc-relay.sh 5000 127.0.0.1 5002" % script, self.dir)
        relay.wait_playing()
        rc, out = Launch("%s/nc-sender.sh %s 127.0.0.1 5000" % (script, short),
                         self.dir).finish()
        self.assertEqual(rc, 0, out)
        time.sleep(1)
        self.assertEqual(relay.interrupt()[0], 0)
        settle(out_ts)
        rc, out = rx.interrupt()
        self.assertEqual(rc, 0, out)
        size = os.path.getsize(short)
        self.assertIn("nc-receiver: %d bytes in %s" % (size, out_ts), out)
        with open(short, "rb") as a, open(out_ts, "rb") as b:
            self.assertTrue(a.read() == b.read())

    def test_every_nc_command_is_tested(self):
        # a new command in these docs must be run above
        n = {doc: len([c for c in commands(doc) if re.search(r"\bnc|rtpnc", c)])
             for doc in ("README.md", "docs/elements/ncencoder.md",
                         "docs/elements/ncdecoder.md", "docs/elements/rtpnc.md")}
        self.assertEqual(n, {"README.md": 2, "docs/elements/ncencoder.md": 6,
                             "docs/elements/ncdecoder.md": 1,
                             "docs/elements/rtpnc.md": 2})


if __name__ == "__main__":
    unittest.main(verbosity=2)
