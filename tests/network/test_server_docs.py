#!/usr/bin/env python3
"""The commands of docs/server.md run as written, against a server started
with the documented command line: only the port (a free one instead of
8554), the directory (a temporary one holding movie.ts and movie.mp4),
the program's path (this build's) and the video sink (fakesink, there is no
display) are replaced. ffprobe reports the video, the players reach the end
(plain and SRTP), and the network-coded client script writes the file back
byte for byte. The workers' command line starts the server with four
workers and HTTP (free ports instead of 8554 and 8080): curl fetches the file
whole and its first packet, ffprobe reads the MP4 over HTTP, rtspsrc plays
from a worker. (The commands of the section "A tree of servers" are run as
written by network-server-tree.)"""

import os
import re
import select
import shlex
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_helpers import curl_env, run_client  # noqa: E402

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
    def test_env_puts_the_server_on_path(self):
        """README.md calls the server by name, gpustream-server DIR, in the
        shell that ran eval "$(./run env)" """
        build = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.realpath(SERVER))))
        run = subprocess.run(
            ["bash", "-c", 'eval "$(./run env)" && command -v gpustream-server'],
            cwd=SOURCE_ROOT, env=dict(os.environ, GS_BUILD_DIR=build),
            capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(os.path.realpath(run.stdout.strip()),
                         os.path.realpath(SERVER))

    def test_documented_commands(self):
        blocks = code_blocks(DOC)
        start = [line for line in blocks[0].splitlines()
                 if "gpustream-server" in line]
        self.assertEqual(len(start), 1, blocks[0])
        clients = [line for line in blocks[1].splitlines() if line.strip()]
        self.assertEqual(len(clients), 5, blocks[1])
        self.assertEqual(len(blocks), 4, "a command block the test does not run")

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
                    results.append(run_client(command, cwd=tmp, timeout=60))

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

            self.run_worker_commands(blocks[2], blocks[3], media, tmp)

    def run_worker_commands(self, start_block, client_block, media, tmp):
        start = [line for line in start_block.splitlines()
                 if "gpustream-server" in line]
        self.assertEqual(len(start), 1, start_block)
        clients = [line for line in client_block.splitlines() if line.strip()]
        self.assertEqual(len(clients), 4, client_block)
        argv = shlex.split(start[0])
        self.assertEqual(argv[0], "build/pipelines/server/gpustream-server")
        self.assertEqual(argv[1:3], ["--port", "8554"])
        self.assertEqual(argv[-1], "/srv/media")
        i = argv.index("--http-port")
        self.assertEqual(argv[i + 1], "8080")
        workers = int(argv[argv.index("--workers") + 1])
        argv = ([SERVER, "--port", "0"] + argv[3:i] + ["--http-port", "0"]
                + argv[i + 2:-1] + [media])
        server = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        try:
            printed, text = [], b""
            while len(printed) < 2 + workers:
                ready, _, _ = select.select([server.stdout], [], [], 30)
                chunk = os.read(server.stdout.fileno(), 4096) if ready else b""
                self.assertTrue(chunk, "the server printed %s" % printed)
                text += chunk
                *lines, text = text.split(b"\n")
                printed += [line.decode() for line in lines]
            self.assertRegex(printed[0], r"^rtsp://127\.0\.0\.1:\d+/$")
            self.assertRegex(printed[1], r"^http://127\.0\.0\.1:\d+/$")
            for n, line in enumerate(printed[2:], 1):
                self.assertRegex(line, r"^worker %d: pid \d+$" % n)
            rtsp = printed[0][len("rtsp://"):-1]
            http = printed[1][len("http://"):-1]
            results = []
            for line in clients:
                command = (line.replace("127.0.0.1:8554", rtsp)
                           .replace("127.0.0.1:8080", http)
                           .replace("autovideosink", "fakesink"))
                env = curl_env() if command.startswith("curl") else None
                results.append(run_client(command, cwd=tmp, timeout=60, env=env))
        finally:
            server.terminate()
            self.assertEqual(server.wait(15), 0)
            server.stdout.close()
            server_err = server.stderr.read().decode(errors="replace")
            server.stderr.close()
        for line, run in zip(clients, results):
            self.assertEqual(run.returncode, 0,
                             "%s\n%s\nthe server said:\n%s" % (
                                 line, run.stderr[-2000:], server_err[-2000:]))
        with open(os.path.join(media, "movie.ts"), "rb") as f:
            want = f.read()
        with open(os.path.join(tmp, "movie.ts"), "rb") as f:
            self.assertTrue(f.read() == want, "movie.ts differs over HTTP")
        with open(os.path.join(tmp, "first-packet.ts"), "rb") as f:
            self.assertEqual(f.read(), want[:188])
        self.assertIn("Video: h264", results[2].stderr)
        self.assertIn("320x240", results[2].stderr)
        self.assertIn("Got EOS from element", results[3].stdout)


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
