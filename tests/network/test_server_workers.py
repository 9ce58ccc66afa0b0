#!/usr/bin/env python3
"""gpustream-server's worker processes, its one content cache and its HTTP
path, on free loopback ports: with --workers 2 both workers serve rtspsrc
clients of the same file, and that file is in memory once (each worker maps
all of it, and the mapped pages' proportional shares add up to one copy);
HTTP GET of a multi-megabyte file is byte-identical, byte ranges, HEAD,
keep-alive and the 404/400/405/416 answers; a killed worker is started
again, and stopping the server (or killing it) leaves no worker behind."""

import http.client
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gst_client  # noqa: E402
from server_helpers import read_lines  # noqa: E402

SERVER = os.environ.get("GPUSTREAM_SERVER")
BIG = 5 * 1024 * 1024 + 12345   # a multi-megabyte file, not a whole page


def make_clip(path):
    """3 s of MPEG-TS: noise, so that the file is large (about 1.5 MB)"""
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=90 pattern=snow ! "
        "video/x-raw,width=320,height=240,framerate=30/1 ! "
        "x264enc speed-preset=ultrafast bitrate=4000 key-int-max=30 ! "
        "mpegtsmux ! filesink location=%s" % path)
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg is not None and msg.type == Gst.MessageType.EOS, msg


def first_lines(stream, count, timeout_s):
    """count lines of the server's stdout or stderr (fewer on timeout)"""
    return read_lines(stream, lambda lines: len(lines) >= count, timeout_s)


