#!/usr/bin/env python3
"""gpustream-server's shared sender (sessions of MPEG-TS files): the RTP
packets are the file's bytes in order at the file's pace, with the sequence
number and RTP time the PLAY answer announced, RTCP sender reports and a BYE
at the end; seeking, pausing and resuming; hundreds of sessions without a
thread or a socket each; network-coded sessions whose packets are what the
wire format says (checked here against its equations, after a seek); a
connection that then asks for another mount is handed to gst-rtsp-server;
--ts-sessions pipeline serves them as before."""

import os
import select
import socket
import struct
import sys
import tempfile
import time
import unittest
import zlib

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gst_client  # noqa: E402
from server_helpers import (make_mp4_clip, make_ts_clip, rtsp_exchange,  # noqa: E402
                            rtsp_request, start_server, stop)

FRAMES = 60     # 2 s at 30 frames/s
CHUNK = 7 * 188


def resources(pid):
    proc = "/proc/%d" % pid
    return len(os.listdir(proc + "/fd")), len(os.listdir(proc + "/task"))


def udp_pair():
    """Two UDP sockets on consecutive loopback ports (RTP, RTCP)"""
    for _ in range(50):
        rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rtp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        rtp.bind(("127.0.0.1", 0))
        port = rtp.getsockname()[1]
        rtcp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            rtcp.bind(("127.0.0.1", port + 1))
            return rtp, rtcp
        except OSError:
            rtp.close()
            rtcp.close()
    raise RuntimeError("no pair of free UDP ports")


def session_id(headers):
    return headers["session"].split(";")[0]


def rtp_info(headers):
    fields = dict(part.split("=", 1) for part in headers["rtp-info"].split(";")
                  if "=" in part)
    return int(fields["seq"]), int(fields["rtptime"])


def parse_rtp(packet):
    first, pt, seq, ts, ssrc = struct.unpack("!BBHII", packet[:12])
    return first >> 6, pt & 0x7F, seq, ts, ssrc, packet[12:]


# ---- the network-coded stream (docs/elements/nc-wire-format.md) ----------

def gf_tables():
    """GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1: each constant's product
    with every byte, as a bytes.translate table"""
    exp, log = [0] * 512, [0] * 256
    x = 1
    for i in range(255):
        exp[i] = exp[i + 255] = x
        log[x] = i
        x <<= 1
        if x & 0x100:
            x ^= 0x11D
    return [bytes(0 if c == 0 or b == 0 else exp[log[c] + log[b]]
                  for b in range(256)) for c in range(256)]


MUL = gf_tables()
M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def seed_coefficients(seed, m):
    out = []
    for i in range(m):
        z = mix64((((seed << 32) | (i >> 3)) + 0x9E3779B97F4A7C15) & M64)
        b = (z >> (8 * (i & 7))) & 0xFF
        out.append(1 + ((b * 255) >> 8))
    return out


def nc_packet(data):
    """(flags, m, generation, k, data_length, seed, payload) of a valid
    coded packet; asserts its length and CRC"""
    version, flags, m, gen, k, length, seed, crc = struct.unpack(
        "!BBHIIIII", data[:24])
    assert version == 1, version
    assert len(data) == 24 + k, (len(data), k)
    assert zlib.crc32(data[:20] + b"\0\0\0\0" + data[24:]) == crc
    return flags, m, gen, k, length, seed, data[24:]


def deframe(generations):
    """The BUFFER records' (pts, payload) of framed generations' data, from
    the first generation's first record, and the CAPS records met"""
    stream = b""
    for i, data in enumerate(generations):
        first, _, _ = struct.unpack("!IIQ", data[:16])
        stream += data[first:] if i == 0 else data[16:]
    buffers, caps = [], []
    while stream:
        kind, _, _, length, pts, _, _ = struct.unpack("!BBHIQQQ", stream[:32])
        payload, stream = stream[32:32 + length], stream[32 + length:]
        assert len(payload) == length, "a record cut short"
        if kind == 2:
            caps.append(payload.decode())
        else:
            assert kind == 1, kind
            buffers.append((pts, payload))
    return buffers, caps


