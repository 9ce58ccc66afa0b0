#!/usr/bin/env python3
"""gpustream-server's front doors: RTSP request heads over the limits
(header lines without end, a line without end, NUL bytes), a connection's
first and those after a request answered, answered 431 or 400 and closed,
a normal client served afterwards; connections without a
session closed after --idle-timeout, a playing one kept; files that are
empty, unreadable or of no media type answered 404 or 415 with a line on
stderr; SIGINT stopping a single-process server cleanly (exit 0, its last
line); and the HTTP path's absolute-form targets and validators (Date,
Last-Modified, ETag; If-None-Match, If-Modified-Since, If-Range), with raw
sockets and with curl."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_helpers import (curl_env, make_ts_clip, read_lines,  # noqa: E402
                            rtsp_exchange, rtsp_request, server_lines,
                            start_server, stop)

SERVER = os.environ.get("GPUSTREAM_SERVER")
FRAMES = 60   # 2 s at 30 frames/s


def read_until_closed(sock, timeout_s):
    """Everything the server sends until it closes the connection; (bytes,
    closed): closed is False when it was still open after timeout_s"""
    sock.settimeout(timeout_s)
    data = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return data, False
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def play_udp(port, path):
    """SETUP and PLAY of path over UDP on a new connection, left open;
    returns (connection, its Session header, the RTP socket)"""
    rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rtp.bind(("127.0.0.1", 0))
    rtp.settimeout(10)
    client_port = rtp.getsockname()[1]
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    url = "rtsp://127.0.0.1:%d%s" % (port, path)
    status, headers = rtsp_request(
        sock, "SETUP", url + "/stream=0", 1,
        "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n"
        % (client_port, client_port + 1))
    assert status == "RTSP/1.0 200 OK", (path, status)
    session = "Session: %s\r\n" % headers["session"].split(";")[0]
    status, _ = rtsp_request(sock, "PLAY", url, 2, session)
    assert status == "RTSP/1.0 200 OK", (path, status)
    return sock, session, rtp


class ServerLimits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-limits-")
        os.chmod(cls.tmp.name, 0o755)
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        cls.clip = os.path.join(cls.media, "clip.ts")
        make_ts_clip(cls.clip, FRAMES)
        cls.mp4 = os.path.join(cls.media, "clip.mp4")
        subprocess.run(
            ["gst-launch-1.0", "-q", "filesrc", "location=" + cls.clip, "!",
             "tsdemux", "!", "h264parse", "!", "mp4mux", "!", "filesink",
             "location=" + cls.mp4], check=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    # ---- 1: request heads ----

    def refused(self, port, payload, flood=None):
        """payload sent (then flood() lines while the server reads them);
        returns what came back and whether the connection was closed"""
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sent = [0]

        def send():
            try:
                sock.sendall(payload)
                sent[0] += len(payload)
                if flood is not None:
                    line = flood()
                    # 50 MB of header lines at most
                    while sent[0] < 50 << 20:
                        sock.sendall(line)
                        sent[0] += len(line)
            except OSError:
                pass   # the server closed: what the test waits for
        sender = threading.Thread(target=send)
        sender.start()
        data, closed = read_until_closed(sock, 20)
        sender.join(30)
        sock.close()
        return data, closed, sent[0]

    def check_normal_client(self, port):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            status, headers, body = rtsp_exchange(
                c, "DESCRIBE", "rtsp://127.0.0.1:%d/clip.ts" % port, 1,
                "Accept: application/sdp\r\n")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIn("m=video", body)

    def test_request_heads_over_the_limits(self):
        for mode in ("shared", "pipeline"):
            with self.subTest(ts_sessions=mode):
                self.heads_over_the_limits(mode)

    def refused_after(self, port, first, payload, flood=None):
        """As refused(), payload sent after the request first (b"": none):
        returns what came back after first's answer, and whether the
        connection was closed"""
        data, closed, sent = self.refused(port, first + payload, flood)
        if first:
            self.assertTrue(data.startswith(b"RTSP/1.0 200 OK\r\n"), data[:200])
            data = data[data.index(b"\r\n\r\n") + 4:]
        return data, closed, sent

    def heads_over_the_limits(self, mode):
        server, _, port = start_server(self.media, "--ts-sessions", mode)
        try:
            request = b"OPTIONS rtsp://127.0.0.1/ RTSP/1.0\r\nCSeq: 1\r\n"
            # the first head of a connection, and a head after a request
            # answered (of the MPEG-TS file, which the shared sender answers,
            # and of the MP4, which gst-rtsp-server does)
            for first in (b"", b"OPTIONS rtsp://127.0.0.1:%d/clip.ts RTSP/1.0"
                          b"\r\nCSeq: 1\r\n\r\n" % port,
                          b"OPTIONS rtsp://127.0.0.1:%d/clip.mp4 RTSP/1.0"
                          b"\r\nCSeq: 1\r\n\r\n" % port):
                with self.subTest(after=first[:40]):
                    self.refused_heads(port, first, request)
            # garbage that is not a request line
            data, closed, _ = self.refused(port, b"hello there\r\n\r\n")
            self.assertTrue(data.startswith(b"RTSP/1.0 400 Bad Request\r\n"),
                            data)
            self.assertTrue(closed)
            # a head within the limits (20 KiB of headers) is answered, the
            # first and the next
            with socket.create_connection(("127.0.0.1", port),
                                          timeout=10) as c:
                for cseq in (1, 2):
                    status, _ = rtsp_request(
                        c, "OPTIONS", "rtsp://127.0.0.1:%d/" % port, cseq,
                        "".join("X-Filler-%d: %s\r\n" % (i, "a" * 1000)
                                for i in range(20)))
                    self.assertEqual(status, "RTSP/1.0 200 OK")
            self.check_normal_client(port)
            lines = server_lines(server.stdout, ["refused: "], 5)
            self.assertIn("refused: ", lines)
        finally:
            stop(server)

    def refused_heads(self, port, first, request):
        # header lines without an end: refused once past 32 KiB
        data, closed, sent = self.refused_after(
            port, first, request,
            lambda: b"X-Filler: " + b"a" * 1000 + b"\r\n")
        self.assertTrue(data.startswith(
            b"RTSP/1.0 431 Request Header Fields Too Large\r\n"), data)
        self.assertTrue(closed)
        self.assertLess(sent, 50 << 20)
        # 1 MB without a newline
        data, closed, _ = self.refused_after(
            port, first, b"OPTIONS rtsp://127.0.0.1/" + b"a" * (1 << 20))
        self.assertTrue(data.startswith(
            b"RTSP/1.0 431 Request Header Fields Too Large\r\n"), data)
        self.assertTrue(closed)
        # NUL bytes
        data, closed, _ = self.refused_after(port, first, b"\0" * 5000)
        self.assertTrue(data.startswith(b"RTSP/1.0 400 Bad Request\r\n"),
                        data)
        self.assertTrue(closed)

    # ---- 2: idle connections ----

    def test_idle_connections_closed_playing_kept(self):
        server, _, port = start_server(self.media, "--idle-timeout", "2")
        try:
            time.sleep(0.5)
            baseline = open_fds(server.pid)
            playing = [play_udp(port, "/clip.ts"), play_udp(port, "/clip.mp4")]
            idle = []
            # silent from the start
            for _ in range(100):
                idle.append(socket.create_connection(("127.0.0.1", port),
                                                     timeout=10))
            # one request, never a SETUP: to gst-rtsp-server (OPTIONS) and
            # to the shared sender's side (DESCRIBE of an MPEG-TS file)
            for i in range(40):
                c = socket.create_connection(("127.0.0.1", port), timeout=10)
                if i % 2:
                    status, _ = rtsp_request(
                        c, "OPTIONS", "rtsp://127.0.0.1:%d/" % port, 1)
                else:
                    status, _, _ = rtsp_exchange(
                        c, "DESCRIBE", "rtsp://127.0.0.1:%d/clip.ts" % port, 1)
                self.assertEqual(status, "RTSP/1.0 200 OK")
                idle.append(c)
            # a head begun and never ended
            for _ in range(10):
                c = socket.create_connection(("127.0.0.1", port), timeout=10)
                c.sendall(b"OPTIONS rtsp://127.0.0.1/ RTSP/1.0\r\n")
                idle.append(c)
            time.sleep(0.5)
            self.assertGreaterEqual(open_fds(server.pid), baseline + 150)
            start = time.monotonic()
            for c in idle:
                data, closed = read_until_closed(c, 15)
                self.assertTrue(closed, "an idle connection stayed open")
                self.assertEqual(data, b"")
            # closed after the timeout, not before (generous bound after)
            self.assertGreaterEqual(time.monotonic() - start, 1)
            for c in idle:
                c.close()
            # the playing sessions' connections stay, and answer
            for i, (c, session, rtp) in enumerate(playing):
                status, _ = rtsp_request(
                    c, "GET_PARAMETER", "rtsp://127.0.0.1:%d/" % port, 10,
                    session)
                self.assertEqual(status, "RTSP/1.0 200 OK", i)
            self.assertEqual(len(playing[0][2].recv(2048)) > 12, True)
            lines = server_lines(server.stdout, ["idle: closed "], 5)
            self.assertIn("idle: closed ", lines)
            # the descriptors went back
            deadline = time.monotonic() + 10
            while (open_fds(server.pid) > baseline + 40 and
                   time.monotonic() < deadline):
                time.sleep(0.2)
            self.assertLessEqual(open_fds(server.pid), baseline + 40)
            server.send_signal(signal.SIGINT)
            self.assertEqual(server.wait(20), 0)
            last = read_lines(server.stdout, lambda l: False, 5)
            self.assertTrue(last, "no last line")
            self.assertIn(" 150 idle connections closed", last[-1])
            for c, _, rtp in playing:
                c.close()
                rtp.close()
        finally:
            if server.poll() is None:
                stop(server)

    # ---- 4: files that cannot be served ----

    def test_unservable_files(self):
        bad = os.path.join(self.tmp.name, "bad")
        os.mkdir(bad)
        os.chmod(bad, 0o755)
        open(os.path.join(bad, "empty.ts"), "wb").close()
        with open(os.path.join(bad, "noise.mp4"), "wb") as f:
            f.write(bytes(range(256)) * 40)
        locked = os.path.join(bad, "locked.mp4")
        with open(self.mp4, "rb") as src, open(locked, "wb") as dst:
            dst.write(src.read())
        os.chmod(locked, 0)
        env = dict(os.environ)
        preexec = None
        if os.geteuid() == 0:
            # root reads any file: the server runs as nobody, its registry
            # where nobody may write
            env["GST_REGISTRY_1_0"] = os.path.join(self.tmp.name,
                                                   "nobody.registry")
            open(env["GST_REGISTRY_1_0"], "wb").close()
            os.chown(env["GST_REGISTRY_1_0"], 65534, 65534)

            def preexec():
                os.setgid(65534)
                os.setuid(65534)
        server = subprocess.Popen(
            [SERVER, "--port", "0", "--address", "127.0.0.1", bad],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env, preexec_fn=preexec)
        try:
            url = server.stdout.readline().strip()
            self.assertTrue(url.startswith("rtsp://127.0.0.1:"), url)
            port = int(url.rsplit(":", 1)[1].strip("/"))
            with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
                # a SETUP without a DESCRIBE gets what a DESCRIBE gets
                for cseq, (name, want) in enumerate([
                        ("empty.ts", "415 Unsupported Media Type"),
                        ("noise.mp4", "415 Unsupported Media Type"),
                        ("locked.mp4", "404 Not Found")]):
                    for method in ("DESCRIBE", "SETUP"):
                        status, _ = rtsp_request(
                            c, method, "%s%s%s" % (
                                url, name,
                                "/stream=0" if method == "SETUP" else ""),
                            cseq * 2 + (method == "SETUP") + 1,
                            "Transport: RTP/AVP;unicast;client_port=5000-5001"
                            "\r\n" if method == "SETUP" else "")
                        self.assertEqual(status, "RTSP/1.0 " + want,
                                         (method, name))
            lines = server_lines(server.stderr, [
                "gpustream-server: /empty.ts: 415 Unsupported Media Type: "
                "the file is empty",
                "gpustream-server: /noise.mp4: 415 Unsupported Media Type: "
                "the file is of no media type",
                "gpustream-server: /locked.mp4: 404 Not Found: the file "
                "cannot be read: Permission denied"], 10)
            self.assertEqual(len(lines), 3, lines)
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()
            server.stderr.close()

    # ---- 5: SIGINT ----

    def test_sigint_stops_cleanly(self):
        server, _, port = start_server(self.media)
        try:
            playing = [play_udp(port, "/clip.ts"), play_udp(port, "/clip.mp4")]
            for _, _, rtp in playing:
                self.assertGreater(len(rtp.recv(2048)), 12)
            server.send_signal(signal.SIGINT)
            self.assertEqual(server.wait(20), 0)
            lines = read_lines(server.stdout, lambda l: False, 5)
            self.assertTrue(lines, "no last line")
            self.assertTrue(lines[-1].startswith(
                "gpustream-server: stopped by SIGINT: 2 sessions ended"),
                lines[-1])
            for c, _, rtp in playing:
                c.close()
                rtp.close()
        finally:
            if server.poll() is None:
                stop(server)

    # ---- 3: HTTP ----

    def http(self, port, head):
        """one request on a new connection: (status line, headers, body)"""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(head.encode())
            data, closed = read_until_closed(c, 10)
        self.assertTrue(closed)
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return lines[0], headers, body

    def test_http_absolute_form_and_validators(self):
        server, _, _ = start_server(self.media, "--http-port", "0")
        try:
            http_url = server.stdout.readline().strip()
            self.assertTrue(http_url.startswith("http://127.0.0.1:"), http_url)
            port = int(http_url.rsplit(":", 1)[1].strip("/"))
            with open(self.clip, "rb") as f:
                data = f.read()
            mtime = os.stat(self.clip).st_mtime
            last_modified = time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                          time.gmtime(mtime))
            url = "http://127.0.0.1:%d/clip.ts" % port
            # the absolute form (RFC 9112 3.2.2)
            status, headers, body = self.http(
                port, "HEAD %s HTTP/1.1\r\nHost: x\r\nConnection: close"
                "\r\n\r\n" % url)
            self.assertEqual(status, "HTTP/1.1 200 OK")
            self.assertEqual(int(headers["content-length"]), len(data))
            self.assertEqual(body, b"")
            status, headers, body = self.http(
                port, "GET %s?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n"
                % url)
            self.assertEqual(status, "HTTP/1.1 200 OK")
            self.assertEqual(body, data)
            status, _, _ = self.http(
                port, "GET http://127.0.0.1:%d HTTP/1.1\r\nConnection: close"
                "\r\n\r\n" % port)
            self.assertEqual(status, "HTTP/1.1 404 Not Found")
            # the validators
            self.assertEqual(headers["last-modified"], last_modified)
            etag = headers["etag"]
            self.assertRegex(etag, r'^"[0-9a-f]+-[0-9a-f]+"$')
            date = time.mktime(time.strptime(headers["date"],
                                             "%a, %d %b %Y %H:%M:%S GMT"))
            self.assertLess(abs(date - time.mktime(time.gmtime())), 60)

            def get(extra):
                return self.http(port, "GET /clip.ts HTTP/1.1\r\n%s"
                                 "Connection: close\r\n\r\n" % extra)
            status, headers, body = get("If-None-Match: %s\r\n" % etag)
            self.assertEqual(status, "HTTP/1.1 304 Not Modified")
            self.assertEqual((body, headers["etag"]), (b"", etag))
            status, _, _ = get('If-None-Match: "x", W/%s\r\n' % etag)
            self.assertEqual(status, "HTTP/1.1 304 Not Modified")
            status, _, _ = get("If-Modified-Since: %s\r\n" % last_modified)
            self.assertEqual(status, "HTTP/1.1 304 Not Modified")
            earlier = time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                    time.gmtime(mtime - 3600))
            status, _, body = get("If-Modified-Since: %s\r\n" % earlier)
            self.assertEqual((status, body), ("HTTP/1.1 200 OK", data))
            # If-None-Match takes precedence over If-Modified-Since
            status, _, body = get('If-None-Match: "other"\r\n'
                                  "If-Modified-Since: %s\r\n" % last_modified)
            self.assertEqual((status, body), ("HTTP/1.1 200 OK", data))
            # If-Range: the range of this file, the whole of another
            status, _, body = get("Range: bytes=0-187\r\nIf-Range: %s\r\n"
                                  % etag)
            self.assertEqual((status, body),
                             ("HTTP/1.1 206 Partial Content", data[:188]))
            status, _, body = get("Range: bytes=0-187\r\nIf-Range: %s\r\n"
                                  % last_modified)
            self.assertEqual((status, body),
                             ("HTTP/1.1 206 Partial Content", data[:188]))
            status, _, body = get('Range: bytes=0-187\r\nIf-Range: "old"'
                                  "\r\n")
            self.assertEqual((status, body), ("HTTP/1.1 200 OK", data))
            # curl: a conditional GET, a copy with the file's time, and the
            # absolute form (curl sends it to a proxy)
            out = os.path.join(self.tmp.name, "curl.ts")
            run = subprocess.run(
                ["curl", "-sS", "-o", out, "-w", "%{http_code}", "-H",
                 "If-None-Match: " + etag, url],
                capture_output=True, text=True, timeout=30, env=curl_env())
            self.assertEqual(run.stdout, "304", run.stderr)
            run = subprocess.run(
                ["curl", "-sS", "-R", "-o", out, "-w", "%{http_code}", url],
                capture_output=True, text=True, timeout=30, env=curl_env())
            self.assertEqual(run.stdout, "200", run.stderr)
            run = subprocess.run(
                ["curl", "-sS", "-z", out, "-o", "/dev/null", "-w",
                 "%{http_code}", url],
                capture_output=True, text=True, timeout=30, env=curl_env())
            self.assertEqual(run.stdout, "304", run.stderr)
            run = subprocess.run(
                ["curl", "-sS", "-x", "http://127.0.0.1:%d" % port, "-o", out,
                 "-w", "%{http_code}", "http://media.example/clip.ts"],
                capture_output=True, text=True, timeout=30, env=curl_env())
            self.assertEqual(run.stdout, "200", run.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), data)
        finally:
            stop(server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
