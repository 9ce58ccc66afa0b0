#!/usr/bin/env python3
"""A decoder of ncencoder's network-coded stream, written from
docs/elements/nc-wire-format.md alone, in plain Python.

It checks that the page is enough to implement the stream: the packet header
and its validity rules (section 1), GF(2^8) with polynomial 0x11D and
Gauss-Jordan elimination (section 2), the seed expansion (section 3), the
CRC-32 (section 4), generation reassembly in serial-number order, partial
generations and the framed-record layer (section 5), and RTP payloads
(section 6).

As a library:

    dec = StreamDecoder()
    for pkt in packets:          # bytes, one coded packet each
        dec.feed(pkt)
    data = dec.byte_stream()     # FRAMED not set: the bytes, gaps left out
    bufs = dec.buffers()         # FRAMED set: Buffer(data, pts, dts, ...)
    dec.counts                   # packets, bad-*, dependent, innovative, ...

As a command:

    nc_wire_decoder.py [--rtp] [--framed] [--stats] PACKETS [OUT]

PACKETS is a dump of packets, each written as a 4-byte big-endian length and
then that many bytes (write_dump() writes one). With --rtp every packet is an
RTP packet whose header (12 bytes, plus CSRCs and an extension when present)
is stripped first. The decoded byte stream (or, with --framed, the BUFFER
records' payloads back to back) goes to OUT, or to standard output; --framed
also prints one line per buffer (pts, duration, size, caps) to standard error
and --stats the counters.
"""

import struct
import sys
import zlib

VERSION = 1
FLAG_SEED, FLAG_SOURCE, FLAG_RECODED, FLAG_FRAMED = 0x01, 0x02, 0x04, 0x08
KNOWN_FLAGS = FLAG_SEED | FLAG_SOURCE | FLAG_RECODED | FLAG_FRAMED
HEADER = 24
NONE64 = 0xFFFFFFFFFFFFFFFF
NO_RECORD = 0xFFFFFFFF
PREFIX = 16
RECORD_HEADER = 32
RECORD_BUFFER, RECORD_CAPS = 1, 2
RECORD_MAX = 256 * 1024 * 1024
MASK64 = 0xFFFFFFFFFFFFFFFF

# --- GF(2^8), polynomial x^8 + x^4 + x^3 + x^2 + 1 (section 2) -------------

GF_EXP = [0] * 512
GF_LOG = [0] * 256
_x = 1
for _i in range(255):
    GF_EXP[_i] = _x
    GF_LOG[_x] = _i
    _x <<= 1
    if _x & 0x100:
        _x ^= 0x11D
for _i in range(255, 512):
    GF_EXP[_i] = GF_EXP[_i - 255]


def gf_mul(a, b):
    if a == 0 or b == 0:
        return 0
    return GF_EXP[GF_LOG[a] + GF_LOG[b]]


def gf_inv(a):
    if a == 0:
        raise ZeroDivisionError("0 has no inverse in GF(2^8)")
    return GF_EXP[255 - GF_LOG[a]]


# c·x for every byte x, as a bytes.translate table: scaling a row is one call
GF_SCALE = [bytes(gf_mul(c, x) for x in range(256)) for c in range(256)]


def scale(c, row):
    """c · row, byte by byte."""
    return row.translate(GF_SCALE[c])


def xor(a, b):
    """a + b in GF(2^8)^n (same length)."""
    n = len(a)
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(n, "big")


def encode_block(coefficients, blocks):
    """sum_j c_j · B_j: what a packet with these coefficients carries."""
    out = bytes(len(blocks[0]))
    for c, b in zip(coefficients, blocks):
        if c:
            out = xor(out, scale(c, b))
    return out


# --- the seed expansion (section 3) -----------------------------------------

def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def seed_coefficients(seed, m):
    """The m coefficients, each 1..255, that seed expands into."""
    out = bytearray(m)
    for i in range(m):
        z = _mix64((((seed << 32) | (i >> 3)) + 0x9E3779B97F4A7C15) & MASK64)
        b = (z >> (8 * (i & 7))) & 0xFF
        out[i] = 1 + ((b * 255) >> 8)
    return bytes(out)


