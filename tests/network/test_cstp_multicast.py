#!/usr/bin/env python3
"""cstpsink to a multicast group, cstpsrc joining it: one sender, two
receivers on the same host get every frame byte for byte, a receiver of
another group on the same ports gets nothing, the commands of
docs/elements/cstpsink.md's "Multicast" do what it says, and an unknown
multicast-iface is a clear error on both elements.

Multicast needs an interface that carries it: the test makes a network
namespace of its own (root; `ip netns`), turns multicast on for its
loopback interface, routes 224.0.0.0/4 there, and runs itself inside it.
Without namespaces it is skipped (exit 77)."""

import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GROUP, OTHER_GROUP, PORT, STREAMS, FRAMES = "239.255.42.1", "239.255.42.2", 46000, 3, 8


def inside():
    sys.path.insert(0, HERE)
    import cstp_loopback as cl
    Gst = cl.Gst

    class Multicast(unittest.TestCase):
        def receiver(self, group, extra=""):
            p = Gst.parse_launch(
                "cstpsrc name=src streams=%d address=%s port=%d latency=%d %s "
                "! appsink name=out sync=false" % (STREAMS, group, PORT,
                                                   500 * Gst.MSECOND, extra))
            self.assertNotEqual(p.set_state(Gst.State.PLAYING),
                                Gst.StateChangeReturn.FAILURE)
            return p

        def test_one_sender_two_receivers(self):
            frames = [cl.frame_bytes(i, 200000) for i in range(FRAMES)]
            receivers = [self.receiver(GROUP), self.receiver(GROUP),
                         self.receiver(OTHER_GROUP)]
            send = Gst.parse_launch(
                "appsrc name=in format=time caps=application/x-test-frames ! "
                "cstpsink name=sink streams=%d host=%s port=%d ttl-mc=1 "
                "loop=true packet-size=1400 overhead=0.2 sync=false"
                % (STREAMS, GROUP, PORT))
            appsrc = send.get_by_name("in")
            send.set_state(Gst.State.PLAYING)
            for i, f in enumerate(frames):
                buf = Gst.Buffer.new_wrapped(f)
                buf.pts = i * Gst.SECOND // 30
                buf.duration = Gst.SECOND // 30
                appsrc.emit("push-buffer", buf)
            appsrc.emit("end-of-stream")
            msg = send.get_bus().timed_pop_filtered(
                30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            self.assertEqual(msg.type, Gst.MessageType.EOS)
            send.set_state(Gst.State.NULL)
            for n, p in enumerate(receivers[:2]):
                out = p.get_by_name("out")
                got = []
                while len(got) < FRAMES:
                    sample = out.emit("try-pull-sample", 5 * Gst.SECOND)
                    if sample is None:
                        break
                    b = sample.get_buffer()
                    ok, m = b.map(Gst.MapFlags.READ)
                    got.append(bytes(m.data))
                    b.unmap(m)
                self.assertEqual(len(got), FRAMES, "receiver %d" % n)
                self.assertTrue(got == frames, "receiver %d: other bytes" % n)
            st = cl.stats_dict(receivers[2].get_by_name("src").get_property("stats"))
            self.assertEqual(st["received"], 0, "another group's receiver")
            self.assertEqual(st["frames-decoded"], 0)
            for p in receivers:
                p.set_state(Gst.State.NULL)

        def test_doc_lines(self):
            # docs/elements/cstpsink.md, "Multicast": two receivers of the
            # group and the sender, as written
            import shlex
            import tempfile
            import time
            import test_cstp_pipelines as tp
            cmds = [c for c in tp.doc_commands("cstpsink.md") if "239.255." in c]
            recv = [c for c in cmds if "cstpsrc" in c]
            send = [c for c in cmds if "cstpsink" in c]
            self.assertEqual((len(recv), len(send)), (2, 1), cmds)
            outs = [re.search(r"location=(\S+)", c).group(1) for c in recv]
            procs = [subprocess.Popen(shlex.split(c), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
                     for c in recv]
            time.sleep(1.0)
            sp = subprocess.run(shlex.split(send[0]), capture_output=True,
                                text=True, timeout=60)
            self.assertEqual(sp.returncode, 0, sp.stderr)
            for p in procs:
                try:
                    out, _ = p.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.communicate()
                    self.fail("a receiver of the group did not finish")
                self.assertEqual(p.returncode, 0, out)
            with tempfile.TemporaryDirectory() as tmp:
                ref = os.path.join(tmp, "ref.yuv")
                subprocess.run(["gst-launch-1.0", "-q", "videotestsrc",
                                "num-buffers=30", "!", "video/x-raw,format=I420,"
                                "width=1280,height=720", "!", "filesink",
                                "location=" + ref], check=True, timeout=60)
                want = open(ref, "rb").read()
            self.assertEqual(len(want), 30 * 1280 * 720 * 3 // 2)
            for o in outs:
                with open(o, "rb") as f:
                    self.assertTrue(f.read() == want, o + " differs")
                os.unlink(o)

        def test_unknown_interface(self):
            for desc in ("cstpsrc streams=2 address=%s port=%d "
                         "multicast-iface=nosuchif0 ! fakesink" % (GROUP, PORT),
                         "fakesrc num-buffers=1 ! cstpsink streams=2 host=%s "
                         "port=%d multicast-iface=nosuchif0" % (GROUP, PORT)):
                p = Gst.parse_launch(desc)
                p.set_state(Gst.State.PLAYING)
                msg = p.get_bus().timed_pop_filtered(
                    10 * Gst.SECOND, Gst.MessageType.ERROR)
                p.set_state(Gst.State.NULL)
                self.assertIsNotNone(msg, desc)
                # the reason is the error's first line
                self.assertIn("nosuchif0", msg.parse_error()[0].message, desc)

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Multicast)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


def main():
    if os.geteuid() != 0:
        print("multicast test: needs root for a network namespace; skipped")
        sys.exit(77)
    ns = "gsmc%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", ns],
                      stderr=subprocess.DEVNULL).returncode != 0:
        print("multicast test: cannot make a network namespace; skipped")
        sys.exit(77)
    try:
        for cmd in (["ip", "link", "set", "lo", "up", "multicast", "on"],
                    ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"]):
            subprocess.run(["ip", "netns", "exec", ns] + cmd, check=True)
        rc = subprocess.run(["ip", "netns", "exec", ns, sys.executable,
                             os.path.abspath(__file__), "--inside"]).returncode
    finally:
        subprocess.run(["ip", "netns", "del", ns])
    sys.exit(rc)


if __name__ == "__main__":
    if sys.argv[1:] == ["--inside"]:
        inside()
    else:
        main()
