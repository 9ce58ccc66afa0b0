#!/usr/bin/env python3
"""pipelines/srtp-sender.sh and pipelines/rtgpu-srtp-sender.sh into
pipelines/srtp-receiver.sh on loopback, run as a user would: every frame
sent reaches the receiver whole (its marker packet too, or the depayloader
never closes the last frame), nothing is policed on the way, and Ctrl-C on a
sender (gst-launch-1.0 -e) ends it. A sender that does not end is a failure,
unless rtpsession's log shows GStreamer 1.22's own race at EOS (which hangs
rtpbin into udpsink without any element of ours): that is said in the test's
output, and the frames are still counted."""

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


def start_sender(name, port, log, **extra):
    """the sender script, rtpsession's debug log in the file log"""
    return subprocess.Popen(
        ["bash", os.path.join(PIPELINES, name), "127.0.0.1", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=script_env(GST_DEBUG="rtpsession:6", GST_DEBUG_NO_COLOR="1",
                       GST_DEBUG_FILE=log, **extra))


def rtpsession_bye_race(log):
    """True when rtpsession's log shows GStreamer 1.22's race at EOS: it
    sends the RTCP stream's EOS with its BYE only if its send_rtp_sink is EOS
    already, and its RTCP thread, woken by that pad's EOS handler, can send
    the BYE before the pad is marked: the BYE goes out, the EOS never, and
    gst-launch-1.0 waits for it (rtpbin into udpsink hangs so without any
    element of ours, about 1 run in 10)"""
    with open(log, errors="replace") as f:
        text = f.read()
    bye = text.rfind("scheduling BYE")
    return bye >= 0 and "sending EOS" not in text[bye:]


def finish(proc, timeout_s, race_log=None):
    """the sender's output and exit status; None when it did not end. With
    race_log, a sender that did not end by rtpsession's race is given the
    Ctrl-C a user would give it, and must then stop: (output, None, its exit
    status then). gst-launch-1.0 -e stops on the Ctrl-C that comes while it
    waits for EOS: after a SIGINT already sent that is the next one; after an
    end of its own (NUM_BUFFERS), the first only sends the pipeline an EOS
    (which the ended sources drop) and the second stops it"""
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return out, proc.returncode, None
    except subprocess.TimeoutExpired:
        pass
    after = None
    if race_log and rtpsession_bye_race(race_log):
        for _ in range(2):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
                after = proc.returncode
                break
            except subprocess.TimeoutExpired:
                pass
    if proc.poll() is None:
        proc.kill()
    out, _ = proc.communicate()
    return out, None, after


class SrtpPipelines(unittest.TestCase):
    def send_frames(self, name):
        port = free_udp_pair()
        rx = Receiver(port)
        log = tempfile.NamedTemporaryFile(suffix=".log")
        try:
            t0 = time.monotonic()
            out, rc, after = finish(start_sender(name, port, log.name,
                                                 NUM_BUFFERS=str(FRAMES)),
                                    60, log.name)
            print("\n%s: sender exit %s in %.1f s" % (name, rc,
                                                     time.monotonic() - t0))
            if after is not None:
                # not ours to fix: said, and the frames still counted
                print("%s: did not end: rtpbin sent its BYE without the RTCP "
                      "stream's EOS (GStreamer's rtpsession race); stopped by "
                      "Ctrl-C, exit %d" % (name, after))
            else:
                self.assertEqual(rc, 0, out)
            # the receiver's jitter buffer holds the last frames a while
            rx.wait_frames(FRAMES, 5)
        finally:
            got = rx.stop()
            log.close()
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
                tx = start_sender("rtgpu-srtp-sender.sh", port, log.name)
                self.assertGreaterEqual(rx.wait_frames(20, 20), 20,
                                        "run %d: nothing arrived" % i)
                tx.send_signal(signal.SIGINT)
                t0 = time.monotonic()
                out, rc, after = finish(tx, 20, log.name)
                print("\nrun %d: sender ended %s in %.1f s after SIGINT"
                      % (i, rc, time.monotonic() - t0))
            finally:
                rx.stop()
                log.close()
            if after is not None:
                # every element of ours ended; rtpbin's RTCP stream did not,
                # and a second Ctrl-C stops gst-launch-1.0
                print("run %d: did not end: rtpbin sent its BYE without the "
                      "RTCP stream's EOS (GStreamer's rtpsession race); a "
                      "second Ctrl-C stopped it, exit %d" % (i, after))
                continue
            self.assertIsNotNone(rc, "run %d: no end within 20 s of SIGINT, "
                                 "and the EOS left rtpbin on both streams\n%s"
                                 % (i, out))
            self.assertEqual(rc, 0, out)
            self.assertIn("EOS", out)
            self.assertNotIn("policed", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
