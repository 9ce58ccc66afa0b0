#!/usr/bin/env python3
"""The load generator of ./run bench server (tests/tools/rtsp_load.py)
against gpustream-server on a free loopback port: 20 sessions arriving as a
Poisson process over 5 channels each receive the 750 kbit/s of their file,
with a response time and the server's CPU, threads and open files sampled;
the network-coded and SRTP mounts are served at their rate too; rounds of
50 concurrent sessions on each mount, repeated, leave no threads and no
memory behind; a run
against a path that is not there reports every session's 404 and exits
non-zero."""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import unittest

SERVER = os.environ.get("GPUSTREAM_SERVER")
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LOAD = os.path.join(SOURCE_ROOT, "tests", "tools", "rtsp_load.py")
DOC = os.path.join(SOURCE_ROOT, "docs", "benchmarks", "server.md")
CHANNELS = ["ch%d.ts" % i for i in range(5)]
# every response here is far under this; the bench's bound is what it measures
RESPONSE_BOUND_MS = 3000


def make_media(directory):
    """8 s of 750 kbit/s MPEG-TS (mpegtsmux pads to the rate), as five
    channels (hard links)"""
    path = os.path.join(directory, CHANNELS[0])
    subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=240",
                    "pattern=ball", "!", "video/x-raw,width=320,height=240,framerate=30/1",
                    "!", "x264enc", "speed-preset=ultrafast", "bitrate=600",
                    "key-int-max=30", "vbv-buf-capacity=500", "!", "mpegtsmux",
                    "bitrate=750000", "!", "filesink", "location=" + path],
                   check=True, timeout=60)
    for name in CHANNELS[1:]:
        os.link(path, os.path.join(directory, name))


