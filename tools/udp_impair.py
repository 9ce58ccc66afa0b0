#!/usr/bin/env python3
"""udp_impair: a user-space UDP impairment relay.

The kernels we test on have no `tc netem`, so loss, bursts, delay, jitter,
reordering, duplication and rate limits come from here. It listens on one UDP
port and forwards every datagram to one destination, impaired as asked. The
impairment decisions are a pure function of the seed and the packet sequence
(class Impairment), so a test or benchmark run is repeatable.

Command line (stops by itself: after --idle-exit seconds without traffic once
something was received, or after --max-packets):

    udp_impair.py --listen 127.0.0.1:5000 --forward 127.0.0.1:5002 \
        --loss 0.10 --seed 1 --stats relay.json

Loss models:
    --loss P                 independent loss with probability P
    --burst P_GB,P_BG[,L]    Gilbert-Elliott: good->bad with P_GB, bad->good
                             with P_BG, loss probability L in bad (default 1)
                             and --loss in good
    --drop-range A-B         drop packets A..B (0-based arrival index), exactly
Other impairments:
    --delay MS --jitter MS   fixed delay plus uniform jitter (jitter reorders)
    --reorder P --reorder-gap N   hold a packet back until N later ones went
    --duplicate P            send a packet twice
    --rate BITS_PER_S        token-bucket rate limit (queue of --queue packets,
                             tail drop beyond it)
"""

import argparse
import heapq
import json
import random
import select
import socket
import struct
import sys
import threading
import time


class Impairment:
    """Decides, packet by packet, what happens to it. Pure: no sockets."""

    def __init__(self, loss=0.0, burst=None, drop_ranges=(), delay_ms=0.0,
                 jitter_ms=0.0, reorder=0.0, reorder_gap=3, duplicate=0.0,
                 seed=1):
        self.loss = loss
        self.burst = burst            # (p_gb, p_bg, loss_in_bad) or None
        self.drop_ranges = list(drop_ranges)
        self.delay = delay_ms / 1000.0
        self.jitter = jitter_ms / 1000.0
        self.reorder = reorder
        self.reorder_gap = reorder_gap
        self.duplicate = duplicate
        self.rng = random.Random(seed)
        self.bad_state = False
        self.index = 0
        self.held = []                # [remaining_gap, payload] reordered packets
        self.stats = {"received": 0, "dropped": 0, "forwarded": 0,
                      "reordered": 0, "duplicated": 0, "rate_dropped": 0,
                      "bytes_received": 0, "bytes_forwarded": 0}

    def _lost(self, i):
        for a, b in self.drop_ranges:
            if a <= i <= b:
                return True
        if self.burst is not None:
            p_gb, p_bg, loss_bad = self.burst
            # state transition first, then the loss draw of the new state
            if self.bad_state:
                if self.rng.random() < p_bg:
                    self.bad_state = False
            elif self.rng.random() < p_gb:
                self.bad_state = True
            p = loss_bad if self.bad_state else self.loss
            return self.rng.random() < p
        return self.loss > 0 and self.rng.random() < self.loss

    def process(self, payload):
        """Returns a list of (delay_seconds, payload) to send for one packet."""
        i = self.index
        self.index += 1
        self.stats["received"] += 1
        self.stats["bytes_received"] += len(payload)
        out = []
        # packets held back for reordering move one step on every arrival
        for h in self.held:
            h[0] -= 1
        released = [h for h in self.held if h[0] <= 0]
        self.held = [h for h in self.held if h[0] > 0]

        if self._lost(i):
            self.stats["dropped"] += 1
        elif self.reorder > 0 and self.rng.random() < self.reorder:
            self.stats["reordered"] += 1
            self.held.append([self.reorder_gap, payload])
        else:
            out.append(payload)
            if self.duplicate > 0 and self.rng.random() < self.duplicate:
                self.stats["duplicated"] += 1
                out.append(payload)
        out.extend(h[1] for h in released)
        return [(self._delay(), p) for p in out]

    def flush(self):
        """Packets still held for reordering, at the end of the stream."""
        out = [(self._delay(), h[1]) for h in self.held]
        self.held = []
        return out

    def _delay(self):
        if self.jitter > 0:
            return self.delay + self.rng.uniform(0, self.jitter)
        return self.delay


# Linux's SO_TIMESTAMPNS (asm-generic value), which Python does not export:
# the kernel stamps each datagram with its arrival time (CLOCK_REALTIME)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