# --- the packet (sections 1 and 4) ------------------------------------------

class BadPacket(ValueError):
    """A packet section 1 says to drop; .reason names the rule it breaks."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def packet_crc(data):
    """CRC-32 of the packet with bytes 20..23 taken as zeros."""
    return zlib.crc32(data[:20] + b"\0\0\0\0" + data[24:]) & 0xFFFFFFFF


class Packet:
    __slots__ = ("flags", "m", "generation", "k", "data_length", "seed",
                 "coefficients", "payload")

    @classmethod
    def parse(cls, data):
        data = bytes(data)
        if len(data) < HEADER:
            raise BadPacket("short")
        version, flags, m, gen, k, length, seed, crc = struct.unpack(
            ">BBHIIIII", data[:HEADER])
        if version != VERSION:
            raise BadPacket("version")
        if flags & ~KNOWN_FLAGS:
            raise BadPacket("flags")
        if (flags & FLAG_SEED) and (flags & FLAG_SOURCE):
            raise BadPacket("flags")
        if (flags & FLAG_RECODED) and (flags & (FLAG_SEED | FLAG_SOURCE)):
            raise BadPacket("flags")
        if not 1 <= m <= 256 or not 1 <= k <= 65536:
            raise BadPacket("range")
        if not 1 <= length <= m * k:
            raise BadPacket("range")
        explicit = not flags & (FLAG_SEED | FLAG_SOURCE)
        if len(data) != HEADER + (m if explicit else 0) + k:
            raise BadPacket("length")
        if (flags & FLAG_SOURCE) and seed >= m:
            raise BadPacket("range")
        if explicit and seed != 0:
            raise BadPacket("seed")
        if packet_crc(data) != crc:
            raise BadPacket("crc")
        p = cls()
        p.flags, p.m, p.generation, p.k = flags, m, gen, k
        p.data_length, p.seed = length, seed
        if flags & FLAG_SEED:
            p.coefficients = seed_coefficients(seed, m)
            p.payload = data[HEADER:]
        elif flags & FLAG_SOURCE:
            vec = bytearray(m)
            vec[seed] = 1
            p.coefficients = bytes(vec)
            p.payload = data[HEADER:]
        else:
            p.coefficients = data[HEADER:HEADER + m]
            p.payload = data[HEADER + m:]
        return p


def build_packet(flags, m, generation, k, data_length, seed, coefficients,
                 payload):
    """The bytes of one packet (an encoder from section 1, for tests)."""
    head = struct.pack(">BBHIIIII", VERSION, flags, m, generation, k,
                       data_length, seed, 0)
    body = (b"" if flags & (FLAG_SEED | FLAG_SOURCE) else coefficients) + payload
    crc = zlib.crc32(head + body) & 0xFFFFFFFF
    return head[:20] + struct.pack(">I", crc) + body


# --- one generation: incremental Gauss-Jordan (section 2) --------------------

class Generation:
    """The packets of one generation, kept in reduced row echelon form."""

    def __init__(self, m, k, data_length):
        self.m, self.k, self.data_length = m, k, data_length
        self.rows = {}  # pivot column -> (coefficients, payload), pivot 1

    @property
    def rank(self):
        return len(self.rows)

    def add(self, coefficients, payload):
        """True when the packet raised the rank (innovative)."""
        if self.rank == self.m:
            return False
        c, p = coefficients, payload
        for col, (rc, rp) in self.rows.items():
            f = c[col]
            if f:
                c, p = xor(c, scale(f, rc)), xor(p, scale(f, rp))
        pivot = next((j for j in range(self.m) if c[j]), None)
        if pivot is None:
            return False
        inv = gf_inv(c[pivot])
        c, p = scale(inv, c), scale(inv, p)
        for col, (rc, rp) in list(self.rows.items()):
            f = rc[pivot]
            if f:
                self.rows[col] = (xor(rc, scale(f, c)), xor(rp, scale(f, p)))
        self.rows[pivot] = (c, p)
        return True

    def data(self):
        """The generation's data_length bytes, once rank is m."""
        assert self.rank == self.m
        return b"".join(self.rows[j][1] for j in range(self.m))[:self.data_length]