class ServerLoad(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpustream-load-")
        make_media(cls.tmp.name)
        cls.server = subprocess.Popen(
            [SERVER, "--port", "0", "--address", "127.0.0.1", "--backend", "cpu",
             cls.tmp.name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = cls.server.stdout.readline().strip()
        assert line.startswith("rtsp://127.0.0.1:"), line
        cls.url = line
        # what the server prints per session must not fill its pipe
        cls.server.stdout.close()

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(10)
        cls.tmp.cleanup()

    def load(self, sessions, rate, hold, channels=CHANNELS, *extra):
        out = subprocess.run(
            [sys.executable, LOAD, "--url", self.url, "--channels", ",".join(channels),
             "--sessions", str(sessions), "--rate", str(rate), "--hold", str(hold),
             "--pid", str(self.server.pid), "--per-session",
             "--response-bound-ms", str(RESPONSE_BOUND_MS)] + list(extra),
            capture_output=True, text=True, timeout=60)
        return out.returncode, json.loads(out.stdout), out.stderr

    def assert_full_rate(self, rc, report, sessions):
        self.assertEqual(report["sessions"], sessions)
        self.assertEqual(report["errors"], 0, report["error_examples"])
        for s in report["per_session"]:
            self.assertIsNone(s["error"], s)
            self.assertTrue(s["full_rate"], s)
            self.assertGreaterEqual(s["rate_kbps"], 0.95 * 750, s)
            # the server sends the first packet at once, never before the
            # request
            self.assertGreater(s["response_ms"], 0, s)
            self.assertLess(s["response_ms"], RESPONSE_BOUND_MS, s)
            self.assertGreater(s["setup_ms"], 0, s)
            # the first packet leaves with the PLAY answer: over UDP it may
            # be read first, by a fraction of a millisecond
            self.assertLessEqual(s["setup_ms"], s["response_ms"] + 2, s)
        self.assertEqual(report["full_rate"], sessions)
        self.assertTrue(report["passed"])
        self.assertEqual(rc, 0)
        self.assertEqual(len(report["response_cdf_ms"]), 21)
        self.assertEqual(report["response_cdf_ms"],
                         sorted(report["response_cdf_ms"]))

    def test_sessions_get_their_rate(self):
        rc, report, err = self.load(20, 8, 4)
        self.assert_full_rate(rc, report, 20)
        self.assertEqual(report["channels"], 5)
        self.assertGreaterEqual(report["peak_concurrent"], 10)
        # the sessions went to more than one channel
        self.assertGreater(len({s["channel"] for s in report["per_session"]}), 1)
        # each got about 4 s of 750 kbit/s: 375 kB, less the start-up delay
        for s in report["per_session"]:
            self.assertGreater(s["bytes"], 300000, s)
        # the server was sampled while it served: its threads, open files
        # (a connection each; the shared sender's threads do not grow)
        self.assertGreater(len(report["server_process_series"]), 4)
        self.assertGreater(report["server_process"]["threads_max"], 2)
        self.assertGreater(report["server_process"]["fds_max"],
                           report["peak_concurrent"])
        self.assertIn("cpu_mean", report["generator"])

    def test_nc_and_srtp_mounts_at_rate(self):
        rc, report, err = self.load(5, 5, 3, CHANNELS, "--prefix", "nc/")
        self.assert_full_rate(rc, report, 5)
        # 30 % redundancy by default: more coded bytes than the file's
        self.assertGreater(report["rate_kbps_min"], 1.1 * 750)
        rc, report, err = self.load(5, 5, 3, CHANNELS, "--prefix", "srtp/", "--srtp")
        self.assert_full_rate(rc, report, 5)
        self.assertLess(report["rate_kbps_mean"], 1.05 * 750)

    def test_fifty_sessions_with_churn(self):
        """two rounds on each mount (plain, network-coded, SRTP) of 50
        sessions that all play at once, then leave: every session at its
        rate, no error, and the second rounds leave the server with no more
        threads and no more resident memory than the first ones did (the
        process-wide coder pool's threads stay; sessions leave nothing)"""
        proc = "/proc/%d" % self.server.pid

        def rss_kib():
            with open(proc + "/status") as f:
                return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

        def threads():
            return len(os.listdir(proc + "/task"))

        def settle():
            """threads once sessions have ended: the count after it stopped
            falling for a second (15 s at most)"""
            last, since = threads(), time.monotonic()
            deadline = since + 15
            while time.monotonic() < deadline and time.monotonic() - since < 1:
                time.sleep(0.2)
                now = threads()
                if now != last:
                    last, since = now, time.monotonic()
            return last

        after = []
        for prefix in ("", "nc/", "srtp/") * 2:
            extra = ["--prefix", prefix] if prefix else []
            if prefix == "srtp/":
                extra.append("--srtp")
            rc, report, err = self.load(50, 50, 3, CHANNELS, *extra)
            self.assert_full_rate(rc, report, 50)
            self.assertGreaterEqual(report["peak_concurrent"], 40, prefix)
            after.append((settle(), rss_kib()))
        # the first rounds start the process-wide pools and grow the
        # allocator's arenas; the same rounds again leave no more threads
        # and no more memory
        first, second = after[:3], after[3:]
        self.assertLessEqual(max(t for t, _ in second), max(t for t, _ in first),
                             "threads after each round: %s" % [t for t, _ in after])
        # Resident memory says nothing under ./run tests --asan, whose
        # allocator keeps freed blocks in quarantine and per-thread caches
        # (and each session brings new threads): 181 -> 206 MB over the
        # second rounds there, flat here. Leaks under the sanitizer are
        # LeakSanitizer's to find (tests/asan).
        if "ASAN_OPTIONS" not in os.environ:
            self.assertLessEqual(
                second[-1][1], first[-1][1] + 8192 + first[-1][1] // 20,
                "resident memory after each round: %s KiB" % [r for _, r in after])

    def test_wrong_path_fails(self):
        rc, report, err = self.load(4, 20, 2, ["missing.ts"])
        self.assertEqual(rc, 1)
        self.assertEqual(report["errors"], 4)
        self.assertEqual(report["full_rate"], 0)
        self.assertFalse(report["passed"])
        for s in report["per_session"]:
            self.assertRegex(s["error"], r"^(OPTIONS|DESCRIBE): RTSP/1.0 404 Not Found$")
            self.assertIsNone(s["response_ms"])
            self.assertEqual(s["bytes"], 0)

    def test_documented_commands(self):
        """the commands of docs/benchmarks/server.md as written: the files
        made there, the server started there (on a free port instead of
        8554) and the generator run against it (that port, the only change)"""
        with open(DOC) as f:
            blocks = re.findall(r"```\n(.*?)```", f.read(), re.S)
        lines = [line for b in blocks for line in b.splitlines() if line.strip()]
        media = [line for line in lines if "/srv/channels" in line and
                 "gpustream-server" not in line]
        self.assertEqual(len(media), 3, lines)
        start = [line for line in lines if "gpustream-server" in line]
        self.assertEqual(len(start), 1, lines)
        load = [line for line in lines if "rtsp_load.py" in line]
        self.assertEqual(len(load), 1, lines)
        self.assertEqual(set(lines) - set(media + start + load),
                         {'eval "$(./run env)"', "./run bench server",
                          "./run bench server --quick"}, "a command the test does not run")
        with tempfile.TemporaryDirectory(prefix="gpustream-load-doc-") as tmp:
            for line in media:
                subprocess.run(line.replace("/srv/channels", tmp), shell=True, check=True,
                               timeout=60)
            self.assertEqual(sorted(os.listdir(tmp)), CHANNELS)
            for name in CHANNELS:
                kbps = os.path.getsize(os.path.join(tmp, name)) * 8 / 8.0 / 1e3
                self.assertGreater(kbps, 0.97 * 750, name)
                self.assertLess(kbps, 1.03 * 750, name)
            argv = shlex.split(start[0])
            self.assertEqual(argv[0], "build/pipelines/server/gpustream-server")
            self.assertEqual(argv[1:3], ["--port", "8554"])
            self.assertEqual(argv[-1], "/srv/channels")
            server = subprocess.Popen([SERVER, "--port", "0"] + argv[3:-1] + [tmp],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True)
            try:
                url = server.stdout.readline().strip()
                self.assertRegex(url, r"^rtsp://127\.0\.0\.1:\d+/$")
                server.stdout.close()
                run = subprocess.run(load[0].replace("rtsp://127.0.0.1:8554/", url),
                                     shell=True, cwd=SOURCE_ROOT, capture_output=True,
                                     text=True, timeout=60)
            finally:
                server.terminate()
                server.wait(10)
        report = json.loads(run.stdout)
        self.assertEqual(report["errors"], 0, report["error_examples"])
        self.assertEqual(report["full_rate"], report["sessions"])
        self.assertGreaterEqual(report["sessions"], 10)
        self.assertEqual(len(report["response_cdf_ms"]), 21)
        self.assertEqual(run.returncode, 0 if report["passed"] else 1, run.stderr)

    def test_srtp_mount_refuses_plain_transport(self):
        """a SETUP for RTP/AVP on an SRTP mount is an error the generator counts"""
        rc, report, err = self.load(2, 20, 2, CHANNELS, "--prefix", "srtp/")
        self.assertEqual(rc, 1)
        self.assertEqual(report["errors"], 2)
        self.assertIn("SETUP: RTSP/1.0 461 Unsupported transport", report["error_examples"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
