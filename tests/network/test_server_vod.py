#!/usr/bin/env python3
"""gpustream-server against clients we did not write: it serves a directory
(an MPEG-TS and an MP4 made here) on a free loopback port; ffprobe reads the
streams and counts every frame, ffmpeg decodes the file's own frames, rtspsrc
plays the plain mounts to EOS with every frame decoded, the
network-coded mount gives the file back byte for byte over TCP and decodable
video over UDP, and paths outside the directory or missing get 404. And
seeks of the shared sender's MPEG-TS sessions (ServerSeek): ffmpeg -ss over
TCP, a PLAY from npt 10, a time past the end."""

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gst_client  # noqa: E402
from server_helpers import (make_ts_clip, rtsp_exchange,  # noqa: E402
                            start_server, stop)

SERVER = os.environ.get("GPUSTREAM_SERVER")
FRAMES = 90   # 3 s at 30 frames/s
ODD_NAME = 'film "\u00e9t\u00e9" \\ 2.ts'   # quotes, UTF-8, a backslash


def make_media(directory):
    """clip.ts and clip.mp4: the same 3 s of H.264, a keyframe every second"""
    video = ("videotestsrc num-buffers=%d pattern=ball ! "
             "video/x-raw,width=320,height=240,framerate=30/1 ! "
             "x264enc speed-preset=ultrafast key-int-max=30 ! " % FRAMES)
    for name, mux in (("clip.ts", "mpegtsmux"), ("clip.mp4", "mp4mux")):
        run_to_eos(video + "%s ! filesink location=%s"
                   % (mux, os.path.join(directory, name)), 60)


def run_to_eos(description, timeout_s, count_sink=None):
    """Plays a pipeline to EOS in a process of its own (gst_client); returns
    (error or None, buffers at count_sink)"""
    err, digests = gst_client.play(description, timeout_s, sink=count_sink)
    return err, len(digests)


def rtsp_status(port, path):
    """The status line of a raw DESCRIBE of path (sent as it is)"""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        return rtsp_exchange(s, "DESCRIBE", "rtsp://127.0.0.1:%d%s" % (port, path),
                             1, "Accept: application/sdp\r\n")[0]


