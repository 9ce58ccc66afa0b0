#!/usr/bin/env python3
"""gpustream-server's SRTP mount (/srtp/<file>) against clients we did not
write: the SDP is RTP/SAVP with the key in a=key-mgmt:mikey, as
gst-rtsp-server writes it for srtpenc; stock rtspsrc plays the mount and
decodes the file's own frames; the packets on the wire are SRTP, which
libsrtp (srtpdec) opens with the SDP's key back to the file's bytes, and the
server reports what protected them (MPEG-TS: the shared sender, one batch
for all sessions; MP4: each session's gpusrtpenc). --backend reaches the
encoders; clients that vanish have their sessions freed while another keeps
playing; bad requests get the status that says why."""

import hashlib
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import Gst, GstSdp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gst_client  # noqa: E402
from server_helpers import (read_lines, rtsp_exchange,  # noqa: E402
                            server_lines, start_server, stop)
from test_server_vod import FRAMES, make_media  # noqa: E402

SERVER = os.environ.get("GPUSTREAM_SERVER")
TS_PAYLOAD = 7 * 188     # rtpmp2tpay's payload: seven MPEG-TS packets
HMAC_SHA1_80_TAG = 10    # the auth tag of the default SRTP profile


def frame_digests(description, timeout_s):
    """Plays a pipeline whose last element is fakesink name=frames to EOS, in
    a process of its own (gst_client); returns (error or None, the MD5 of
    each buffer that reached it)"""
    return gst_client.play(description, timeout_s)


def decoded_file_frames(path):
    demux = "tsdemux" if path.endswith(".ts") else "qtdemux"
    err, digests = frame_digests(
        "filesrc location=%s ! %s ! h264parse ! avdec_h264 ! "
        "fakesink name=frames" % (path, demux), 30)
    assert err is None and len(digests) == FRAMES, (err, len(digests))
    return digests


def srtp_caps_from_sdp(sdp_text, ssrc):
    """The caps srtpdec takes for the first media of an SDP: its key,
    ciphers and auths from a=key-mgmt:mikey, and the SSRC"""
    res, sdp = GstSdp.SDPMessage.new_from_text(sdp_text)
    assert res == GstSdp.SDPResult.OK
    caps = Gst.Caps.from_string("application/x-srtp, ssrc=(uint)%d" % ssrc)
    assert sdp.get_media(0).attributes_to_caps(caps) == GstSdp.SDPResult.OK
    return caps


