#!/usr/bin/env python3
"""pipelines/srtp-sender.sh and pipelines/rtgpu-srtp-sender.sh into
pipelines/srtp-receiver.sh on loopback, run as a user would: every frame
sent reaches the receiver whole (its marker packet too, or the depayloader
never closes the last frame), nothing is policed on the way, and Ctrl-C on a
sender (gst-launch-1.0 -e) always ends it."""

import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import unittest

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PIPELINES = os.path.join(root, "pipelines")
FRAMES = 150
# the receiver's fakesink, printed by gst-launch-1.0 -v for every frame
FRAME_LINE = re.compile(r"last-message = chain .*\(230400 bytes")


def free_udp_pair():
    """a port p with p + 1 free too (SRTP and SRTCP)"""
    for _ in range(50):
        a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        a.bind(("127.0.0.1", 0))
        port = a.getsockname()[1]
        b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            b.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
        finally:
            a.close()
            b.close()
    raise RuntimeError("no free pair of UDP ports")


def script_env(**extra):
    # the scripts load the build's environment themselves (./run env, which
    # honours GS_BUILD_DIR)
    env = {k: v for k, v in os.environ.items()
           if k not in ("GST_PLUGIN_PATH_1_0", "GST_PLUGIN_PATH")}
    env.update(extra)
    return env


class Receiver:
    """srtp-receiver.sh into a fakesink whose frames it counts."""

    def __init__(self, port):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            ["bash", os.path.join(PIPELINES, "srtp-receiver.sh"), str(port)],
            stdout=self.log, stderr=subprocess.STDOUT, text=True,
            env=script_env(VERBOSE="1", SINK="fakesink silent=false"))
        self.wait_for(r"Setting pipeline to PLAYING", 30)

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def frames(self):
        return len(FRAME_LINE.findall(self.text()))

    def wait_for(self, pattern, timeout_s):
        until = time.monotonic() + timeout_s
        while time.monotonic() < until:
            if re.search(pattern, self.text()):
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        return False

    def wait_frames(self, n, timeout_s):
        """until n frames came or none came for timeout_s"""
        last, since = -1, time.monotonic()
        while time.monotonic() - since < timeout_s:
            got = self.frames()
            if got >= n:
                return got
            if got != last:
                last, since = got, time.monotonic()
            time.sleep(0.1)
        return self.frames()

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        count = self.frames()
        self.log.close()
        return count


def start_sender(name, port, **extra):
    return subprocess.Popen(
        ["bash", os.path.join(PIPELINES, name), "127.0.0.1", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=script_env(**extra))


def finish(proc, timeout_s):
    """the sender's output and exit status; None when it did not end"""
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return out, proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return out, None


class SrtpPipelines(unittest.TestCase):
    def send_frames(self, name):
        port = free_udp_pair()
        rx = Receiver(port)
        try:
            t0 = time.monotonic()
            out, rc = finish(start_sender(name, port, NUM_BUFFERS=str(FRAMES)),
                             60)
            print("\n%s: sender exit %s in %.1f s" % (name, rc,
                                                     time.monotonic() - t0))
            self.assertEqual(rc, 0, out)
            # the receiver's jitter buffer holds the last frames a while
            rx.wait_frames(FRAMES, 5)
        finally:
            got = rx.stop()
        print("%s: receiver got %d of %d frames" % (name, got, FRAMES))
        self.assertNotIn("policed", out)
        self.assertEqual(got, FRAMES, "%d of %d frames arrived\n%s"
                         % (got, FRAMES, out))

    def test_plain_sender_every_frame(self):
        self.send_frames("srtp-sender.sh")

    def test_rtgpu_sender_every_frame(self):
        self.send_frames("rtgpu-srtp-sender.sh")

    def test_rtgpu_sender_ends_on_sigint(self):
        # Ctrl-C (gst-launch-1.0 -e) sends EOS through both streams; the
        # pipeline must end by itself, every time. rtpsession's log says, when
        # it does not, whether the RTCP stream's EOS ever left rtpbin
        for i in range(3):
            port = free_udp_pair()
            rx = Receiver(port)
            log = tempfile.NamedTemporaryFile(suffix=".log")
            try:
                tx = start_sender("rtgpu-srtp-sender.sh", port,
                                  GST_DEBUG="rtpsession:6",
                                  GST_DEBUG_NO_COLOR="1",
                                  GST_DEBUG_FILE=log.name)
                self.assertGreaterEqual(rx.wait_frames(20, 20), 20,
                                        "run %d: nothing arrived" % i)
                tx.send_signal(signal.SIGINT)
                t0 = time.monotonic()
                out, rc = finish(tx, 20)
                print("\nrun %d: sender ended %s in %.1f s after SIGINT"
                      % (i, rc, time.monotonic() - t0))
            finally:
                rx.stop()
                with open(log.name, errors="replace") as f:
                    rtp_log = f.read()
                log.close()
            if rc is None:
                # GStreamer 1.22's rtpsession sends the RTCP EOS with its BYE
                # only if its send_rtp_sink is EOS already: its RTCP thread,
                # woken by the EOS handler itself, can get there first
                bye = rtp_log.rfind("scheduling BYE")
                said = ("rtpbin sent its BYE without the RTCP stream's EOS "
                        "(rtpsession race)" if bye >= 0 and
                        "sending EOS" not in rtp_log[bye:] else
                        "the EOS left rtpbin on both streams")
            self.assertIsNotNone(rc, "run %d: no end within 20 s of SIGINT: "
                                 "%s\n%s" % (i, said if rc is None else "",
                                              out))
            self.assertEqual(rc, 0, out)
            self.assertIn("EOS", out)
            self.assertNotIn("policed", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
