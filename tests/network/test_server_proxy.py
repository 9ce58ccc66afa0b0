#!/usr/bin/env python3
"""gpustream-server --proxy: a second server instance (the edge) re-serves
what the first one (the origin) serves, as SRTP encrypted by gpusrtpenc.
Stock rtspsrc plays the edge and decodes the frames of the origin's files;
paths the origin refuses, and paths the edge never forwards, get clear
answers; bad --proxy command lines are refused."""

import os
import socket
import subprocess
import sys
import tempfile
import unittest

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_server_sessions import (rtsp_exchange, server_lines,  # noqa: E402
                                  start_server, stop)
from test_server_srtp import (decoded_file_frames, frame_digests,  # noqa: E402
                              srtp_caps_from_sdp)
from test_server_vod import make_media  # noqa: E402

SERVER = os.environ.get("GPUSTREAM_SERVER")


class ServerProxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-proxy-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        make_media(cls.media)
        cls.frames = {name: decoded_file_frames(os.path.join(cls.media, name))
                      for name in ("clip.ts", "clip.mp4")}
        cls.origin, cls.origin_url, _ = start_server(cls.media)
        cls.edge, cls.url, cls.port = start_server(
            None, "--proxy", cls.origin_url, stderr=subprocess.PIPE)

    @classmethod
    def tearDownClass(cls):
        stop(cls.edge)
        cls.edge.stderr.close()
        stop(cls.origin)
        cls.tmp.cleanup()

    def test_edge_plays_the_origins_frames_as_srtp(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            status, _, sdp = rtsp_exchange(c, "DESCRIBE", self.url + "clip.mp4",
                                           1, "Accept: application/sdp\r\n")
        self.assertEqual(status, "RTSP/1.0 200 OK")
        self.assertIn("m=video 0 RTP/SAVP 96\r\n", sdp)
        self.assertIn("a=rtpmap:96 H264/90000\r\n", sdp)
        ssrc = int(sdp.split("a=ssrc:", 1)[1].split()[0])
        caps = srtp_caps_from_sdp(sdp, ssrc)   # owns the structure below
        key = caps.get_structure(0).get_value("srtp-key")
        self.assertEqual(key.get_size(), 30)

        # an MPEG-TS file is demuxed at the edge: its H.264 goes out
        for name in ("clip.mp4", "clip.ts"):
            err, digests = frame_digests(
                "rtspsrc location=%s%s protocols=tcp ! rtph264depay ! "
                "h264parse ! avdec_h264 ! fakesink name=frames sync=false"
                % (self.url, name), 30)
            self.assertIsNone(err, name)
            self.assertEqual(digests, self.frames[name], name)
        wanted = ["srtp /%s stream 0: gpusrtpenc protected " % name
                  for name in ("clip.mp4", "clip.ts")]
        self.assertEqual(sorted(server_lines(self.edge.stdout, wanted, 10)),
                         sorted(wanted))

    def test_refusals(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            # not forwarded: the root, and paths that are not one spelling
            for cseq, path in enumerate(("", "a/../clip.ts", "%2e%2e/clip.ts",
                                         "./clip.ts"), 1):
                status, _, _ = rtsp_exchange(c, "DESCRIBE", self.url + path, cseq)
                self.assertEqual(status, "RTSP/1.0 404 Not Found", path)
            # forwarded, and refused by the origin: the edge cannot serve it
            status, _, _ = rtsp_exchange(c, "DESCRIBE", self.url + "missing.ts", 9)
            self.assertEqual(status, "RTSP/1.0 503 Service Unavailable")
            # the origin's answer, on stderr (after what earlier sessions
            # may have said there as they ended)
            said = "gpustream-server: source: Not found"
            self.assertIn(said, server_lines(self.edge.stderr, [said], 10))
            # and the edge still serves
            status, _, _ = rtsp_exchange(c, "DESCRIBE", self.url + "clip.ts", 10)
            self.assertEqual(status, "RTSP/1.0 200 OK")

    def test_bad_proxy_command_lines(self):
        for argv, says in (
                (["--proxy", self.origin_url, self.media], "give no directory too"),
                (["--proxy", "http://127.0.0.1/"], "--proxy takes the RTSP URL"),
                (["--proxy", "rtsp:nohost"], "--proxy takes the RTSP URL"),
                (["--proxy", "rtsp://127.0.0.1/x?y=1"], "--proxy takes the RTSP URL")):
            run = subprocess.run([SERVER, *argv], capture_output=True,
                                 text=True, timeout=10)
            self.assertEqual(run.returncode, 2, argv)
            self.assertIn(says, run.stderr, argv)
            self.assertEqual(run.stdout, "", argv)


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
