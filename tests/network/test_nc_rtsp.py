#!/usr/bin/env python3
"""rtspsrc (a peer we did not write) against gst-rtsp-server serving a
network-coded stream: the SDP carries X-RLNC and its parameters, rtspsrc
negotiates it, and ncdecoder gets the original bytes back."""

import os
import random
import tempfile
import time
import unittest

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


class NcOverRtsp(unittest.TestCase):
    def test_rtspsrc_receives_and_decodes(self):
        Gst.init(None)
        tmp = tempfile.TemporaryDirectory(prefix="nc-rtsp-")
        src = os.path.join(tmp.name, "in.bin")
        out = os.path.join(tmp.name, "out.bin")
        data = random.Random(7).randbytes(500_000)
        with open(src, "wb") as f:
            f.write(data)

        server = GstRtspServer.RTSPServer()
        server.set_address("127.0.0.1")
        server.set_service("0")          # any free port, read back below
        factory = GstRtspServer.RTSPMediaFactory()
        # paced so that the client's jitterbuffer and sockets keep up
        factory.set_launch(
            "( filesrc location=%s blocksize=16384 ! "
            "ncencoder generation-size=16 block-size=1000 redundancy=4 ! "
            "rtpncpay name=pay0 pt=97 )" % src)
        factory.set_shared(False)
        server.get_mount_points().add_factory("/nc", factory)
        ctx = GLib.MainContext.default()
        server_id = server.attach(None)
        port = server.get_bound_port()
        self.assertGreater(port, 0)

        client = Gst.parse_launch(
            "rtspsrc location=rtsp://127.0.0.1:%d/nc protocols=tcp latency=200 ! "
            "rtpncdepay name=depay ! ncdecoder name=dec ! filesink location=%s" % (port, out))
        client.set_state(Gst.State.PLAYING)
        bus = client.get_bus()
        deadline = time.monotonic() + 60
        sdp_caps_ok = False
        error = None
        while time.monotonic() < deadline:
            while ctx.pending():
                ctx.iteration(False)
            msg = bus.timed_pop_filtered(50 * Gst.MSECOND,
                                         Gst.MessageType.EOS | Gst.MessageType.ERROR)
            if msg is not None:
                if msg.type == Gst.MessageType.ERROR:
                    error = msg.parse_error()[0].message
                break
            if os.path.exists(out) and os.path.getsize(out) >= len(data):
                break
        depay = client.get_by_name("depay")
        caps = depay.get_static_pad("sink").get_current_caps()
        if caps is not None:
            s = caps.get_structure(0)
            sdp_caps_ok = s.get_string("encoding-name") == "X-RLNC"
        client.set_state(Gst.State.NULL)
        GLib.Source.remove(server_id)
        self.assertIsNone(error)
        self.assertTrue(sdp_caps_ok, "rtspsrc did not negotiate X-RLNC from the SDP")
        with open(out, "rb") as f:
            got = f.read()
        self.assertEqual(len(got), len(data))
        self.assertEqual(got, data)
        tmp.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
