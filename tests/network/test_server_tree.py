#!/usr/bin/env python3
"""A tree of servers, as the section "A tree of servers" of docs/server.md
starts it, its commands run as written (free ports instead of 8554-8556, a
temporary directory instead of /srv/media, this build's program, fakesink
for the display): an origin and two edges re-serving it. Clients of both
edges, at the same time, decode the origin's frames from the SRTP the edges
send, and write the file back byte for byte from the network-coded path the
edges recode without decoding; each edge says what it did."""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_helpers import (read_lines, rtspsrc_pause_race, run_client,  # noqa: E402
                            stop)
from test_server_srtp import frame_digests  # noqa: E402

SERVER = os.environ.get("GPUSTREAM_SERVER")
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(SOURCE_ROOT, "docs", "server.md")
FRAMES = 60


def tree_commands():
    """the command block of the section "A tree of servers" """
    with open(DOC) as f:
        text = f.read()
    section = text.split("## A tree of servers", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```\n(.*?)```", section, re.S)
    assert len(block) == 1, "the tree section has one command block"
    return [line for line in block[0].splitlines() if line.strip()]


class ServerTree(unittest.TestCase):
    def test_origin_and_two_edges(self):
        lines = tree_commands()
        servers = [line for line in lines if "gpustream-server" in line]
        clients = [line for line in lines if "gpustream-server" not in line]
        self.assertEqual(len(servers), 3, lines)
        self.assertEqual(len(clients), 2, lines)

        with tempfile.TemporaryDirectory(prefix="server-tree-") as tmp:
            media = os.path.join(tmp, "media")
            os.mkdir(media)
            video = ("gst-launch-1.0 -q videotestsrc num-buffers=%d ! "
                     "video/x-raw,width=320,height=240,framerate=30/1 ! "
                     "x264enc speed-preset=ultrafast key-int-max=30 ! " % FRAMES)
            for name, mux in (("movie.ts", "mpegtsmux"), ("movie.mp4", "mp4mux")):
                subprocess.run(video + "%s ! filesink location=%s"
                               % (mux, os.path.join(media, name)),
                               shell=True, check=True, timeout=60)
            err, want_frames = frame_digests(
                "filesrc location=%s ! qtdemux ! h264parse ! avdec_h264 ! "
                "fakesink name=frames" % os.path.join(media, "movie.mp4"), 30)
            self.assertIsNone(err)
            self.assertEqual(len(want_frames), FRAMES)

            # documented port -> the free one each server took
            ports, procs = {}, []

            def local(command, swap=False):
                """command with this run's ports (swap: each edge's client
                on the other edge) and no display"""
                for documented, port in ports.items():
                    if swap and documented in ("8555", "8556"):
                        port = ports["8556" if documented == "8555" else "8555"]
                    command = command.replace("127.0.0.1:" + documented,
                                              "127.0.0.1:" + port)
                return command.replace("autovideosink",
                                       "fakesink name=frames sync=false")

            try:
                for line in servers:
                    argv = shlex.split(local(line))
                    self.assertEqual(argv[0], "build/pipelines/server/gpustream-server")
                    self.assertEqual(argv[1], "--port")
                    documented = argv[2]
                    argv = [SERVER, "--port", "0"] + argv[3:]
                    if argv[-1] == "/srv/media":
                        argv[-1] = media
                    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)
                    procs.append(proc)
                    url = proc.stdout.readline().strip()
                    self.assertRegex(url, r"^rtsp://127\.0\.0\.1:\d+/$")
                    ports[documented] = url.rsplit(":", 1)[1].strip("/")

                with open(os.path.join(media, "movie.ts"), "rb") as f:
                    want = f.read()
                # the two clients as written (one per edge), then each on
                # the other edge; both edges serve at the same time
                for swap, out in ((False, "received.ts"), (True, "received2.ts")):
                    nc_command = (os.path.join(SOURCE_ROOT, local(clients[1], swap))
                                  .replace("received.ts", out))
                    nc = subprocess.Popen(
                        nc_command, shell=True, cwd=tmp,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    srtp = local(clients[0], swap)
                    self.assertTrue(srtp.startswith("gst-launch-1.0 "), srtp)
                    err, digests = frame_digests(srtp[len("gst-launch-1.0 "):], 30)
                    _, nc_err = nc.communicate(timeout=60)
                    if nc.returncode != 0 and rtspsrc_pause_race(nc_err):
                        nc = run_client(nc_command, cwd=tmp, timeout=60)
                        nc_err = nc.stderr
                    self.assertIsNone(err, srtp)
                    # rtspsrc decrypted the edge's SRTP to the origin's
                    # frames, in order. Over UDP (as written) a loaded client
                    # may take the RTCP BYE before the last RTP packets still
                    # in its socket and end there: at most the last two
                    # frames may be cut (once in CI under the sanitizers)
                    self.assertGreaterEqual(len(digests), FRAMES - 2, srtp)
                    self.assertEqual(digests, want_frames[:len(digests)], srtp)
                    self.assertEqual(nc.returncode, 0, nc_err[-2000:])
                    with open(os.path.join(tmp, out), "rb") as f:
                        self.assertTrue(f.read() == want,
                                        "%s differs from movie.ts" % out)

                # each edge recoded the network-coded path (its line comes
                # when the session ends)
                for proc in procs[1:]:
                    said = read_lines(proc.stdout, lambda got: any(
                        line.startswith("nc /nc/movie.ts: ncencoder sent ")
                        for line in got), 15)
                    self.assertTrue(any(line.startswith(
                        "nc /nc/movie.ts: ncencoder sent ") for line in said), said)
            finally:
                for proc in reversed(procs):
                    stop(proc)
                    proc.stderr.close()


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    Gst.init(None)
    unittest.main(verbosity=2)
