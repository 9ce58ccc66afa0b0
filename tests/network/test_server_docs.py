#!/usr/bin/env python3
"""The commands of docs/server.md run as written, against a server started
with the documented command line: only the port (a free one instead of
8554), the directory (a temporary one holding movie.ts and movie.mp4),
the program's path (this build's) and the video sink (fakesink, there is no
display) are replaced. ffprobe reports the video, the players reach the end
(plain and SRTP), and the network-coded client script writes the file back
byte for byte. (The commands of the section "A tree of servers" are run as
written by network-server-tree.)"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

SERVER = os.environ.get("GPUSTREAM_SERVER")
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(SOURCE_ROOT, "docs", "server.md")


def code_blocks(path):
    """the command blocks of the page, but for the tree section's"""
    with open(path) as f:
        text = f.read()
    head, _, tree = text.partition("## A tree of servers")
    rest = tree.split("\n## ", 1)[1] if tree else ""
    return re.findall(r"```\n(.*?)```", head + rest, re.S)


class ServerDocs(unittest.TestCase):
    def test_documented_commands(self):
        blocks = code_blocks(DOC)
        start = [line for line in blocks[0].splitlines()
                 if "gpustream-server" in line]
        self.assertEqual(len(start), 1, blocks[0])
        clients = [line for line in blocks[1].splitlines() if line.strip()]
        self.assertEqual(len(clients), 5, blocks[1])
        self.assertEqual(len(blocks), 2, "a command block the test does not run")

        with tempfile.TemporaryDirectory(prefix="server-docs-") as tmp:
            media = os.path.join(tmp, "media")
            os.mkdir(media)
            video = ("gst-launch-1.0 -q videotestsrc num-buffers=60 ! "
                     "video/x-raw,width=320,height=240,framerate=30/1 ! "
                     "x264enc speed-preset=ultrafast key-int-max=30 ! ")
            for name, mux in (("movie.ts", "mpegtsmux"), ("movie.mp4", "mp4mux")):
                subprocess.run(video + "%s ! filesink location=%s"
                               % (mux, os.path.join(media, name)),
                               shell=True, check=True, timeout=60)

            argv = shlex.split(start[0])
            self.assertEqual(argv[0], "build/pipelines/server/gpustream-server")
            self.assertEqual(argv[1:3], ["--port", "8554"])
            self.assertEqual(argv[-1], "/srv/media")
            argv = [SERVER, "--port", "0"] + argv[3:-1] + [media]
            server = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
            try:
                url = server.stdout.readline().strip()
                self.assertRegex(url, r"^rtsp://127\.0\.0\.1:\d+/$")
                hostport = url[len("rtsp://"):-1]
                results = []
                for line in clients:
                    command = (line.replace("127.0.0.1:8554", hostport)
                               .replace("autovideosink", "fakesink"))
                    if command.startswith("pipelines/"):
                        command = os.path.join(SOURCE_ROOT, command)
                    results.append(subprocess.run(
                        command, shell=True, cwd=tmp, capture_output=True,
                        text=True, timeout=60))

            finally:
                server.terminate()
                server.wait(10)
                server.stdout.close()

            for line, run in zip(clients, results):
                self.assertEqual(run.returncode, 0,
                                 "%s\n%s" % (line, run.stderr[-2000:]))
            self.assertIn("Video: h264", results[0].stderr)
            self.assertIn("320x240", results[0].stderr)
            for run in results[1:3] + results[4:]:
                self.assertIn("Got EOS from element", run.stdout)
            with open(os.path.join(media, "movie.ts"), "rb") as f:
                want = f.read()
            with open(os.path.join(tmp, "received.ts"), "rb") as f:
                self.assertTrue(f.read() == want,
                                "received.ts differs from movie.ts")


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