# --- the stream (sections 1 and 5) -------------------------------------------

def serial_before(a, b):
    """Generation id a comes before b (serial-number order)."""
    return a != b and (b - a) % (1 << 32) < (1 << 31)


class Buffer:
    """A BUFFER record as the receiver gives it out."""
    __slots__ = ("data", "flags", "pts", "dts", "duration", "caps", "discont")

    def __init__(self, data, flags, pts, dts, duration, caps, discont):
        self.data, self.flags, self.caps, self.discont = data, flags, caps, discont
        self.pts = None if pts == NONE64 else pts
        self.dts = None if dts == NONE64 else dts
        self.duration = None if duration == NONE64 else duration

    def __repr__(self):
        return "Buffer(%d bytes, pts=%s, duration=%s, flags=%#x%s)" % (
            len(self.data), self.pts, self.duration, self.flags,
            ", DISCONT" if self.discont else "")


class StreamDecoder:
    def __init__(self):
        self.k = None
        self.framed = None
        self.generations = {}  # id -> Generation
        self.first = None      # the earliest generation id seen
        self.counts = {"packets": 0, "bad": 0, "other-stream": 0,
                       "innovative": 0, "dependent": 0, "redundant": 0,
                       "generations-decoded": 0, "generations-lost": 0,
                       "records-corrupt": 0, "buffers-untyped": 0}

    def _count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def feed(self, data):
        """One coded packet. Returns the packet, or None when it was dropped."""
        self._count("packets")
        try:
            p = Packet.parse(data)
        except BadPacket as e:
            self._count("bad")
            self._count("bad-" + e.reason)
            return None
        if self.k is None:
            self.k = p.k
            self.framed = bool(p.flags & FLAG_FRAMED)
        if p.k != self.k:
            self._count("other-stream")
            return None
        if bool(p.flags & FLAG_FRAMED) != self.framed:
            self._count("bad")
            self._count("bad-framed")
            return None
        g = self.generations.get(p.generation)
        if g is None:
            g = self.generations[p.generation] = Generation(p.m, p.k, p.data_length)
            if self.first is None or serial_before(p.generation, self.first):
                self.first = p.generation
        elif (g.m, g.data_length) != (p.m, p.data_length):
            self._count("bad")
            self._count("bad-inconsistent")
            return None
        if g.rank == g.m:
            self._count("redundant")
        elif g.add(p.coefficients, p.payload):
            self._count("innovative")
            if g.rank == g.m:
                self._count("generations-decoded")
        else:
            self._count("dependent")
        return p

    def generation_data(self):
        """[(id, data or None)] from the first to the last id seen, in serial
        order; None: not decodable (or never seen), a gap."""
        if self.first is None:
            return []
        last = self.first
        for gid in self.generations:
            if serial_before(last, gid):
                last = gid
        out = []
        n = (last - self.first) % (1 << 32) + 1
        lost = 0
        for i in range(n):
            gid = (self.first + i) % (1 << 32)
            g = self.generations.get(gid)
            if g is not None and g.rank == g.m:
                out.append((gid, g.data()))
            else:
                out.append((gid, None))
                lost += 1
        self.counts["generations-lost"] = lost
        return out

    def byte_stream(self):
        """[(bytes, discont)]: the runs of consecutive decoded generations."""
        runs, discont = [], False
        for _gid, data in self.generation_data():
            if data is None:
                discont = True
                continue
            if runs and not discont:
                runs[-1] = (runs[-1][0] + data, runs[-1][1])
            else:
                runs.append((data, discont))
            discont = False
        return runs

    def buffers(self):
        """The BUFFER records of a framed stream, each with its caps."""
        out = []
        caps = None
        pending = b""          # record bytes not yet parsed
        in_sync = False        # reading records (else: waiting for first_record)
        discont = False
        for _gid, data in self.generation_data():
            if data is None:
                pending, in_sync, discont = b"", False, True
                continue
            if len(data) < PREFIX:
                self._count("records-corrupt")
                pending, in_sync, discont = b"", False, True
                continue
            first_record, reserved, _pts = struct.unpack(">IIQ", data[:PREFIX])
            # a record header starts after the prefix and inside the data
            if reserved or (first_record != NO_RECORD
                            and not PREFIX <= first_record < len(data)):
                self._count("records-corrupt")
                pending, in_sync, discont = b"", False, True
                continue
            if not in_sync:
                if first_record == NO_RECORD:
                    continue
                pending, in_sync = data[first_record:], True
            else:
                pending += data[PREFIX:]
            while in_sync and len(pending) >= RECORD_HEADER:
                rtype, rflags, rres, length, pts, dts, dur = struct.unpack(
                    ">BBHIQQQ", pending[:RECORD_HEADER])
                if (rtype not in (RECORD_BUFFER, RECORD_CAPS) or rres != 0
                        or rflags & 0xF0 or length > RECORD_MAX
                        or (rtype == RECORD_CAPS and length == 0)):
                    self._count("records-corrupt")
                    pending, in_sync, discont = b"", False, True
                    break
                if len(pending) < RECORD_HEADER + length:
                    break
                payload = pending[RECORD_HEADER:RECORD_HEADER + length]
                pending = pending[RECORD_HEADER + length:]
                if rtype == RECORD_CAPS:
                    caps = payload.decode("utf-8")
                elif caps is None:
                    self._count("buffers-untyped")
                else:
                    out.append(Buffer(payload, rflags, pts, dts, dur, caps,
                                      discont))
                    discont = False
        return out