def srtp_unprotect(caps, packets):
    """srtpdec (libsrtp) on the packets, with the key of caps; returns the
    RTP packets it let through, in order"""
    pipeline = Gst.parse_launch(
        "appsrc name=src format=bytes ! srtpdec ! fakesink name=out")
    src = pipeline.get_by_name("src")
    src.set_property("caps", caps)
    out = []
    sink = pipeline.get_by_name("out")
    sink.set_property("signal-handoffs", True)
    sink.connect("handoff", lambda s, buf, pad: out.append(
        buf.extract_dup(0, buf.get_size())))
    pipeline.set_state(Gst.State.PLAYING)
    for packet in packets:
        src.emit("push-buffer", Gst.Buffer.new_wrapped(packet))
    src.emit("end-of-stream")
    msg = pipeline.get_bus().timed_pop_filtered(
        10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.EOS, msg
    return out


def is_mpegts(payload):
    """whole 188-byte packets, each starting with the sync byte"""
    return len(payload) > 0 and len(payload) % 188 == 0 and all(
        payload[i] == 0x47 for i in range(0, len(payload), 188))


class ServerSrtp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-srtp-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        make_media(cls.media)
        cls.frames = {name: decoded_file_frames(os.path.join(cls.media, name))
                      for name in ("clip.ts", "clip.mp4")}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sdp_is_savp_with_mikey(self):
        server, url, port = start_server(self.media)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                status, _, plain = rtsp_exchange(
                    c, "DESCRIBE", url + "clip.ts", 1, "Accept: application/sdp\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, _, srtp = rtsp_exchange(
                    c, "DESCRIBE", url + "srtp/clip.ts", 2,
                    "Accept: application/sdp\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
        finally:
            stop(server)
        # the same media as the plain mount's, in the SRTP profile
        self.assertIn("m=video 0 RTP/AVP 33\r\n", plain)
        self.assertIn("m=video 0 RTP/SAVP 33\r\n", srtp)
        self.assertNotIn("key-mgmt", plain)
        self.assertEqual(srtp.count("a=key-mgmt:mikey "), 1, srtp)
        self.assertEqual(srtp.count("a=rtpmap:33 MP2T/90000"), 1)
        self.assertNotIn("srtp-key", srtp)     # not in the format parameters
        ssrc = int(srtp.split("a=ssrc:", 1)[1].split()[0])
        caps = srtp_caps_from_sdp(srtp, ssrc)   # owns the structure s
        s = caps.get_structure(0)
        self.assertEqual(s.get_value("srtp-key").get_size(), 30)
        for field, value in (("srtp-cipher", "aes-128-icm"),
                             ("srtp-auth", "hmac-sha1-80"),
                             ("srtcp-cipher", "aes-128-icm"),
                             ("srtcp-auth", "hmac-sha1-80")):
            self.assertEqual(s.get_value(field), value)

    def test_rtspsrc_plays_the_files_frames(self):
        server, url, _ = start_server(self.media)
        try:
            for name, depay, protocols in (
                    ("clip.ts", "rtpmp2tdepay ! tsdemux", "tcp"),
                    ("clip.mp4", "rtph264depay", "tcp"),
                    ("clip.ts", "rtpmp2tdepay ! tsdemux", "udp")):
                err, digests = frame_digests(
                    "rtspsrc location=%ssrtp/%s protocols=%s "
                    "udp-buffer-size=4194304 ! %s ! h264parse ! avdec_h264 ! "
                    "fakesink name=frames sync=false"
                    % (url, name, protocols, depay), 30)
                self.assertIsNone(err, (name, protocols))
                if protocols == "tcp":
                    self.assertEqual(digests, self.frames[name],
                                     (name, protocols))
                else:
                    # loopback UDP under load may lose a packet, and the
                    # decoder conceals what it lost: nine frames in ten at
                    # least are the file's own
                    file_frames = set(self.frames[name])
                    self.assertGreaterEqual(
                        sum(d in file_frames for d in digests),
                        FRAMES * 9 // 10, (len(digests), FRAMES))
            # every session said what it protected: MPEG-TS through the
            # shared sender, MP4 through its pipeline's gpusrtpenc
            wanted = ["srtp /srtp/clip.ts stream 0: shared sender protected ",
                      "srtp /srtp/clip.mp4 stream 0: gpusrtpenc protected "]
            self.assertEqual(sorted(server_lines(server.stdout, wanted, 10)),
                             sorted(wanted))
        finally:
            stop(server)

    def test_cycle_batches_srtp_sessions(self):
        """--cycle puts every SRTP session on the device's scheduler, one
        batch per cycle for all of them: rtspsrc (srtpdec) gets every frame
        of the file, run after run (the RTCP BYE at the end used to overtake
        the last RTP packets still batched, and rtspsrc stopped early), and
        each session's encoder says it took part in scheduled batches"""
        runs = 5
        server, url, _ = start_server(self.media, "--cycle", "1000",
                                      "--backend", "cpu")
        try:
            for run in range(runs):
                for name, depay in (("clip.ts", "rtpmp2tdepay ! tsdemux"),
                                    ("clip.mp4", "rtph264depay")):
                    err, digests = frame_digests(
                        "rtspsrc location=%ssrtp/%s protocols=tcp ! %s ! "
                        "h264parse ! avdec_h264 ! fakesink name=frames "
                        "sync=false" % (url, name, depay), 30)
                    self.assertIsNone(err, (run, name))
                    self.assertEqual(len(digests), FRAMES, (run, name))
                    self.assertEqual(digests, self.frames[name], (run, name))
            ended = read_lines(server.stdout,
                               lambda lines: len(lines) >= 2 * runs, 15)
        finally:
            stop(server)
        # a client that gst_client plays once more (rtspsrc stuck in its
        # own teardown) is one session more
        self.assertGreaterEqual(len(ended), 2 * runs, ended)
        for line in ended:
            self.assertRegex(
                line, r"^srtp /srtp/clip\.(ts|mp4) stream 0: gpusrtpenc "
                r"protected \d+ packets, \d+ bytes \(backend cpu, "
                r"[1-9]\d* scheduled batches\)$")

    def test_wire_is_srtp(self):
        """A raw RTSP client takes the mount over UDP: every packet is SRTP
        (longer by the tag, payload not MPEG-TS), srtpdec opens each one with
        the key of the SDP, the payloads are the file byte for byte, and the
        server's shared sender counted at least the packets that arrived"""
        server, url, port = start_server(self.media, "--backend", "cpu")
        rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rtp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        rtp.bind(("127.0.0.1", 0))
        client_port = rtp.getsockname()[1]
        packets = []
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                u = url + "srtp/clip.ts"
                status, _, sdp = rtsp_exchange(c, "DESCRIBE", u, 1,
                                               "Accept: application/sdp\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                # the SRTP mount speaks only the SRTP profile
                status, _, _ = rtsp_exchange(
                    c, "SETUP", u + "/stream=0", 2,
                    "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n"
                    % (client_port, client_port + 1))
                self.assertEqual(status, "RTSP/1.0 461 Unsupported transport")
                status, headers, _ = rtsp_exchange(
                    c, "SETUP", u + "/stream=0", 3,
                    "Transport: RTP/SAVP;unicast;client_port=%d-%d\r\n"
                    % (client_port, client_port + 1))
                self.assertEqual(status, "RTSP/1.0 200 OK")
                self.assertTrue(headers["transport"].startswith("RTP/SAVP"))
                session = "Session: %s\r\n" % headers["session"].split(";")[0]
                status, _, _ = rtsp_exchange(c, "PLAY", u, 4, session)
                self.assertEqual(status, "RTSP/1.0 200 OK")
                # the file lasts 3 s; it has all arrived after 1 s of silence
                rtp.settimeout(1.0)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    try:
                        packets.append(rtp.recv(2048))
                    except socket.timeout:
                        if packets:
                            break
                status, _, _ = rtsp_exchange(c, "TEARDOWN", u, 5, session)
                self.assertEqual(status, "RTSP/1.0 200 OK")
            wanted = "srtp /srtp/clip.ts stream 0: shared sender protected "
            line = server_lines(server.stdout, [wanted], 10).get(wanted)
        finally:
            rtp.close()
            stop(server)

        with open(os.path.join(self.media, "clip.ts"), "rb") as f:
            want = f.read()
        self.assertGreaterEqual(len(packets), len(want) // TS_PAYLOAD)
        ssrc = struct.unpack("!I", packets[0][8:12])[0]
        for packet in packets:
            self.assertEqual(packet[0] >> 6, 2, "not RTP")
            self.assertEqual(packet[1] & 0x7f, 33)
            self.assertEqual(struct.unpack("!I", packet[8:12])[0], ssrc)
            # whole MPEG-TS packets, and the tag after them
            self.assertEqual((len(packet) - 12 - HMAC_SHA1_80_TAG) % 188, 0)

        opened = srtp_unprotect(srtp_caps_from_sdp(sdp, ssrc), packets)
        self.assertEqual(len(opened), len(packets), "srtpdec refused packets")
        for wire, rtp_packet in zip(packets, opened):
            payload = rtp_packet[12:]
            self.assertEqual(len(wire), len(rtp_packet) + HMAC_SHA1_80_TAG)
            self.assertTrue(is_mpegts(payload))
            # encrypted on the wire: not one MPEG-TS packet of it in clear
            self.assertFalse(any(wire[12 + i:12 + i + 188] == payload[i:i + 188]
                                 for i in range(0, len(payload), 188)))
        got = b"".join(p[12:] for p in opened)
        self.assertEqual(len(got), len(want))
        self.assertTrue(got == want, "decrypted payloads differ from the file")

        self.assertIsNotNone(line, "the server reported no SRTP session")
        counted = int(line.split("protected ", 1)[1].split()[0])
        self.assertGreaterEqual(counted, len(packets))
        self.assertTrue(line.endswith("(backend cpu)"), line)

    def test_backends(self):
        """--backend reaches every SRTP session: where gpusrtpenc can run
        with it, rtspsrc decodes the file's frames and the server names the
        backend that ran (the shared sender protects with the same batch
        path); where it cannot (gpu or hybrid without a CUDA device), the
        mount is left to the pipelines, whose gpusrtpenc refuses: 503 and
        the element's reason on stderr"""
        for backend in ("cpu", "gpu", "hybrid"):
            # in a pipeline: its bus keeps the element's reason
            probe = Gst.parse_launch("bin ( gpusrtpenc backend=%s )" % backend)
            runs = probe.set_state(Gst.State.READY) != Gst.StateChangeReturn.FAILURE
            msg = probe.get_bus().pop_filtered(Gst.MessageType.ERROR)
            probe.set_state(Gst.State.NULL)
            reason = None if runs else msg.parse_error()[0].message
            # on the simulated device (the -gpusim run) every backend runs
            if os.environ.get("GS_TEST_GPU"):
                self.assertTrue(runs, "%s: %s" % (backend, reason))

            server, url, port = start_server(self.media, "--backend", backend,
                                              stderr=subprocess.PIPE)
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                    status, _, _ = rtsp_exchange(c, "DESCRIBE",
                                                 url + "srtp/clip.ts", 1)
                if runs:
                    self.assertEqual(status, "RTSP/1.0 200 OK", backend)
                    err, digests = frame_digests(
                        "rtspsrc location=%ssrtp/clip.ts protocols=tcp ! "
                        "rtpmp2tdepay ! tsdemux ! h264parse ! avdec_h264 ! "
                        "fakesink name=frames sync=false" % url, 30)
                    self.assertIsNone(err, backend)
                    self.assertEqual(digests, self.frames["clip.ts"], backend)
                    wanted = "srtp /srtp/clip.ts stream 0: shared sender protected "
                    line = server_lines(server.stdout, [wanted], 10).get(wanted)
                    self.assertIsNotNone(line, backend)
                    # auto and hybrid resolve to what ran: the GPU, where
                    # there is one and the backend allows it
                    self.assertRegex(line, r"\(backend (cpu|gpu)\)$")
                    if os.environ.get("GS_TEST_GPU") and backend != "cpu":
                        self.assertTrue(line.endswith("(backend gpu)"), line)
                else:
                    self.assertEqual(status, "RTSP/1.0 503 Service Unavailable",
                                     backend)
                    said = "gpustream-server: gpusrtpenc_0: " + reason
                    self.assertIn(said, server_lines(server.stderr, [said], 10),
                                  backend)
            finally:
                stop(server)
                server.stderr.close()

    def test_vanishing_clients_leave_the_others_playing(self):
        """Clients that vanish while playing (no TEARDOWN) have their
        sessions freed (each encoder reports as its media ends), and a client
        playing meanwhile gets every frame of the file"""
        vanishing = 10
        server, url, port = start_server(self.media)
        steady = Gst.parse_launch(
            "rtspsrc location=%ssrtp/clip.ts protocols=tcp ! rtpmp2tdepay ! "
            "tsdemux ! h264parse ! avdec_h264 ! fakesink name=frames "
            "signal-handoffs=true sync=false" % url)
        digests = []
        steady.get_by_name("frames").connect("handoff", lambda s, buf, pad:
                                             digests.append(hashlib.md5(
                                                 buf.extract_dup(0, buf.get_size())
                                             ).hexdigest()))
        try:
            steady.set_state(Gst.State.PLAYING)
            u = url + "srtp/clip.ts"
            for _ in range(vanishing):
                c = socket.create_connection(("127.0.0.1", port), timeout=10)
                status, headers, _ = rtsp_exchange(
                    c, "SETUP", u + "/stream=0", 1,
                    "Transport: RTP/SAVP/TCP;unicast;interleaved=0-1\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, _, _ = rtsp_exchange(
                    c, "PLAY", u, 2,
                    "Session: %s\r\n" % headers["session"].split(";")[0])
                self.assertEqual(status, "RTSP/1.0 200 OK")
                self.assertTrue(c.recv(4096).startswith(b"$"), "no RTP")
                c.close()
            msg = steady.get_bus().timed_pop_filtered(
                30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            self.assertIsNotNone(msg)
            self.assertEqual(msg.type, Gst.MessageType.EOS)
            steady.set_state(Gst.State.NULL)
            self.assertEqual(digests, self.frames["clip.ts"])
            ended = read_lines(
                server.stdout, lambda lines: len(lines) >= vanishing + 1, 15)
            self.assertEqual(len(ended), vanishing + 1, ended)
            for line in ended:
                self.assertTrue(line.startswith(
                    "srtp /srtp/clip.ts stream 0: shared sender protected "), line)
        finally:
            steady.set_state(Gst.State.NULL)
            stop(server)

    def test_bad_requests(self):
        """Requests that cannot be served get the RTSP status that says why,
        and the server goes on serving"""
        server, url, port = start_server(self.media)
        u = url + "srtp/clip.ts"
        try:
            for request, want in (
                    ("PLAY %s RTSP/1.0\r\nCSeq: 1\r\n" % u,
                     "454 Session Not Found"),
                    ("PLAY %s RTSP/1.0\r\nCSeq: 1\r\nSession: 12345\r\n" % u,
                     "454 Session Not Found"),
                    ("SETUP %s/stream=0 RTSP/1.0\r\nCSeq: 1\r\n" % u,
                     "461 Unsupported transport"),
                    ("SETUP %s/stream=0 RTSP/1.0\r\nCSeq: 1\r\n"
                     "Transport: garbage\r\n" % u, "461 Unsupported transport"),
                    ("SETUP %s/stream=7 RTSP/1.0\r\nCSeq: 1\r\nTransport: "
                     "RTP/SAVP;unicast;client_port=9000-9001\r\n" % u,
                     "404 Not Found"),
                    ("FOO %s RTSP/1.0\r\nCSeq: 1\r\n" % u, "400 Bad Request"),
                    ("DESCRIBE %s RTSP/1.0\r\n" % u, "400 Bad Request"),
                    ("DESCRIBE http://127.0.0.1:%d/srtp/clip.ts RTSP/1.0\r\n"
                     "CSeq: 1\r\n" % port, "400 Bad Request")):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                    c.sendall((request + "\r\n").encode())
                    reply = c.recv(4096).decode()
                    self.assertTrue(reply.startswith("RTSP/1.0 " + want),
                                    "%r: %r" % (request, reply[:80]))
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                status, _, _ = rtsp_exchange(c, "DESCRIBE", u, 1)
                self.assertEqual(status, "RTSP/1.0 200 OK")
        finally:
            stop(server)

    def test_srtp_paths_not_served_get_404(self):
        server, url, port = start_server(self.media)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                for cseq, path in enumerate(("srtp/missing.ts", "srtp/../clip.ts",
                                             "srtp/%2e%2e/clip.ts", "srtp/",
                                             "srtp/nc/clip.ts"), 1):
                    status, _, _ = rtsp_exchange(c, "DESCRIBE", url + path, cseq)
                    self.assertEqual(status, "RTSP/1.0 404 Not Found", path)
                status, _, _ = rtsp_exchange(c, "DESCRIBE", url + "srtp/clip.mp4", 9)
                self.assertEqual(status, "RTSP/1.0 200 OK")
        finally:
            stop(server)


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
