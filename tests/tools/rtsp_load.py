#!/usr/bin/env python3
"""An RTSP load generator after the measurements of Jin Zhao, Xinya Zhang,
Xin Wang, "An Architecture Design of GPU-Accelerated VoD Streaming Servers
with Network Coding", 2010: sessions arrive as a Poisson process, each picks
one of C channels by Zipf popularity (parameter 0.5), and receives its
stream over UDP for a holding time.

Every client is a light one: a raw RTSP connection (OPTIONS, DESCRIBE, SETUP
with client_port, PLAY, TEARDOWN) and two UDP sockets (RTP, RTCP), all of
them in this one process on one epoll loop, so that thousands of clients
cost the machine little. Per session it measures the response time (the
first request sent to the first media packet received, the start-up delay
the user sees), the media bytes received (RTP payload, without the SRTP
authentication tag) and their rate after the first second (from the first
packet of a new RTP timestamp to the last one: whole payloaded buffers,
which tsparse makes a fifth of a second long), RTP sequence gaps, and errors (a status other than 200, a connection refused or closed, a
request or a stream that does not answer in time). While the sessions run
it samples the server's CPU usage, threads and open files from /proc, and
its own CPU usage, so that a generator that saturates is seen.

  rtsp_load.py --url rtsp://127.0.0.1:8554/ --channels a.ts,b.ts \\
      --sessions 20 --rate 10 --hold 5 [--prefix nc/] [--srtp] [--pid PID]

prints one JSON object: the step's summary, and with --per-session each
session's figures. Exit status 0 when every session received its rate and
the p95 response time is under --response-bound-ms (100), 1 when not, 2 for
a bad command line. As a module,
run_step() returns the same dictionary."""

import argparse
import heapq
import json
import math
import os
import random
import re
import selectors
import socket
import sys
import time

# the stream rate of every channel, kbit/s (the paper's 750 kbps videos)
CHANNEL_KBPS = 750.0
# a session has its rate when it received at least this share of it
RATE_TOLERANCE = 0.95
# the rate is measured from this long after the first packet (start-up)
RATE_SKIP_S = 1.0
# what a step's p95 response time must stay under
RESPONSE_P95_MS = 100.0
REQUEST_TIMEOUT_S = 10.0
RTP_HEADER = 12
SRTP_TAG = 10          # HMAC-SHA1-80, what our SRTP mount uses
CLK_TCK = os.sysconf("SC_CLK_TCK")


def zipf_weights(channels, skew=0.5):
    """Popularity of the i-th most popular channel, proportional to
    1 / i^skew (the paper's Zipf-like model, skew 0.5)."""
    w = [1.0 / (i + 1) ** skew for i in range(channels)]
    total = sum(w)
    return [x / total for x in w]


def percentile(values, q):
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def bind_port_pair():
    """Two UDP sockets on an even port and the next one (RTP, RTCP)."""
    for _ in range(200):
        rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rtp.bind(("127.0.0.1", 0))
        port = rtp.getsockname()[1]
        if port % 2:
            rtp.close()
            continue
        rtcp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            rtcp.bind(("127.0.0.1", port + 1))
        except OSError:
            rtp.close()
            rtcp.close()
            continue
        for s in (rtp, rtcp):
            s.setblocking(False)
        return rtp, rtcp
    raise OSError("no free UDP port pair")