def start_workers(directory, workers, *options):
    """The server with workers (and HTTP) on free loopback ports; returns
    (process, RTSP port, HTTP port, {worker index: pid})"""
    server = subprocess.Popen(
        [SERVER, "--port", "0", "--http-port", "0", "--address", "127.0.0.1",
         "--workers", str(workers), *options, directory],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = first_lines(server.stdout, 2 + workers, 30)
    assert len(lines) == 2 + workers, lines
    assert lines[0].startswith("rtsp://127.0.0.1:"), lines
    assert lines[1].startswith("http://127.0.0.1:"), lines
    pids = {}
    for line in lines[2:]:
        # "worker 1: pid 1234"
        name, _, pid = line.partition(": pid ")
        pids[int(name.split()[1])] = int(pid)
    return (server, int(lines[0].rsplit(":", 1)[1].strip("/")),
            int(lines[1].rsplit(":", 1)[1].strip("/")), pids)


def children(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return {int(p) for p in f.read().split()}


def gone(pid):
    """pid has exited (a zombie nobody reaps has exited too)"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def mapping_kb(pid, path):
    """(Rss, Pss) in kB of pid's mappings of the file path, or None"""
    rss = pss = None
    inside = False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
                inside = len(fields) >= 6 and fields[5] == path
                continue
            if inside and fields[0] in ("Rss:", "Pss:"):
                if fields[0] == "Rss:":
                    rss = (rss or 0) + int(fields[1])
                else:
                    pss = (pss or 0) + int(fields[1])
    return None if rss is None else (rss, pss)


def play_clients(url, count, timeout_s=60):
    """count rtspsrc clients at once, each to EOS; returns the buffers each
    received (over TCP: no UDP port shared with anyone)"""
    clients = [gst_client.start("rtspsrc location=%s protocols=tcp ! "
                                "fakesink name=sink" % url, timeout_s,
                                sink="sink") for _ in range(count)]
    counts = []
    for c in clients:
        err, digests = c.result()
        assert err is None, err
        counts.append(len(digests))
    return counts


def raw_http(port, request):
    """Sends request bytes as they are; returns everything the server sends
    until it closes the connection"""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return reply
            reply += chunk


class ServerWorkers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-workers-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        # as /proc/PID/smaps names it
        cls.clip = os.path.realpath(os.path.join(cls.media, "clip.ts"))
        make_clip(cls.clip)
        cls.big = os.path.join(cls.media, "segment 1.m4s")
        with open(cls.big, "wb") as f:
            f.write(os.urandom(BIG))
        cls.secret = os.path.join(cls.tmp.name, "secret.txt")
        with open(cls.secret, "w") as f:
            f.write("outside the served directory\n")
        os.symlink(cls.secret, os.path.join(cls.media, "link.txt"))
        os.mkdir(os.path.join(cls.media, "sub"))
        cls.server, cls.rtsp_port, cls.http_port, cls.pids = start_workers(
            cls.media, 2)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(15)
        cls.server.stdout.close()
        cls.server.stderr.close()
        cls.tmp.cleanup()

    def http(self, method, path, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.http_port,
                                          timeout=30)
        conn.request(method, path, headers=headers or {})
        reply = conn.getresponse()
        body = reply.read()
        conn.close()
        return reply, body

    def test_workers_both_serve_one_cached_copy(self):
        self.assertEqual(set(self.pids), {1, 2})
        self.assertEqual(children(self.server.pid), set(self.pids.values()))
        url = "rtsp://127.0.0.1:%d/clip.ts" % self.rtsp_port
        size_kb = os.path.getsize(self.clip) / 1024
        # the kernel gives each client to one of the workers: clients come
        # until both have served the file (all 24 to one: 2^-23)
        mapped = {}
        for _ in range(6):
            counts = play_clients(url, 4)
            self.assertTrue(all(c > 0 for c in counts), counts)
            mapped = {w: mapping_kb(pid, self.clip)
                      for w, pid in self.pids.items()}
            if all(mapped.values()):
                break
        self.assertTrue(all(mapped.values()),
                        "a worker served no client: %s" % mapped)
        rss = [m[0] for m in mapped.values()]
        pss = [m[1] for m in mapped.values()]
        print("clip %.0f kB; per worker mapped Rss %s kB, Pss %s kB"
              % (size_kb, rss, pss))
        # each worker read all of the file through its mapping ...
        for r in rss:
            self.assertGreaterEqual(r, 0.9 * size_kb)
        self.assertGreaterEqual(sum(rss), 1.8 * size_kb)
        # ... and the pages are the same ones: shared, they count once
        self.assertLessEqual(sum(pss), 1.1 * size_kb + 8)
        self.assertGreaterEqual(sum(pss), 0.9 * size_kb)

    def test_http_get_head_and_ranges(self):
        with open(self.big, "rb") as f:
            data = f.read()
        path = "/segment%201.m4s"
        reply, body = self.http("GET", path)
        self.assertEqual(reply.status, 200)
        self.assertEqual(int(reply.getheader("Content-Length")), len(data))
        self.assertEqual(reply.getheader("Content-Type"), "video/iso.segment")
        self.assertEqual(reply.getheader("Accept-Ranges"), "bytes")
        self.assertTrue(body == data, "GET body differs from the file")

        reply, body = self.http("HEAD", path)
        self.assertEqual((reply.status, body), (200, b""))
        self.assertEqual(int(reply.getheader("Content-Length")), len(data))

        for spec, first, last in (("bytes=100-199", 100, 199),
                                  ("bytes=%d-" % (len(data) - 10),
                                   len(data) - 10, len(data) - 1),
                                  ("bytes=-500", len(data) - 500, len(data) - 1),
                                  ("bytes=0-%d" % (len(data) * 2),
                                   0, len(data) - 1),
                                  ("bytes=4096-1052671", 4096, 1052671)):
            reply, body = self.http("GET", path, {"Range": spec})
            self.assertEqual(reply.status, 206, spec)
            self.assertEqual(reply.getheader("Content-Range"),
                             "bytes %d-%d/%d" % (first, last, len(data)), spec)
            self.assertTrue(body == data[first:last + 1], spec)
        # a range past the end, and a range we ignore (several ranges)
        reply, body = self.http("GET", path, {"Range": "bytes=%d-" % len(data)})
        self.assertEqual(reply.status, 416)
        self.assertEqual(reply.getheader("Content-Range"), "bytes */%d" % len(data))
        reply, body = self.http("GET", path, {"Range": "bytes=0-1,5-6"})
        self.assertEqual(reply.status, 200)
        self.assertEqual(len(body), len(data))

    def test_http_concurrent_downloads(self):
        """eight connections at once, each the whole file into a small
        receive buffer, so that sendfile writes partially and resumes"""
        with open(self.big, "rb") as f:
            data = f.read()
        replies = {}
        for _ in range(8):
            s = socket.create_connection(("127.0.0.1", self.http_port),
                                         timeout=30)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.sendall(b"GET /segment%201.m4s HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\n\r\n")
            replies[s] = b""
        time.sleep(0.2)
        deadline = time.monotonic() + 60
        open_socks = set(replies)
        while open_socks and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_socks), [], [], 5)
            for s in ready:
                chunk = s.recv(1 << 20)
                if chunk:
                    replies[s] += chunk
                else:
                    open_socks.discard(s)
                    s.close()
        self.assertEqual(open_socks, set(), "downloads still open after 60 s")
        for reply in replies.values():
            head, _, body = reply.partition(b"\r\n\r\n")
            self.assertTrue(head.startswith(b"HTTP/1.1 200 OK"), head)
            self.assertEqual(len(body), len(data))
            self.assertTrue(body == data)

    def test_http_clients_gone_mid_file(self):
        """clients that close or reset in the middle of a file cost the
        server their connection, not a worker"""
        before = children(self.server.pid)
        for i in range(12):
            s = socket.create_connection(("127.0.0.1", self.http_port),
                                         timeout=10)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
            s.sendall(b"GET /segment%201.m4s HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(4096)
            if i % 2:
                # reset: close with SO_LINGER 0
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             b"\x01\x00\x00\x00\x00\x00\x00\x00")
            else:
                # a close with the rest of the file still coming
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        time.sleep(1)
        self.assertEqual(children(self.server.pid), before)
        reply, body = self.http("HEAD", "/segment%201.m4s")
        self.assertEqual(reply.status, 200)

    def test_http_paths_served_before_then_changed(self):
        """a worker remembers where a path led; a link re-pointed, a
        directory on the way swapped for a link out of the served directory,
        or the file removed, is seen at the next request"""
        inside = os.path.join(self.media, "period")
        outside = os.path.join(self.tmp.name, "elsewhere")
        os.mkdir(inside)
        os.mkdir(outside)
        with open(os.path.join(inside, "seg.m4s"), "wb") as f:
            f.write(b"inside " * 100)
        with open(os.path.join(outside, "seg.m4s"), "wb") as f:
            f.write(b"outside the served directory")
        with open(os.path.join(inside, "gone.m4s"), "wb") as f:
            f.write(b"soon removed")
        # on new connections, so that both workers serve (and remember) them
        for _ in range(16):
            for name, body in (("seg.m4s", b"inside " * 100),
                               ("gone.m4s", b"soon removed")):
                reply = raw_http(self.http_port, b"GET /period/%s HTTP/1.0"
                                 b"\r\n\r\n" % name.encode())
                self.assertTrue(reply.endswith(b"\r\n\r\n" + body), reply)
        # a link re-pointed inside the directory: the new target is served
        with open(os.path.join(self.media, "v1.mpd"), "wb") as f:
            f.write(b"manifest 1")
        with open(os.path.join(self.media, "v2.mpd"), "wb") as f:
            f.write(b"manifest 2")
        os.symlink("v1.mpd", os.path.join(self.media, "live.mpd"))
        for version in (b"1", b"2"):
            for _ in range(8):
                reply = raw_http(self.http_port,
                                 b"GET /live.mpd HTTP/1.0\r\n\r\n")
                self.assertTrue(reply.endswith(b"\r\n\r\nmanifest " + version),
                                reply)
            os.symlink("v2.mpd", os.path.join(self.media, "live.new"))
            os.rename(os.path.join(self.media, "live.new"),
                      os.path.join(self.media, "live.mpd"))
        os.remove(os.path.join(inside, "gone.m4s"))
        os.rename(inside, inside + ".old")
        os.symlink(outside, inside)
        for _ in range(16):
            for name in ("seg.m4s", "gone.m4s"):
                reply = raw_http(self.http_port, b"GET /period/%s HTTP/1.0"
                                 b"\r\n\r\n" % name.encode())
                self.assertTrue(reply.startswith(b"HTTP/1.1 404 "), reply)

    def test_http_refusals(self):
        for path in ("/nope.ts", "/../secret.txt", "/%2e%2e/secret.txt",
                     "/link.txt", "/sub", "/sub/", "/", "/./clip.ts",
                     "/nc/clip.ts", "/clip%2Ets", "/%00clip.ts"):
            reply = raw_http(self.http_port, b"GET %s HTTP/1.1\r\nHost: x\r\n"
                             b"Connection: close\r\n\r\n" % path.encode())
            self.assertTrue(reply.startswith(b"HTTP/1.1 404 Not Found\r\n"),
                            (path, reply[:60]))
            self.assertNotIn(b"outside the served directory", reply)
        # its body is not read: the connection closes after the answer
        reply = raw_http(self.http_port, b"POST /clip.ts HTTP/1.1\r\n"
                         b"Content-Length: 4\r\n\r\nGET ")
        self.assertTrue(reply.startswith(b"HTTP/1.1 405 "), reply[:60])
        self.assertIn(b"\r\nAllow: GET, HEAD\r\n", reply)
        self.assertEqual(reply.count(b"HTTP/1.1 "), 1, reply)
        for request in (b"\r\n\r\n", b"GARBAGE\r\n\r\n",
                        b"GET /clip.ts\r\n\r\n",
                        b"GET /clip.ts HTTP/9.9\r\n\r\n",
                        b"GET clip.ts HTTP/1.1\r\n\r\n",
                        b"GET /clip.ts HTTP/1.1\r\nno colon here\r\n\r\n",
                        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n"):
            reply = raw_http(self.http_port, request)
            self.assertTrue(reply.startswith(b"HTTP/1.1 400 Bad Request\r\n"),
                            (request[:40], reply[:60]))
        # two requests in one write, on one connection: both answered
        reply = raw_http(self.http_port,
                         b"HEAD /clip.ts HTTP/1.1\r\nHost: x\r\n\r\n"
                         b"GET /clip.ts HTTP/1.1\r\nHost: x\r\n"
                         b"Range: bytes=0-187\r\nConnection: close\r\n\r\n")
        self.assertEqual(reply.count(b"HTTP/1.1 "), 2, reply[:400])
        with open(self.clip, "rb") as f:
            self.assertTrue(reply.endswith(b"\r\n\r\n" + f.read(188)))

    def test_http_mutated_requests(self):
        """3000 requests mutated from good ones (seeded, the same every
        run): each gets a well-formed answer or, cut before its end, none;
        nothing from outside the directory; no worker dies"""
        import random
        rng = random.Random(2018)
        seeds = [b"GET /clip.ts HTTP/1.1\r\nHost: x\r\nRange: bytes=0-100\r\n\r\n",
                 b"HEAD /segment%201.m4s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
                 b"GET /%2e%2e/secret.txt HTTP/1.1\r\n\r\n"
                 b"GET /clip.ts?x=1 HTTP/1.1\r\nRange: bytes=-5\r\n\r\n",
                 b"GET /link.txt HTTP/1.1\r\nConnection: close\r\n\r\n",
                 b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"]
        alphabet = b" \r\n:/-=,%.?\x00\xff0123456789abGETHEADbytes"
        before = children(self.server.pid)
        for _ in range(3000):
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(data) + 1)
                op = rng.random()
                if op < 0.1:
                    # from a line break on: heads with nothing before
                    data = data[data.find(b"\r\n", i):]
                elif op < 0.4 and data:
                    data[min(i, len(data) - 1)] = rng.choice(alphabet)
                elif op < 0.7:
                    data[i:i] = bytes(rng.choice(alphabet)
                                      for _ in range(rng.randint(1, 5)))
                elif data:
                    del data[i:i + rng.randint(1, 5)]
            with socket.create_connection(("127.0.0.1", self.http_port),
                                          timeout=10) as s:
                s.sendall(bytes(data))
                s.shutdown(socket.SHUT_WR)
                reply = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
            self.assertNotIn(b"outside the served directory", reply)
            if reply:
                self.assertRegex(reply[:13], rb"^HTTP/1\.1 [1-5]\d\d ",
                                 bytes(data))
        self.assertEqual(children(self.server.pid), before)

    def test_killed_worker_is_restarted_and_stop_leaves_none(self):
        server, rtsp_port, http_port, pids = start_workers(self.media, 2)
        try:
            os.kill(pids[1], signal.SIGKILL)
            lines = first_lines(server.stdout, 1, 15)
            self.assertEqual(len(lines), 1, "no worker started again")
            self.assertTrue(lines[0].startswith("worker 1: pid "), lines)
            new_pid = int(lines[0].rsplit(" ", 1)[1])
            self.assertNotEqual(new_pid, pids[1])
            err = first_lines(server.stderr, 1, 5)
            self.assertEqual(err, ["gpustream-server: worker 1 (pid %d) killed "
                                   "by signal 9 (Killed), starting it again"
                                   % pids[1]])
            self.assertTrue(gone(pids[1]))
            self.assertEqual(children(server.pid), {new_pid, pids[2]})
            # the workers still serve, on the same sockets
            for _ in range(6):
                reply = raw_http(http_port, b"HEAD /clip.ts HTTP/1.0\r\n\r\n")
                self.assertTrue(reply.startswith(b"HTTP/1.1 200 OK"), reply)
            self.assertTrue(all(c > 0 for c in play_clients(
                "rtsp://127.0.0.1:%d/clip.ts" % rtsp_port, 2)))
            server.send_signal(signal.SIGTERM)
            self.assertEqual(server.wait(15), 0)
            for pid in (new_pid, pids[2]):
                self.assertTrue(gone(pid), pid)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait(10)
            server.stdout.close()
            server.stderr.close()

    def test_killed_supervisor_leaves_no_worker(self):
        server, _, _, pids = start_workers(self.media, 2)
        try:
            server.kill()
            server.wait(10)
            deadline = time.monotonic() + 10
            while (not all(gone(p) for p in pids.values())
                   and time.monotonic() < deadline):
                time.sleep(0.1)
            for pid in pids.values():
                self.assertTrue(gone(pid), pid)
        finally:
            server.stdout.close()
            server.stderr.close()

    def test_file_truncated_while_playing(self):
        """a file cut short in place while sessions play it from the cache
        (a mapped page past its new end) costs the sessions what is gone,
        with a message, not the server"""
        media = os.path.join(self.tmp.name, "truncated")
        os.mkdir(media)
        victim = os.path.join(media, "victim.ts")
        with open(self.clip, "rb") as f:
            data = f.read()
        with open(victim, "wb") as f:
            f.write(data)
        server = subprocess.Popen(
            [SERVER, "--port", "0", "--address", "127.0.0.1", media],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            lines = first_lines(server.stdout, 1, 30)
            port = int(lines[0].rsplit(":", 1)[1].strip("/"))
            url = "rtsp://127.0.0.1:%d/victim.ts" % port
            p = Gst.parse_launch("rtspsrc location=%s protocols=tcp ! "
                                 "fakesink" % url)
            p.set_state(Gst.State.PLAYING)
            time.sleep(0.7)
            with open(victim, "r+b") as f:
                f.truncate(len(data) // 4)
            msg = p.get_bus().timed_pop_filtered(
                30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            p.set_state(Gst.State.NULL)
            self.assertIsNotNone(msg, "the session neither ended nor failed")
            self.assertIsNone(server.poll(), "the server died")
            err = first_lines(server.stderr, 1, 5)
            self.assertEqual(err, ["gpustream-server: a file being served was "
                                   "truncated; what is gone of it reads as "
                                   "zeros (replace files by renaming a new "
                                   "one over them)"])
            # a new session maps the file as it is now, and plays it
            self.assertTrue(all(c > 0 for c in play_clients(url, 1)))
            self.assertIsNone(server.poll(), "the server died")
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()
            server.stderr.close()

    def test_one_process_http(self):
        server = subprocess.Popen(
            [SERVER, "--port", "0", "--http-port", "0", "--address",
             "127.0.0.1", self.media], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        try:
            lines = first_lines(server.stdout, 2, 30)
            self.assertTrue(lines[0].startswith("rtsp://127.0.0.1:"), lines)
            self.assertTrue(lines[1].startswith("http://127.0.0.1:"), lines)
            port = int(lines[1].rsplit(":", 1)[1].strip("/"))
            self.assertEqual(children(server.pid), set())
            reply = raw_http(port, b"GET /clip.ts HTTP/1.0\r\n\r\n")
            with open(self.clip, "rb") as f:
                self.assertTrue(reply.partition(b"\r\n\r\n")[2] == f.read())
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()
            server.stderr.close()

    def test_bad_command_lines(self):
        for argv, says in ((["--workers", "0", self.media],
                            "--workers is 1 to 256, not 0"),
                           (["--http-port", "70000", self.media],
                            "--http-port is 0-65535, not 70000"),
                           (["--http-port", "0", "--proxy",
                             "rtsp://127.0.0.1:1/"],
                            "--proxy serves none"),
                           (["--worker", "x", self.media],
                            "--worker is set by the server")):
            run = subprocess.run([SERVER, *argv], capture_output=True,
                                 text=True, timeout=10)
            self.assertEqual(run.returncode, 2, argv)
            self.assertIn(says, run.stderr, argv)
            self.assertEqual(run.stdout, "", argv)


if __name__ == "__main__":
    unittest.main(verbosity=2)
