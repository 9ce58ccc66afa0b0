#!/usr/bin/env python3
"""gpustream-server against clients we did not write: it serves a directory
(an MPEG-TS and an MP4 made here) on a free loopback port; ffprobe reads the
streams and counts every frame, ffmpeg decodes the file's own frames, rtspsrc
plays the plain mounts to EOS with every frame decoded, the
network-coded mount gives the file back byte for byte over TCP and decodable
video over UDP, and paths outside the directory or missing get 404."""

import os
import shutil
import socket
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
from server_helpers import rtsp_exchange  # noqa: E402

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


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