class ProcSampler:
    """CPU (percent of one core), threads and open files of a process."""

    def __init__(self, pid):
        self.pid = pid
        self.samples = []          # (t, cpu %, threads, fds)
        self.last = None

    def _read(self):
        with open("/proc/%s/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # after the name: state is field 3, utime 14, stime 15, threads 20
        ticks = int(fields[11]) + int(fields[12])
        threads = int(fields[17])
        try:
            fds = len(os.listdir("/proc/%s/fd" % self.pid))
        except OSError:
            fds = None
        return ticks, threads, fds

    def sample(self, t):
        try:
            ticks, threads, fds = self._read()
        except (OSError, IndexError, ValueError):
            return
        if self.last is not None:
            dt = t - self.last[0]
            if dt > 0:
                cpu = 100.0 * (ticks - self.last[1]) / CLK_TCK / dt
                self.samples.append((round(t, 3), round(cpu, 1), threads, fds))
        self.last = (t, ticks)

    def summary(self):
        if not self.samples:
            return {}
        cpus = [s[1] for s in self.samples]
        return {"cpu_mean": round(sum(cpus) / len(cpus), 1), "cpu_max": max(cpus),
                "threads_max": max(s[2] for s in self.samples),
                "fds_max": max((s[3] or 0) for s in self.samples)}


class Session:
    def __init__(self, idx, channel, url, arrival, hold, srtp):
        self.idx, self.channel, self.url = idx, channel, url
        self.arrival, self.hold, self.srtp = arrival, hold, srtp
        self.sock = self.rtp = self.rtcp = None
        self.state = "waiting"
        self.cseq = 0
        self.inbuf = b""
        self.session_id = None
        self.control = url
        self.t_start = None        # first request sent
        self.t_play = None         # PLAY answered
        self.t_first = None        # first media packet
        self.t_last = None
        self.t_end = None          # TEARDOWN sent (or the session failed)
        self.deadline = None
        self.bytes = 0
        self.bytes_after_skip = 0
        self.packets = 0
        self.seq = None
        self.lost = 0
        self.rtp_ts = None
        self.mark_first = None     # (time, bytes before it): a new RTP timestamp
        self.mark_last = None
        self.error = None


class LoadGenerator:
    """One step: `sessions` clients, Poisson arrivals at `rate` a second,
    each holding its stream for `hold` seconds once PLAY is answered."""

    def __init__(self, url, channels, sessions, rate, hold, prefix="", srtp=False,
                 pid=None, seed=1, sample_interval=0.5, skew=0.5,
                 response_bound_ms=RESPONSE_P95_MS):
        if not url.endswith("/"):
            url += "/"
        self.url, self.channels, self.prefix, self.srtp = url, channels, prefix, srtp
        m = re.match(r"rtsp://([^/:]+):(\d+)/", url)
        if not m:
            raise ValueError("not an rtsp://HOST:PORT/ URL: %s" % url)
        self.host, self.port = m.group(1), int(m.group(2))
        rng = random.Random(seed)
        weights = zipf_weights(len(channels), skew)
        t = 0.0
        self.sessions = []
        for i in range(sessions):
            t += rng.expovariate(rate)
            ch = rng.choices(range(len(channels)), weights)[0]
            self.sessions.append(Session(i, ch, self.url + prefix + channels[ch], t, hold,
                                         srtp))
        self.sel = selectors.DefaultSelector()
        self.timers = []
        self.server = ProcSampler(pid) if pid else None
        self.own = ProcSampler(os.getpid())
        self.sample_interval = sample_interval
        self.done = 0
        self.response_bound_ms = response_bound_ms

    # ---- RTSP ------------------------------------------------------------

    def _request(self, s, method, url, headers=()):
        s.cseq += 1
        lines = ["%s %s RTSP/1.0" % (method, url), "CSeq: %d" % s.cseq,
                 "User-Agent: gpustream-rtsp-load"]
        if s.session_id and method not in ("OPTIONS", "DESCRIBE", "SETUP"):
            lines.append("Session: %s" % s.session_id)
        lines += list(headers)
        data = ("\r\n".join(lines) + "\r\n\r\n").encode()
        try:
            s.sock.sendall(data)     # small: fits the socket buffer
        except OSError as e:
            self._fail(s, "%s: %s" % (method, e.strerror or e))
            return
        s.state = method
        s.deadline = time.monotonic() + REQUEST_TIMEOUT_S

    def _start(self, s):
        s.t_start = time.monotonic()
        try:
            s.rtp, s.rtcp = bind_port_pair()
            s.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError as e:
            self._fail(s, "connect: %s" % (e.strerror or e))
            return
        # never blocking the loop: a server whose listen backlog is full
        # drops the SYN, and the kernel tries again a second later
        s.sock.setblocking(False)
        s.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sock.connect_ex((self.host, self.port))
        s.state = "connect"
        s.deadline = time.monotonic() + REQUEST_TIMEOUT_S
        self.sel.register(s.sock, selectors.EVENT_WRITE, (s, "connect"))
        self.sel.register(s.rtp, selectors.EVENT_READ, (s, "rtp"))
        self.sel.register(s.rtcp, selectors.EVENT_READ, (s, "rtcp"))

    def _on_connect(self, s):
        err = s.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._fail(s, "connect: %s" % os.strerror(err))
            return
        self.sel.modify(s.sock, selectors.EVENT_READ, (s, "rtsp"))
        self._request(s, "OPTIONS", s.url)

    def _on_rtsp(self, s):
        try:
            chunk = s.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as e:
            self._fail(s, "%s: %s" % (s.state, e.strerror or e))
            return
        if not chunk:
            if s.state != "TEARDOWN":
                self._fail(s, "%s: connection closed by the server" % s.state)
            else:
                self._close(s)
            return
        s.inbuf += chunk
        while True:
            head, sep, rest = s.inbuf.partition(b"\r\n\r\n")
            if not sep:
                return
            lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0") or 0)
            if len(rest) < length:
                return
            body, s.inbuf = rest[:length], rest[length:]
            if lines[0].startswith("RTSP/"):
                self._on_reply(s, lines[0], headers, body.decode("latin-1"))
            if s.state in ("failed", "closed"):
                return

    def _on_reply(self, s, status, headers, body):
        parts = status.split(" ", 2)
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        if code != 200:
            self._fail(s, "%s: %s" % (s.state, status))
            return
        if s.state == "OPTIONS":
            self._request(s, "DESCRIBE", s.url, ["Accept: application/sdp"])
        elif s.state == "DESCRIBE":
            base = headers.get("content-base", s.url)
            control = None
            for line in body.splitlines():
                if line.startswith("a=control:"):
                    c = line[len("a=control:"):].strip()
                    if c != "*":
                        control = c
            if control is None:
                s.control = base
            elif control.startswith("rtsp://"):
                s.control = control
            else:
                s.control = base.rstrip("/") + "/" + control
            profile = "RTP/SAVP" if s.srtp else "RTP/AVP"
            port = s.rtp.getsockname()[1]
            self._request(s, "SETUP", s.control,
                          ["Transport: %s;unicast;client_port=%d-%d" % (profile, port, port + 1)])
        elif s.state == "SETUP":
            sid = headers.get("session")
            if not sid:
                self._fail(s, "SETUP: no Session header")
                return
            s.session_id = sid.split(";")[0].strip()
            self._request(s, "PLAY", s.url, ["Range: npt=0-"])
        elif s.state == "PLAY":
            s.t_play = time.monotonic()
            s.state = "playing"
            s.deadline = None
            heapq.heappush(self.timers, (s.t_play + s.hold, s.idx, "teardown"))
        elif s.state == "TEARDOWN":
            self._close(s)

    def _on_rtp(self, s):
        while True:
            try:
                pkt = s.rtp.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            now = time.monotonic()
            if s.state in ("closed", "failed", "TEARDOWN"):
                continue
            if len(pkt) < RTP_HEADER:
                continue
            csrc = (pkt[0] & 0x0F) * 4
            ext = 0
            if pkt[0] & 0x10 and len(pkt) >= RTP_HEADER + csrc + 4:
                ext = 4 + 4 * int.from_bytes(pkt[RTP_HEADER + csrc + 2:RTP_HEADER + csrc + 4],
                                              "big")
            payload = len(pkt) - RTP_HEADER - csrc - ext - (SRTP_TAG if s.srtp else 0)
            seq = int.from_bytes(pkt[2:4], "big")
            if s.seq is not None:
                gap = (seq - s.seq - 1) & 0xFFFF
                if gap < 0x8000:
                    s.lost += gap
            s.seq = seq
            if s.t_first is None:
                s.t_first = now
            ts = pkt[4:8]
            if ts != s.rtp_ts:
                # a payloader gives every packet of one buffer the buffer's
                # timestamp, and tsparse makes buffers of a fifth of a
                # second: the rate is measured between starts of buffers,
                # whole buffers only
                s.rtp_ts = ts
                if now >= s.t_first + RATE_SKIP_S:
                    s.mark_last = (now, s.bytes)
                    if s.mark_first is None:
                        s.mark_first = s.mark_last
            s.t_last = now
            s.packets += 1
            s.bytes += payload
            if now >= s.t_first + RATE_SKIP_S:
                s.bytes_after_skip += payload

    def _drain(self, sock):
        while True:
            try:
                sock.recv(65536)
            except OSError:
                return

    def _teardown(self, s):
        if s.state != "playing":
            return
        s.t_end = time.monotonic()
        self._request(s, "TEARDOWN", s.url)

    def _fail(self, s, why):
        if s.error is None:
            s.error = why
        if s.t_end is None:
            s.t_end = time.monotonic()
        self._close(s)
        s.state = "failed"

    def _close(self, s):
        if s.state in ("closed", "failed"):
            return
        for sock in (s.sock, s.rtp, s.rtcp):
            if sock is None:
                continue
            try:
                self.sel.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()
        s.state = "closed"
        self.done += 1

    # ---- the loop ----------------------------------------------------------

    def run(self):
        t0 = time.monotonic()
        self.t0 = t0
        for s in self.sessions:
            heapq.heappush(self.timers, (t0 + s.arrival, s.idx, "start"))
        next_sample = t0
        last_deadline_check = t0
        while self.done < len(self.sessions):
            now = time.monotonic()
            if now >= next_sample:
                for sampler in (self.server, self.own):
                    if sampler:
                        sampler.sample(now - t0)
                next_sample = now + self.sample_interval
            while self.timers and self.timers[0][0] <= now:
                _, idx, what = heapq.heappop(self.timers)
                s = self.sessions[idx]
                if what == "start":
                    self._start(s)
                elif what == "teardown":
                    self._teardown(s)
            if now - last_deadline_check > 0.2:
                last_deadline_check = now
                for s in self.sessions:
                    if s.deadline is not None and now > s.deadline and \
                            s.state not in ("closed", "failed", "playing"):
                        if s.state == "TEARDOWN":
                            self._close(s)
                        else:
                            self._fail(s, "%s: no answer in %g s" % (s.state,
                                                                      REQUEST_TIMEOUT_S))
            wait = next_sample - now
            if self.timers:
                wait = min(wait, self.timers[0][0] - now)
            for key, _ in self.sel.select(max(0.0, min(wait, 0.2))):
                s, kind = key.data
                if kind == "rtp":
                    self._on_rtp(s)
                elif kind == "rtsp":
                    self._on_rtsp(s)
                elif kind == "connect":
                    self._on_connect(s)
                else:
                    self._drain(key.fileobj)
        self.elapsed = time.monotonic() - t0
        return self.report()

    # ---- figures -----------------------------------------------------------

    def session_figures(self, s):
        response_ms = None if s.t_first is None else (s.t_first - s.t_start) * 1e3
        rate = None
        if s.mark_first is not None and s.mark_last[0] - s.mark_first[0] > 0.5:
            rate = (s.mark_last[1] - s.mark_first[1]) * 8 / \
                (s.mark_last[0] - s.mark_first[0]) / 1e3
        elif s.t_first is not None and s.t_end is not None and \
                s.t_end - s.t_first > RATE_SKIP_S:
            rate = s.bytes_after_skip * 8 / (s.t_end - s.t_first - RATE_SKIP_S) / 1e3
        error = s.error
        if error is None and s.t_first is None:
            error = "no media received"
        ok = error is None and rate is not None and \
            rate >= RATE_TOLERANCE * CHANNEL_KBPS
        return {"session": s.idx, "channel": s.channel,
                "arrival_s": round(s.arrival, 3),
                "response_ms": None if response_ms is None else round(response_ms, 2),
                "setup_ms": None if s.t_play is None else round((s.t_play - s.t_start) * 1e3, 2),
                "bytes": s.bytes, "packets": s.packets, "lost": s.lost,
                "rate_kbps": None if rate is None else round(rate, 1),
                "full_rate": ok, "error": error}

    def report(self):
        per = [self.session_figures(s) for s in self.sessions]
        resp = [p["response_ms"] for p in per if p["response_ms"] is not None]
        setup = [p["setup_ms"] for p in per if p["setup_ms"] is not None]
        rates = [p["rate_kbps"] for p in per if p["rate_kbps"] is not None]
        errors = [p for p in per if p["error"]]
        full = sum(1 for p in per if p["full_rate"])
        p95 = percentile(resp, 0.95)
        # the most sessions alive together (PLAY answered, not yet torn down)
        events = []
        for s in self.sessions:
            if s.t_first is not None:
                events += [(s.t_first, 1), (s.t_end or s.t_last, -1)]
        alive = peak = 0
        for _, d in sorted(events):
            alive += d
            peak = max(peak, alive)
        out = {"sessions": len(self.sessions), "channels": len(self.channels),
               "full_rate": full, "errors": len(errors),
               "error_examples": sorted({e["error"] for e in errors})[:5],
               "peak_concurrent": peak,
               "response_ms_p50": percentile(resp, 0.5), "response_ms_p95": p95,
               "response_ms_max": max(resp) if resp else None,
               # of which the RTSP exchange: first request to PLAY answered
               "setup_ms_p50": percentile(setup, 0.5), "setup_ms_p95": percentile(setup, 0.95),
               "response_cdf_ms": [round(percentile(resp, i / 20.0), 2) for i in range(21)]
               if resp else [],
               "rate_kbps_min": min(rates) if rates else None,
               "rate_kbps_mean": round(sum(rates) / len(rates), 1) if rates else None,
               "lost_packets": sum(p["lost"] for p in per),
               "channel_kbps": CHANNEL_KBPS, "rate_tolerance": RATE_TOLERANCE,
               "seconds": round(self.elapsed, 2),
               "generator": self.own.summary(),
               "generator_series": self.own.samples}
        if self.server:
            out["server_process"] = self.server.summary()
            out["server_process_series"] = self.server.samples
        for key in ("response_ms_p50", "response_ms_p95", "response_ms_max", "setup_ms_p50",
                    "setup_ms_p95"):
            if out[key] is not None:
                out[key] = round(out[key], 2)
        out["response_bound_ms"] = self.response_bound_ms
        out["full_rate_all"] = full == len(self.sessions)
        out["passed"] = (out["full_rate_all"] and p95 is not None and
                         p95 < self.response_bound_ms)
        out["per_session"] = per
        return out


def run_step(url, channels, sessions, rate, hold, prefix="", srtp=False, pid=None, seed=1,
             response_bound_ms=RESPONSE_P95_MS):
    return LoadGenerator(url, channels, sessions, rate, hold, prefix, srtp, pid, seed,
                         response_bound_ms=response_bound_ms).run()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="rtsp://HOST:PORT/ of the server")
    p.add_argument("--channels", required=True,
                   help="comma-separated file names, most popular first")
    p.add_argument("--sessions", type=int, required=True)
    p.add_argument("--rate", type=float, required=True, help="arrivals a second (lambda)")
    p.add_argument("--hold", type=float, required=True,
                   help="seconds each session receives after PLAY")
    p.add_argument("--prefix", default="", help="mount prefix, e.g. nc/ or srtp/")
    p.add_argument("--srtp", action="store_true", help="SETUP asks for RTP/SAVP")
    p.add_argument("--pid", type=int, help="the server's process, sampled from /proc")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--response-bound-ms", type=float, default=RESPONSE_P95_MS,
                   help="the p95 response time a passing step stays under (100)")
    p.add_argument("--per-session", action="store_true",
                   help="keep each session's figures in the JSON")
    a = p.parse_args(argv)
    channels = [c for c in a.channels.split(",") if c]
    if not channels or a.sessions < 1 or a.rate <= 0 or a.hold <= 0:
        p.error("give at least one channel, one session, a rate and a hold above 0")
    out = run_step(a.url, channels, a.sessions, a.rate, a.hold, a.prefix, a.srtp, a.pid,
                   a.seed, a.response_bound_ms)
    if not a.per_session:
        del out["per_session"]
    print(json.dumps(out))
    return 0 if out["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