class Relay:
    """One UDP port in, one destination out, impaired.

    Delay, jitter and rate are counted from each datagram's arrival in the
    kernel, not from when this Python thread got to read it: a relay starved
    of CPU reads a backlog in one go, and jitter counted from the read would
    reorder that whole backlog, hundreds of packets, where the network asked
    for reorders a few milliseconds deep."""

    def __init__(self, listen, forward, impairment, rate_bps=0.0, queue=1000,
                 max_packets=0, idle_exit=0.0):
        self.imp = impairment
        self.forward = forward
        self.rate = rate_bps / 8.0    # bytes per second
        self.queue_limit = queue
        self.max_packets = max_packets
        self.idle_exit = idle_exit
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.rx.bind(listen)
        try:
            self.rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self._kernel_stamps = True
            # when no socket of the system had timestamps on, the kernel
            # turns them on in deferred work: a datagram of the next moments
            # would carry the time it is read, not the time it came
            time.sleep(0.05)
        except OSError:
            self._kernel_stamps = False
        self.port = self.rx.getsockname()[1]
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        self._stop = threading.Event()
        self._thread = None
        self._seq = 0                 # tie-breaker for the send heap
        self._bucket_time = 0.0       # when the rate limiter is next free

    def _schedule(self, heap, now, sends):
        for delay, payload in sends:
            t = now + delay
            if self.rate > 0:
                # token bucket as a departure clock: each packet leaves when
                # the link has finished the previous one
                start = max(t, self._bucket_time)
                if len(heap) >= self.queue_limit:
                    self.imp.stats["rate_dropped"] += 1
                    continue
                self._bucket_time = start + len(payload) / self.rate
                t = self._bucket_time
            heapq.heappush(heap, (t, self._seq, payload))
            self._seq += 1

    def _recv(self):
        """One datagram and its arrival, on the monotonic clock."""
        if not self._kernel_stamps:
            return self.rx.recv(65535), time.monotonic()
        payload, anc, _, _ = self.rx.recvmsg(65535, 64)
        now = time.monotonic()
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and \
                    len(data) >= 16:
                sec, nsec = struct.unpack("qq", data[:16])
                arrival = now - (time.time() - (sec + nsec * 1e-9))
                return payload, min(arrival, now)
        return payload, now

    def run(self):
        heap = []
        last_rx = None
        self.rx.setblocking(False)
        while not self._stop.is_set():
            now = time.monotonic()
            while heap and heap[0][0] <= now:
                _, _, payload = heapq.heappop(heap)
                try:
                    self.tx.sendto(payload, self.forward)
                    self.imp.stats["forwarded"] += 1
                    self.imp.stats["bytes_forwarded"] += len(payload)
                except OSError:
                    self.imp.stats["rate_dropped"] += 1
            timeout = 0.05
            if heap:
                timeout = max(0.0, min(timeout, heap[0][0] - now))
            r, _, _ = select.select([self.rx], [], [], timeout)
            if r:
                while True:
                    try:
                        payload, last_rx = self._recv()
                    except BlockingIOError:
                        break
                    self._schedule(heap, last_rx, self.imp.process(payload))
                    if self.max_packets and \
                            self.imp.stats["received"] >= self.max_packets:
                        self._stop.set()
                        break
            elif (self.idle_exit and last_rx is not None and not heap and
                  time.monotonic() - last_rx > self.idle_exit):
                break
        # deliver what is still queued or held, then stop
        self._schedule(heap, time.monotonic(), self.imp.flush())
        while heap:
            t, _, payload = heapq.heappop(heap)
            delay = t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.tx.sendto(payload, self.forward)
            self.imp.stats["forwarded"] += 1
            self.imp.stats["bytes_forwarded"] += len(payload)

    def start(self):
        self._thread = threading.Thread(target=self.run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.rx.close()
        self.tx.close()
        return self.imp.stats


def _addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--listen", type=_addr, required=True)
    p.add_argument("--forward", type=_addr, required=True)
    p.add_argument("--loss", type=float, default=0.0)
    p.add_argument("--burst", type=str, default=None)
    p.add_argument("--drop-range", action="append", default=[])
    p.add_argument("--delay", type=float, default=0.0, help="ms")
    p.add_argument("--jitter", type=float, default=0.0, help="ms")
    p.add_argument("--reorder", type=float, default=0.0)
    p.add_argument("--reorder-gap", type=int, default=3)
    p.add_argument("--duplicate", type=float, default=0.0)
    p.add_argument("--rate", type=float, default=0.0, help="bits/s")
    p.add_argument("--queue", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-packets", type=int, default=0)
    p.add_argument("--idle-exit", type=float, default=2.0)
    p.add_argument("--stats", type=str, default=None)
    a = p.parse_args(argv)
    burst = None
    if a.burst:
        parts = [float(x) for x in a.burst.split(",")]
        burst = (parts[0], parts[1], parts[2] if len(parts) > 2 else 1.0)
    ranges = []
    for r in a.drop_range:
        lo, hi = r.split("-")
        ranges.append((int(lo), int(hi)))
    imp = Impairment(a.loss, burst, ranges, a.delay, a.jitter, a.reorder,
                     a.reorder_gap, a.duplicate, a.seed)
    relay = Relay(a.listen, a.forward, imp, a.rate, a.queue, a.max_packets,
                  a.idle_exit)
    print("udp_impair: listening on %s:%d" % (a.listen[0], relay.port), flush=True)
    try:
        relay.run()
    except KeyboardInterrupt:
        pass
    stats = imp.stats
    if a.stats:
        with open(a.stats, "w") as f:
            json.dump(stats, f)
    print("udp_impair: " + json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