# --- RTP (section 6) and the dump format ------------------------------------

def rtp_payload(packet):
    """The payload of one RTP packet (version 2)."""
    if len(packet) < 12 or packet[0] >> 6 != 2:
        raise BadPacket("rtp")
    n = 12 + 4 * (packet[0] & 0x0F)
    if packet[0] & 0x10:
        if len(packet) < n + 4:
            raise BadPacket("rtp")
        n += 4 + 4 * struct.unpack(">H", packet[n + 2:n + 4])[0]
    end = len(packet)
    if packet[0] & 0x20:
        end -= packet[-1]
    if n > end:
        raise BadPacket("rtp")
    return packet[n:end]


def write_dump(path, packets):
    with open(path, "wb") as f:
        for p in packets:
            f.write(struct.pack(">I", len(p)))
            f.write(p)


def read_dump(path):
    with open(path, "rb") as f:
        blob = f.read()
    out, i = [], 0
    while i + 4 <= len(blob):
        (n,) = struct.unpack(">I", blob[i:i + 4])
        out.append(blob[i + 4:i + 4 + n])
        i += 4 + n
    return out


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtp", action="store_true", help="packets are RTP packets")
    ap.add_argument("--framed", action="store_true",
                    help="write the BUFFER records' payloads, list them on stderr")
    ap.add_argument("--stats", action="store_true", help="print the counters")
    ap.add_argument("packets")
    ap.add_argument("out", nargs="?")
    args = ap.parse_args(argv)
    dec = StreamDecoder()
    for p in read_dump(args.packets):
        if args.rtp:
            try:
                p = rtp_payload(p)
            except BadPacket:
                dec._count("bad-rtp")
                continue
        dec.feed(p)
    if args.framed:
        bufs = dec.buffers()
        blob = b"".join(b.data for b in bufs)
        for b in bufs:
            print("pts=%s duration=%s size=%d%s caps=%s" % (
                b.pts, b.duration, len(b.data),
                " DISCONT" if b.discont else "", b.caps), file=sys.stderr)
    else:
        blob = b"".join(d for d, _ in dec.byte_stream())
    if args.out:
        with open(args.out, "wb") as f:
            f.write(blob)
    else:
        sys.stdout.buffer.write(blob)
    if args.stats:
        for k in sorted(dec.counts):
            print("%s: %d" % (k, dec.counts[k]), file=sys.stderr)
    return 0 if dec.counts["generations-decoded"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
