#!/usr/bin/env python3
"""gpustream-server with many clients at once, its session limits, and the
client script of docs/server.md: concurrent rtspsrc sessions each get every
frame; --max-sessions refuses one more (503) until --session-timeout frees
an idle session; pipelines/server-nc-client.sh gets the file back."""

import os
import select
import shlex
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
from server_helpers import (make_ts_clip, read_lines, rtsp_request,  # noqa: E402
                            run_client, server_lines, setup_udp, start_server,
                            start_server_with_file_limit, stop)

SERVER = os.environ.get("GPUSTREAM_SERVER")
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FRAMES = 60   # 2 s at 30 frames/s


class ServerSessions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Gst.init(None)
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-sessions-")
        cls.media = os.path.join(cls.tmp.name, "media")
        os.mkdir(cls.media)
        cls.clip = os.path.join(cls.media, "clip.ts")
        make_ts_clip(cls.clip, FRAMES)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_concurrent_sessions_each_get_every_frame(self):
        server, url, _ = start_server(self.media)
        try:
            clients = []
            for i in range(8):
                # half over RTP/UDP, half interleaved in the RTSP connection
                protocols = "tcp" if i % 2 else "udp"
                clients.append((protocols, gst_client.start(
                    "rtspsrc location=%sclip.ts protocols=%s "
                    "udp-buffer-size=4194304 ! rtpmp2tdepay ! tsdemux ! "
                    "h264parse ! avdec_h264 ! fakesink name=count sync=false"
                    % (url, protocols), 30, sink="count")))
            for protocols, client in clients:
                err, frames = client.result()
                self.assertIsNone(err, protocols)
                if protocols == "tcp":
                    self.assertEqual(len(frames), FRAMES)
                else:
                    self.assertGreaterEqual(len(frames), FRAMES * 9 // 10)
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()

    def test_max_sessions_and_session_timeout(self):
        server, _, port = start_server(self.media, "--max-sessions", "1",
                                       "--session-timeout", "2")
        try:
            first, status, headers = setup_udp(port, "/clip.ts")
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIn("timeout=2", headers.get("session", ""))
            second, status, _ = setup_udp(port, "/clip.ts")
            self.assertEqual(status, "RTSP/1.0 503 Service Unavailable")
            second.close()
            # the first client stays connected but silent: its session
            # expires (gst-rtsp-server adds 5 s of grace to the timeout)
            start = time.monotonic()
            while True:
                third, status, _ = setup_udp(port, "/clip.ts")
                waited = time.monotonic() - start
                if status != "RTSP/1.0 503 Service Unavailable" or waited > 12:
                    break
                third.close()
                time.sleep(0.5)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertGreaterEqual(waited, 2)
            self.assertLessEqual(waited, 2 + 5 + 2)
            third.close()
            first.close()
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()

    def test_seek_pause_teardown(self):
        """An MP4 mount seeks (the reply's Range starts where asked); pause
        and teardown answer, and the session is gone after teardown"""
        mp4 = os.path.join(self.media, "clip.mp4")
        p = Gst.parse_launch(
            "filesrc location=%s ! tsdemux ! h264parse ! mp4mux ! "
            "filesink location=%s" % (self.clip, mp4))
        p.set_state(Gst.State.PLAYING)
        msg = p.get_bus().timed_pop_filtered(
            30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        p.set_state(Gst.State.NULL)
        self.assertEqual(msg.type, Gst.MessageType.EOS)
        server, url, port = start_server(self.media)
        rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rtp.bind(("127.0.0.1", 0))
        rtp.settimeout(5)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                u = url + "clip.mp4"
                status, headers = rtsp_request(c, "DESCRIBE", u, 1,
                                               "Accept: application/sdp\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, headers = rtsp_request(
                    c, "SETUP", u + "/stream=0", 2,
                    "Transport: RTP/AVP;unicast;client_port=%d-%d\r\n"
                    % (rtp.getsockname()[1], rtp.getsockname()[1] + 1))
                self.assertEqual(status, "RTSP/1.0 200 OK")
                session = "Session: %s\r\n" % headers["session"].split(";")[0]
                status, headers = rtsp_request(c, "PLAY", u, 3,
                                               session + "Range: npt=1-\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                self.assertTrue(headers["range"].startswith("npt=1-"),
                                headers["range"])
                packet = rtp.recv(2048)
                self.assertEqual(packet[0] >> 6, 2, "not an RTP packet")
                status, _ = rtsp_request(c, "PAUSE", u, 4, session)
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, _ = rtsp_request(c, "TEARDOWN", u, 5, session)
                self.assertEqual(status, "RTSP/1.0 200 OK")
                status, _ = rtsp_request(c, "PLAY", u, 6, session)
                self.assertEqual(status, "RTSP/1.0 454 Session Not Found")
        finally:
            rtp.close()
            server.terminate()
            server.wait(10)
            server.stdout.close()

    def test_bad_requests_and_vanishing_clients(self):
        """Malformed requests get 400; clients that vanish in the middle of
        playing (no TEARDOWN) leave no descriptor and no thread behind, and
        everyone else is still served"""
        server, url, port = start_server(self.media)
        proc = "/proc/%d" % server.pid

        def resources():
            return (len(os.listdir(proc + "/fd")), len(os.listdir(proc + "/task")))

        try:
            for request in (b"GARBAGE\r\n\r\n", b"DESCRIBE nothing\r\n\r\n"):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                    c.sendall(request)
                    self.assertTrue(c.recv(4096).startswith(
                        b"RTSP/1.0 400 Bad Request"), request)
                    # the server closes it: its descriptor is gone before
                    # the count below
                    while c.recv(4096):
                        pass
            # the server's end of a refused connection may close a little
            # after its client saw the end (under the sanitizers it was once
            # still counted here, and gone by the count while playing):
            # counted once the counts hold still for half a second
            before = resources()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                time.sleep(0.5)
                now = resources()
                if now == before:
                    break
                before = now
            for i in range(30):
                c = socket.create_connection(("127.0.0.1", port), timeout=10)
                status, headers = rtsp_request(
                    c, "SETUP", url + "clip.ts/stream=0", 1,
                    "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
                self.assertEqual(status, "RTSP/1.0 200 OK")
                c.sendall(("PLAY %sclip.ts RTSP/1.0\r\nCSeq: 2\r\n"
                           "Session: %s\r\n\r\n"
                           % (url, headers["session"].split(";")[0])).encode())
                self.assertTrue(c.recv(4096).startswith(b"RTSP/1.0 200 OK"))
                if i == 0:
                    playing = resources()
                c.close()
            # a plain MPEG-TS session is its connection and a place in the
            # shared sender: no thread of its own
            self.assertGreater(playing[0], before[0])
            self.assertEqual(playing[1], before[1])
            deadline = time.monotonic() + 10
            while (any(now > then for now, then in zip(resources(), before))
                   and time.monotonic() < deadline):
                time.sleep(0.2)
            after = resources()
            self.assertLessEqual(after[0], before[0], "descriptors leaked")
            self.assertLessEqual(after[1], before[1], "threads leaked")
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                status, _ = rtsp_request(c, "DESCRIBE", url + "clip.ts", 1)
                self.assertEqual(status, "RTSP/1.0 200 OK")
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()

    def test_thousands_of_half_open_connections(self):
        """3000 connections that never finish a request (half send nothing,
        half the start of one) are all accepted, without resets, on one
        descriptor each and a bounded number of threads, while a new client
        is answered at once; closed, they leave nothing behind"""
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        count = 3000
        if hard < count + 200:
            self.skipTest("open-file limit %d is below %d" % (hard, count + 200))
        # the server inherits the limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        # idle connections are kept here: the default idle timeout (30 s)
        # is within reach of this test's own bounds on a slow build
        server, url, port = start_server(self.media, "--idle-timeout", "600")
        proc = "/proc/%d" % server.pid
        conns = []

        def resources():
            return (len(os.listdir(proc + "/fd")), len(os.listdir(proc + "/task")))

        try:
            before = resources()
            t0 = time.monotonic()
            for i in range(count):
                # a dropped SYN costs a second: a few of them fail the test
                self.assertLess(time.monotonic() - t0, 20,
                                "connecting stalls (listen backlog full?)")
                c = socket.create_connection(("127.0.0.1", port), timeout=10)
                if i % 2:
                    c.sendall(b"DESCRIBE rtsp://127.0.0.1/clip.ts RTSP/1.0\r\n"
                              b"CSeq: 1\r\n")
                conns.append(c)
            # every one accepted: a short listen backlog would have the
            # kernel drop or reset most of them
            deadline = time.monotonic() + 20
            while (resources()[0] < before[0] + count
                   and time.monotonic() < deadline):
                time.sleep(0.2)
            fds, threads = resources()
            self.assertGreaterEqual(fds, before[0] + count)
            # one descriptor a connection, threads from a bounded pool
            # (--client-threads, 16)
            self.assertLessEqual(fds, before[0] + count + 2 * 16 + 8)
            self.assertLessEqual(threads, before[1] + 16 + 4)
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                t0 = time.monotonic()
                status, _ = rtsp_request(c, "DESCRIBE", url + "clip.ts", 1)
                self.assertEqual(status, "RTSP/1.0 200 OK")
                self.assertLess(time.monotonic() - t0, 1.0)
            poller = select.poll()
            for c in conns:
                poller.register(c, select.POLLIN)
            self.assertEqual(poller.poll(0), [], "the server closed or "
                             "answered a connection that sent no request")
            for c in conns:
                c.close()
            conns = []
            deadline = time.monotonic() + 20
            while (any(now > then for now, then in zip(resources(), before))
                   and time.monotonic() < deadline):
                time.sleep(0.2)
            after = resources()
            self.assertLessEqual(after[0], before[0], "descriptors leaked")
            self.assertLessEqual(after[1], before[1], "threads leaked")
        finally:
            for c in conns:
                c.close()
            stop(server)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    def test_open_file_limit_refuses_not_crashes(self):
        """Under a low open-file limit the server refuses sessions it has no
        descriptors for (503, and a line on stderr) instead of dying when
        GLib cannot make one; once sessions end it serves again"""
        # network-coded sessions on pipelines: a pipeline each, with its
        # descriptors (on the shared sender they take none)
        server, url, port = start_server_with_file_limit(
            self.media, 1000, "--ts-sessions", "pipeline")
        conns, answers = [], []
        try:
            for i in range(80):
                sock, status, headers = setup_udp(port, "/nc/clip.ts")
                conns.append(sock)
                answers.append(status)
                if status == "RTSP/1.0 200 OK":
                    sock.sendall(("PLAY %snc/clip.ts RTSP/1.0\r\nCSeq: 2\r\n"
                                  "Session: %s\r\n\r\n" % (
                                      url, headers["session"].split(";")[0])
                                  ).encode())
                    self.assertTrue(sock.recv(4096).startswith(
                        b"RTSP/1.0 200 OK"))
                self.assertIsNone(server.poll(), "the server died")
            served = answers.count("RTSP/1.0 200 OK")
            refused = answers.count("RTSP/1.0 503 Service Unavailable")
            self.assertEqual(served + refused, len(answers), answers)
            self.assertGreaterEqual(served, 10)
            self.assertGreaterEqual(refused, 1)
            for c in conns:
                c.close()
            conns = []
            # the sessions of closed connections are freed; then one more
            # session is served
            deadline = time.monotonic() + 20
            status = None
            while time.monotonic() < deadline:
                sock, status, _ = setup_udp(port, "/nc/clip.ts")
                sock.close()
                if status == "RTSP/1.0 200 OK":
                    break
                time.sleep(0.5)
            self.assertEqual(status, "RTSP/1.0 200 OK")
            self.assertIsNone(server.poll(), "the server died")
        finally:
            for c in conns:
                c.close()
            server.terminate()
            _, err = server.communicate(timeout=10)
            server.stdout.close()
        self.assertIn("file descriptors open: new sessions are refused", err)

    def test_out_of_descriptors_refuses_without_spinning(self):
        """With every descriptor taken by connections that send nothing,
        the server takes each further client with a descriptor it held back,
        answers 503 and closes it, instead of being woken for it again and
        again at full CPU; once the connections close it serves again (and a
        limit below the 512 it keeps free for sessions still serves)"""
        server, url, port = start_server_with_file_limit(self.media, 100)
        conns, refused = [], 0

        def cpu_s():
            with open("/proc/%d/stat" % server.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf(
                "SC_CLK_TCK")
        try:
            for _ in range(150):
                conns.append(socket.create_connection(("127.0.0.1", port),
                                                      timeout=10))
            time.sleep(1.0)
            before = cpu_s()
            time.sleep(3.0)
            spent = cpu_s() - before
            self.assertLess(spent, 0.5, "the server spun on its listening "
                            "socket: %.2f s of CPU in 3 s" % spent)
            self.assertIsNone(server.poll(), "the server died")
            poller = select.poll()
            for c in conns:
                poller.register(c, select.POLLIN)
            for fd, _ in poller.poll(0):
                c = next(c for c in conns if c.fileno() == fd)
                reply = c.recv(4096)
                self.assertIn(reply, (b"", b"RTSP/1.0 503 Service Unavailable"
                                      b"\r\nContent-Length: 0\r\n\r\n"))
                refused += 1
            self.assertGreater(refused, 0)
            for c in conns:
                c.close()
            conns = []
            deadline = time.monotonic() + 20
            status = None
            while time.monotonic() < deadline:
                with socket.create_connection(("127.0.0.1", port),
                                              timeout=10) as c:
                    status, _ = rtsp_request(c, "DESCRIBE", url + "clip.ts", 1)
                if status == "RTSP/1.0 200 OK":
                    break
                time.sleep(0.5)
            self.assertEqual(status, "RTSP/1.0 200 OK")
        finally:
            for c in conns:
                c.close()
            server.terminate()
            _, err = server.communicate(timeout=10)
            server.stdout.close()
        self.assertIn("no file descriptor left: clients are refused", err)

    def test_bad_command_lines(self):
        missing = os.path.join(self.tmp.name, "no-such-dir")
        for argv, says in (([missing], "is not a readable directory"),
                           ([self.clip], "is not a readable directory"),
                           ([], "give one directory"),
                           (["--port", "70000", self.media], "out of range"),
                           (["--nc-block-size", "0", self.media], "out of range"),
                           (["--cycle", "50", self.media], "cycle 0 or >= 100"),
                           (["--backend", "fpga", self.media],
                            "--backend is auto, cpu, gpu or hybrid"),
                           (["--ts-sessions", "threads", self.media],
                            "--ts-sessions is shared or pipeline")):
            run = subprocess.run([SERVER, *argv], capture_output=True,
                                 text=True, timeout=10)
            self.assertEqual(run.returncode, 2, argv)
            self.assertIn(says, run.stderr, argv)
            self.assertEqual(run.stdout, "", argv)

    def test_backends(self):
        """--backend reaches every session's ncencoder: where ncencoder can
        run with it, the network-coded mount gives the file back; where it
        cannot (gpu or hybrid without a CUDA device), the mount is refused
        with 503, the server says why on stderr, and plain mounts still play"""
        with open(self.clip, "rb") as f:
            want = f.read()
        for backend in ("cpu", "gpu", "hybrid"):
            probe = Gst.parse_launch(
                "fakesrc num-buffers=1 ! ncencoder backend=%s ! fakesink"
                % backend)
            probe.set_state(Gst.State.PLAYING)
            msg = probe.get_bus().timed_pop_filtered(
                10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            probe.set_state(Gst.State.NULL)
            runs = msg.type == Gst.MessageType.EOS
            reason = None if runs else msg.parse_error()[0].message
            # on the simulated device (the -gpusim run) every backend runs
            if os.environ.get("GS_TEST_GPU"):
                self.assertTrue(runs, "%s: %s" % (backend, reason))

            server = subprocess.Popen(
                [SERVER, "--port", "0", "--address", "127.0.0.1", "--backend",
                 backend, self.media], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            try:
                url = server.stdout.readline().strip()
                port = int(url.rsplit(":", 1)[1].strip("/"))
                with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                    status, _ = rtsp_request(c, "DESCRIBE", url + "nc/clip.ts", 1)
                    plain, _ = rtsp_request(c, "DESCRIBE", url + "clip.ts", 2)
                self.assertEqual(plain, "RTSP/1.0 200 OK", backend)
                if runs:
                    self.assertEqual(status, "RTSP/1.0 200 OK", backend)
                    out = os.path.join(self.tmp.name, "nc-%s.ts" % backend)
                    err, _ = gst_client.play(
                        "rtspsrc location=%snc/clip.ts protocols=tcp ! "
                        "rtpncdepay ! ncdecoder ! filesink location=%s"
                        % (url, out), 30, sink=None)
                    self.assertIsNone(err, backend)
                    with open(out, "rb") as f:
                        self.assertTrue(f.read() == want, backend)
                    # the shared sender coded the generations where asked
                    # (auto: on the GPU where there is one)
                    wanted = "nc /nc/clip.ts: shared sender sent "
                    line = server_lines(server.stdout, [wanted], 10).get(wanted)
                    self.assertIsNotNone(line, backend)
                    if os.environ.get("GS_TEST_GPU"):
                        self.assertTrue(line.endswith("(backend %s)" % backend),
                                        line)
                else:
                    self.assertEqual(status, "RTSP/1.0 503 Service Unavailable",
                                     backend)
                    # the media's bus reports the error once the reply is out
                    ready, _, _ = select.select([server.stderr], [], [], 10)
                    self.assertTrue(ready, "nothing on stderr")
                    self.assertEqual(server.stderr.readline().strip(),
                                     "gpustream-server: ncencoder0: " + reason)
            finally:
                server.terminate()
                server.wait(10)
                server.stdout.close()
                server.stderr.close()

    def test_nc_sessions_through_the_scheduler(self):
        """--cycle puts every network-coded session on the device's
        real-time scheduler: concurrent sessions each give the file back
        byte for byte, and each encoder reports batches launched by the
        scheduler. Without --cycle, the shared sender codes them (its line
        says so), and the decoder gives the same bytes"""
        with open(self.clip, "rb") as f:
            want = f.read()
        for cycle, clients in (("1000", 3), ("0", 1)):
            server, url, _ = start_server(self.media, "--cycle", cycle,
                                          "--backend", "cpu")
            try:
                runs = []
                for i in range(clients):
                    out = os.path.join(self.tmp.name, "cycle-%s-%d.ts" % (cycle, i))
                    runs.append((gst_client.start(
                        "rtspsrc location=%snc/clip.ts protocols=tcp ! "
                        "rtpncdepay ! ncdecoder ! filesink location=%s"
                        % (url, out), 30, sink=None), out))
                for client, out in runs:
                    err, _ = client.result()
                    self.assertIsNone(err, cycle)
                    with open(out, "rb") as f:
                        self.assertTrue(f.read() == want, out)
                said = "ncencoder" if cycle != "0" else "shared sender"
                ended = [line for line in read_lines(
                    server.stdout, lambda lines: len(lines) >= clients, 15)
                    if line.startswith("nc /nc/clip.ts: %s sent " % said)]
                self.assertEqual(len(ended), clients, ended)
                for line in ended:
                    if cycle == "0":
                        self.assertTrue(line.endswith(" generations (backend cpu)"), line)
                    else:
                        batches = int(line.rsplit(", ", 1)[1].split()[0])
                        self.assertGreater(batches, 0, line)
            finally:
                stop(server)

    def test_nc_client_script_gets_the_file(self):
        server, url, _ = start_server(self.media, "--nc-redundancy-percent", "10")
        out = os.path.join(self.tmp.name, "received.ts")
        try:
            # (rtspsrc's own shutdown race, which stock servers meet too, is
            # run again once: run_client)
            run = run_client(" ".join(shlex.quote(a) for a in (
                os.path.join(SOURCE_ROOT, "pipelines", "server-nc-client.sh"),
                url + "nc/clip.ts", out, "tcp")), timeout=60)
        finally:
            server.terminate()
            server.wait(10)
            server.stdout.close()
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        with open(self.clip, "rb") as f:
            want = f.read()
        self.assertIn("server-nc-client: %d bytes in %s" % (len(want), out),
                      run.stdout)
        with open(out, "rb") as f:
            self.assertTrue(f.read() == want, "decoded bytes differ from the file")


if __name__ == "__main__":
    if not SERVER:
        sys.exit("GPUSTREAM_SERVER: the path of the gpustream-server program")
    unittest.main(verbosity=2)