class ServerVod(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-server-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        make_media(cls.media)
        # outside the served directory, and a link to it from inside
        cls.secret = os.path.join(cls.tmp.name, "secret.ts")
        shutil.copy(os.path.join(cls.media, "clip.ts"), cls.secret)
        os.symlink(cls.secret, os.path.join(cls.media, "link-out.ts"))
        shutil.copy(cls.secret, os.path.join(cls.media, "my clip.ts"))
        shutil.copy(cls.secret, os.path.join(cls.media, ODD_NAME))
        cls.server = subprocess.Popen(
            [SERVER, "--port", "0", "--address", "127.0.0.1",
             "--session-timeout", "10", "--nc-redundancy-percent", "25",
             cls.media], stdout=subprocess.PIPE, text=True)
        line = cls.server.stdout.readline().strip()
        assert line.startswith("rtsp://127.0.0.1:"), line
        cls.base = line
        cls.port = int(line.rsplit(":", 1)[1].strip("/"))
        err, cls.file_frames = run_to_eos(
            "filesrc location=%s ! tsdemux ! h264parse ! avdec_h264 ! "
            "fakesink name=count" % os.path.join(cls.media, "clip.ts"), 30,
            "count")
        assert err is None and cls.file_frames == FRAMES, (err, cls.file_frames)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(10)
        cls.server.stdout.close()
        cls.tmp.cleanup()

    def test_ffprobe_reads_the_streams(self):
        for name in ("clip.ts", "clip.mp4"):
            out = subprocess.run(
                ["ffprobe", "-v", "error", "-show_entries",
                 "stream=codec_type,codec_name,width,height", "-of", "csv=p=0",
                 self.base + name],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("h264,video,320,240", out.stdout, name)

    def test_ffprobe_counts_every_frame(self):
        for name in ("clip.ts", "clip.mp4"):
            out = subprocess.run(
                ["ffprobe", "-v", "error", "-rtsp_transport", "tcp",
                 "-count_frames", "-select_streams", "v:0", "-show_entries",
                 "stream=codec_name,nb_read_frames", "-of", "csv=p=0",
                 self.base + name],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("h264,%d" % FRAMES, out.stdout.split(), name)

    def test_ffmpeg_decodes_the_files_frames(self):
        """ffmpeg -i rtsp://... decodes the frames ffmpeg decodes from the
        file itself (their MD5s, in order)"""
        def frame_md5s(source, *input_options):
            out = subprocess.run(
                ["ffmpeg", "-v", "error", *input_options, "-i", source,
                 "-map", "0:v:0", "-f", "framemd5", "-"],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(out.returncode, 0, out.stderr)
            return [line.rsplit(",", 1)[1].strip()
                    for line in out.stdout.splitlines()
                    if line and not line.startswith("#")]

        for name in ("clip.ts", "clip.mp4"):
            want = frame_md5s(os.path.join(self.media, name))
            self.assertEqual(len(want), FRAMES)
            got = frame_md5s(self.base + name, "-rtsp_transport", "tcp")
            self.assertEqual(got, want, name)

    def test_rtspsrc_plays_mpegts_every_frame(self):
        err, frames = run_to_eos(
            "rtspsrc location=%sclip.ts protocols=tcp ! rtpmp2tdepay ! "
            "tsdemux ! h264parse ! avdec_h264 ! fakesink name=count sync=false"
            % self.base, 30, "count")
        self.assertIsNone(err)
        self.assertEqual(frames, self.file_frames)

    def test_rtspsrc_plays_mp4_every_frame(self):
        err, frames = run_to_eos(
            "rtspsrc location=%sclip.mp4 protocols=tcp ! rtph264depay ! "
            "h264parse ! avdec_h264 ! fakesink name=count sync=false"
            % self.base, 30, "count")
        self.assertIsNone(err)
        self.assertEqual(frames, self.file_frames)

    def test_nc_mount_over_tcp_gives_the_file_back(self):
        out = os.path.join(self.tmp.name, "nc-tcp.ts")
        err, _ = run_to_eos(
            "rtspsrc location=%snc/clip.ts protocols=tcp ! rtpncdepay ! "
            "ncdecoder ! filesink location=%s" % (self.base, out), 30)
        self.assertIsNone(err)
        with open(os.path.join(self.media, "clip.ts"), "rb") as f:
            want = f.read()
        with open(out, "rb") as f:
            got = f.read()
        self.assertEqual(len(got), len(want))
        self.assertTrue(got == want, "decoded bytes differ from the file")

    def test_nc_mount_over_udp_decodes(self):
        err, frames = run_to_eos(
            "rtspsrc location=%snc/clip.ts protocols=udp udp-buffer-size=4194304 "
            "! rtpncdepay ! ncdecoder ! tsdemux ! h264parse ! avdec_h264 ! "
            "fakesink name=count sync=false" % self.base, 30, "count")
        self.assertIsNone(err)
        # loopback loses little, and 25 % redundancy repairs it
        self.assertGreaterEqual(frames, self.file_frames * 9 // 10)

    def test_paths_not_served_get_404(self):
        self.assertEqual(rtsp_status(self.port, "/clip.ts"), "RTSP/1.0 200 OK")
        # a DESCRIBE answered 200 has built and prerolled the pipeline
        for path in ("/my%20clip.ts", "/" + urllib.parse.quote(ODD_NAME),
                     "/nc/" + urllib.parse.quote(ODD_NAME)):
            self.assertEqual(rtsp_status(self.port, path), "RTSP/1.0 200 OK",
                             path)
        for path in ("/missing.ts", "/../secret.ts", "/%2e%2e/secret.ts",
                     "/nc/../../secret.ts", "/" + self.secret, "//etc/passwd",
                     "/link-out.ts", "/nc/link-out.ts", "/", "/nc/",
                     # one spelling per file: the percent-encoded name
                     "/./clip.ts", "/cl%69p.ts"):
            self.assertEqual(rtsp_status(self.port, path),
                             "RTSP/1.0 404 Not Found", path)
        # a file served once, then removed
        gone = os.path.join(self.media, "gone.ts")
        shutil.copy(self.secret, gone)
        self.assertEqual(rtsp_status(self.port, "/gone.ts"), "RTSP/1.0 200 OK")
        os.remove(gone)
        self.assertEqual(rtsp_status(self.port, "/gone.ts"),
                         "RTSP/1.0 404 Not Found")
        # and the server still serves
        self.assertEqual(rtsp_status(self.port, "/nc/clip.ts"), "RTSP/1.0 200 OK")


SEEK_FRAMES = 600   # 20 s at 30 frames/s, a keyframe every second
SEEK_TO = 10


def packets(source, *input_options):
    """(pts relative to the first, flags, MD5 of the data) of each video
    packet of source, in order"""
    out = subprocess.run(
        ["ffprobe", "-v", "error", *input_options, "-select_streams", "v:0",
         "-show_data_hash", "md5", "-show_entries",
         "packet=pts_time,flags,data_hash", "-of", "json", source],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["packets"]
    first = float(rows[0]["pts_time"])
    return [(round(float(r["pts_time"]) - first, 3), r["flags"],
             r["data_hash"]) for r in rows]


def pes_pts(packet):
    """The PTS (90 kHz) of the PES that starts in a transport packet, or
    None"""
    if not packet[1] & 0x40 or not packet[3] & 0x10:
        return None
    pes = packet[4 + (1 + packet[4] if packet[3] & 0x20 else 0):]
    if pes[:3] != b"\0\0\1" or not pes[7] & 0x80:
        return None
    return (((pes[9] >> 1) & 7) << 30 | pes[10] << 22 | (pes[11] >> 1) << 15
            | pes[12] << 7 | pes[13] >> 1)


class ServerSeek(unittest.TestCase):
    """Seeks of the shared sender's MPEG-TS sessions: ffmpeg -ss over TCP,
    which asks for a Range in the file's own PTS timeline (its start_time
    plus the time asked), on an mpegtsmux file (PTS from 3600 s) and an
    ffmpeg-made one (PTS from 1.4 s); a raw PLAY with an npt Range; a time
    past the end"""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-seek-")
        cls.media = cls.tmp.name
        make_ts_clip(os.path.join(cls.media, "movie.ts"), SEEK_FRAMES)
        subprocess.run(
            ["ffmpeg", "-v", "error", "-i", os.path.join(cls.media, "movie.ts"),
             "-c", "copy", os.path.join(cls.media, "ffmovie.ts")],
            check=True, timeout=60)
        cls.server, cls.base, cls.port = start_server(cls.media)

    @classmethod
    def tearDownClass(cls):
        stop(cls.server)
        cls.tmp.cleanup()

    def start_time(self, name):
        out = subprocess.run(
            ["ffprobe", "-v", "error", "-show_entries", "format=start_time",
             "-of", "csv=p=0", os.path.join(self.media, name)],
            capture_output=True, text=True, timeout=30, check=True)
        return float(out.stdout)

    def test_ffmpeg_seeks_over_tcp(self):
        """ffmpeg -ss 10 -c copy over RTSP copies what it copies from the
        file itself: from the keyframe at 10 s to the end, clean"""
        self.assertEqual(round(self.start_time("movie.ts"), 1), 3600.0)
        self.assertEqual(round(self.start_time("ffmovie.ts"), 1), 1.4)
        for name in ("movie.ts", "ffmovie.ts"):
            with self.subTest(name=name):
                source = os.path.join(self.media, name)
                want_file = os.path.join(self.media, "want-" + name)
                got_file = os.path.join(self.media, "got-" + name)
                subprocess.run(
                    ["ffmpeg", "-v", "error", "-y", "-ss", str(SEEK_TO), "-i",
                     source, "-c", "copy", want_file],
                    check=True, timeout=60)
                run = subprocess.run(
                    ["ffmpeg", "-v", "warning", "-y", "-rtsp_transport", "tcp",
                     "-ss", str(SEEK_TO), "-i", self.base + name, "-c", "copy",
                     got_file], capture_output=True, text=True, timeout=60)
                self.assertEqual(run.returncode, 0, run.stderr)
                # no refused range, corrupt packet or failed seek
                self.assertEqual(run.stderr.strip(), "", run.stderr)
                want, got = packets(want_file), packets(got_file)
                # the source's frame at 10 s is a keyframe, where both start
                at = [(pts, flags, md5) for pts, flags, md5 in packets(source)
                      if pts >= SEEK_TO]
                self.assertEqual(at[0][0], SEEK_TO)
                self.assertEqual(got[0][1:], at[0][1:])
                self.assertEqual(len(want), SEEK_FRAMES // 2)
                # to the end; ffmpeg's RTSP input leaves out the last frame
                # of an ffmpeg-made TS, seek or not (the PES it ends with
                # is flushed only at the end of a file)
                self.assertGreaterEqual(len(got), len(want) - 1, name)
                self.assertEqual(got, want[:len(got)], name)

    def test_play_range_starts_at_a_keyframe(self):
        """PLAY Range: npt=10- (the presentation's timeline: from its first
        frame) starts at the transport packet of the keyframe at 10 s, the
        whole file after it, its first packet marked a discontinuity"""
        for name in ("movie.ts", "ffmovie.ts"):
            with self.subTest(name=name):
                with open(os.path.join(self.media, name), "rb") as f:
                    data = f.read()
                first_pts = round(self.start_time(name) * 90000)
                url = self.base + name
                with socket.create_connection(("127.0.0.1", self.port),
                                              timeout=10) as c:
                    status, headers, _ = rtsp_exchange(
                        c, "SETUP", url + "/stream=0", 1,
                        "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
                    self.assertEqual(status, "RTSP/1.0 200 OK")
                    session = "Session: %s\r\n" % \
                        headers["session"].split(";")[0]
                    status, headers, _ = rtsp_exchange(
                        c, "PLAY", url, 2, session + "Range: npt=10-\r\n")
                    self.assertEqual(status, "RTSP/1.0 200 OK")
                    self.assertTrue(headers["range"].startswith("npt=10-"),
                                    headers["range"])
                    body = self.first_rtp_payload(c)
                self.assertEqual(len(body) % 188, 0)
                head = body[:188]
                # payload_unit_start, random_access and discontinuity
                self.assertTrue(head[1] & 0x40)
                self.assertTrue(head[3] & 0x20 and head[5] & 0x40)
                self.assertTrue(head[5] & 0x80)
                self.assertEqual(pes_pts(head) - first_pts, SEEK_TO * 90000)
                # the file's packets but for that bit
                unmarked = head[:5] + bytes([head[5] & 0x7F]) + body[6:]
                offset = data.find(unmarked)
                self.assertGreater(offset, 0)
                self.assertEqual(offset % 188, 0)

    @staticmethod
    def first_rtp_payload(c):
        """The payload of the first RTP packet interleaved on channel 0"""
        def read(n):
            got = b""
            while len(got) < n:
                more = c.recv(n - len(got))
                if not more:
                    raise EOFError("the connection closed")
                got += more
            return got
        while True:
            magic, channel, length = struct.unpack("!cBH", read(4))
            assert magic == b"$", magic
            frame = read(length)
            if channel == 0:
                return frame[12:]

    def test_rtspsrc_seeks_land_at_the_keyframe(self):
        """A player's seek (a flushing key-unit seek to 10 s of the rtspsrc
        pipeline, after 1 s of playing): the frames after it are the file's
        own from the keyframe at 10 s to the end, decoded without a gap,
        and before it the file's first second"""
        for name in ("movie.ts", "ffmovie.ts"):
            with self.subTest(name=name):
                file_frames = gst_client.play(
                    "filesrc location=%s ! tsdemux ! h264parse ! avdec_h264 ! "
                    "fakesink name=frames" % os.path.join(self.media, name),
                    60)[1]
                self.assertEqual(len(file_frames), SEEK_FRAMES)
                keyframe = SEEK_TO * 30
                client = gst_client.start(
                    "rtspsrc location=%s protocols=tcp ! rtpmp2tdepay ! "
                    "tsdemux ! h264parse ! avdec_h264 ! fakesink name=frames "
                    "sync=false" % (self.base + name), 60, seek=(30, SEEK_TO))
                err, got = client.result()
                self.assertIsNone(err)
                self.assertIsNotNone(client.seek_at, "never seeked")
                self.assertEqual(got[:client.seek_at],
                                 file_frames[:client.seek_at])
                after = got[client.seek_at:]
                # what was on its way when the seek was sent goes on from
                # there; then the file from the keyframe, to its end
                self.assertIn(file_frames[keyframe], after)
                landed = after.index(file_frames[keyframe])
                self.assertEqual(after[:landed], file_frames[
                    client.seek_at:client.seek_at + landed])
                self.assertEqual(after[landed:], file_frames[keyframe:])

    def test_a_time_past_the_end_ends_ffmpeg(self):
        """-ss 100 of a 20 s file: 457 Invalid Range, and the stream ends, so
        that ffmpeg (which reads on after a refused seek, its session paused)
        exits instead of waiting"""
        run = subprocess.run(
            ["ffmpeg", "-v", "warning", "-y", "-rtsp_transport", "tcp",
             "-ss", "100", "-i", self.base + "movie.ts", "-c", "copy",
             os.path.join(self.media, "past.ts")],
            capture_output=True, text=True, timeout=30)
        self.assertIn("457 Invalid Range", run.stderr)
        self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