def rtcp_types(packet):
    """(packet type, SSRC) of each packet of a compound RTCP packet"""
    out = []
    while len(packet) >= 8:
        length = (struct.unpack("!H", packet[2:4])[0] + 1) * 4
        out.append((packet[1], struct.unpack("!I", packet[4:8])[0]))
        packet = packet[length:]
    return out


class ServerShared(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-shared-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        cls.clip = os.path.join(cls.media, "clip.ts")
        make_ts_clip(cls.clip, FRAMES)
        make_mp4_clip(os.path.join(cls.media, "clip.mp4"), 10)
        with open(cls.clip, "rb") as f:
            cls.data = f.read()
        cls.server, cls.url, cls.port = start_server(cls.media)

    @classmethod
    def tearDownClass(cls):
        stop(cls.server)
        cls.tmp.cleanup()

    def setup_play(self, conn, rtp, extra_play=""):
        """SETUP over UDP to rtp's ports and PLAY; returns (session header,
        SETUP headers, PLAY headers)"""
        u = self.url + "clip.ts"
        port = rtp.getsockname()[1]
        status, setup = rtsp_request(
            conn, "SETUP", u + "/stream=0", 1,
            "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n" % (port, port + 1))
        self.assertEqual(status, "RTSP/1.0 200 OK")
        session = "Session: %s\r\n" % session_id(setup)
        status, play = rtsp_request(conn, "PLAY", u, 2, session + extra_play)
        self.assertEqual(status, "RTSP/1.0 200 OK")
        return session, setup, play

    def test_packets_are_the_files_bytes_at_its_pace(self):
        rtp, rtcp = udp_pair()
        with rtp, rtcp, socket.create_connection(("127.0.0.1", self.port),
                                                 timeout=10) as c:
            status, headers, sdp = rtsp_exchange(c, "DESCRIBE", self.url + "clip.ts", 0,
                                                 "Accept: application/sdp\r\n")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIn("m=video 0 RTP/AVP 33\r\n", sdp)
            self.assertIn("a=rtpmap:33 MP2T/90000\r\n", sdp)
            session, setup, play = self.setup_play(c, rtp)
            ssrc = int(setup["transport"].split("ssrc=")[1].split(";")[0], 16)
            self.assertIn("server_port=", setup["transport"])
            seq0, ts0 = rtp_info(play)
            self.assertTrue(play["range"].startswith("npt=0"), play["range"])
            packets, reports, start = [], [], time.monotonic()
            bye = False
            while not bye and time.monotonic() - start < 15:
                ready, _, _ = select.select([rtp, rtcp], [], [], 1)
                if rtp in ready:
                    packets.append((time.monotonic(), rtp.recv(2048)))
                if rtcp in ready:
                    types = rtcp_types(rtcp.recv(2048))
                    reports += types
                    bye = any(t == 203 for t, _ in types)
            # the packets still queued behind the BYE
            rtp.setblocking(False)
            try:
                while True:
                    packets.append((time.monotonic(), rtp.recv(2048)))
            except BlockingIOError:
                pass
            status, _ = rtsp_request(c, "TEARDOWN", self.url + "clip.ts", 3, session)
            self.assertEqual(status, "RTSP/1.0 200 OK")
        self.assertTrue(bye, "no RTCP BYE at the end of the file")
        self.assertIn((200, ssrc), reports, "no sender report")
        payload = b""
        for i, (_, packet) in enumerate(packets):
            version, pt, seq, ts, pssrc, body = parse_rtp(packet)
            self.assertEqual((version, pt, pssrc), (2, 33, ssrc))
            self.assertEqual(seq, (seq0 + i) & 0xFFFF, "sequence gap at %d" % i)
            if i == 0:
                self.assertEqual(ts, ts0)
            payload += body
        self.assertEqual(len(payload), len(self.data))
        self.assertTrue(payload == self.data, "the payloads are not the file")
        # paced at the file's clock, not sent at once: 2 s of media over
        # more than one second
        self.assertGreater(packets[-1][0] - packets[0][0], 1.0)

    def where(self, body):
        """Where an RTP payload is in the file; the first after a seek has
        its discontinuity_indicator set"""
        offset = self.data.find(body)
        if offset < 0 and body[3] & 0x20 and body[4] > 0:
            offset = self.data.find(body[:5] + bytes([body[5] & 0x7F]) +
                                    body[6:])
        return offset

    def test_seek_pause_resume(self):
        rtp, rtcp = udp_pair()
        u = self.url + "clip.ts"
        with rtp, rtcp, socket.create_connection(("127.0.0.1", self.port),
                                                 timeout=10) as c:
            session, _, play = self.setup_play(c, rtp, "Range: npt=1-\r\n")
            self.assertTrue(play["range"].startswith("npt=1"), play["range"])
            seq0, _ = rtp_info(play)
            rtp.settimeout(5)
            _, _, seq, _, _, body = parse_rtp(rtp.recv(2048))
            self.assertEqual(seq, seq0)
            # from the keyframe at 1 s: its first transport packet (a PES
            # start and random access point), marked a discontinuity
            self.assertTrue(body[1] & 0x40 and body[3] & 0x20 and
                            body[5] & 0xC0 == 0xC0, body[:6])
            offset = self.where(body)
            self.assertGreater(offset, 0)
            self.assertEqual(offset % 188, 0)
            status, _ = rtsp_request(c, "PAUSE", u, 3, session)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            # what was sent before the pause; then nothing
            last_seq, last_body = seq, body
            rtp.settimeout(0.3)
            try:
                while True:
                    _, _, last_seq, _, _, last_body = parse_rtp(rtp.recv(2048))
            except socket.timeout:
                pass
            rtp.settimeout(0.5)
            with self.assertRaises(socket.timeout):
                rtp.recv(2048)
            status, play = rtsp_request(c, "PLAY", u, 4, session)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            seq1, _ = rtp_info(play)
            rtp.settimeout(5)
            _, _, seq, _, _, body = parse_rtp(rtp.recv(2048))
            # it goes on where it stopped
            self.assertEqual(seq, (last_seq + 1) & 0xFFFF)
            self.assertEqual(seq1, seq)
            self.assertEqual(self.where(body),
                             self.where(last_body) + len(last_body))
            status, _ = rtsp_request(c, "PLAY", u, 5, session + "Range: npt=500-\r\n")
            self.assertEqual(status, "RTSP/1.0 457 Invalid Range")
            status, _ = rtsp_request(c, "TEARDOWN", u, 6, session)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            status, _ = rtsp_request(c, "PLAY", u, 7, session)
            self.assertEqual(status, "RTSP/1.0 454 Session Not Found")

    def test_sessions_cost_no_thread_and_no_socket(self):
        """300 playing sessions: one descriptor each (the connection), no
        thread each; closed, they leave nothing behind"""
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        port = sink.getsockname()[1]
        u = self.url + "clip.ts"
        conns = []
        before = resources(self.server.pid)
        try:
            for i in range(300):
                c = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                conns.append(c)
                status, setup = rtsp_request(
                    c, "SETUP", u + "/stream=0", 1,
                    "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n" % (port, port + 1))
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, _ = rtsp_request(c, "PLAY", u, 2,
                                         "Session: %s\r\n" % session_id(setup))
                self.assertEqual(status, "RTSP/1.0 200 OK")
            fds, threads = resources(self.server.pid)
            self.assertLessEqual(fds, before[0] + 300 + 4)
            self.assertEqual(threads, before[1])
            # all of them are being sent
            sink.settimeout(5)
            self.assertTrue(sink.recv(2048))
        finally:
            for c in conns:
                c.close()
            sink.close()
        deadline = time.monotonic() + 10
        while (resources(self.server.pid)[0] > before[0]
               and time.monotonic() < deadline):
            time.sleep(0.2)
        self.assertLessEqual(resources(self.server.pid)[0], before[0])

    def test_network_coded_session_after_a_seek(self):
        """A network-coded session over TCP, played from 1 s: its packets
        are valid coded packets (length, CRC), the source blocks of each
        generation give its data, every coded packet is the combination of
        them its seed says, the generations' records are the file's bytes
        from a chunk at or before 1 s to the end, typed by CAPS records,
        and the RTP packets start at the sequence number and time the PLAY
        answer gave"""
        u = self.url + "nc/clip.ts"
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            status, _, sdp = rtsp_exchange(c, "DESCRIBE", u, 1)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIn("a=rtpmap:96 X-RLNC/90000", sdp)
            self.assertIn("sprop-generation-size=32;sprop-block-size=1316", sdp)
            status, setup = rtsp_request(
                c, "SETUP", u + "/stream=0", 2,
                "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            status, play, _ = rtsp_exchange(c, "PLAY", u, 3, "Session: %s\r\n"
                                            "Range: npt=1-\r\n" % session_id(setup))
            self.assertEqual(status, "RTSP/1.0 200 OK")
            seq0, rtptime = rtp_info(play)
            start_s = float(play["range"].split("=")[1].split("-")[0])
            self.assertLessEqual(start_s, 1.0)
            # interleaved frames, RTP on channel 0, to the RTCP BYE on 1
            packets, buf, bye = [], b"", False
            c.settimeout(10)
            while not bye:
                while len(buf) < 4 or len(buf) < 4 + struct.unpack("!H", buf[2:4])[0]:
                    more = c.recv(65536)
                    self.assertTrue(more, "the connection closed before the BYE")
                    buf += more
                self.assertEqual(buf[0:1], b"$")
                channel, size = buf[1], struct.unpack("!H", buf[2:4])[0]
                frame, buf = buf[4:4 + size], buf[4 + size:]
                if channel == 0:
                    packets.append(frame)
                else:
                    self.assertEqual(channel, 1)
                    bye = any(t == 203 for t, _ in rtcp_types(frame))

        # RTP: payload type 96, from the announced sequence number and time
        gens = {}
        for i, packet in enumerate(packets):
            version, pt, seq, ts, _, payload = parse_rtp(packet)
            self.assertEqual((version, pt, seq), (2, 96, (seq0 + i) & 0xFFFF))
            if i == 0:
                self.assertEqual(ts, rtptime)
            gens.setdefault(nc_packet(payload)[2], []).append(nc_packet(payload))
        ids = sorted(gens)
        self.assertEqual(ids, list(range(ids[0], ids[0] + len(ids))))
        self.assertGreaterEqual(len(ids), 2)

        data = []
        for gid in ids:
            source = {}
            coded = []
            for flags, m, _, k, length, seed, payload in gens[gid]:
                self.assertEqual(k, 1316)
                self.assertEqual(m, (length + k - 1) // k)
                if flags == 0x02 | 0x08:        # SOURCE, FRAMED
                    source[seed] = payload
                else:
                    self.assertEqual(flags, 0x01 | 0x08)    # SEED, FRAMED
                    coded.append((seed, payload))
            # systematic: every block once, then the redundancy (30 % of
            # 32 blocks, in proportion for a short last generation)
            self.assertEqual(sorted(source), list(range(m)))
            self.assertEqual(len(coded), -(-10 * m // 32))
            for seed, payload in coded:
                acc = 0
                for j, c in enumerate(seed_coefficients(seed, m)):
                    acc ^= int.from_bytes(source[j].translate(MUL[c]), "big")
                self.assertEqual(acc.to_bytes(k, "big"), payload,
                                 "coded packet of generation %d" % gid)
            data.append(b"".join(source[j] for j in range(m))[:length])

        buffers, caps = deframe(data)
        self.assertEqual(caps[0], "video/mpegts, systemstream=(boolean)true, "
                         "packetsize=(int)188")
        self.assertEqual(len(caps), len(data))
        out = b"".join(payload for _, payload in buffers)
        offset = len(self.data) - len(out)
        self.assertGreater(offset, 0, "played from the start, not from 1 s")
        self.assertEqual(offset % CHUNK, 0)
        self.assertTrue(self.data[offset:] == out, "records differ from the file")
        # the first record is at or before 1 s, and times go on
        self.assertLessEqual(buffers[0][0], 1e9)
        times = [pts for pts, _ in buffers]
        self.assertEqual(times, sorted(times))

    def test_other_mounts_on_the_same_connection(self):
        """A connection that started on a plain MPEG-TS file goes on with
        its network-coded mount (the shared sender's too), a file that is
        not MPEG-TS (handed to gst-rtsp-server, with the request) and an
        unknown path"""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            status, _, sdp = rtsp_exchange(c, "DESCRIBE", self.url + "clip.ts", 1)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIn("MP2T/90000", sdp)
            status, headers, sdp = rtsp_exchange(c, "DESCRIBE", self.url + "nc/clip.ts", 2,
                                                 "Accept: application/sdp\r\n")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertEqual(headers["cseq"], "2")
            self.assertIn("X-RLNC", sdp)
            self.assertEqual(headers["server"], "gpustream-server")
            status, headers, sdp = rtsp_exchange(c, "DESCRIBE", self.url + "clip.mp4", 3,
                                                 "Accept: application/sdp\r\n")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertEqual(headers["cseq"], "3")
            self.assertIn("H264/90000", sdp)
            status, _ = rtsp_request(c, "DESCRIBE", self.url + "missing.ts", 4)
            self.assertEqual(status, "RTSP/1.0 404 Not Found")

    def test_bad_requests(self):
        u = self.url + "clip.ts"
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            status, _ = rtsp_request(c, "OPTIONS", u, 1)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            status, _ = rtsp_request(c, "SETUP", u + "/stream=0", 2,
                                     "Transport: RTP/AVP;multicast\r\n")
            self.assertEqual(status, "RTSP/1.0 461 Unsupported transport")
            status, _ = rtsp_request(c, "SETUP", u + "/stream=0", 3)
            self.assertEqual(status, "RTSP/1.0 461 Unsupported transport")
            status, _ = rtsp_request(c, "PLAY", u, 4, "Session: nothing\r\n")
            self.assertEqual(status, "RTSP/1.0 454 Session Not Found")
            status, _ = rtsp_request(c, "PLAY", u, 5)
            self.assertEqual(status, "RTSP/1.0 454 Session Not Found")
            status, _ = rtsp_request(c, "GET_PARAMETER", u, 6)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            c.sendall(b"DESCRIBE " + u.encode() + b" RTSP/1.0\r\nCSeq 7\r\n\r\n")
            self.assertTrue(c.recv(4096).startswith(b"RTSP/1.0 400 Bad Request"))
        # the server still serves
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as c:
            status, _ = rtsp_request(c, "DESCRIBE", u, 1)
            self.assertEqual(status, "RTSP/1.0 200 OK")

    def test_rtspsrc_over_udp_and_tcp_and_the_pipeline_mode(self):
        """rtspsrc decodes every frame from the shared sender over TCP, nine
        in ten over UDP; and with --ts-sessions pipeline, every frame
        with threads of its own"""
        for protocols in ("tcp", "udp"):
            err, frames = gst_client.play(
                "rtspsrc location=%sclip.ts protocols=%s udp-buffer-size=4194304 "
                "! rtpmp2tdepay ! tsdemux ! h264parse ! avdec_h264 ! "
                "fakesink name=count sync=false" % (self.url, protocols), 30, "count")
            self.assertIsNone(err, protocols)
            if protocols == "tcp":
                self.assertEqual(len(frames), FRAMES)
            else:
                self.assertGreaterEqual(len(frames), FRAMES * 9 // 10)
        server, url, _ = start_server(self.media, "--ts-sessions", "pipeline")
        try:
            err, frames = gst_client.play(
                "rtspsrc location=%sclip.ts protocols=tcp ! rtpmp2tdepay ! "
                "tsdemux ! h264parse ! avdec_h264 ! fakesink name=count "
                "sync=false" % url, 30, "count")
            self.assertIsNone(err)
            self.assertEqual(len(frames), FRAMES)
        finally:
            stop(server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
